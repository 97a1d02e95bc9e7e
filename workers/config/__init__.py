"""Configuration, read once at start and passed down: settings, what each process needs, the
mapping file (forms, routes, stages), routing, Limited Data Use, the sandbox's settings.

Notes: docs/internals/config.md
"""
