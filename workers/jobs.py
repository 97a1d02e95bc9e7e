"""Every RQ job's entry point, at the paths workers/jobnames.py names (a wire format: they
never move).

Notes: docs/internals/workers.md
"""

from __future__ import annotations

import time
from typing import Callable

from rq import get_current_job

from workers import jobnames
from workers.common import logs
from workers.common.queues import queue as make_queue
from workers.config.routing import dataset_of
from workers.engine import batchsteps, crmreads, inboxdrain, sending
from workers.engine.attempts import attempt, finished
from workers.engine.context import Context, context, install  # noqa: F401 (install: the worker's and tests' way in)
from workers.engine.inflight import Lead
from workers.engine.jobwork import Work
from workers.events import accuracymarks, conversions, ledger
from workers.privacy import requests as privacy_requests
from workers.sweep import sweeper, watch

log = logs.get(__name__)


def _run(ctx: Context, work: Work, body: Callable[[], tuple[dict, dict]]) -> dict:
    """The skeleton of every job: skip what Meta already confirmed, run the body as one
    attempt (retry, wait or dead-letter on failure), log and count how it ended.
    `body` returns (result, fields for the log line)."""
    if work.event_id and ledger.confirmed(ctx.connection, work.event_id):
        finished(ctx.connection, work, "already_confirmed")
        return {"outcome": "already_confirmed", "event_id": work.event_id}
    started = time.monotonic()
    with attempt(ctx.connection, ctx.graph, work, ctx.settings.retry_base_seconds):
        result, fields = body()
    finished(
        ctx.connection, work, result["outcome"], elapsed_ms=round((time.monotonic() - started) * 1000, 1), **fields
    )
    return {**result, "event_id": work.event_id} if work.event_id else result


def process_meta_lead(leadgen: dict) -> dict:
    """Read a Lead Ads lead, keep its profile, and send its `Lead` event. `leadgen` is
    the lead's webhook change as workers/sources/meta.py parsed it.

    Raises:
        JobError, Paused: after attempts.attempt set the job to retry, wait or
            dead-letter.
    """
    ctx = context()
    leadgen_id = leadgen["leadgen_id"]
    route = leadgen.get("route")  # None: queued before routes existed, the default dataset
    work = Work.of_job(
        get_current_job(),
        f"inline-{leadgen_id}",
        source="meta",
        key=leadgen_id,
        event_name=conversions.LEAD,
        event_id=conversions.event_id("meta", leadgen_id, conversions.LEAD),
        event_time=leadgen.get("created_time"),
        args=leadgen,
        dataset=_dataset_name(route),
    )

    def body():
        item = _one(ctx, work, jobnames.PROCESS_META_LEAD, leadgen)  # read (or the sweep's listing), build, send
        if item.suppressed:  # a forgotten person: nothing of theirs is written
            return {"outcome": item.outcome, "events": 0}, {}
        done = "kept" if item.dataset.dry_run else "confirmed"
        ended = {**leadgen, "created_time": item.profile["created_time"], "route": {"dataset": item.dataset.name}}
        accuracymarks.mark_now(ctx.connection, done, [ended])
        return {"outcome": item.outcome, "events": 1}, {
            "match_keys": sorted(item.event["user_data"]),
            "leadgen_id": leadgen_id,
        }

    return _run(ctx, work, body)


def send_form_lead(submission: dict) -> dict:
    """Send the event for a form submission (already mapped and hashed on arrival) and
    keep its profile for later stage events.

    Raises:
        JobError, Paused: after attempts.attempt set the job to retry, wait or
            dead-letter.
    """
    ctx = context()
    route = submission.get("route")
    work = Work.of_job(
        get_current_job(),
        f"inline-{submission['key']}",
        source=submission["source"],
        key=submission["key"],
        event_name=submission["event_name"],
        event_id=submission["event_id"],
        event_time=submission.get("submitted_at"),
        args=submission,
        dataset=_dataset_name(route),
    )

    def body():
        item = _one(ctx, work, jobnames.SEND_FORM_LEAD, submission)
        if item.suppressed:
            return {"outcome": item.outcome, "events": 0}, {}
        return {"outcome": item.outcome, "events": 1}, {
            "match_keys": sorted(item.event["user_data"]),
            "source": submission["source"],
        }

    return _run(ctx, work, body)


