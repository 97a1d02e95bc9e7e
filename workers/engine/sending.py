"""Events sent in batches with isolation, one invalid event must not sink the other 999: stage
events (a stage batch job) and new leads' Lead events (a drain job) alike.

Notes: docs/internals/engine.md
"""

from __future__ import annotations

import time

import redis
from rq import Queue
from rq.job import Job

from workers.common import logs, policy
from workers.common.policy import EXPIRED, INVALID, JobError
from workers.common.queues import SERIALIZER, job_id
from workers.config.googledest import GoogleDestination
from workers.config.routing import DEFAULT, dataset_of
from workers.engine.jobwork import Work, dead_letter
from workers.events import chatevents, conversions, googleevents, ledger, profiles
from workers.failures import deadletters
from workers.googleapi import ingest as google_ingest
from workers.graphapi import capi

MAX_BATCH = 1000  # Meta's limit per Conversions API request
log = logs.get(__name__)


def deliver_isolating(
    graph,
    connection: redis.Redis,
    settings,
    pairs: list[tuple[dict, dict]],
    dataset,
    ledger_checked: bool = False,
    google=None,
):
    """Deliver (event, item) pairs to one dataset (routing.Dataset), or to a Google
    destination with `google`'s Data Manager client, in requests of up to the platform's
    limit; return (delivered count,
    [(item, error)] for the events Meta refused on their own). `ledger_checked`: the
    caller has just looked each event up in the ledger of what Meta confirmed (a drain's
    already_done), so it is not looked up twice.

    Raises:
        JobError: anything but a per-event refusal (transient, throttled, auth): the
            caller's policy retries the batch; what was delivered is in the ledger already.
    """
    delivered, isolated = 0, []
    to_google = isinstance(dataset, GoogleDestination)
    limit = google_ingest.MAX_BATCH if to_google else MAX_BATCH
    for start in range(0, len(pairs), limit):
        chunk = pairs[start : start + limit]
        if not ledger_checked:
            confirmed = ledger.confirmed_many(connection, [e["event_id"] for e, _ in chunk])
            chunk = [p for p, done in zip(chunk, confirmed) if not done]
        stack = [chunk] if chunk else []
        while stack:
            part = stack.pop()
            try:
                events = [event for event, _ in part]
                if to_google:
                    google_ingest.deliver(google, connection, settings, events, dataset, _lead_times(part))
                else:
                    capi.deliver(graph, connection, settings, events, dataset, _lead_times(part))
                delivered += len(part)
            except JobError as err:
                if err.reason not in (INVALID, EXPIRED):
                    raise
                if len(part) == 1:
                    isolated.append((part[0][1], err))
                else:  # Meta refused the request for something in it: halve until it stands alone
                    middle = len(part) // 2
                    stack += [part[middle:], part[:middle]]
    return delivered, isolated


def send_stage_items(ctx, items: list[dict], parent: Job | None, job_function: str) -> dict:
    """Send checked stage items (stageitems.check) to their datasets, each lead's missing
    `Lead` first, many per request; an event Meta refuses alone is dead-lettered as a job
    of its own (running `job_function`), and so are the events of a dataset that left the
    mapping file. The stage events job runs this, and so does a drain batch for the CRM
    changes it read back: one pipeline, whoever sends them.

    Raises:
        JobError, Paused: a failure of a whole request (transient, auth...): the caller's
            policy retries; what was delivered is in the ledger already.
    """
    delivered, isolated, dry = 0, [], True
    for route, pairs in by_route(stage_pairs(ctx.connection, items)):
        try:
            dataset = ctx.routes.dataset(route)
        except JobError as err:  # its dataset left the file: these events alone wait for a replay
            isolated += [(item, err) for _, item in pairs]
            continue
        dry = dry and dataset.dry_run
        sent, refused = deliver_isolating(ctx.graph, ctx.connection, ctx.settings, pairs, dataset, google=ctx.google)
        delivered, isolated = delivered + sent, isolated + refused
    for item, err in isolated:
        dead_letter_one(ctx.connection, parent, item, err, job_function)
    return {"delivered": delivered, "isolated": len(isolated), "dry_run": dry}


