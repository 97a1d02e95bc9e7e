"""Dead-letter housekeeping, at each worker's maintenance pass: forget what RQ no longer
holds, and drop sending-only personal data past its retention."""

from __future__ import annotations

import json
import time

import redis
from rq import Queue
from rq.registry import FailedJobRegistry

from workers.common.queues import redis_key
from workers.events import conversions
from workers.failures.deadletters import INDEX, forget, record_key
from workers.intake.admission import HELD

PASS = redis_key("dead-pass")  # where the prune and the scrub stand: a ZSCAN cursor, a time
PER_PASS = 5000  # dead letters a pass looks at, at most: bounded at any number of them
_PAGE = 500  # read in one command


def prune(connection: redis.Redis, queue: Queue, settle_seconds: int = 600, now: float | None = None) -> int:
    """Forget dead letters whose job left RQ's failed registry (its 30 days passed, or
    someone removed it with rq's own tools), so listings and gauges match what can be
    replayed. A dead letter is indexed just before its job reaches the registry, hence
    the settle time. A pass looks at PER_PASS of them from where the last one stopped.
    Returns how many were forgotten."""
    cutoff = (time.time() if now is None else now) - settle_seconds
    cursor = int(connection.hget(PASS, "prune-cursor") or 0)
    registry = FailedJobRegistry(queue=queue)
    gone, seen = [], 0
    while True:
        cursor, entries = connection.zscan(INDEX, cursor, count=_PAGE)
        settled = [job_id.decode() for job_id, score in entries if score <= cutoff]
        with connection.pipeline(transaction=False) as pipe:
            for job_id in settled:
                pipe.zscore(registry.key, job_id)
            present = pipe.execute() if settled else []
        gone += [job_id for job_id, score in zip(settled, present) if score is None]
        seen += len(entries)
        if cursor == 0 or seen >= PER_PASS:
            break
    connection.hset(PASS, "prune-cursor", cursor)
    for job_id in gone:
        forget(connection, job_id)
    return len(gone)


# Personal data a job may carry for sending (never raw emails, phones or names: those
# are hashed on arrival): dropped from dead letters after the retention.
_SENDING_ONLY = ("client_ip_address", "client_user_agent")


def scrub(connection: redis.Redis, queue: Queue, retention_days: int, now: float | None = None) -> int:
    """Drop the IP address and user agent from dead letters older than the retention.

    Past Meta's 7 days such an event can no longer be sent, so nothing is lost. A pass
    reads the dead letters that passed the retention since the last one (they are indexed
    at their last attempt, when they are recorded), PER_PASS at most. Returns how many
    dead letters were scrubbed.
    """
    cutoff = (time.time() if now is None else now) - retention_days * 86400
    since = connection.hget(PASS, "scrubbed-until") or b"-inf"
    scrubbed = read = 0
    while read < PER_PASS:
        page = connection.zrangebyscore(INDEX, b"(" + since, cutoff, start=0, num=_PAGE, withscores=True)
        if not page:
            break
        last = page[-1][1]
        if len(page) == _PAGE:  # the rest of the dead letters at the page's last time, all of them
            page += [(j, last) for j in connection.zrangebyscore(INDEX, last, last) if (j, last) not in page]
        job_ids = [job_id.decode() for job_id, _ in page]
        entries = [json.loads(raw) if raw else None for raw in connection.mget([record_key(j) for j in job_ids])]
        scrubbed += sum(_scrub(connection, queue, job_id, entry) for job_id, entry in zip(job_ids, entries))
        since = repr(last).encode()
        connection.hset(PASS, "scrubbed-until", since)
        read += len(page)
    return scrubbed


def _scrub(connection: redis.Redis, queue: Queue, job_id: str, entry: dict | None) -> bool:
    user_data = ((entry or {}).get("args") or {}).get("user_data") or {}
    if not entry or entry.get("scrubbed") or not any(k in user_data for k in _SENDING_ONLY):
        return False
    for key_name in _SENDING_ONLY:
        user_data.pop(key_name, None)
    connection.set(record_key(job_id), json.dumps({**entry, "scrubbed": True}, sort_keys=True))
    job = queue.fetch_job(job_id)
    if job is not None and job.args and isinstance(job.args[0], dict):
        payload = dict(job.args[0])
        payload["user_data"] = {k: v for k, v in (payload.get("user_data") or {}).items() if k not in _SENDING_ONLY}
        job.args = [payload, *job.args[1:]]  # the setter re-serialises the job's data
        job.save()
    return True


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
