"""Reports read back for people: the readiness report (Meta's Conversion Leads gates per
dataset) and what the watch last found. Read sides only: the jobs that write what they read
live in sweep/ and engine/, so the web process loads these without them. Imports graphapi
(its version signals), events, config and common."""
