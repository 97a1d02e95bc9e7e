"""Drain jobs: new leads from the inbox, many at a time, read with Graph batch requests
and sent many events per Conversions API request.

A drain job takes what is already waiting, up to a batch, and never waits for more: a
lone lead is read and sent at once. Each lead keeps its own outcome. A lead whose read
failed, or whose event Meta refused (isolated by halving, as stage events are), or
whose request failed as a whole, is handed to its own RQ job (handoff.py), which
retries, waits or dead-letters it alone. The others are delivered.

The entries are acknowledged last, with the batch's other writes: a drain job killed
anywhere before that leaves them pending, and the next drain job takes them back
(inbox.reclaim); what Meta already confirmed, or what was already handed to its own
job, is then skipped, never sent twice.
"""

from __future__ import annotations

import functools
import os
import socket
import time
from collections import Counter

from rq import get_current_job

from . import accuracy, counters, deliveries, events, inbox, jobs, leadevents, logs, profiles, recovery
from .graph import BATCH_LIMIT
from .handoff import Lead, hand_off
from .pauses import fingerprint
from .policy import AUTH, INVALID, DeliveryError, Paused
from .queues import queue as make_queue, redis_key
from .routing import DEFAULT

DRAIN_SECONDS = 20  # then a fresh drain job takes over: other jobs get their turn meanwhile
log = logs.get(__name__)
_DATA_ERRORS = (TypeError, ValueError, KeyError, IndexError, AttributeError, OverflowError)


def pacing(usage: float) -> tuple[int, float]:
    """(leads per batch, seconds to rest between batches) for the share of a rate limit
    Meta last said was used (X-App-Usage, X-Business-Use-Case-Usage): full speed below
    75%, then smaller batches and rests, so the webhook path never meets 613 or 80005."""
    if usage < 75:
        return BATCH_LIMIT, 0.0
    if usage < 90:
        return 10, 1.0
    return 1, 10.0


def drain(slot: int) -> dict:
    """The RQ job: take inbox entries and finish them, batch after batch, until the inbox
    is empty (or DRAIN_SECONDS passed: then a fresh drain job for the same slot goes on)."""
    ctx = jobs.context()
    job = get_current_job()
    connection = ctx.connection
    queue = make_queue(connection, job.origin if job else ctx.settings.queue_name)
    consumer = (job.worker_name if job else None) or f"{socket.gethostname()}-{os.getpid()}"
    inbox.ensure_group(connection)
    inbox.hold_slot(connection, slot)
    outcomes: Counter = Counter()
    started = time.monotonic()
    gone = functools.partial(recovery.worker_gone, connection)
    taken = inbox.reclaim(connection, consumer, gone)
    while True:
        size, rest = pacing(ctx.graph.usage)
        # What is new, else what a dead drain job left: nothing stays pending while one drains.
        taken = taken or inbox.take(connection, consumer, size) or inbox.reclaim(connection, consumer, gone)
        if not taken:
            inbox.free_slot(connection, slot)
            taken = inbox.take(connection, consumer, size)  # one last look: see inbox.py
            if not taken:
                return dict(outcomes)
            inbox.hold_slot(connection, slot)
        outcomes.update(process(ctx, queue, taken))
        taken = []
        if time.monotonic() - started > DRAIN_SECONDS:
            inbox.hold_slot(connection, slot)
            inbox.wake(queue, [slot])
            return dict(outcomes)
        inbox.hold_slot(connection, slot)
        if rest:
            time.sleep(rest)


