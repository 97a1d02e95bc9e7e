"""What goes to Meta and what is kept about each lead: event names, ids and the 7-day
window (conversions), lead profiles, the Lead event of a new lead, the accuracy
ledger. Imports config, common and identity."""
