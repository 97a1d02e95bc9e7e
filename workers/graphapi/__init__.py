"""Talking to Meta: the Graph client (lead reads), the Conversions API sender (which writes the
ledger of confirmed events, events/ledger.py), tokens waiting after an auth failure, what
Meta's answers say of the API version.

Notes: docs/internals/graphapi.md
"""
