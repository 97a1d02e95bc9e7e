"""Replaying dead letters: each on its own, never an event Meta already confirmed or one
past its 7-day window; replaying auth failures first wakes the jobs waiting on paused tokens."""

from __future__ import annotations

import redis
from rq import Queue
from rq.job import Job
from rq.registry import FailedJobRegistry

from workers.common.policy import AUTH, EXPIRED
from workers.events import conversions, ledger
from workers.failures.deadletters import Filter, forget, record, select
from workers.graphapi.pauses import Pauses
from workers.intake import inbox
from workers.sources.registry import SOURCES


def sendable(entry: dict, now: float | None = None) -> bool:
    """Whether Meta would still accept the event (7-day window, margin included)."""
    event_time = entry.get("event_time")
    return event_time is None or event_time > conversions.oldest_acceptable(now)


BATCH = 500  # dead letters read and requeued per Redis round trip


def replay(
    connection: redis.Redis,
    queue: Queue,
    entries: list[dict],
    dry_run: bool = False,
    progress=None,
    now: float | None = None,
) -> dict:
    """Replay each entry on its own checks, in pipelined batches; one job's error never
    stops the others. An event Meta already confirmed is dropped, one past Meta's 7-day
    window is kept as expired, the rest are requeued with a fresh run of attempts: a
    lead goes back into the inbox (drain jobs take it in a batch), other jobs back on
    their queue.

    Returns counts per outcome (requeued, already_delivered, expired, failed) and
    the per-job results.
    """
    counts = {"requeued": 0, "already_delivered": 0, "expired": 0, "failed": 0}
    results = []
    for start in range(0, len(entries), BATCH):
        chunk = entries[start : start + BATCH]
        try:
            outcomes = _replay_batch(connection, queue, chunk, dry_run, now)
        except redis.RedisError as err:
            outcomes = {e["job_id"]: ("failed", f"{type(err).__name__}: {err}") for e in chunk}
        for entry in chunk:
            outcome, error = outcomes[entry["job_id"]]
            counts[outcome] += 1
            results.append(
                {
                    "job_id": entry["job_id"],
                    "outcome": outcome,
                    "reason": entry.get("reason"),
                    **({"error": error} if error else {}),
                }
            )
        if progress:
            progress(len(chunk))
    return {"dry_run": dry_run, "counts": counts, "results": results}


def _replay_batch(
    connection: redis.Redis, queue: Queue, entries: list[dict], dry_run: bool, now: float | None
) -> dict[str, tuple[str, str | None]]:
    """Outcome and error per job id for one batch: three round trips for the checks and
    the requeue, whatever the batch's size."""
    confirmed = ledger.confirmed_many(connection, [entry.get("event_id") for entry in entries])
    out, failed_key = {}, FailedJobRegistry(queue=queue).key
    done, waiting = [], []
    for entry, sent in zip(entries, confirmed):
        if sent:
            out[entry["job_id"]] = ("already_delivered", None)
            done.append(entry["job_id"])
        elif not sendable(entry, now):
            out[entry["job_id"]] = ("expired", None)
            if not dry_run and entry.get("reason") != EXPIRED:
                record(
                    connection,
                    {
                        **entry,
                        "reason": EXPIRED,
                        "detail": f"was {entry.get('reason')}: past Meta's 7-day window, refused at replay",
                    },
                    new=False,
                )
        else:
            out[entry["job_id"]] = ("requeued", None)
            waiting.append(entry["job_id"])
    if dry_run:
        return out
    leads = {e["job_id"]: e for e in entries if out[e["job_id"]][0] == "requeued" and _inbox_function(e)}
    waiting = [job_id for job_id in waiting if job_id not in leads]
    _to_inbox(connection, queue, failed_key, list(leads.values()), out)
    jobs = Job.fetch_many(waiting, connection=connection, serializer=queue.serializer) if waiting else []
    with connection.pipeline(transaction=False) as pipe:
        for job_id in done + [job.id for job in jobs if job is not None]:
            pipe.zrem(failed_key, job_id)  # as RQ's requeue: whoever removes it, requeues it
        removed = dict(zip(done + [job.id for job in jobs if job is not None], pipe.execute()))
    queues = {queue.name: queue}  # one Queue per origin: each asks Redis its version once
    with connection.pipeline() as pipe:
        for job_id in done:
            forget(connection, job_id, pipe)
        for job_id, job in zip(waiting, jobs):
            if job is None or not removed.get(job_id):
                out[job_id] = ("failed", f"job {job_id} is no longer a failed job (replayed elsewhere, or gone)")
                continue
            job.meta.pop("attempts", None)  # a replay starts a fresh run of attempts
            job.meta["replays"] = job.meta.get("replays", 0) + 1
            job.started_at = job.ended_at = None
            job._exc_info = ""  # as RQ's own requeue clears it
            origin = queues.setdefault(
                job.origin, Queue(job.origin, connection=connection, serializer=queue.serializer)
            )
            origin.enqueue_job(job, pipeline=pipe)
            forget(connection, job_id, pipe)
        pipe.execute()
    return out


def _inbox_function(entry: dict) -> str | None:
    """The job function of a dead-lettered lead (a lead's own job, whose arguments the
    dead letter holds), or None for other jobs (stage batches), which RQ requeues."""
    source = SOURCES.get(entry.get("source") or "")
    if not entry.get("job_id", "").startswith("lead-") or source is None or not isinstance(entry.get("args"), dict):
        return None
    return source.job


def _to_inbox(connection: redis.Redis, queue: Queue, failed_key: str, entries: list[dict], out: dict) -> None:
    """Replayed leads go back into the inbox, and drain jobs take them in batches, as new
    leads: two round trips for the lot. Their own job goes (a lead in the inbox must not
    have one, see batches), and so does the dead letter; a lead whose job someone else
    took off the failed registry first is theirs, not ours."""
    if not entries:
        return
    with connection.pipeline(transaction=False) as pipe:
        for entry in entries:
            pipe.zrem(failed_key, entry["job_id"])  # as RQ's requeue: whoever removes it, requeues it
        removed = pipe.execute()
    with connection.pipeline(transaction=False) as pipe:
        for entry, mine in zip(entries, removed):
            if not mine:
                out[entry["job_id"]] = (
                    "failed",
                    f"job {entry['job_id']} is no longer a failed job (replayed elsewhere, or gone)",
                )
                continue
            pipe.delete(Job.key_for(entry["job_id"]), f"rq:results:{entry['job_id']}")
            pipe.xadd(inbox.STREAM, {"e": inbox.entry(entry["job_id"], _inbox_function(entry), entry["args"])})
            forget(connection, entry["job_id"], pipe)
        pipe.execute()
    inbox.wake_for(queue, connection.xlen(inbox.STREAM))


def run_replay(
    connection: redis.Redis,
    queue: Queue,
    where: Filter,
    everything: bool = False,
    dry_run: bool = False,
    progress_factory=None,
    now: float | None = None,
) -> dict:
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
    result["results"] += [
        {"job_id": job_id, "outcome": "not_found", "error": "no such dead letter"} for job_id in missing
    ]
    result["waiting_on_paused_tokens"] = sum(p["waiting"] for p in paused)
    result["woken"] = woken
    result["selected"] = len(entries)
    return result
