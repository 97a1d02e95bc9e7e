"""The sweep: every LEADRELAY_SWEEP_SECONDS a worker reads each Page's Lead Ads forms and
enqueues the leads no webhook brought, deduped exactly like a webhook.

Notes: docs/internals/sweep.md
"""

from __future__ import annotations

import json
import secrets
import time
from datetime import datetime, timezone

import redis
from rq import Queue, get_current_job
from rq.job import Job

from workers import jobnames
from workers.common import clock, logs
from workers.common.policy import THROTTLED, TRANSIENT, JobError, Paused
from workers.common.queues import SERIALIZER, job_id, redis_key
from workers.config import sandbox
from workers.config.routing import ANY_PAGE
from workers.engine.batchsteps import LISTED
from workers.engine.context import Context
from workers.events import accuracy, accuracymarks, conversions, leadevents
from workers.graphapi.graph import LEAD_FIELDS
from workers.intake import admission, inbox, kinds
from workers.sources import meta
from workers.sources.registry import SOURCES
from workers.sweep.reconcile import as_change, lead_list, page_forms, pages_of

CURSORS = redis_key("sweep", "cursors")  # form id -> creation time read up to
PROGRESS = redis_key("sweep", "progress")  # form id -> {"since", "until", "after"}: a read under way
LOCK = redis_key("sweep", "lock")
BACKOFF = redis_key("sweep", "backoff")  # seconds the next sweep waits after a rate limit
MAX_BACKOFF = 3600
BUSY_QUEUE = 1000  # queued jobs beyond which webhook work comes first: no sweep this time
log = logs.get(__name__)


