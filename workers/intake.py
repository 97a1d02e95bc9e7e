"""Dedupe and durable enqueue: the one place the receiver touches Redis."""

from __future__ import annotations

import json
import time

import redis
from rq import Queue
from rq.exceptions import DuplicateJobError

from workers import policy
from workers.queues import key

from .errors import QueueUnavailable

JOB_FUNCTIONS = {"meta": "workers.jobs.process_meta_lead", "typeform": "workers.jobs.send_form_lead",
                 "tally": "workers.jobs.send_form_lead"}
IGNORED = key("ignored")
IGNORED_KEEP = 1000


def job_id(dedupe_key: str) -> str:
    """A readable, deterministic job id: `meta:123` becomes `lead-meta-123`."""
    return "lead-" + dedupe_key.replace(":", "-")


def enqueue_new(queue: Queue, source: str, items: list[dict], dedupe_key, request_id: str | None = None) -> dict:
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
                    description=f"{source} {dedupe_key(item)}",
                    meta={"request_id": request_id} if request_id else None,
                )
            except DuplicateJobError:
                duplicates += 1
            else:
                new_ids.append(job.id)
    except redis.RedisError as err:
        raise QueueUnavailable(f"queue unavailable ({type(err).__name__}); retry later") from None
    return {"accepted": len(new_ids), "duplicates": duplicates, "job_ids": new_ids}


def record_ignored(connection: redis.Redis, source: str, skipped: list[dict]) -> None:
    """Keep what was acknowledged but not sent (unknown form, no consent, test delivery,
    other event types), newest first, for `leadrelay ignored`. Ids and reasons only.

    Raises:
        QueueUnavailable: Redis could not be reached.
    """
    if not skipped:
        return
    try:
        with connection.pipeline() as pipe:
            for item in skipped:
                pipe.lpush(IGNORED, json.dumps({"source": source, "at": int(time.time()), **item}, sort_keys=True))
            pipe.ltrim(IGNORED, 0, IGNORED_KEEP - 1)
            pipe.execute()
    except redis.RedisError as err:
        raise QueueUnavailable(f"queue unavailable ({type(err).__name__}); retry later") from None
