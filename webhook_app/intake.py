"""Dedupe and durable enqueue: the one place the receiver touches Redis."""

from __future__ import annotations

import redis
from rq import Queue, Retry

from workers import policy
from workers.queues import key

from .errors import QueueUnavailable

JOB_FUNCTIONS = {"meta": "workers.jobs.process_meta_lead"}


def enqueue_new(connection: redis.Redis, queue: Queue, source: str, items: list[dict], dedupe_ttl: int,
                dedupe_key) -> dict:
    """Enqueue one job per item not seen before; return counts and job ids.

    The dedupe markers and the jobs are written in one MULTI/EXEC under WATCH, so a
    lead is either marked seen *and* queued, or neither: a failure half-way can never
    leave a lead marked as seen that no job will ever process.

    Raises:
        QueueUnavailable: Redis could not be reached or refused the write.
    """
    unique = {dedupe_key(item): item for item in items}  # the same lead twice in one POST
    seen_keys = {k: key("seen", k) for k in unique}
    try:
        with connection.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(*seen_keys.values())
                    existing = {k for k, sk in seen_keys.items() if pipe.exists(sk)}
                    fresh = [k for k in unique if k not in existing]
                    pipe.multi()
                    for k in fresh:
                        pipe.set(seen_keys[k], 1, ex=dedupe_ttl)
                    jobs = queue.enqueue_many(
                        [
                            Queue.prepare_data(
                                JOB_FUNCTIONS[source],
                                args=(unique[k],),
                                job_id=job_id(k),
                                retry=Retry(max=policy.MAX_RETRIES, interval=list(policy.RETRY_INTERVALS)),
                                result_ttl=policy.RESULT_TTL,
                                failure_ttl=policy.FAILURE_TTL,
                                description=f"{source} lead {k}",
                            )
                            for k in fresh
                        ],
                        pipeline=pipe,
                    )
                    pipe.execute()
                    break
                except redis.WatchError:
                    continue  # someone marked one of these leads meanwhile: look again
    except redis.RedisError as err:
        raise QueueUnavailable(f"queue unavailable ({type(err).__name__}); retry later") from None
    return {
        "accepted": len(fresh),
        "duplicates": len(items) - len(fresh),
        "job_ids": [job.id for job in jobs],
    }


def job_id(dedupe_key: str) -> str:
    """A readable, deterministic job id: `meta:123` becomes `lead-meta-123`."""
    return "lead-" + dedupe_key.replace(":", "-")