def schedule(queue: Queue, interval: int, delay: float | None = None, now: float | None = None) -> str | None:
    """Schedule the sweep of the time slot after `delay` (one interval by default); the job
    id names the slot, so scheduling it twice makes one job. None when sweeps are off."""
    if interval <= 0:
        return None
    at = (clock.now() if now is None else now) + (interval if delay is None else delay)  # Redis's on a skewed host
    slot = int(at // interval)
    sweep_id = job_id("sweep", str(slot))
    queue.enqueue_at(
        datetime.fromtimestamp(slot * interval, timezone.utc),
        jobnames.SWEEP,
        {},
        job_id=sweep_id,
        result_ttl=interval * 4,
        failure_ttl=86400,
        description="sweep every form's leads",
    )
    return sweep_id


def run_sweep(ctx: Context, _: dict) -> dict:
    """The sweep job (jobs.run_sweep): one sweep, then the next one scheduled (later after
    a rate limit)."""
    job = get_current_job()
    queue = Queue(job.origin if job else ctx.settings.queue_name, connection=ctx.connection, serializer=SERIALIZER)
    result = {"outcome": "not_run"}
    try:
        result = sweep(ctx, queue)
    finally:
        interval = ctx.settings.sweep_seconds
        schedule(queue, interval, delay=max(interval, result.get("retry_in") or 0))
    return result


def pages(ctx: Context) -> list[tuple[str, str]]:
    """(Page id, token) for every Page to sweep: the mapping file's, and without Pages in
    the file, the Pages leads have come from (the environment's token reads them all)."""
    listed = [(p.id, p.token) for p in ctx.routes.pages.values() if p.id != ANY_PAGE]
    if listed or ANY_PAGE not in ctx.routes.pages:
        return listed
    seen = {pair.decode().split(" ")[0] for pair in ctx.connection.smembers(accuracy.FORMS)}
    if ctx.settings.sandbox:  # the stand-in's Page is known before any lead came from it
        seen.add(sandbox.PAGE_ID)
    return [(page, ctx.routes.pages[ANY_PAGE].token) for page in sorted(seen - {accuracy.NONE})]


def sweep(ctx: Context, queue: Queue, now: float | None = None) -> dict:
    """Read every Page's forms' new leads and enqueue those not known; counts per form.
    Returns `retry_in` after a rate limit (the next sweep waits that long)."""
    now = time.time() if now is None else now
    connection: redis.Redis = ctx.connection
    if queue.count > BUSY_QUEUE:
        return {"outcome": "queue_busy", "queued": queue.count}
    token = secrets.token_hex(8)
    if not connection.set(LOCK, token, nx=True, ex=_lock_seconds(ctx)):
        return {"outcome": "already_running"}
    forms: dict[str, dict] = {}
    failed = []
    try:
        for page_id, page_token in pages(ctx):
            found: dict[str, dict] = {}
            try:
                for form in page_forms(ctx.graph, page_id, page_token):
                    found[form] = _sweep_form(ctx, queue, page_id, page_token, form, now, forms)
            except (JobError, Paused) as err:
                if getattr(err, "reason", None) == THROTTLED:
                    raise
                failed.append(page_id)  # its progress is kept: the next sweep goes on from there
                # One Page's refused token or list must not stop the others; doctor says why.
                level = log.warning if getattr(err, "reason", None) == TRANSIENT else log.error
                level(
                    "sweep_page_failed",
                    page_id=page_id,
                    **(err.as_dict() if isinstance(err, JobError) else {"reason": "token_paused"}),
                    fix=f"the sweep could not read this Page's forms; if it lasts, run `leadrelay doctor "
                    f"--page-id {page_id}`",
                )
            _judge_page(
                connection, page_id, sum(c["recovered"] for c in found.values()), now, complete=page_id not in failed
            )
    except JobError as err:
        progressed = any(c["listed"] for c in forms.values())
        # Waits grow only while sweeps make no progress at all.
        grown = 0 if progressed else int(connection.get(BACKOFF) or 0) * 2
        wait = min(max(grown, err.retry_after or 0, ctx.settings.sweep_seconds), MAX_BACKOFF)
        connection.set(BACKOFF, wait)
        log.warning(
            "sweep_throttled",
            retry_in=wait,
            code=err.code,
            detail="Meta rate-limited the sweep: it stops, "
            "keeps its place, and waits (longer each time it gets nowhere)",
        )
        return {"outcome": "throttled", "retry_in": wait, "forms": forms}
    finally:
        if connection.get(LOCK) == token.encode():
            connection.delete(LOCK)
    connection.delete(BACKOFF)
    recovered = sum(c["recovered"] for c in forms.values())
    log.info("sweep", forms=len(forms), recovered=recovered, listed=sum(c["listed"] for c in forms.values()))
    return {"outcome": "swept", "recovered": recovered, "forms": forms, "failed_pages": failed}


def _sweep_form(ctx: Context, queue: Queue, page_id: str, token: str, form_id: str, now: float, forms: dict) -> dict:
    """Read one form's leads in (since, until], page by page, keeping after each page where
    the read stands, so an interrupted read goes on from there next time; the form's
    cursor moves to `until` once the read is whole. Counts go into `forms` as they come."""
    connection = ctx.connection
    counts = forms.setdefault(f"{page_id}/{form_id}", {"listed": 0, "recovered": 0, "too_old": 0, "known": 0})
    raw = connection.hget(PROGRESS, form_id)
    progress = json.loads(raw) if raw else None
    if progress is None:
        cursor, oldest = connection.hget(CURSORS, form_id), int(now - conversions.MAX_AGE_SECONDS)
        since = max(int(cursor), oldest) if cursor else oldest
        until = int(now - ctx.settings.sweep_grace_seconds)
        if until <= since:
            return counts
        progress = {"since": since, "until": until, "after": None}
    path, params = lead_list(form_id, progress["since"], progress["until"])
    for items, after in pages_of(ctx.graph, path, token, params, progress["after"]):
        with connection.pipeline() as pipe:
            pipe.expire(LOCK, _lock_seconds(ctx))  # still sweeping: a killed sweep's lock soon lapses
            for name, value in _take(ctx, queue, pipe, (page_id, token), form_id, items, now).items():
                counts[name] += value
            if after is None:  # the whole window is read: the next sweep starts where it ended
                pipe.hset(CURSORS, form_id, progress["until"])
                pipe.hdel(PROGRESS, form_id)
            else:
                pipe.hset(PROGRESS, form_id, json.dumps({**progress, "after": after}))
            pipe.execute()
    return counts


def _lock_seconds(ctx: Context) -> int:
    """Long enough for a few Graph calls, short enough that a sweep killed with its worker
    does not hold the others back for long (the lock is renewed after each page read)."""
    return int(max(3 * ctx.settings.graph_timeout_seconds, 30))


def _answers(ctx: Context, token: str, form_id: str, work: list[tuple[str, dict]]) -> None:
    """The answers of the listed leads no webhook brought, from more listings of the form
    over their minutes, hashed into their jobs (LISTED): one Graph call for a run of them
    instead of a read each, the read that matters when a backlog is recovered under rate
    limits. Only over runs of missing leads that no lead already held shares a second with:
    the answers of a lead we delivered are never read again. A missing lead alone between
    held ones (a partial outage) is read by id by the drain, as a webhook's would be.
    Should a listing fail (but for a rate limit, which stops the sweep where it stands),
    the drain reads them as usual."""
    with ctx.connection.pipeline(transaction=False) as pipe:
        for key, _ in work:
            pipe.exists(inbox.SEEN + job_id("lead", meta.NAME, key), Job.key_for(job_id("lead", meta.NAME, key)))
        found = pipe.execute()
    held = {args.get("created_time") for (_, args), known in zip(work, found) if known}
    missing = sorted(
        (args for (_, args), known in zip(work, found) if not known and args.get("created_time")),
        key=lambda args: args["created_time"],
    )
    for run in _runs(missing, held):
        if len(run) >= RUN_MIN:
            _listed_answers(ctx, token, form_id, {args["leadgen_id"]: args for args in run})


RUN_MIN = 10  # a listing for fewer costs about as many calls as reading them by id


def _runs(missing: list[dict], held: set) -> list[list[dict]]:
    """Missing leads (by creation time) in runs whose time span holds no held lead."""
    runs: list[list[dict]] = []
    for args in missing:
        last = runs[-1] if runs else None
        if last and not any(last[-1]["created_time"] <= t <= args["created_time"] for t in held if t is not None):
            last.append(args)
        else:
            runs.append([args])
    return [run for run in runs if not any(run[0]["created_time"] <= t <= run[-1]["created_time"] for t in held if t)]


def _listed_answers(ctx: Context, token: str, form_id: str, wanted: dict[str, dict]) -> None:
    created = [args["created_time"] for args in wanted.values()]
    path, params = lead_list(form_id, min(created) - 1, max(created), fields=LEAD_FIELDS)
    try:
        for items, _ in pages_of(ctx.graph, path, token, params):
            for lead in items:
                args = wanted.pop(str(lead.get("id")), None)
                if args is not None and isinstance(lead.get("field_data"), list):
                    args[LISTED] = leadevents.hashed(args, lead, ctx.settings.default_region)
            if not wanted:  # each one found: the window's other leads are not needed
                break
    except JobError as err:
        if err.reason == THROTTLED:  # the sweep stops here and keeps its place, as for a listing
            raise
        log.info("sweep_answers_unread", form_id=form_id, reason=err.reason, leads=len(wanted))


def _take(ctx: Context, queue: Queue, pipe, page: tuple[str, str], form_id: str, items: list[dict], now: float) -> dict:
    """Enqueue one page of a form's leads that no webhook brought, with their answers; mark
    them all for the accuracy figures (in `pipe`); counts. `page`: its id and token."""
    page_id, token = page
    listed = [as_change(lead, page_id, form_id) for lead in items]
    cutoff = conversions.oldest_acceptable(now)
    sendable = [lead for lead in listed if (lead["created_time"] or now) > cutoff]
    too_old = [lead for lead in listed if (lead["created_time"] or now) <= cutoff]
    work, _ = kinds.lead_jobs(SOURCES[meta.NAME], sendable, ctx.routes, ctx.processing)
    _answers(ctx, token, form_id, work)
    enqueued = admission.enqueue_new(queue, SOURCES[meta.NAME], work)
    new = set(enqueued["job_ids"])
    recovered = [args for key, args in work if job_id("lead", meta.NAME, key) in new]
    accuracymarks.mark_all(pipe, [("meta", listed), ("too_old", too_old), ("recovered", recovered)], now, ctx.routes)
    return {
        "listed": len(listed),
        "recovered": len(recovered),
        "too_old": len(too_old),
        "known": enqueued["duplicates"],
    }


def _judge_page(connection: redis.Redis, page_id: str, recovered: int, now: float, complete: bool) -> None:
    """Leads only the sweep found mean the Page's webhooks have stopped: flag it, loudly
    once; a whole sweep of the Page that recovers nothing clears it."""
    if not recovered:
        if complete:
            accuracy.clear_silent(connection, page_id)
        return
    if accuracy.flag_silent(connection, page_id, recovered, now):
        log.error(
            "webhook_silent",
            page_id=page_id,
            recovered=recovered,
            detail="the sweep found leads no webhook brought. Likely: the app's subscription was removed "
            "from the Page, the app is in development mode, the Page token expired, or Meta gave up "
            f"after 36 hours of failed deliveries. Run `leadrelay doctor --page-id {page_id}`, then "
            f"`leadrelay subscribe --page-id {page_id}`",
        )