def read_crm_stage(change: dict) -> dict:
    """Read back the person behind a CRM's stage change and queue its stage event (after
    a drain batch handed it off: its read failed once). `change` is the change as
    workers/sources (hubspot, pipedrive) parsed it, with the stage its id maps to.

    Raises:
        JobError, Paused: after attempts.attempt set the job to retry, wait or dead-letter.
    """
    ctx = context()
    job = get_current_job()
    key, stage = change["event_key"], change["stage"]
    work = Work.of_job(
        job,
        f"inline-{key}",
        source=change["crm"],
        key=key,
        event_name=stage,
        event_id=f"{change['crm']}:{key}:{stage}",
        event_time=change.get("occurred_at"),
        args=change,
        dataset=change.get("dataset"),
    )

    def body():
        answer = ctx.crm[change["crm"]].read([change])[key]
        if isinstance(answer, Exception):
            raise answer
        queue = make_queue(ctx.connection, job.origin if job else ctx.settings.queue_name)
        lead = Lead.of_entry(None, {"id": work.job_id, "fn": jobnames.READ_CRM_STAGE, "arg": change})
        outcomes = crmreads.accept(ctx, queue, [lead], {lead.job_id: answer})
        return {"outcome": next(iter(outcomes), (None, "stage_rejected"))[1]}, {"crm": change["crm"]}

    return _run(ctx, work, body)


def send_stage_events(stage_events: dict) -> dict:
    """Send funnel stage events many per Conversions API request; a lead's raw `Lead`
    goes first when it was never sent. `stage_events` is `{"events": [...]}`, each item
    as workers/intake/stageitems.py checked it.

    Meta rejects a whole request for one invalid event, so a rejected request is split
    in halves until the offending events stand alone; each is dead-lettered with its
    reason on its own job, the rest are delivered.

    Raises:
        JobError, Paused: a failure of the whole batch (transient, auth...), after
            attempts.attempt set the job to retry, wait or dead-letter.
    """
    ctx = context()
    job = get_current_job()
    items = [i for i in stage_events["events"] if not ledger.confirmed(ctx.connection, i["event_id"])]
    names = {_dataset_name(i.get("route")) for i in items}
    work = Work.of_job(
        job,
        "inline-stages",
        source="crm",
        key=None,
        event_name=items[0]["event_name"] if len(items) == 1 else "stages",
        event_id=items[0]["event_id"] if len(items) == 1 else None,
        event_time=min((i["event_time"] for i in items), default=None),
        args=stage_events,
        dataset=names.pop() if len(names) == 1 else None,
    )
    if not items:
        finished(ctx.connection, work, "already_confirmed")
        return {"outcome": "already_confirmed", "events": 0}

    def body():
        sent = sending.send_stage_items(ctx, items, job, jobnames.SEND_STAGE_EVENTS)
        outcome = "dry_run" if sent["dry_run"] else "delivered"
        return (
            {"outcome": outcome, "events": sent["delivered"], "dead_lettered": sent["isolated"]},
            {"events": sent["delivered"], "isolated": sent["isolated"]},
        )

    result = _run(ctx, work, body)
    return {**result, "outcome": "delivered"}


def _dataset_name(route: dict | None) -> str:
    return dataset_of(route)


def _one(ctx: Context, work: Work, function: str, argument: dict):
    """A lead's own job runs the drain's steps for a batch of one (batchsteps.one); the 7-day
    window its attempt is judged by counts from the lead's creation, once known."""
    lead = Lead.of_entry(None, {"id": work.job_id, "fn": function, "arg": argument})
    try:
        return batchsteps.one(ctx, lead)
    finally:
        work.event_time = lead.event_time or work.event_time


def drain(slot: int) -> dict:
    return inboxdrain.drain(context(), slot)


def retry_batch(batch: dict) -> dict:
    return inboxdrain.retry_batch(context(), batch)


def run_sweep(arguments: dict) -> dict:
    return sweeper.run_sweep(context(), arguments)


def watch_tokens(_: dict) -> dict:
    """The scheduled check of tokens and Page subscriptions (sweep/watch.py), then the next."""
    ctx = context()
    job = get_current_job()
    try:
        return watch.run(ctx)
    finally:
        watch.schedule(
            make_queue(ctx.connection, job.origin if job else ctx.settings.queue_name), ctx.settings.watch_seconds
        )


def privacy_request(arguments: dict) -> dict:
    """A forget or export the API or the admin page took (privacy/requests.py): the walk."""
    ctx = context()
    done = privacy_requests.run(ctx.connection, ctx.routes, arguments["ref"])
    log.info("privacy_request", ref=done["ref"], state=done["state"], removed=done.get("removed"))
    return done
