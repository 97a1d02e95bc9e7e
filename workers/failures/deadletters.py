"""Dead letters: terminal failures kept with their reason, listable, filterable, redacted
for display (replay.py requeues them; retention.py keeps the store tidy).

Notes: docs/internals/failures.md
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass

import redis
from rq import Queue
from rq.job import Job, JobStatus
from rq.registry import FailedJobRegistry
from rq.results import Result

from workers.common import counters, logs, replication, times
from workers.common.policy import FAILURE_TTL
from workers.common.queues import redis_key
from workers.common.refusals import QueueUnavailable
from workers.config.routing import dataset_of
from workers.events import accuracymarks

INDEX = redis_key("dead")
# job id -> "reason dataset"; and "reason dataset" -> how many wait, kept as they change, so
# a scrape reads a handful of fields at 100 dead letters or 100,000.
REASONS = redis_key("dead-reasons")
WAITING = redis_key("dead-waiting")
# Counts from a release that kept none are made once from the index (its one full read).
_RECOUNT = """
if redis.call('EXISTS', KEYS[2]) == 0 and redis.call('HLEN', KEYS[1]) > 0 then
  for _, value in ipairs(redis.call('HVALS', KEYS[1])) do redis.call('HINCRBY', KEYS[2], value, 1) end
end
"""
# KEYS: REASONS, WAITING. ARGV: job id, its new "reason dataset" ("" to forget it).
_MOVE = (
    _RECOUNT
    + """
local old = redis.call('HGET', KEYS[1], ARGV[1])
if old == ARGV[2] then return 0 end
if old then
  if redis.call('HINCRBY', KEYS[2], old, -1) <= 0 then redis.call('HDEL', KEYS[2], old) end
