"""The steps of one batch (inboxdrain.process), each returning what it produced: what
needs nothing more, the Graph batch reads, the profiles and events built, the events
sent many per request."""

from __future__ import annotations

from rq.job import Job

from workers.common import logs
from workers.common.policy import AUTH, INVALID, JobError, Paused
from workers.config.googledest import GoogleDestination
from workers.config.routing import dataset_of
from workers.engine import sending
from workers.engine.context import Context
from workers.engine.inflight import Built, Failed, Lead, failed
from workers.events import leadevents, ledger, profiles, suppression
from workers.graphapi.graph import BATCH_LIMIT
from workers.graphapi.pauses import fingerprint
from workers.intake import admission

log = logs.get(__name__)
LISTED = "listed"  # a job argument: the lead's hashed answers, from the sweep's listing (sweeper.py)
_DATA_ERRORS = (TypeError, ValueError, KeyError, IndexError, AttributeError, OverflowError)


def already_done(connection, leads: list[Lead]) -> list[str | None]:
    """Per lead, why it needs nothing more (a drain job killed before it acknowledged):
    it was handed to its own job, or Meta confirmed its event; else None."""
    with connection.pipeline(transaction=False) as pipe:
        for lead in leads:
            pipe.exists(Job.key_for(lead.job_id))
            pipe.exists(ledger.key(lead.event_id))
        found = pipe.execute()
    return [
        "handed_off_before" if found[2 * i] else "already_confirmed" if found[2 * i + 1] else None
        for i in range(len(leads))
    ]


def read(ctx: Context, leads: list[Lead]) -> tuple[dict[str, dict], list[Failed]]:
    """Read Lead Ads leads in Graph batches, one per Page token: (job id -> the lead
    read, the leads whose read failed)."""
    by_token: dict[str, list[Lead]] = {}
    unread: list[Failed] = []
    for lead in leads:
        if lead.args.get(LISTED):  # the sweep's listing gave its answers already: never read twice
            continue
        try:
            by_token.setdefault(ctx.routes.page_token(lead.route), []).append(lead)
        except JobError as err:  # its Page left the mapping file
            unread.append(failed(lead, err, lead.args.get("created_time")))
    reads = {}
    for token, group in by_token.items():
        for start in range(0, len(group), BATCH_LIMIT):
            chunk = group[start : start + BATCH_LIMIT]
            try:
                answers = ctx.graph.read_leads([lead.key for lead in chunk], token)
            except (JobError, Paused) as err:
                answers = dict(zip((lead.key for lead in chunk), each_lead_error(err, token, len(chunk))))
            for lead in chunk:
                answer = answers[lead.key]
                if isinstance(answer, Exception):
                    unread.append(failed(lead, answer, lead.args.get("created_time")))
                else:
                    reads[lead.job_id] = answer
    return reads, unread


def build(ctx: Context, leads: list[Lead], reads: dict[str, dict]) -> tuple[list[Built], list[Failed]]:
    """Each lead's profile and event (a Lead Ads lead from its read, a form submission
    from its argument): (those built, those that could not be)."""
    built: list[Built] = []
    unbuilt: list[Failed] = []
    for lead in leads:
        listed = lead.args.get(LISTED)
        if lead.source == "meta" and lead.job_id not in reads and not listed:
            continue  # its read failed
        profile = None
        try:
            dataset = ctx.routes.dataset(lead.route)
            if lead.source == "meta":
                profile, user_data = (
                    leadevents.profile_of(lead.args, listed, dataset)
                    if listed
                    else leadevents.lead_ads_profile(
                        lead.args, reads[lead.job_id], dataset, ctx.settings.default_region
                    )
                )
                event = leadevents.lead_ads_event(profile, user_data, lead.args, dataset)
            elif isinstance(dataset, GoogleDestination):  # a Google lead form's lead (intake/googleleads.py)
                profile, event = leadevents.google_lead(lead.args, dataset)
            else:
                profile = leadevents.form_profile(lead.args, dataset)
                event = leadevents.form_event(lead.args)
        except JobError as err:  # too old, or its dataset left the mapping file
            # Its profile is kept all the same: its later stages can still go.
            unbuilt.append(failed(lead, err, profile["created_time"] if profile else None, profile))
            continue
        except _DATA_ERRORS as err:  # what no check foresaw: this lead alone is a dead letter
            log.error("job_data_unusable", job_id=lead.job_id, error=type(err).__name__, where=logs.where(err))
            unusable = JobError(INVALID, f"the job's data could not be used ({type(err).__name__})")
            unbuilt.append(failed(lead, unusable, None))
            continue
        built.append(Built(lead, profile, event, dataset))
    return built, unbuilt


