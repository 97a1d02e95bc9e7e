"""Talking to Meta: the Graph client (lead reads), the Conversions API sender and its
ledger of confirmed events, tokens waiting after an auth failure. Imports events and below."""
