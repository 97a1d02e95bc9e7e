"""Talking to Google: the Data Manager API client (a service account's OAuth token, failures
classified) and Google as a destination beside Meta's datasets (ingest requests, the ledger,
the dry-run store).

Notes: docs/internals/googleapi.md
"""
