"""Reading people back from the CRMs whose pushes carry ids only, with the CRM's own token (the
registry's `client` lines; each vendor's client.py).

Notes: docs/internals/crmapi.md
"""
