"""Inbox entries that cannot be handled: each stops alone, as an `invalid` dead letter,
and the line goes on.

Notes: docs/internals/engine.md
"""

from __future__ import annotations

import json
import time
import traceback
from collections import Counter

import redis
from rq.timeouts import JobTimeoutException

from workers.common import counters, jsonbody, logs
from workers.common.policy import FAILURE_TTL, INVALID, JobError
from workers.common.queues import redis_key
from workers.engine.context import Context
from workers.engine.handoff import hand_off
from workers.engine.inflight import Lead, failed
from workers.engine.jobwork import Work, dead_letter
from workers.failures import deadletters
from workers.intake import inbox

log = logs.get(__name__)
MAX_TRIES = 3  # takings up from a dead or stopped drain job before an entry is set aside
KEPT = redis_key("quarantine")  # entries too broken to be a job, as JSON text (for FAILURE_TTL)
# Redis away, or refusing writes (full, read-only replica): nothing is wrong with the
# entries. A DataError is redis-py refusing a value of the entry: that one is the entry's.
REDIS_TROUBLE = (redis.ConnectionError, redis.TimeoutError, redis.ResponseError)


def not_the_entries(err: BaseException) -> bool:
    """Trouble that says nothing about the entries: Redis away or refusing, or RQ's job
    timeout (Meta slow): they stay pending, and are taken back."""
    return (
        isinstance(err, JobTimeoutException) or isinstance(err, REDIS_TROUBLE) and not isinstance(err, redis.DataError)
    )


def where(err: BaseException) -> str:
    """The innermost place of ours the error came from (`batchsteps.py:26 in already_done`):
    enough to find the bug, and no value of the lead, so no personal data."""
    frames = [frame for frame in traceback.extract_tb(err.__traceback__) if "/workers/" in frame.filename]
    if not frames:
        return type(err).__name__
    last = frames[-1]
    return f"{type(err).__name__} at {last.filename.rsplit('/workers/', 1)[1]}:{last.lineno} in {last.name}"


def set_aside(ctx: Context, queue, entry_id: str | None, entry: dict, cause: str) -> Counter:
    """Dead-letter one inbox entry as `invalid` (`cause` says why), then acknowledge it.

    The dead letter is the lead's own job, stored in RQ's failed registry as any handed-off
    lead's is: listed, counted and replayable. An entry too broken even to be a lead's job
    is kept whole in `leadrelay:quarantine`, with a dead-letter record that says so.
    """
    err = JobError(INVALID, f"could not be handled: {cause}")
    clean = jsonbody.without_surrogates(json.loads(json.dumps(entry)))  # a copy any encoder takes
    try:
        lead = Lead.of_entry(entry_id, clean)
        outcome = hand_off(ctx, queue, failed(lead, err, None), time.monotonic())
        source = lead.source
    except Exception as failure:  # noqa: BLE001 -- the last resort must not fail for the same reason
        if not_the_entries(failure):
            raise
        cause = f"{cause}; then {where(failure)}"
        outcome, source = "quarantined", "unknown"
        _kept(ctx.connection, entry_id, entry, clean, cause)
    with ctx.connection.pipeline() as pipe:
        counters.count(pipe, counters.JOBS, source, outcome)
        inbox.done(pipe, [entry_id] if entry_id else [])
        pipe.execute()
    log.error(
        "lead_set_aside", job_id=str(clean.get("id")), entry_id=entry_id, reason=INVALID, cause=cause, outcome=outcome
    )
    return Counter({outcome: 1})


def _kept(connection: redis.Redis, entry_id: str | None, entry: dict, clean: dict, cause: str) -> None:
    """The entry as it was, for an engineer to look at, and a dead-letter record (listed,
    not replayable: there is no job to run) under a job id any key takes."""
    with connection.pipeline() as pipe:  # kept as long as a dead letter's job is: then it goes
        pipe.rpush(KEPT, json.dumps({"entry_id": entry_id, "entry": entry, "cause": cause}))
        pipe.expire(KEPT, FAILURE_TTL)
        pipe.execute()
    arg = clean.get("arg") if isinstance(clean.get("arg"), dict) else None
    job_id = clean.get("id") if isinstance(clean.get("id"), str) else f"inbox-{entry_id}"
    work = Work(
        job_id=job_id,
        source=str((arg or {}).get("source") or "unknown"),
        key=None,
        event_name=None,
        event_id=None,
        event_time=None,
        args=None,
    )
    now = time.time()
    deadletters.record(
        connection,
        dead_letter(
            work,
            INVALID,
            f"kept in {KEPT} (not replayable): {cause}",
            attempts=1,
            first_attempt_at=now,
            last_attempt_at=now,
        ),
    )