end
if ARGV[2] == '' then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  redis.call('HINCRBY', KEYS[2], ARGV[2], 1)
end
return 1
"""
)
# Only their shas here; they run on the caller's client or pipeline, which loads them.
_MOVE_SCRIPT = redis.Redis().register_script(_MOVE)
_RECOUNT_SCRIPT = redis.Redis().register_script(_RECOUNT)

# Keys whose values may be personal data; never shown in a listing.
_PII_KEYS = {
    "email",
    "phone",
    "first_name",
    "last_name",
    "full_name",
    "name",
    "answers",
    "fields",
    "field_data",
    "raw",
    "em",
    "ph",
    "fn",
    "ln",
    "db",
    "client_ip_address",
}


_log = logs.get(__name__)


def record_key(job_id: str) -> str:
    return redis_key("dead", job_id)


def record(connection: redis.Redis, entry: dict, new: bool = True) -> None:
    """Index a dead letter (the job goes to RQ's failed registry as the job raises);
    `new=False` when an existing one only changes its reason (not counted again)."""
    with connection.pipeline() as pipe:
        pipe.set(record_key(entry["job_id"]), json.dumps(entry, sort_keys=True))
        pipe.zadd(INDEX, {entry["job_id"]: entry["last_attempt_at"]})
        dataset = dataset_of(entry)
        _MOVE_SCRIPT(keys=[REASONS, WAITING], args=[entry["job_id"], f"{entry['reason']} {dataset}"], client=pipe)
        if new:
            counters.count(pipe, counters.DEAD, entry["reason"], dataset)
        if entry.get("source") == "meta" and isinstance(entry.get("args"), dict):
            accuracymarks.mark(pipe, "dead", [entry["args"]])
        pipe.execute()
    # On a replica before the worker moves on, as an acknowledged lead is. Without one in
    # time the worker still moves on: holding the job would stall delivery, and the record
    # comes before the job's removal in Redis's one replication stream, so a failover that
    # loses it loses the removal too and the lead is worked again.
    try:
        replication.confirm(connection)
    except (QueueUnavailable, redis.RedisError) as err:
        _log.warning("dead_letter_not_replicated", job_id=entry["job_id"], error=str(err))


def by_reason(connection: redis.Redis) -> Counter:
    """How many dead letters wait, per (reason, dataset): the kept counts, never the index."""
    _RECOUNT_SCRIPT(keys=[REASONS, WAITING], client=connection)
    out: Counter = Counter()
    for value, count in connection.hgetall(WAITING).items():
        reason, _, dataset = value.decode().partition(" ")
        if int(count) > 0:
            out[(reason, dataset or "default")] += int(count)
    return out


def get(connection: redis.Redis, job_id: str) -> dict | None:
    raw = connection.get(record_key(job_id))
    return json.loads(raw) if raw else None


def store(queue: Queue, job: Job, failure: str) -> None:
    """Put a job that never ran on its own (a refused stage event, a lead a batch handed
    off) in RQ's failed registry, as RQ leaves a job it ran and failed: `rq info`, the
    dead-letter list and replay then see it like any other. `failure`: the reason line."""
    job.origin = queue.name
    job._status = JobStatus.FAILED
    job.save()
    Result.create_failure(job, FAILURE_TTL, failure)
    FailedJobRegistry(queue=queue).add(job, ttl=FAILURE_TTL, exc_string=failure)


def forget(connection: redis.Redis, job_id: str, pipe=None) -> None:
    """Drop a dead letter's record; in `pipe` when given (the caller executes it)."""
    own = pipe is None
    pipe = connection.pipeline() if own else pipe
    pipe.delete(record_key(job_id))
    pipe.zrem(INDEX, job_id)
    _MOVE_SCRIPT(keys=[REASONS, WAITING], args=[job_id, ""], client=pipe)
    if own:
        pipe.execute()
        pipe.reset()


def purge(connection: redis.Redis, queue: Queue, job_id: str) -> None:
    """Delete a dead letter and its failed job: it can no longer be replayed."""
    registry = FailedJobRegistry(queue=queue)
    job = queue.fetch_job(job_id)
    if job is not None:
        registry.remove(job, delete_job=True)
    forget(connection, job_id)


def redact(value):
    """A copy safe to print: personal-data keys replaced, ids kept."""
    if isinstance(value, dict):
        return {k: "[redacted]" if k in _PII_KEYS else redact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    return value


@dataclass(frozen=True)
class Filter:
    job_ids: tuple[str, ...] = ()
    reason: str | None = None
    source: str | None = None
    event_name: str | None = None
    since: float | None = None
    dataset: str | None = None  # a dataset's name (routing.py)

    @classmethod
    def from_mapping(cls, values, job_ids=()) -> "Filter":
        """From CLI options or request parameters: reason, source, event_name (or event),
        since, dataset.

        Raises:
            ValueError: a malformed `since`.
        """
        since = values.get("since")
        return cls(
            job_ids=tuple(job_ids),
            reason=values.get("reason") or None,
            source=values.get("source") or None,
            event_name=values.get("event_name") or values.get("event") or None,
            since=times.since(str(since)) if since else None,
            dataset=values.get("dataset") or None,
        )

    @property
    def empty(self) -> bool:
        return not (self.job_ids or self.reason or self.source or self.event_name or self.since or self.dataset)

    def matches(self, entry: dict) -> bool:
        return (
            (not self.job_ids or entry["job_id"] in self.job_ids)
            and (self.dataset is None or dataset_of(entry) == self.dataset)
            and (self.reason is None or entry.get("reason") == self.reason)
            and (self.source is None or entry.get("source") == self.source)
            and (self.event_name is None or entry.get("event_name") == self.event_name)
            and (self.since is None or entry.get("last_attempt_at", 0) >= self.since)
        )


def select(connection: redis.Redis, queue: Queue, where: Filter) -> list[dict]:
    """Dead letters matching the filter, oldest first; index entries whose job left
    the failed registry (replayed elsewhere, expired) are dropped from the index."""
    job_ids = list(where.job_ids) or [j.decode() for j in connection.zrangebyscore(INDEX, where.since or 0, "+inf")]
    raws = connection.mget([record_key(j) for j in job_ids]) if job_ids else []
    failed_key = FailedJobRegistry(queue=queue).key
    with connection.pipeline(transaction=False) as pipe:
        for job_id in job_ids:
            pipe.zscore(failed_key, job_id)
        present = pipe.execute() if job_ids else []
    out = []
    for job_id, raw, score in zip(job_ids, raws, present):
        if raw is None:
            continue
        if score is None:
            forget(connection, job_id)
            continue
        entry = json.loads(raw)
        if where.matches(entry):
            out.append(entry)
    return out


def summary(entry: dict) -> dict:
    """A listing row: everything but personal data."""
    return {
        **entry,
        "args": redact(entry.get("args")),
        "age_hours": round((time.time() - entry["last_attempt_at"]) / 3600, 1),
    }
