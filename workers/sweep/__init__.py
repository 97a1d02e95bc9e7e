"""The sweep: the scheduled re-read of every form's lead list (sweeper), and the
enqueueing of the leads no webhook brought (reconcile). Imports engine and below.

Notes: docs/internals/sweep.md
"""

from workers import jobnames


def run_sweep(arguments: dict) -> dict:
    """A sweep scheduled under its former path: the job it names now (jobnames.SWEEP)."""
    return jobnames.resolve("workers.sweep.run_sweep")(arguments)
