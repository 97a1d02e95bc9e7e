"""Dedupe and durable enqueue: the one place the receiver touches Redis."""

from __future__ import annotations

import redis
from rq import Queue
from rq.exceptions import DuplicateJobError

from workers import policy

from .errors import QueueUnavailable

JOB_FUNCTIONS = {"meta": "workers.jobs.process_meta_lead"}


def job_id(dedupe_key: str) -> str:
    """A readable, deterministic job id: `meta:123` becomes `lead-meta-123`."""
    return "lead-" + dedupe_key.replace(":", "-")


def enqueue_new(queue: Queue, source: str, items: list[dict], dedupe_key) -> dict:
    """Enqueue one job per item not seen before; return counts and the new job ids.

    The job id is derived from the item's dedupe key, and RQ's unique enqueue checks
    for that id, saves the job and pushes it in one Lua script: a lead is either
    queued or already known, never marked seen without a job. A job's hash outlives
    Meta's 36-hour redelivery window (policy.RESULT_TTL, policy.FAILURE_TTL).

    Raises:
        QueueUnavailable: Redis could not be reached or refused the write.
    """
    new_ids, duplicates = [], 0
    try:
        for item in items:
            try:
                job = queue.enqueue(
                    JOB_FUNCTIONS[source],
                    item,
                    job_id=job_id(dedupe_key(item)),
                    unique=True,
                    result_ttl=policy.RESULT_TTL,
                    failure_ttl=policy.FAILURE_TTL,
                    description=f"{source} lead {dedupe_key(item)}",
                )
            except DuplicateJobError:
                duplicates += 1
            else:
                new_ids.append(job.id)
    except redis.RedisError as err:
        raise QueueUnavailable(f"queue unavailable ({type(err).__name__}); retry later") from None
    return {"accepted": len(new_ids), "duplicates": duplicates, "job_ids": new_ids}
