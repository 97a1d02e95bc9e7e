"""Webhook sources: the core sources' modules (meta.py, typeform.py, tally.py, signed.py), the
shared kit every source and vendor uses (ids.py, signing.py, keys.py), and the registry that
names them all (registry.py).

Notes: docs/internals/sources.md
"""
