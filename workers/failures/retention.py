"""Dead-letter housekeeping, at each worker's maintenance pass: forget what RQ no longer
holds, and drop sending-only personal data past its retention."""

from __future__ import annotations

import json
import time

import redis
from rq import Queue
from rq.registry import FailedJobRegistry

from workers.events import conversions
from workers.failures.deadletters import INDEX, forget, get, record_key
from workers.intake.admission import HELD


def prune(connection: redis.Redis, queue: Queue, settle_seconds: int = 600, now: float | None = None) -> int:
    """Forget dead letters whose job left RQ's failed registry (its 30 days passed, or
    someone removed it with rq's own tools), so listings and gauges match what can be
    replayed. A dead letter is indexed just before its job reaches the registry, hence
    the settle time. Returns how many were forgotten."""
    cutoff = (time.time() if now is None else now) - settle_seconds
    job_ids = [j.decode() for j in connection.zrangebyscore(INDEX, 0, cutoff)]
    registry = FailedJobRegistry(queue=queue)
    with connection.pipeline(transaction=False) as pipe:
        for job_id in job_ids:
            pipe.zscore(registry.key, job_id)
        present = pipe.execute() if job_ids else []
    gone = [job_id for job_id, score in zip(job_ids, present) if score is None]
    for job_id in gone:
        forget(connection, job_id)
    return len(gone)


# Personal data a job may carry for sending (never raw emails, phones or names: those
# are hashed on arrival): dropped from dead letters after the retention.
_SENDING_ONLY = ("client_ip_address", "client_user_agent")


def scrub(connection: redis.Redis, queue: Queue, retention_days: int, now: float | None = None) -> int:
    """Drop the IP address and user agent from dead letters older than the retention.

    Past Meta's 7 days such an event can no longer be sent, so nothing is lost. Returns
    how many dead letters were scrubbed.
    """
    cutoff = (time.time() if now is None else now) - retention_days * 86400
    scrubbed = 0
    for job_id in [j.decode() for j in connection.zrangebyscore(INDEX, 0, cutoff)]:
        entry = get(connection, job_id)
        user_data = ((entry or {}).get("args") or {}).get("user_data") or {}
        if not entry or entry.get("scrubbed") or not any(k in user_data for k in _SENDING_ONLY):
            continue
        for key_name in _SENDING_ONLY:
            user_data.pop(key_name, None)
        connection.set(record_key(job_id), json.dumps({**entry, "scrubbed": True}, sort_keys=True))
        job = queue.fetch_job(job_id)
        if job is not None and job.args and isinstance(job.args[0], dict):
            payload = dict(job.args[0])
            payload["user_data"] = {k: v for k, v in (payload.get("user_data") or {}).items() if k not in _SENDING_ONLY}
            job.args = [payload, *job.args[1:]]  # the setter re-serialises the job's data
            job.save()
        scrubbed += 1
    return scrubbed


def drop_held(connection: redis.Redis, now: float | None = None) -> int:
    """Forget leads held for an unknown Page once Meta's 7-day window for them has closed:
    their Lead event could no longer be sent. Returns how many were dropped."""
    cutoff = conversions.oldest_acceptable(now)
    stale = [
        leadgen_id
        for leadgen_id, raw in connection.hgetall(HELD).items()
        if (json.loads(raw).get("created_time") or json.loads(raw)["held_at"]) < cutoff
    ]
    if stale:
        connection.hdel(HELD, *stale)
    return len(stale)
