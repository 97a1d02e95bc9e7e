"""The work behind the jobs: the drain (new leads in batches) and its steps, single lead jobs'
attempts, hand-offs, events sent many per request, quarantine, recovery, and the context
every job is given.

Notes: docs/internals/engine.md
"""
