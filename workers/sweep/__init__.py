"""The sweep: the scheduled re-read of every form's lead list (sweeper), and the
enqueueing of the leads no webhook brought (reconcile). Imports engine and below.

`run_sweep` here is the path releases before 0.2 stored for scheduled sweeps
(workers/jobnames.py FORMER); it stays for one release.
"""

from workers import jobnames


def run_sweep(arguments: dict) -> dict:
    """A sweep scheduled under its former path: the job it names now (jobnames.SWEEP)."""
    return jobnames.resolve("workers.sweep.run_sweep")(arguments)
