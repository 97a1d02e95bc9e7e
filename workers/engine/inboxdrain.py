"""Drain jobs: new leads from the inbox, many at a time, read with Graph batch requests
and sent many events per Conversions API request.

Notes: docs/internals/engine.md
"""

from __future__ import annotations

import functools
import os
import socket
import time
from collections import Counter

from rq import get_current_job

from workers.common import counters, logs
from workers.common.policy import JobError, Paused
from workers.common.queues import queue as make_queue
from workers.engine import batchsteps, crmreads, quarantine, recovery
from workers.engine.context import Context
from workers.engine.handoff import hand_off, retry_together
from workers.engine.inflight import Lead
from workers.events import accuracymarks, profiles, suppression
from workers.graphapi.graph import BATCH_LIMIT
from workers.intake import inbox

Entries = list[tuple[str | None, dict]]  # (the inbox entry's id, None in a retry batch; the entry)
DRAIN_SECONDS = 20  # then a fresh drain job takes over: other jobs get their turn meanwhile
log = logs.get(__name__)


def pacing(usage: float) -> tuple[int, float]:
    """(leads per batch, seconds to rest between batches) for the share of a rate limit
    Meta last said was used (X-App-Usage, X-Business-Use-Case-Usage): full speed below
    75%, then smaller batches and rests, so the webhook path never meets 613 or 80005."""
    if usage < 75:
        return BATCH_LIMIT, 0.0
    if usage < 90:
        return 10, 1.0
    return 1, 10.0


def drain(ctx: Context, slot: int) -> dict:
    """The drain job (jobs.drain): take inbox entries and finish them, batch after batch,
    until the inbox is empty (or DRAIN_SECONDS passed: then a fresh drain job for the same
    slot goes on)."""
    job = get_current_job()
    connection = ctx.connection
    queue = make_queue(connection, job.origin if job else ctx.settings.queue_name)
    consumer = inbox.consumer_name()
    if job:  # who runs it: recovery must not take a running drain job for an orphan
        job.meta.update(host=socket.gethostname(), pid=os.getpid())
        job.save_meta()
    inbox.ensure_group(connection)
    inbox.hold_slot(connection, slot)
    inbox.beat(connection, consumer)
    outcomes: Counter = Counter()
    started = time.monotonic()
    gone = functools.partial(inbox.gone, connection, pid_alive=recovery.pid_alive)
    taken_up = functools.partial(_taken_up, ctx, queue, outcomes)
    taken = taken_up("inbox_resumed", inbox.left_over(connection, consumer)) + taken_up(
        "inbox_reclaimed", inbox.reclaim(connection, consumer, gone)
    )
    while True:
        size, rest = pacing(ctx.graph.usage)
        # What is new, else what a dead drain job left: nothing stays pending while one drains.
        taken = (
            taken
            or inbox.take(connection, consumer, size)
            or taken_up("inbox_reclaimed", inbox.reclaim(connection, consumer, gone))
        )
        if not taken:
            inbox.free_slot(connection, slot)
            taken = inbox.take(connection, consumer, size)  # one last look: see inbox.py
            if not taken:
                return dict(outcomes)
            inbox.hold_slot(connection, slot)
        outcomes.update(settle(ctx, queue, taken))
        inbox.beat(connection, consumer)
        taken = []
        if time.monotonic() - started > DRAIN_SECONDS:
            inbox.hold_slot(connection, slot)
            inbox.wake(queue, [slot])
            return dict(outcomes)
        inbox.hold_slot(connection, slot)
        if rest:
            time.sleep(rest)


def _taken_up(
    ctx: Context, queue, outcomes: Counter, event: str, taken: list[tuple[str, dict]]
) -> list[tuple[str, dict]]:
    """Say which leads a drain job takes up from another: `inbox_reclaimed`, a dead one's;
    `inbox_resumed`, an earlier one's in this process, stopped half-way (cut off from
    Redis, say). What Meta confirmed is skipped; the rest is sent now, with its event_ids.
    An entry taken up too often keeps killing whoever handles it: it is set aside."""
    if not taken:
        return taken
    log.warning(event, leads=len(taken), job_ids=[entry["id"] for _, entry in taken])
    tries = inbox.count_tries(ctx.connection, [entry_id for entry_id, _ in taken])
    for (entry_id, entry), tried in zip(taken, tries):
        if tried > quarantine.MAX_TRIES:
            outcomes.update(
                quarantine.set_aside(
                    ctx, queue, entry_id, entry, f"taken up {tried} times: the process handling it died each time"
                )
            )
    return [item for item, tried in zip(taken, tries) if tried <= quarantine.MAX_TRIES]


def settle(ctx: Context, queue, taken: Entries) -> Counter:
    """`process`, with each entry its own failure domain: when the batch raises something
    no step foresaw, its entries are settled one by one (what Meta confirmed meanwhile is
    skipped, as for a reclaimed batch), and one that raises alone is set aside as an
    `invalid` dead letter. Only Redis trouble and RQ's job timeout go up: the entries
    then stay pending."""
    try:
        return process(ctx, queue, taken)
    except Exception as err:  # noqa: BLE001 -- whatever it is, it must not stop the line
        if quarantine.not_the_entries(err):
            raise
        if len(taken) == 1:
            return quarantine.set_aside(ctx, queue, taken[0][0], taken[0][1], quarantine.where(err))
        log.error("batch_failed", leads=len(taken), cause=quarantine.where(err))
        outcomes: Counter = Counter()
        for item in taken:
            outcomes.update(settle(ctx, queue, [item]))
        return outcomes


