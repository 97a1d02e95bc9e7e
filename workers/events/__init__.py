"""What goes to Meta and what is kept about each lead.

Notes: docs/internals/events.md
"""
