"""The sweep: the scheduled re-read of every form's lead list (sweeper), and the
enqueueing of the leads no webhook brought (reconcile). Imports engine and below.

`run_sweep` here is the path releases before 0.2 stored for scheduled sweeps
(workers/jobnames.py FORMER); it stays for one release.
"""


def run_sweep(arguments: dict) -> dict:
    """A sweep scheduled under its former path: the job at workers.jobs.run_sweep."""
    from workers.jobs import run_sweep as job  # the job module sits above this package

    return job(arguments)