def process(ctx: Context, queue, taken: Entries) -> Counter:
    """Finish these inbox entries: each lead delivered, skipped (already done) or handed
    to its own job; then acknowledge them all. Outcomes counted."""
    started = time.monotonic()
    connection = ctx.connection
    leads = [Lead.of_entry(entry_id, entry) for entry_id, entry in taken]
    outcomes: Counter = Counter()
    todo, confirmed = [], []
    for lead, skip in zip(leads, batchsteps.already_done(connection, leads)):
        if skip:
            outcomes[skip] += 1
            if skip == "already_confirmed":
                confirmed.append((lead, skip))  # counted as a lead's own job counts it
        else:
            todo.append(lead)
    changes, todo = [lead for lead in todo if lead.crm], [lead for lead in todo if not lead.crm]
    people, failed = crmreads.read(ctx, changes)
    checked = crmreads.accept(ctx, queue, changes, people)  # (source, outcome): counted below
    for (_, outcome), count in checked.items():
        outcomes[outcome] += count
    reads, unread = batchsteps.read(ctx, [lead for lead in todo if lead.source == "meta"])
    failed += unread
    built, unbuilt = batchsteps.build(ctx, todo, reads)
    built, aside = batchsteps.set_aside_suppressed(ctx, built)
    outcomes.update(item.outcome for item in aside)
    forgotten = {item.lead.entry_id for item in aside}
    batchsteps.keep_profiles(ctx, built, unbuilt)
    delivered, refused = batchsteps.send(ctx, built)
    failed += unbuilt + refused
    outcomes.update(item.outcome for item in delivered)
    for failure in failed:  # each with its own job, or (a request that failed as a whole) together
        if not _passing(failure.error):
            outcomes[hand_off(ctx, queue, failure, started)] += 1
    outcomes.update(retry_together(ctx, queue, [f for f in failed if _passing(f.error)], started))
    unsent = {failure.lead.job_id for failure in failed}

    # All or nothing, as capi's ledger write: a kill mid-send applies no prefix. A person
    # forgotten while the batch ran gets no Lead kept and no accuracy flag (suppression.guarded).
    def finish(pipe, refs) -> None:
        gone = {item.lead.job_id for item, ref in zip(built, refs) if ref}  # besides `forgotten` (entry ids)
        # A Lead event Meta does not have yet (dry run, a failure) is kept as built, for a
        # stage event to send first; one Meta has is not (jobs._deliver, the same rule).
        for item in built:
            if (item.lead.job_id in unsent or item.dataset.dry_run) and item.lead.job_id not in gone:
                profiles.keep_lead_event(pipe, item.event)
        # Came by webhook; confirmed (or kept, in dry run: never confirmed by Meta): one
        # script call per (day, Page, form) of the batch, not a round of commands per lead.
        came = [
            entry["arg"]
            for entry_id, entry in taken
            if entry.get("via") == "webhook" and entry_id not in forgotten and entry.get("id") not in gone
        ]
        ended_meta = [item for item in delivered if item.lead.source == "meta" and item.lead.job_id not in gone]
        done = {dry: [_marked(item) for item in ended_meta if item.dataset.dry_run == dry] for dry in (False, True)}
        accuracymarks.mark_all(pipe, [("webhook", came), ("confirmed", done[False]), ("kept", done[True])])
        ended = [(item.lead, item.outcome) for item in delivered + aside] + confirmed
        finished = Counter((lead.source, outcome) for lead, outcome in ended)
        for (source, outcome), count in (finished + checked).items():
            counters.count(pipe, counters.JOBS, source, outcome, by=count)
        inbox.done(pipe, [lead.entry_id for lead in leads if lead.entry_id])

    people = [suppression.fields(item.dataset.name, item.event.get("user_data")) for item in built]
    suppression.guarded(connection, people, finish)
    # One line per batch: the leads' job ids and webhook request ids, so one grep still
    # finds what became of a lead or a delivery. Leads handed off have their own lines.
    log.info(
        "batch_done",
        leads=len(leads),
        elapsed_ms=round((time.monotonic() - started) * 1000, 1),
        job_ids=[item.lead.job_id for item in delivered],
        request_ids=sorted({lead.request_id for lead in leads if lead.request_id}),
        **dict(outcomes),
    )
    return outcomes


def retry_batch(ctx: Context, batch: dict) -> dict:
    """The batch retry job (jobs.retry_batch): leads whose request failed as a whole,
    `{"entries": [inbox entries, each with "n", its attempts so far]}`, finished exactly
    as a drain job finishes inbox entries."""
    job = get_current_job()
    queue = make_queue(ctx.connection, job.origin if job else ctx.settings.queue_name)
    return dict(settle(ctx, queue, [(None, entry) for entry in batch["entries"]]))


def _passing(err: Exception) -> bool:
    return isinstance(err, Paused) or isinstance(err, JobError) and err.retryable


def _marked(item) -> dict:
    """A delivered Lead Ads lead as its accuracy mark reads it: the dataset it went to (a job
    queued before routes existed went to the default) and when it was created."""
    return {**item.lead.args, "created_time": item.profile["created_time"], "route": {"dataset": item.dataset.name}}
