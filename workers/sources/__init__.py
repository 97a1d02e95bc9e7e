"""Webhook sources: the core sources' modules (meta.py, typeform.py, tally.py, signed.py),
the shared kit every source and vendor uses (ids.py, signing.py, keys.py), and the
registry that names them all (registry.py). This file imports nothing: importing a
vendor's webhook, which uses the kit, never runs the registry."""
