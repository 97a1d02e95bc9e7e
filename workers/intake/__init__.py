"""What runs inside the web request: verify, parse, route, dedupe and store each delivery
(receiver), the inbox, form answers to match keys, stage items checked and queued, and the
receiver's own Redis connections.

Notes: docs/internals/intake.md
"""
