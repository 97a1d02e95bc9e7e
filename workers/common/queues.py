"""Redis connections, queue names and Redis key names: one place for both processes."""

from __future__ import annotations

import hashlib
import re
import time

import redis
from rq import Queue
from rq.serializers import JSONSerializer

from workers.common import redisurl

# Jobs take plain JSON dicts, never pickles: a job must survive a deploy that changes
# our classes, and an engineer must be able to read it in the dead-letter list.
SERIALIZER = JSONSerializer

PREFIX = "leadrelay:"
_NOT_IN_JOB_IDS = re.compile(r"[^A-Za-z0-9_-]")  # RQ accepts letters, digits, _ and - only


def redis_key(*parts: str) -> str:
    """A Redis key of ours: `leadrelay:` and the parts, colon-separated."""
    return PREFIX + ":".join(parts)


def job_id(*parts: str) -> str:
    """A readable, deterministic job id from its parts (`lead`, `meta`, `123` is
    `lead-meta-123`). Ids are checked on arrival, so this is the rare case: any other
    character (a custom event name's space) becomes `_`, and a digest of the original
    keeps two such ids apart."""
    joined = "-".join(part.replace(":", "-") for part in parts)
    if not _NOT_IN_JOB_IDS.search(joined):
        return joined
    digest = hashlib.sha256(joined.encode("utf-8", "replace")).hexdigest()[:12]
    return f"{_NOT_IN_JOB_IDS.sub('_', joined)[:150]}-{digest}"


def connect(url: str) -> redis.Redis:
    """A client for REDIS_URL, a single server or a Sentinel-watched primary (redisurl.py)."""
    # Short timeouts so a lost Redis turns into a 503 (Meta retries) instead of a hung request.
    return redisurl.client(url, socket_connect_timeout=2, socket_timeout=5, health_check_interval=30)


def queue(connection: redis.Redis, name: str) -> Queue:
    return Queue(name, connection=connection, serializer=SERIALIZER)


INBOX = redis_key("inbox")  # the stream of new leads drain jobs take (inbox.py)


def queue_status(q: Queue, now: float | None = None) -> dict:
    """Jobs per state, and how long the oldest waiting job or inbox lead has waited (0
    when none). New leads wait in the inbox, not as jobs: `queued` counts both."""
    now = time.time() if now is None else now
    oldest = 0.0
    head = q.get_job_ids(0, 1)  # RQ pushes to the tail and pops from the head
    job = q.fetch_job(head[0]) if head else None
    if job is not None and job.enqueued_at is not None:
        oldest = max(now - job.enqueued_at.timestamp(), 0.0)
    first = q.connection.xrange(INBOX, count=1)  # a stream id starts with its time in ms
    if first:
        oldest = max(oldest, now - int(first[0][0].split(b"-")[0]) / 1000)
    inbox = q.connection.xlen(INBOX)
    return {
        "queue": q.name,
        "queued": q.count + inbox,
        "jobs": q.count,
        "inbox": inbox,
        # Popped by a worker that died before starting them; RQ requeues them after a minute.
        "intermediate": q.connection.llen(q.intermediate_queue_key),
        "started": q.started_job_registry.count,
        "scheduled": q.scheduled_job_registry.count,
        "deferred": q.deferred_job_registry.count,
        "failed": q.failed_job_registry.count,
        "finished": q.finished_job_registry.count,
        "oldest_queued_seconds": round(oldest, 3),
    }


ROUTINE = ("sweep-", "watch-")  # the scheduled sweep and token watch: jobs, but no lead waits on them


def routine_scheduled(q: Queue) -> int:
    """How many of the scheduled jobs are the routine sweep and watch, not retries (a
    scan of the schedule: for the admin page, not for every scrape)."""
    key = q.scheduled_job_registry.key
    return sum(1 for prefix in ROUTINE for _ in q.connection.zscan_iter(key, match=f"{prefix}*", count=1000))
