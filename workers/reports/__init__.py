"""Reports read back for people: the readiness report (Meta's Conversion Leads gates per
dataset) and what the watch last found.

Notes: docs/internals/reports.md
"""
