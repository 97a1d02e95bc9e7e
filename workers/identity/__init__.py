"""Who a lead is, as Meta matches it: the match keys, and their normalisation and hashing
exactly as Meta specifies (emails, phones with their country's numbering plan, names,
places, dates of birth, the browser ids fbc and fbp). Pure: imports nothing of ours
outside this package (tests/feature/test_layout.py holds it), so the rules can be read, tested
and timed on their own."""
