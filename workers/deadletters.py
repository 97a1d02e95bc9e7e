"""Dead letters: terminal failures kept with their reason, listable and replayable.

The job itself stays in RQ's FailedJobRegistry (so `rq info` and rq-dashboard see
it); this module keeps an index beside it for filtering: one JSON record per job with
the reason class, Meta's code/subcode/user title/fbtrace_id, attempts, first and last
attempt times, and the time of the event the job was sending (to tell whether Meta
would still accept it).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass

import redis
from rq import Queue
from rq.exceptions import InvalidJobOperation, NoSuchJobError
from rq.registry import FailedJobRegistry

from . import capi, counters, events, times
from .pauses import Pauses
from .policy import AUTH, EXPIRED
from .queues import key

INDEX = key("dead")
REASONS = key("dead-reasons")  # job id -> reason, so the metrics count without reading records
# Keys whose values may be personal data; never shown in a listing.
_PII_KEYS = {"email", "phone", "first_name", "last_name", "full_name", "name", "answers", "fields", "field_data",
             "raw", "em", "ph", "fn", "ln", "db", "client_ip_address"}


def _record_key(job_id: str) -> str:
    return key("dead", job_id)


def record(connection: redis.Redis, entry: dict, new: bool = True) -> None:
    """Index a dead letter (the job goes to RQ's failed registry as the job raises);
    `new=False` when an existing one only changes its reason (not counted again)."""
    with connection.pipeline() as pipe:
        pipe.set(_record_key(entry["job_id"]), json.dumps(entry, sort_keys=True))
        pipe.zadd(INDEX, {entry["job_id"]: entry["last_attempt_at"]})
        pipe.hset(REASONS, entry["job_id"], entry["reason"])
        if new:
            counters.count(pipe, counters.DEAD, entry["reason"])
        pipe.execute()


def by_reason(connection: redis.Redis) -> Counter:
    """How many dead letters wait, per reason."""
    return Counter(reason.decode() for reason in connection.hvals(REASONS))


def get(connection: redis.Redis, job_id: str) -> dict | None:
    raw = connection.get(_record_key(job_id))
    return json.loads(raw) if raw else None


def forget(connection: redis.Redis, job_id: str) -> None:
    with connection.pipeline() as pipe:
        pipe.delete(_record_key(job_id))
        pipe.zrem(INDEX, job_id)
        pipe.hdel(REASONS, job_id)
        pipe.execute()


def purge(connection: redis.Redis, queue: Queue, job_id: str) -> None:
    """Delete a dead letter and its failed job: it can no longer be replayed."""
    registry = FailedJobRegistry(queue=queue)
    job = queue.fetch_job(job_id)
    if job is not None:
        registry.remove(job, delete_job=True)
    forget(connection, job_id)


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
        connection.set(_record_key(job_id), json.dumps({**entry, "scrubbed": True}, sort_keys=True))
        job = queue.fetch_job(job_id)
        if job is not None and job.args and isinstance(job.args[0], dict):
            payload = dict(job.args[0])
            payload["user_data"] = {k: v for k, v in (payload.get("user_data") or {}).items()
                                    if k not in _SENDING_ONLY}
            job.args = [payload, *job.args[1:]]  # the setter re-serialises the job's data
            job.save()
        scrubbed += 1
    return scrubbed


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

    @classmethod
    def from_mapping(cls, values, job_ids=()) -> "Filter":
        """From CLI options or request parameters: reason, source, event_name (or event), since.

        Raises:
            ValueError: a malformed `since`.
        """
        since = values.get("since")
        return cls(job_ids=tuple(job_ids), reason=values.get("reason") or None,
                   source=values.get("source") or None,
                   event_name=values.get("event_name") or values.get("event") or None,
                   since=times.since(str(since)) if since else None)

    @property
    def empty(self) -> bool:
        return not (self.job_ids or self.reason or self.source or self.event_name or self.since)

    def matches(self, entry: dict) -> bool:
        return ((not self.job_ids or entry["job_id"] in self.job_ids)
                and (self.reason is None or entry.get("reason") == self.reason)
                and (self.source is None or entry.get("source") == self.source)
                and (self.event_name is None or entry.get("event_name") == self.event_name)
                and (self.since is None or entry.get("last_attempt_at", 0) >= self.since))


def select(connection: redis.Redis, queue: Queue, where: Filter) -> list[dict]:
    """Dead letters matching the filter, oldest first; index entries whose job left
    the failed registry (replayed elsewhere, expired) are dropped from the index."""
    job_ids = list(where.job_ids) or [j.decode() for j in connection.zrangebyscore(INDEX, where.since or 0, "+inf")]
    raws = connection.mget([_record_key(j) for j in job_ids]) if job_ids else []
    failed = FailedJobRegistry(queue=queue)
    out = []
    for job_id, raw in zip(job_ids, raws):
        if raw is None:
            continue
        if job_id not in failed:
            forget(connection, job_id)
            continue
        entry = json.loads(raw)
        if where.matches(entry):
            out.append(entry)
    return out


def sendable(entry: dict, now: float | None = None) -> bool:
    """Whether Meta would still accept the event (7-day window, margin included)."""
    event_time = entry.get("event_time")
    return event_time is None or event_time > events.oldest_acceptable(now)


def replay_one(connection: redis.Redis, queue: Queue, entry: dict, dry_run: bool = False) -> str:
    """Requeue one dead letter; the outcome: requeued, already_delivered or expired.

    Raises:
        redis.RedisError, NoSuchJobError, InvalidJobOperation: this job could not be
            replayed; the caller counts it and goes on with the next.
    """
    if entry.get("event_id") and capi.confirmed(connection, entry["event_id"]):
        if not dry_run:
            FailedJobRegistry(queue=queue).remove(entry["job_id"])
            forget(connection, entry["job_id"])
        return "already_delivered"
    if not sendable(entry):
        if not dry_run and entry.get("reason") != EXPIRED:
            record(connection, {**entry, "reason": EXPIRED, "detail": f"was {entry.get('reason')}: "
                                f"past Meta's 7-day window, refused at replay"}, new=False)
        return "expired"
    if dry_run:
        return "requeued"
    job = queue.fetch_job(entry["job_id"])
    if job is None:
        raise NoSuchJobError(f"job {entry['job_id']} no longer exists")
    job.meta.pop("attempts", None)  # a replay starts a fresh run of attempts
    job.meta["replays"] = job.meta.get("replays", 0) + 1
    job.save_meta()
    FailedJobRegistry(queue=queue).requeue(job)
    forget(connection, entry["job_id"])
    return "requeued"


def replay(connection: redis.Redis, queue: Queue, entries: list[dict], dry_run: bool = False,
           progress=None) -> dict:
    """Replay each entry on its own; one job's error never stops the others.

    Returns counts per outcome (requeued, already_delivered, expired, failed) and
    the per-job results.
    """
    counts = {"requeued": 0, "already_delivered": 0, "expired": 0, "failed": 0}
    results = []
    for entry in entries:
        try:
            outcome, error = replay_one(connection, queue, entry, dry_run), None
        except (redis.RedisError, NoSuchJobError, InvalidJobOperation) as err:
            outcome, error = "failed", f"{type(err).__name__}: {err}"
        counts[outcome] += 1
        results.append({"job_id": entry["job_id"], "outcome": outcome, "reason": entry.get("reason"),
                        **({"error": error} if error else {})})
        if progress:
            progress(1)
    return {"dry_run": dry_run, "counts": counts, "results": results}


def run_replay(connection: redis.Redis, queue: Queue, where: Filter, everything: bool = False,
               dry_run: bool = False, progress_factory=None) -> dict:
    """What `leadrelay replay` and `POST /admin/replay` do: select, replay each on its own.

    When auth failures are replayed (the token is fixed), the token pauses are lifted
    first, so the replayed jobs and those that waited run now rather than wait another
    recheck. A job id named but not dead-lettered counts as `not_found`.
    """
    entries = select(connection, queue, where)
    pauses = Pauses(connection)
    paused = pauses.all()
    woken = 0
    if not dry_run and (everything or where.reason == AUTH or any(e.get("reason") == AUTH for e in entries)):
        woken = sum(pauses.resume(p["fingerprint"], queue) for p in paused)
    if progress_factory and not dry_run:
        with progress_factory(len(entries)) as update:
            result = replay(connection, queue, entries, progress=update)
    else:
        result = replay(connection, queue, entries, dry_run=dry_run)
    found = {e["job_id"] for e in entries}
    missing = [job_id for job_id in where.job_ids if job_id not in found]
    result["counts"]["not_found"] = len(missing)
    result["results"] += [{"job_id": job_id, "outcome": "not_found", "error": "no such dead letter"}
                          for job_id in missing]
    result["waiting_on_paused_tokens"] = sum(p["waiting"] for p in paused)
    result["woken"] = woken
    result["selected"] = len(entries)
    return result


def summary(entry: dict) -> dict:
    """A listing row: everything but personal data."""
    return {**entry, "args": redact(entry.get("args")), "age_hours": round((time.time() - entry["last_attempt_at"])
                                                                            / 3600, 1)}
