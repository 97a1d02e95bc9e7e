"""Who a lead is, as Meta matches it: the match keys, and their normalisation and hashing
exactly as Meta specifies (emails, phones with their country's numbering plan, names,
places, dates of birth, the browser ids fbc and fbp).

Notes: docs/internals/identity.md
"""
