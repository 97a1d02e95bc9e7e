"""The paths releases before 0.2 stored for drain jobs and batch retries
(workers/jobnames.py FORMER): they stay for one release, then go."""

from workers.jobs import drain, retry_batch  # noqa: F401 (the stored paths)
