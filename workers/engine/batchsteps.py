"""The steps of one batch (batches.process): what needs nothing more, the Graph batch
reads, the profiles and events built, the events sent many per request."""

from __future__ import annotations

from collections import Counter

from rq.job import Job

from workers.common import logs
from workers.common.policy import AUTH, INVALID, DeliveryError, Paused
from workers.common.queues import redis_key
from workers.engine import sending
from workers.engine.handoff import Lead
from workers.events import leadevents
from workers.graphapi.graph import BATCH_LIMIT
from workers.graphapi.pauses import fingerprint

log = logs.get(__name__)
_DATA_ERRORS = (TypeError, ValueError, KeyError, IndexError, AttributeError, OverflowError)


def already_done(connection, leads: list[Lead]) -> list[str | None]:
    """Per lead, why it needs nothing more (a drain job killed before it acknowledged):
    it was handed to its own job, or Meta confirmed its event; else None."""
    with connection.pipeline(transaction=False) as pipe:
        for lead in leads:
            pipe.exists(Job.key_for(lead.job_id))
            pipe.exists(redis_key("confirmed", lead.event_id))
        found = pipe.execute()
    return [
        "handed_off_before" if found[2 * i] else "already_confirmed" if found[2 * i + 1] else None
        for i in range(len(leads))
    ]


def read(ctx, leads: list[Lead], failed: list) -> dict[str, dict]:
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
            chunk = group[start : start + BATCH_LIMIT]
            try:
                answers = ctx.graph.read_leads([lead.key for lead in chunk], token)
            except (DeliveryError, Paused) as err:
                answers = dict(zip((lead.key for lead in chunk), shared(err, token, len(chunk))))
            for lead in chunk:
                answer = answers[lead.key]
                if isinstance(answer, Exception):
                    failed.append((lead, answer, lead.argument.get("created_time")))
                else:
                    reads[lead.job_id] = answer
    return reads


def build(ctx, leads: list[Lead], reads: dict, failed: list, profiles_only: list) -> list[tuple]:
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
                profile, user_data = leadevents.lead_ads_profile(
                    lead.argument, reads[lead.job_id], dataset, ctx.settings.default_region
                )
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
            failed.append(
                (lead, DeliveryError(INVALID, f"the job's data could not be used ({type(err).__name__})"), None)
            )
            continue
        built.append((lead, profile, event, dataset))
    return built


def deliver(ctx, built: list[tuple], failed: list, outcomes: Counter) -> list[tuple]:
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
            _, refused = sending.deliver_isolating(ctx.graph, ctx.connection, ctx.settings, pairs, dataset)
        except (DeliveryError, Paused) as err:
            failed += [
                (item[0], one, item[1]["created_time"])
                for item, one in zip(group, shared(err, dataset.token, len(group)))
            ]
            continue
        refused_ids = {id(item) for item, _ in refused}
        failed += [(item[0], err, item[1]["created_time"]) for item, err in refused]
        kept = [item for item in group if id(item) not in refused_ids]
        outcomes["dry_run" if dataset.dry_run else "delivered"] += len(kept)
        delivered += kept
    return delivered


def shared(err: Exception, token: str | None, count: int) -> list[Exception]:
    """One request failed for `count` leads: each lead's error. Meta refused the token
    (which is now paused): the first lead carries the refusal (its dead letter says what
    to fix) and the others wait for the token, as jobs after a refusal do."""
    if isinstance(err, DeliveryError) and err.reason == AUTH and token:
        return [err] + [Paused(fingerprint(token))] * (count - 1)
    return [err] * count
