"""A CRM's stage changes in a drain batch.

Notes: docs/internals/engine.md
"""

from __future__ import annotations

from collections import Counter

from rq import get_current_job

from workers import jobnames
from workers.common import logs, times
from workers.common.policy import JobError, Paused
from workers.config.routing import Client
from workers.config.stagemap import StageMap
from workers.engine import sending
from workers.engine.batchsteps import each_lead_error
from workers.engine.context import Context
from workers.engine.inflight import Failed, Lead, failed
from workers.identity import browserids
from workers.intake import admission, stageitems
from workers.sources.registry import SOURCES

log = logs.get(__name__)


def read(ctx: Context, leads: list[Lead]) -> tuple[dict[str, dict], list[Failed]]:
    """Read the people behind these changes, per CRM: (job id -> person, the changes
    whose read failed)."""
    people: dict[str, dict] = {}
    unread: list[Failed] = []
    by_crm: dict[str, list[Lead]] = {}
    for lead in leads:
        by_crm.setdefault(lead.source, []).append(lead)
    for name, group in by_crm.items():
        carried = [lead for lead in group if "person" in lead.args]  # booking tools send the person
        people.update({lead.job_id: _carried(lead.args) for lead in carried})
        group = [lead for lead in group if "person" not in lead.args]
        if not group:
            continue
        client = ctx.crm[name]
        try:
            answers = client.read([lead.args for lead in group])
        except (JobError, Paused) as err:
            errors = each_lead_error(err, client.http.token, len(group))
            answers = {lead.args["event_key"]: one for lead, one in zip(group, errors)}
        for lead in group:
            answer = answers[lead.args["event_key"]]
            if isinstance(answer, Exception):
                unread.append(failed(lead, answer, lead.args.get("occurred_at")))
            else:
                people[lead.job_id] = answer
    return people, unread


def _carried(change: dict) -> dict:
    person = change["person"]
    return {"value": None, "currency": None, "first_name": None, "last_name": None, **person}


def stage_item(change: dict, person: dict) -> dict:
    """The stage API's item for a change and the person read back for it (with the click
    id a booking link carried, as Meta's fbc)."""
    fbc = browserids.fbc(None, person.get("fbclid"), times.unix_time(change.get("occurred_at")))
    return {
        **({"fbc": fbc} if fbc else {}),
        "stage": change["stage"],
        "occurred_at": change.get("occurred_at"),
        "email": person["email"],
        "phone": person["phone"],
        **({"country": person["country"]} if person.get("country") else {}),
        **({"value": person["value"]} if person.get("value") is not None else {}),
        **({"currency": person["currency"]} if person.get("currency") else {}),
        **({"dataset": change["dataset"]} if change.get("dataset") else {}),
        **({"leadgen_id": change["leadgen_id"]} if change.get("leadgen_id") else {}),
        "lead_event_source": SOURCES[change["crm"]].title if change["crm"] in SOURCES else change["crm"],
    }


def accept(ctx: Context, queue, leads: list[Lead], people: dict[str, dict]) -> Counter:
    """Check and queue each change read back (one stage-events job per dataset and source); what is
    refused is recorded with its reason for `leadrelay ignored`. Outcomes counted by
    (source, outcome): each change's own source, for the accounting per source."""
    outcomes: Counter = Counter()
    checked: list[dict] = []  # accepted stage items of every scope: sent together below
    by_scope: dict[tuple[str | None, str | None, str], list[Lead]] = {}
    for lead in leads:
        if lead.job_id in people:
            by_scope.setdefault((lead.args.get("dataset"), lead.args.get("client"), lead.source), []).append(lead)
    for (dataset, client, source), group in by_scope.items():
        scope = _scope(ctx, dataset, client)
        ready, unsent = [], []
        for lead in group:
            person, refused = _the_lead_among(ctx, scope, lead, people[lead.job_id])
            if refused:
                unsent.append(refused)
            else:
                ready.append((lead, person))
        results = stageitems.accept(
            ctx.connection,
            queue,
            [stage_item(lead.args, person) for lead, person in ready],
            ctx.stages or StageMap(),
            ctx.settings.default_region,
            scope,
            source,
            send=checked.extend,
        )
        _record_refused(ctx, [lead for lead, _ in ready], results)
        if unsent:
            admission.record_ignored(ctx.connection, source, unsent)
        outcomes.update((source, f"stage_{result['status']}") for result in results)
        outcomes.update((source, "stage_rejected") for _ in unsent)
    if checked:
        _send(ctx, queue, checked)
    return outcomes


def _send(ctx: Context, queue, checked: list[dict]) -> None:
    """Send the batch's stage events now; a failure of a whole request leaves them all to
    the stage events job (the ledger skips what went before it failed)."""
    job = get_current_job()
    try:
        sending.send_stage_items(ctx, checked, job, jobnames.SEND_STAGE_EVENTS)
    except (JobError, Paused) as err:
        log.warning("stage_events_queued", events=len(checked), reason=getattr(err, "reason", "paused"))
        stageitems.queue_events(queue, checked)
    except BaseException:
        # Redis failed (or the job was stopped): the batch's entries stay pending and are
        # taken again; their stages must then be claimable again, not duplicates. What went
        # to Meta before is in the ledger and is not sent twice.
        for item in checked:
            stageitems.release(ctx.connection, item)
        raise


def _the_lead_among(ctx: Context, scope, lead: Lead, person: dict) -> tuple[dict | None, dict | None]:
    """The person a change goes to: its one contact, or, when a deal has several (a buyer
    and a decision maker), the one of them who is a lead in this scope. A stage never goes
    to a stranger with the deal's value: no lead among them, or two different leads (nothing
    decides which), and the change is recorded with how many candidates were tried."""
    candidates = person.get("candidates")
    if not candidates:
        return person, None
    region = ctx.settings.default_region
    found = {}
    for candidate in candidates:
        profile, _ = stageitems.identify(ctx.connection, stage_item(lead.args, candidate), region, scope)
        if profile:
            found.setdefault(f"{profile['source']}:{profile['key']}", candidate)
    if len(found) == 1:
        return next(iter(found.values())), None
    reason = "no_lead_among_contacts" if not found else "several_leads_among_contacts"
    return None, {"reason": reason, "candidates": len(candidates), "event_key": lead.args["event_key"]}


def _scope(ctx: Context, dataset: str | None, client: str | None) -> stageitems.Scope:
    """Which leads a change may reach, as the receiver decided from who signed it: an
    account routed to a dataset, that dataset's leads only; a client's unlisted account,
    that client's (none, if the client has left the file since); else every dataset (a
    one-client install). One client's CRM never reaches another's lead sharing an email."""
    if dataset:
        return stageitems.Scope(ctx.routes, Client(f"crm:{dataset}", "", "", frozenset({dataset})))
    if client:
        return stageitems.Scope(ctx.routes, ctx.routes.clients.get(client) or Client(client, "", "", frozenset()))
    return stageitems.Scope(ctx.routes)


def _record_refused(ctx: Context, ready: list[Lead], results: list[dict]) -> None:
    refused: dict[str, list[dict]] = {}
    for lead, result in zip(ready, results):
        if result["status"] == "rejected":
            refused.setdefault(lead.source, []).append(
                {"reason": result["reason"], "event_key": lead.args["event_key"], "stage_id": lead.args.get("stage_id")}
            )
    for name, items in refused.items():
        admission.record_ignored(ctx.connection, name, items)
