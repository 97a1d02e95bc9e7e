"""What one job run is working on, and the dead-letter record made from it when it fails.

Notes: docs/internals/engine.md
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from workers.common.policy import JobError


@dataclass
class Work:
    job_id: str
    source: str | None
    key: str | None  # the lead's key within its source (None for a batch of stage events)
    event_name: str | None
    event_id: str | None
    event_time: int | None  # what Meta's 7-day window counts from, once known
    args: dict | None  # the job's argument, as queued
    request_id: str | None = None  # the webhook delivery it came from
    dataset: str | None = None  # the name of the dataset its events go to (routing.py)

    @classmethod
    def of_job(cls, job, fallback_id: str, **fields) -> "Work":
        """For the running RQ job (`job` may be None when a function is called directly)."""
        meta = job.meta if job else {}
        return cls(job_id=job.id if job else fallback_id, request_id=meta.get("request_id"), **fields)


def dead_letter(
    work: Work,
    reason: str,
    detail: str,
    *,
    attempts: int,
    first_attempt_at: float,
    last_attempt_at: float,
    error: JobError | None = None,
    **extra,
) -> dict:
    """The one shape of a dead-letter record: what the job was doing, why it stopped,
    Meta's own words when Meta refused, and the attempts it took."""
    # Work's own fields only: a drain job's Lead is a Work with more besides.
    record = {f.name: getattr(work, f.name) for f in fields(Work) if f.name != "request_id"}
    record.update(
        reason=reason,
        detail=detail,
        attempts=attempts,
        first_attempt_at=first_attempt_at,
        last_attempt_at=last_attempt_at,
    )
    for name in ("code", "subcode", "user_title", "fbtrace_id", "call", "fix"):
        record[name] = getattr(error, name, None)
    return {**record, **extra}
