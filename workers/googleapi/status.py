"""What Google made of each request it accepted: `requestStatus:retrieve` read 30 minutes
after the request and then with a growing wait until every destination is done, its
per-reason counts written beside the request (and the job that sent it) and counted.

Notes: docs/internals/googleapi.md
"""

from __future__ import annotations

import json
import time

import redis

from workers.common import counters, logs
from workers.common.policy import INVALID, JobError, Paused
from workers.common.queues import redis_key
from workers.googleapi.datamanager import STATUS, DataManager

DUE = redis_key("google-requests")  # request id -> when its status is read next (a sorted set)
FIRST_WAIT = 30 * 60  # Google: "wait 30 minutes", then retrieve
LONGEST_WAIT = 6 * 3600
KEEP = 8 * 86400  # a request's record: past the week anyone looks back on
GIVE_UP = 3 * 86400  # still PROCESSING after this: recorded as unsettled
FINAL = ("SUCCESS", "PARTIAL_SUCCESS", "FAILED")
PER_PASS = 20  # requests read per maintenance pass
log = logs.get(__name__)


def key(request_id: str) -> str:
    return redis_key("google-request", request_id)


def note(pipe, request_id: str, destination: str, events: list[dict], job_id: str | None, now: float) -> None:
    """In the caller's pipeline: Google accepted this request (its destination, how many
    events of each name, the job that sent it); read its status in FIRST_WAIT."""
    names: dict[str, int] = {}
    for event in events:
        names[event["event_name"]] = names.get(event["event_name"], 0) + 1
    # A batch's job id names no one; a lead's own job's (`lead-...`, `stage-...`) names its lead.
    batch = job_id if job_id and not job_id.startswith(("lead-", "stage-")) else ""
    record = {"destination": destination, "sent_at": int(now), "events": json.dumps(names), "job": batch}
    pipe.hset(key(request_id), mapping=record)
    pipe.expire(key(request_id), KEEP)
    pipe.zadd(DUE, {request_id: now + FIRST_WAIT})


def check_due(client: DataManager | None, connection: redis.Redis, now: float | None = None) -> dict:
    """Read the status of the requests whose time has come (PER_PASS at most). Counts by outcome."""
    now = time.time() if now is None else now
    if client is None:
        return {}
    outcomes: dict[str, int] = {}
    for raw in connection.zrangebyscore(DUE, 0, now, start=0, num=PER_PASS):
        request_id = raw.decode() if isinstance(raw, bytes) else raw
        outcome = _check(client, connection, request_id, now)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    return outcomes


def _check(client: DataManager, connection: redis.Redis, request_id: str, now: float) -> str:
    record = {k.decode(): v.decode() for k, v in connection.hgetall(key(request_id)).items()}
    if not record:
        connection.zrem(DUE, request_id)
        return "gone"
    try:
        answer = client.call("GET", STATUS, params={"requestId": request_id})
    except Paused:
        return "paused"
    except JobError as err:
        if err.reason == INVALID:  # INVALID_REQUEST_ID: Google keeps no status for it
            _settle(connection, request_id, record, "UNKNOWN", {}, {}, 0)
            return "unknown"
        _later(connection, request_id, record, now)
        return "retry"
    states, errors, warnings, ingested = _read(answer)
    if not states or any(s not in FINAL for s in states):
        if now - int(record.get("sent_at") or now) > GIVE_UP:
            _settle(connection, request_id, record, "UNSETTLED", errors, warnings, ingested)
            return "unsettled"
        _later(connection, request_id, record, now)
        return "processing"
    state = "FAILED" if "FAILED" in states else "PARTIAL_SUCCESS" if "PARTIAL_SUCCESS" in states else "SUCCESS"
    _settle(connection, request_id, record, state, errors, warnings, ingested)
    return state.lower()


def _read(answer: dict) -> tuple[list[str], dict[str, int], dict[str, int], int]:
    """Each destination's state; the error and warning counts by reason, summed; the records ingested."""
    states, errors, warnings, ingested = [], {}, {}, 0
    for item in answer.get("requestStatusPerDestination") or []:
        if not isinstance(item, dict):
            continue
        states.append(str(item.get("requestStatus") or ""))
        for source, into, field in (
            (item.get("errorInfo"), errors, "errorCounts"),
            (item.get("warningInfo"), warnings, "warningCounts"),
        ):
            for count in (source or {}).get(field) or []:
                reason = str(count.get("reason") or "UNKNOWN")[:80]
                into[reason] = into.get(reason, 0) + _int(count.get("recordCount"))
        ingested += _int((item.get("eventsIngestionStatus") or {}).get("recordCount"))
    return states, errors, warnings, ingested


def _int(value) -> int:
    try:
        return max(int(value), 0)  # proto int64 comes as a JSON string
    except (TypeError, ValueError):
        return 0


def _later(connection: redis.Redis, request_id: str, record: dict, now: float) -> None:
    tries = int(record.get("tries") or 0) + 1
    with connection.pipeline() as pipe:
        pipe.hset(key(request_id), "tries", tries)
        pipe.zadd(DUE, {request_id: now + min(FIRST_WAIT * 2**tries, LONGEST_WAIT)})
        pipe.execute()


def _settle(connection, request_id: str, record: dict, state: str, errors: dict, warnings: dict, ingested: int) -> None:
    destination = record.get("destination") or "?"
    with connection.pipeline() as pipe:
        pipe.hset(
            key(request_id),
            mapping={
                "status": state,
                "errors": json.dumps(errors),
                "warnings": json.dumps(warnings),
                "ingested": ingested,
            },
        )
        pipe.zrem(DUE, request_id)
        if ingested:
            counters.count(pipe, counters.GOOGLE_PROCESSING, destination, "ingested", "", by=ingested)
        for kind, counts in (("error", errors), ("warning", warnings)):
            for reason, n in counts.items():
                counters.count(pipe, counters.GOOGLE_PROCESSING, destination, kind, reason, by=n)
        pipe.execute()
    (log.warning if errors else log.info)(
        "google_request_status",
        request_id=request_id,
        destination=destination,
        job_id=record.get("job") or None,
        status=state,
        ingested=ingested,
        errors=errors,
        warnings=warnings,
    )
