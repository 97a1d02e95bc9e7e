"""One run of a job: count the attempt, and on failure apply the policy.

Notes: docs/internals/engine.md
"""

from __future__ import annotations

import os
import socket
import time
from contextlib import contextmanager

import redis
from rq import Queue, get_current_job
from rq.job import Job

from workers.common import clock, counters, logs, policy
from workers.common.policy import JobError, Paused
from workers.common.queues import SERIALIZER
from workers.engine.jobwork import Work, dead_letter
from workers.events import conversions
from workers.failures import deadletters
from workers.graphapi.pauses import Pauses

log = logs.get(__name__)
_DATA_ERRORS = (TypeError, ValueError, KeyError, IndexError, AttributeError, OverflowError)


def _retry_in(job: Job, seconds: int) -> None:
    # RQ retries a failed job while retries_left > 0, after retry_intervals[0] here;
    # setting both per failure lets the policy pick each delay (one interval per retry).
    job.retries_left = 1
    job.retry_intervals = [max(int(seconds), 0)]


def _no_retry(job: Job) -> None:
    job.retries_left = 0


@contextmanager
def attempt(connection: redis.Redis, graph, work: Work, retry_base: float):
    """Run one attempt of `work`; the body may fill in `work.event_time` once it knows it
    (what the 7-day deadline counts from).

    Raises:
        JobError, Paused: re-raised after the job was set to retry or dead-lettered.
    """
    job = get_current_job()
    now = clock.now()
    meta = job.meta if job else {}
    meta["attempts"] = meta.get("attempts", 0) + 1
    meta.setdefault("first_attempt_at", now)
    meta["last_attempt_at"] = now
    # Who runs it: recovery must not requeue a job whose work horse outlived its worker.
    meta["host"], meta["pid"] = socket.gethostname(), os.getpid()
    if job:
        job.save_meta()
    started = time.monotonic()
    try:
        try:
            yield work
        except _DATA_ERRORS as err:
            # The job's data cannot be used (a value no check foresaw): a dead letter with
            # its reason now, not a crash that recovery would retry three times.
            log.error("job_data_unusable", job_id=work.job_id, error=type(err).__name__, where=logs.where(err))
            raise JobError(policy.INVALID, f"the job's data could not be used ({type(err).__name__})") from None
    except (Paused, JobError) as err:
        delay, _ = settle(connection, graph, work, meta, err, retry_base, started, _queue(job) if job else None)
        if job:
            job.save_meta()
            if delay is None:
                _no_retry(job)
            else:
                _retry_in(job, delay)
        raise


def settle(
    connection: redis.Redis,
    graph,
    work: Work,
    meta: dict,
    err: Exception,
    retry_base: float,
    started: float,
    queue: Queue | None,
) -> tuple[int | None, dict | None]:
    """What a failed attempt (`meta` counts it) means, for a job or a lead a batch hands
    to a job of its own: seconds until the next try, or None when it was dead-lettered
    (recorded here, and returned with it). Logs the attempt and counts it. `queue`: where a resumed token's
    waiting jobs go.

    Paused: the job waits for the token without using up an attempt; one waiting job
    per policy.PROBE_EVERY_SECONDS tests the token and resumes everyone on success.
    """
    fields = {
        "job_id": work.job_id,
        "event_id": work.event_id,
        "attempt": meta["attempts"],
        "request_id": work.request_id,
    }
    if isinstance(err, Paused) and closed(work.event_time):
        err = JobError(policy.EXPIRED, "Meta's 7-day window closed while its token was paused")
    if isinstance(err, Paused):
        meta["attempts"] -= 1  # waiting for a token is not a try
        pauses = Pauses(connection)
        pauses.wait(err.fingerprint, work.job_id)
        delay = policy.PAUSE_RECHECK_SECONDS
        if pauses.retest(err.fingerprint, graph.probe, queue):
            delay = 0
        _count(connection, work, "waiting_for_token")
        log.info("job_attempt", outcome="waiting_for_token", fingerprint=err.fingerprint, retry_in=delay, **fields)
        return delay, None
    deadline = conversions.deadline(work.event_time or meta["last_attempt_at"])
    decision = policy.decide(err, meta["attempts"], deadline, clock.now(), base=retry_base)
    elapsed = round((time.monotonic() - started) * 1000, 1)
    if decision.retry_in is not None:
        _count(connection, work, "retry", retry_reason=err.reason)
        log.warning(
            "job_attempt", outcome="retry", retry_in=decision.retry_in, elapsed_ms=elapsed, **fields, **err.as_dict()
        )
        return decision.retry_in, None
    record = _dead_letter(work, meta, err, decision.reason)
    deadletters.record(connection, record)
    _count(connection, work, "dead_letter")
    log.warning(
        "job_attempt",
        outcome="dead_letter",
        elapsed_ms=elapsed,
        **fields,
        **{**err.as_dict(), "reason": decision.reason},
    )
    return None, record


def closed(event_time: float | None) -> bool:
    """Meta's window for an event about `event_time` has closed: nothing, not even a
    token's return, can send it, so it is not kept waiting for one."""
    return bool(event_time) and clock.now() >= conversions.deadline(event_time)


def finished(connection: redis.Redis, work: Work, outcome: str, **fields) -> None:
    """The log line and the count of a job run that ended without error (delivered,
    dry_run, already_confirmed)."""
    _count(connection, work, outcome)
    log.info(
        "job_attempt", outcome=outcome, job_id=work.job_id, event_id=work.event_id, request_id=work.request_id, **fields
    )


def _count(connection: redis.Redis, work: Work, outcome: str, retry_reason: str | None = None) -> None:
    count(connection, {work.source or "unknown": 1}, outcome, retry_reason)


def count(connection: redis.Redis, per_source: dict[str, int], outcome: str, retry_reason: str | None = None) -> None:
    """Count leads' attempts ending in `outcome` (and the retries among them), per source."""
    with connection.pipeline(transaction=False) as pipe:
        for source, number in per_source.items():
            counters.count(pipe, counters.JOBS, source, outcome, by=number)
            if retry_reason:
                counters.count(pipe, counters.RETRIES, source, retry_reason, by=number)
        pipe.execute()


def _queue(job: Job) -> Queue:
    return Queue(job.origin, connection=job.connection, serializer=SERIALIZER)


def _dead_letter(work: Work, meta: dict, err: JobError, reason: str) -> dict:
    detail = err.detail
    if reason == policy.EXPIRED and err.reason != policy.EXPIRED:
        detail = f"{err.reason} ({err.detail}); no retry fits before Meta's 7-day window closes"
    return dead_letter(
        work,
        reason,
        detail,
        error=err,
        attempts=meta["attempts"],
        first_attempt_at=meta["first_attempt_at"],
        last_attempt_at=meta["last_attempt_at"],
    )
