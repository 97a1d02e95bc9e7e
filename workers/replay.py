"""Replaying dead letters: each on its own, never an event Meta already confirmed or one
past its 7-day window; replaying auth failures first wakes the jobs waiting on paused tokens."""

from __future__ import annotations

import redis
from rq import Queue
from rq.exceptions import InvalidJobOperation, NoSuchJobError
from rq.registry import FailedJobRegistry

from . import capi, events
from .deadletters import Filter, forget, record, select
from .pauses import Pauses
from .policy import AUTH, EXPIRED

def sendable(entry: dict, now: float | None = None) -> bool:
    """Whether Meta would still accept the event (7-day window, margin included)."""
    event_time = entry.get("event_time")
    return event_time is None or event_time > events.oldest_acceptable(now)


def replay_one(connection: redis.Redis, queue: Queue, entry: dict, dry_run: bool = False,
               now: float | None = None) -> str:
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
    if not sendable(entry, now):
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
           progress=None, now: float | None = None) -> dict:
    """Replay each entry on its own; one job's error never stops the others.

    Returns counts per outcome (requeued, already_delivered, expired, failed) and
    the per-job results.
    """
    counts = {"requeued": 0, "already_delivered": 0, "expired": 0, "failed": 0}
    results = []
    for entry in entries:
        try:
            outcome, error = replay_one(connection, queue, entry, dry_run, now), None
        except (redis.RedisError, NoSuchJobError, InvalidJobOperation) as err:
            outcome, error = "failed", f"{type(err).__name__}: {err}"
        counts[outcome] += 1
        results.append({"job_id": entry["job_id"], "outcome": outcome, "reason": entry.get("reason"),
                        **({"error": error} if error else {})})
        if progress:
            progress(1)
    return {"dry_run": dry_run, "counts": counts, "results": results}


def run_replay(connection: redis.Redis, queue: Queue, where: Filter, everything: bool = False,
               dry_run: bool = False, progress_factory=None, now: float | None = None) -> dict:
    """What `leadrelay replay` and `POST /admin/replay` do: select, replay each on its own.

    When auth failures are replayed (the token is fixed), the token pauses are lifted
    first, so the replayed jobs and those that waited run now rather than wait another
    recheck. A job id named but not dead-lettered counts as `not_found`. `now` is when
    Meta's 7-day window is judged (the current time unless given).
    """
    entries = select(connection, queue, where)
    pauses = Pauses(connection)
    paused = pauses.all()
    woken = 0
    if not dry_run and (everything or where.reason == AUTH or any(e.get("reason") == AUTH for e in entries)):
        woken = sum(pauses.resume(p["fingerprint"], queue) for p in paused)
    if progress_factory and not dry_run:
        with progress_factory(len(entries)) as update:
            result = replay(connection, queue, entries, progress=update, now=now)
    else:
        result = replay(connection, queue, entries, dry_run=dry_run, now=now)
    found = {e["job_id"] for e in entries}
    missing = [job_id for job_id in where.job_ids if job_id not in found]
    result["counts"]["not_found"] = len(missing)
    result["results"] += [{"job_id": job_id, "outcome": "not_found", "error": "no such dead letter"}
                          for job_id in missing]
    result["waiting_on_paused_tokens"] = sum(p["waiting"] for p in paused)
    result["woken"] = woken
    result["selected"] = len(entries)
    return result
