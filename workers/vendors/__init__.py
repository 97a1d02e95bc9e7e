"""One folder per vendor we connect to (Zulip's and Sentry's integrations are the model):
everything about that vendor in one place, by role, each role at its own layer:

Notes: docs/internals/vendors.md
"""
