"""Google as a destination beside Meta's datasets: a group of events sent in one Data Manager
request (one destination per conversion action), the ledger and counts as Meta's, or kept
in dry run, shown by `leadrelay dry-run` beside Meta's events.

Notes: docs/internals/googleapi.md
"""

from __future__ import annotations

import json
import time

import redis
from rq import get_current_job

from workers.common import clock, counters, logs
from workers.common.policy import EXPIRED, INVALID, JobError
from workers.config.googledest import GoogleDestination
from workers.events import funnel, googleevents, ledger, suppression
from workers.googleapi import status
from workers.googleapi.datamanager import INGEST, DataManager
from workers.graphapi.capi import DRY_RUN_LIST

MAX_BATCH = googleevents.MAX_EVENTS
UNMAPPED = "no_conversion_action"  # a stage the destination names no conversion action for
log = logs.get(__name__)


def deliver(
    client: DataManager | None,
    connection: redis.Redis,
    settings,
    events: list[dict],
    destination: GoogleDestination,
    lead_times: dict | None = None,
) -> dict:
    """Send internal Google events (googleevents.internal) to the destination in one request,
    or keep them (dry run). A stage with no conversion action is counted and settled, never
    sent; a 200 with Google's `requestId` is "accepted", its id written in the ledger beside
    each event (Google reports what it made of them later, by that id).

    Raises:
        JobError: INVALID or EXPIRED for an event that cannot go (before any call: the
            sender isolates it), or the call's classified failure.
    """
    now = clock.now()
    oldest = now - destination.window_days * 86400
    for event in events:
        if event["event_time"] < oldest:
            raise JobError(EXPIRED, f"older than the conversion actions' {destination.window_days}-day window")
        google = event.get("google") or {}
        if not (google.get("em") or google.get("ph") or google.get("gclid")):
            raise JobError(INVALID, "no identifier and no click id: Google would refuse it (NO_IDENTIFIERS_PROVIDED)")
    people = [suppression.fields(destination.name, e.get("user_data")) for e in events]
    refs = suppression.which(connection, people)
    events = [event for event, ref in zip(events, refs) if not ref]
    mapped = [e for e in events if e["event_name"] in destination.conversion_actions]
    unmapped = [e for e in events if e["event_name"] not in destination.conversion_actions]
    if unmapped:
        _settle_unmapped(connection, unmapped, destination)
    if not mapped:
        return {"outcome": "suppressed" if not events else UNMAPPED, "events": 0}
    if destination.dry_run:
        keep_dry_run(connection, settings, mapped, destination, lead_times)
        return {"outcome": "dry_run", "events": len(mapped)}
    if client is None:
        raise JobError(INVALID, "no Data Manager client in this process")
    body = request(mapped, destination)
    try:
        answer = client.call("POST", INGEST, json=body)
    except JobError as err:
        _count(connection, mapped, err.reason, destination)
        raise
    request_id = str(answer.get("requestId") or "")
    job = get_current_job()

    def record(pipe, refs) -> None:
        if request_id:  # what Google made of it is read later (status.py)
            status.note(pipe, request_id, destination.key, mapped, job.id if job else None, time.time())
        for event, ref in zip(mapped, refs):
            if not ref:
                ledger.confirm(pipe, event["event_id"], f"google:{request_id}")
        gone = frozenset(e["event_id"] for e, ref in zip(mapped, refs) if ref)
        counters.record_sent(pipe, _counted(mapped), "delivered", destination.label, forgotten=gone)
        funnel.record(pipe, mapped, destination.label, time.time(), lead_times)

    suppression.guarded(connection, [suppression.fields(destination.name, e.get("user_data")) for e in mapped], record)
    log.info("google_accepted", destination=destination.key, events=len(mapped), request_id=request_id)
    return {"outcome": "delivered", "events": len(mapped), "request_id": request_id}


def request(events: list[dict], destination: GoogleDestination) -> dict:
    """The one ingest request for these events: a destination per conversion action they use."""
    actions = {e["event_name"]: destination.conversion_actions[e["event_name"]] for e in events}
    targets = [
        googleevents.Destination(destination.operating_account, action, destination.login_account, reference=name)
        for name, action in actions.items()
    ]
    converted = [googleevents.of_internal(e, reference=e["event_name"]) for e in events]
    return googleevents.several(targets, converted)[0]


def keep_dry_run(connection, settings, events: list[dict], destination: GoogleDestination, lead_times=None) -> None:
    """Kept as they would go (the Data Manager event, its conversion action), beside Meta's."""
    kept_at = int(time.time())
    before = ledger.kept_before(connection, [e["event_id"] for e in events])
    new = [e for e, kept in zip(events, before) if not kept]

    def keep(pipe, refs) -> None:
        for event, ref in zip(events, refs):
            if ref:
                continue
            entry = {
                "kept_at": kept_at,
                "platform": "google",
                "dataset": destination.label,
                "dataset_id": destination.id,
                "conversion_action": destination.conversion_actions[event["event_name"]],
                # The event id names the lead: `leadrelay dry-run` tells a repeat, a forget finds it.
                "event": {
                    "event_name": event["event_name"],
                    "event_id": event["event_id"],
                    **googleevents.of_internal(event),
                },
                **({"test": True} if event.get("test") else {}),
            }
            pipe.lpush(DRY_RUN_LIST, json.dumps(entry))
            ledger.keep(pipe, event["event_id"])
        pipe.ltrim(DRY_RUN_LIST, 0, settings.dry_run_keep - 1)
        gone = frozenset(e["event_id"] for e, ref in zip(events, refs) if ref)
        counters.record_sent(pipe, _counted(events), "dry_run", destination.label, forgotten=gone)
        funnel.record(pipe, new, destination.label, kept_at, lead_times)

    suppression.guarded(connection, [suppression.fields(destination.name, e.get("user_data")) for e in events], keep)


def _settle_unmapped(connection, events: list[dict], destination: GoogleDestination) -> None:
    """Counted as not sent and written in the ledger as settled: never retried, never sent."""
    with connection.pipeline() as pipe:
        for event in events:
            ledger.confirm(pipe, event["event_id"], UNMAPPED)
        counters.record_sent(pipe, events, UNMAPPED, destination.label)
        pipe.execute()


def _counted(events: list[dict]) -> list[dict]:
    """The events as the counts see them: Google's identifiers as their match keys."""
    out = []
    for event in events:
        google = event.get("google") or {}
        keys = {k: google[k] for k in ("em", "ph") if google.get(k)}
        out.append({**event, "user_data": keys})
    return out


def _count(connection: redis.Redis, events: list[dict], reason: str, destination: GoogleDestination) -> None:
    try:
        with connection.pipeline(transaction=False) as pipe:
            counters.record_sent(pipe, events, reason, destination.label)
            pipe.execute()
    except redis.RedisError:
        pass  # the delivery error is what matters; it is raised either way