def _lead_times(pairs: list[tuple[dict, object]]) -> dict:
    """A stage event's id -> its lead's creation time, for the funnel's counts (a drain's
    items are its leads, whose Lead events carry that time themselves)."""
    return {
        event["event_id"]: item["lead_time"]
        for event, item in pairs
        if isinstance(item, dict) and item.get("lead_time")
    }


def dead_letter_one(connection: redis.Redis, parent: Job | None, item: dict, err: JobError, job_function: str):
    """Dead-letter one refused event as a job of its own (running `job_function`, the stage
    events job), so it can be listed and replayed alone."""
    queue = Queue(parent.origin if parent else policy.QUEUE_NAME, connection=connection, serializer=SERIALIZER)
    stage_job_id = job_id("stage", item["event_id"])
    args = {"events": [item]}
    job = queue.create_job(
        job_function,
        args=(args,),
        job_id=stage_job_id,
        failure_ttl=policy.FAILURE_TTL,
        description=f"stage event {item['event_id']}",
    )
    now = time.time()
    work = Work(
        job_id=stage_job_id,
        source=item.get("source"),
        key=item.get("key"),
        event_name=item["event_name"],
        event_id=item["event_id"],
        event_time=item["event_time"],
        args=args,
        dataset=dataset_of(item.get("route")),
    )
    deadletters.record(
        connection,
        dead_letter(
            work,
            err.reason,
            err.detail,
            error=err,
            attempts=1,
            first_attempt_at=now,
            last_attempt_at=now,
            batch_job=parent.id if parent else None,
        ),
    )
    deadletters.store(queue, job, f"{err.reason}: {err.detail}")
    log.warning("event_isolated", event_id=item["event_id"], reason=err.reason, code=err.code, subcode=err.subcode)


def stage_pairs(connection, items: list[dict]) -> list[tuple[dict, dict]]:
    """(event, the item it came from) pairs, each lead's missing `Lead` first, once: the
    Lead event as it was built when the lead arrived, when it is still kept."""
    out, seen = [], set()
    for item in items:
        first = item.get("lead_first")
        if first and first["event_id"] not in seen:
            seen.add(first["event_id"])
            lead_item = {
                **item,
                "event_name": conversions.LEAD,
                "event_id": first["event_id"],
                "event_time": first["event_time"],
                "value": None,
                "currency": None,
                "lead_first": None,
            }
            kept = profiles.lead_event(connection, first["event_id"])
            if kept:
                kept["event_time"] = conversions.event_time(kept["event_time"])
            out.append((kept or stage_event(lead_item), lead_item))
        if item["event_id"] not in seen:
            seen.add(item["event_id"])
            out.append((stage_event(item), item))
    return out


def by_route(pairs: list[tuple[dict, dict]]) -> list[tuple[dict | None, list]]:
    """(event, item) pairs grouped by the dataset their lead went to, in order."""
    groups: dict[str, tuple[dict | None, list]] = {}
    for event, item in pairs:
        route = item.get("route") or {}
        group = route.get("dataset_id") or route.get("dataset") or DEFAULT
        groups.setdefault(group, (item.get("route"), []))[1].append((event, item))
    return list(groups.values())


def stage_event(item: dict) -> dict:
    if item.get("google") is not None:  # a Google lead's stage: Google's identifiers (googleevents.py)
        return googleevents.internal(
            event_name=item["event_name"],
            event_id=item["event_id"],
            event_time=item["event_time"],  # clamped to now by the check; Google's window is the sender's
            user_data=item["user_data"],
            google=item["google"],
            value=item.get("value"),
            currency=item.get("currency"),
        )
    if item.get("channel"):  # a chat's stage: a business-messaging event (chatevents.py)
        return chatevents.build(item)
    return conversions.build(
        name=item["event_name"],
        time=conversions.event_time(item["event_time"]),
        event_id=item["event_id"],
        user_data=item["user_data"],
        lead_event_source=item["lead_event_source"],
        value=item.get("value"),
        currency=item.get("currency"),
        processing=item.get("processing"),
    )