def process(ctx, queue, taken: list[tuple[str, dict]]) -> Counter:
    """Finish these inbox entries: each lead delivered, skipped (already done) or handed
    to its own job; then acknowledge them all. Outcomes counted."""
    started = time.monotonic()
    connection = ctx.connection
    leads = [_lead(entry_id, entry) for entry_id, entry in taken]
    outcomes: Counter = Counter()
    todo = []
    for lead, skip in zip(leads, _already_done(connection, leads)):
        if skip:
            outcomes[skip] += 1
        else:
            todo.append(lead)
    failed: list[tuple[Lead, Exception, int | None]] = []
    reads = _read(ctx, [lead for lead in todo if lead.source == "meta"], failed)
    profiles_only: list[dict] = []
    built = _build(ctx, todo, reads, failed, profiles_only)
    with connection.pipeline(transaction=False) as pipe:
        for profile in profiles_only + [profile for _, profile, _, _ in built]:
            profiles.write(pipe, profile, ctx.settings.profile_retention_days)
        pipe.execute()
    delivered = _deliver(ctx, built, failed, outcomes)
    unsent = {lead.job_id for lead, _, _ in failed}
    with connection.pipeline(transaction=False) as pipe:
        # A Lead event Meta does not have yet (dry run, a failure) is kept as built, for a
        # stage event to send first; one Meta has is not (jobs._deliver, the same rule).
        for lead, _, event, dataset in built:
            if lead.job_id in unsent or dataset.dry_run:
                profiles.keep_lead_event(pipe, event)
        pipe.execute()
    for lead, err, event_time in failed:
        outcomes[hand_off(ctx, queue, lead, err, event_time, started)] += 1
    with connection.pipeline(transaction=False) as pipe:
        accuracy.mark(pipe, "webhook", [entry["arg"] for _, entry in taken if entry.get("via") == "webhook"])
        accuracy.mark(pipe, "confirmed", [{**lead.argument, "created_time": profile["created_time"]}
                                          for lead, profile, _, _ in delivered if lead.source == "meta"])
        for (source, outcome), count in Counter((lead.source, outcome) for lead, outcome in
                                                _outcomes(delivered)).items():
            counters.count(pipe, counters.JOBS, source, outcome, by=count)
        inbox.done(pipe, [lead.entry_id for lead in leads])
        pipe.execute()
    # One line per batch: the leads' job ids and webhook request ids, so one grep still
    # finds what became of a lead or a delivery. Leads handed off have their own lines.
    log.info("batch_done", leads=len(leads), elapsed_ms=round((time.monotonic() - started) * 1000, 1),
             job_ids=[item[0].job_id for item in delivered],
             request_ids=sorted({lead.request_id for lead in leads if lead.request_id}), **dict(outcomes))
    return outcomes


def _lead(entry_id: str, entry: dict) -> Lead:
    argument = entry["arg"]
    dataset = (argument.get("route") or {}).get("dataset") or DEFAULT
    if "leadgen_id" in argument:
        key = argument["leadgen_id"]
        return Lead(entry_id, entry["id"], entry["fn"], argument, entry.get("rid"), "meta", key,
                    events.event_id("meta", key, events.LEAD), events.LEAD, dataset)
    return Lead(entry_id, entry["id"], entry["fn"], argument, entry.get("rid"), argument["source"],
                argument["key"], argument["event_id"], argument["event_name"], dataset)


def _already_done(connection, leads: list[Lead]) -> list[str | None]:
    """Per lead, why it needs nothing more (a drain job killed before it acknowledged):
    it was handed to its own job, or Meta confirmed its event; else None."""
    with connection.pipeline(transaction=False) as pipe:
        for lead in leads:
            pipe.exists(f"rq:job:{lead.job_id}")
            pipe.exists(redis_key("confirmed", lead.event_id))
        found = pipe.execute()
    return ["handed_off_before" if found[2 * i] else "already_confirmed" if found[2 * i + 1] else None
            for i in range(len(leads))]