def send(ctx: Context, built: list[Built]) -> tuple[list[Built], list[Failed]]:
    """Send the events many per request, per dataset: (what was delivered, or kept in dry
    run; what Meta refused, alone or with its whole request)."""
    by_dataset: dict[str, list[Built]] = {}
    for item in built:
        by_dataset.setdefault(item.dataset.id or item.dataset.name, []).append(item)
    delivered: list[Built] = []
    unsent: list[Failed] = []
    for group in by_dataset.values():
        dataset = group[0].dataset
        try:
            _, refused = sending.deliver_isolating(
                ctx.graph,
                ctx.connection,
                ctx.settings,
                [(item.event, item) for item in group],
                dataset,
                ledger_checked=True,  # already_done looked each lead up moments before
                google=ctx.google,
            )
        except (JobError, Paused) as err:
            errors = each_lead_error(err, dataset.token, len(group))
            unsent += [failed(item.lead, one, item.profile["created_time"]) for item, one in zip(group, errors)]
            continue
        unsent += [failed(item.lead, err, item.profile["created_time"]) for item, err in refused]
        refused_ids = {id(item) for item, _ in refused}
        delivered += [item for item in group if id(item) not in refused_ids]
    return delivered, unsent


def set_aside_suppressed(ctx: Context, built: list[Built]) -> tuple[list[Built], list[Built]]:
    """(those to keep and send, those of a forgotten person): the latter are never kept
    or sent, and are recorded by the forget's reference alone (`leadrelay ignored`)."""
    refs = suppression.which(
        ctx.connection, [suppression.fields(item.dataset.name, item.event.get("user_data")) for item in built]
    )
    aside = []
    for item, ref in zip(built, refs):
        item.suppressed = ref
        if ref:
            aside.append(item)
    if aside:
        admission.record_ignored(
            ctx.connection, "leads", [{"reason": "suppressed", "ref": i.suppressed} for i in aside]
        )
    return [item for item in built if not item.suppressed], aside


def keep_profiles(ctx: Context, built: list[Built], unbuilt: list[Failed]) -> None:
    """Every profile built, before any event is sent (one transaction): a lead whose event
    fails or is too old keeps its profile, so its later stages can still go. A person
    forgotten since set_aside_suppressed looked is not kept (suppression.guarded); the
    sender's own check then sends nothing for them."""
    kept = [(item.profile, item.dataset.name) for item in built]
    kept += [(f.profile, dataset_of(f.profile)) for f in unbuilt if f.profile]

    def write(pipe, refs) -> None:
        for (profile, _), ref in zip(kept, refs):
            if not ref:
                profiles.write(pipe, profile, ctx.settings.profile_retention_days)

    candidates = [suppression.fields(name, p.get("user_data"), p.get("lead_id")) for p, name in kept]
    suppression.guarded(ctx.connection, candidates, write)


def one(ctx: Context, lead: Lead) -> Built:
    """A lead's own job (after a batch handed it off, a retry, a replay): the drain's steps
    for a batch of one, so one lead has one pipeline. Its profile is kept even when its event
    fails (its later stages can still go), and its Lead event kept as built while Meta does
    not have it (dry run, a failure), as a drain keeps it.

    Raises:
        JobError, Paused: the step that failed, for the job's attempt to settle.
    """
    reads, unread = read(ctx, [lead]) if lead.source == "meta" else ({}, [])
    if unread:
        raise unread[0].error
    built, unbuilt = build(ctx, [lead], reads)
    built, aside = set_aside_suppressed(ctx, built)
    if aside:
        return aside[0]
    keep_profiles(ctx, built, unbuilt)
    if unbuilt:
        lead.event_time = unbuilt[0].lead.event_time
        raise unbuilt[0].error
    item = built[0]
    lead.event_time = item.profile["created_time"]
    delivered, refused = send(ctx, built)
    if refused or item.dataset.dry_run:
        profiles.keep_lead_event(ctx.connection, item.event)
    if refused:
        raise refused[0].error
    return delivered[0]


def each_lead_error(err: Exception, token: str | None, count: int) -> list[Exception]:
    """One request failed for `count` leads: each lead's error. Meta refused the token
    (which is now paused): the first lead carries the refusal (its dead letter says what
    to fix) and the others wait for the token, as jobs after a refusal do."""
    if isinstance(err, JobError) and err.reason == AUTH and token:
        return [err] + [Paused(fingerprint(token))] * (count - 1)
    return [err] * count
