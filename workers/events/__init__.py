"""What goes to Meta and what is kept about each lead: event names, ids and the 7-day
window (conversions), lead profiles, the Lead event of a new lead, the ledger of events
Meta confirmed, the accuracy ledger, the funnel and its gates. Imports config, common and
identity."""