def _read(ctx, leads: list[Lead], failed: list) -> dict[str, dict]:
    """Read Lead Ads leads in Graph batches, one per Page token; job id -> the lead read.
    A lead whose read failed goes to `failed` with its error."""
    by_token: dict[str, list[Lead]] = {}
    for lead in leads:
        try:
            by_token.setdefault(ctx.routes.page_token(lead.argument.get("route")), []).append(lead)
        except DeliveryError as err:  # its Page left the mapping file
            failed.append((lead, err, lead.argument.get("created_time")))
    reads = {}
    for token, group in by_token.items():
        for start in range(0, len(group), BATCH_LIMIT):
            chunk = group[start:start + BATCH_LIMIT]
            try:
                answers = ctx.graph.read_leads([lead.key for lead in chunk], token)
            except (DeliveryError, Paused) as err:
                answers = dict(zip((lead.key for lead in chunk), _shared(err, token, len(chunk))))
            for lead in chunk:
                answer = answers[lead.key]
                if isinstance(answer, Exception):
                    failed.append((lead, answer, lead.argument.get("created_time")))
                else:
                    reads[lead.job_id] = answer
    return reads


def _build(ctx, leads: list[Lead], reads: dict, failed: list, profiles_only: list) -> list[tuple]:
    """(lead, profile, event, dataset) for each lead read (or a form submission); the
    profiles of leads whose event cannot be built go to `profiles_only`."""
    built = []
    for lead in leads:
        if lead.source == "meta" and lead.job_id not in reads:
            continue  # its read failed
        profile = None
        try:
            dataset = ctx.routes.dataset(lead.argument.get("route"))
            if lead.source == "meta":
                profile, user_data = leadevents.lead_ads_profile(lead.argument, reads[lead.job_id], dataset,
                                                                 ctx.settings.default_region)
                event = leadevents.lead_ads_event(profile, user_data, lead.argument, dataset)
            else:
                profile = leadevents.form_profile(lead.argument, dataset)
                event = leadevents.form_event(lead.argument)
        except DeliveryError as err:  # too old, or its dataset left the mapping file
            failed.append((lead, err, profile["created_time"] if profile else None))
            if profile:
                profiles_only.append(profile)  # kept all the same: its later stages can still go
            continue
        except _DATA_ERRORS as err:  # what no check foresaw: this lead alone is a dead letter
            log.error("job_data_unusable", job_id=lead.job_id, error=type(err).__name__, where=logs.where(err))
            failed.append((lead, DeliveryError(INVALID, f"the job's data could not be used ({type(err).__name__})"),
                           None))
            continue
        built.append((lead, profile, event, dataset))
    return built


def _deliver(ctx, built: list[tuple], failed: list, outcomes: Counter) -> list[tuple]:
    """Send the events many per request, per dataset; what was delivered (or kept, in
    dry run). Refused events, and whole requests that failed, go to `failed`."""
    by_dataset: dict[str, list[tuple]] = {}
    for item in built:
        by_dataset.setdefault(item[3].id or item[3].name, []).append(item)
    delivered = []
    for group in by_dataset.values():
        dataset = group[0][3]
        pairs = [(event, item) for item in group for event in [item[2]]]
        try:
            _, refused = deliveries.deliver_isolating(ctx.graph, ctx.connection, ctx.settings, pairs, dataset)
        except (DeliveryError, Paused) as err:
            failed += [(item[0], shared, item[1]["created_time"])
                       for item, shared in zip(group, _shared(err, dataset.token, len(group)))]
            continue
        refused_ids = {id(item) for item, _ in refused}
        failed += [(item[0], err, item[1]["created_time"]) for item, err in refused]
        kept = [item for item in group if id(item) not in refused_ids]
        outcomes["dry_run" if dataset.dry_run else "delivered"] += len(kept)
        delivered += kept
    return delivered


def _shared(err: Exception, token: str | None, count: int) -> list[Exception]:
    """One request failed for `count` leads: each lead's error. Meta refused the token
    (which is now paused): the first lead carries the refusal (its dead letter says what
    to fix) and the others wait for the token, as jobs after a refusal do."""
    if isinstance(err, DeliveryError) and err.reason == AUTH and token:
        return [err] + [Paused(fingerprint(token))] * (count - 1)
    return [err] * count


def _outcomes(delivered: list[tuple]):
    return [(item[0], "dry_run" if item[3].dry_run else "delivered") for item in delivered]
