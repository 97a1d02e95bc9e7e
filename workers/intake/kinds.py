"""One handler per kind of source: what its parsed items become (Lead Ads changes routed or
held, form answers hashed, a CRM's changes mapped to stages, chats kept), then admitted by
admission.py.

Notes: docs/internals/intake.md
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

import redis
from rq import Queue

from workers.common.refusals import QueueUnavailable
from workers.config.routing import Client, Routes
from workers.config.settings import Settings
from workers.intake import chats, crmitems, forms, googleleads
from workers.intake.admission import HELD, enqueue_new, held, record_ignored, replicated
from workers.sources.registry import CHAT, CRM_STAGES, FORM, GOOGLE_LEAD, LEAD_ADS, Source

if TYPE_CHECKING:
    from workers.intake.requestredis import RequestRedis


@dataclass
class Delivery:
    """One authenticated, parsed delivery, and what its handler needs to admit it."""

    source: Source
    parsed: dict
    owner: Client | None  # whose secret signed it (None: the operator's)
    settings: Settings
    mapping: dict  # the mapping file as mappingfile.validate reads it
    queue: Queue
    request_id: str | None = None
    request_redis: RequestRedis | None = None


def lead_ads(delivery: Delivery) -> dict:
    """Lead Ads changes: routed and admitted, or held (a Page not in the mapping file)."""
    source, queue = delivery.source, delivery.queue
    processing = delivery.mapping["processing"].get(source.name)
    jobs, waiting = lead_jobs(source, delivery.parsed["leads"], delivery.mapping["routes"], processing)
    not_sent = [
        {
            "reason": item["reason"],
            "leadgen_id": item["leadgen_id"],
            "page_id": item["page_id"],
            "form_id": item["form_id"],
        }
        for item in waiting
    ]
    counts = enqueue_new(queue, source, jobs, delivery.request_id, via="webhook", request_redis=delivery.request_redis)
    # New Lead Ads leads are marked "came by webhook" by the drain job that takes them (the
    # accuracy figures): this request's one write stays one. What needs another write is
    # rare: a redelivery (its lead may have come by the sweep first), or items not sent.
    return _recorded(delivery, counts, not_sent, waiting, [jobs[i][1] for i in counts["known"]])


def form(delivery: Delivery) -> dict:
    """Form submissions: mapped and hashed on arrival (forms.py), then admitted."""
    source = delivery.source
    jobs, not_sent = _form_jobs(
        source,
        delivery.parsed["leads"],
        delivery.mapping["forms"][source.name],
        delivery.settings,
        delivery.mapping["routes"],
        delivery.mapping["processing"].get(source.name),
        delivery.owner,
    )
    counts = enqueue_new(delivery.queue, source, jobs, delivery.request_id, request_redis=delivery.request_redis)
    return _recorded(delivery, counts, not_sent)


def google_lead(delivery: Delivery) -> dict:
    """Google Ads lead form leads: routed to their Google destination, hashed by Google's
    rules (googleleads.py), then admitted and deduped on Google's lead_id."""
    source = delivery.source
    jobs, not_sent = googleleads.jobs(
        delivery.parsed["leads"],
        delivery.mapping["forms"].get(source.name, {}),
        delivery.mapping["routes"],
        delivery.settings.default_region,
        delivery.owner,
        source.lead_key,
    )
    counts = enqueue_new(delivery.queue, source, jobs, delivery.request_id, request_redis=delivery.request_redis)
    return _recorded(delivery, counts, not_sent)


def crm_stages(delivery: Delivery) -> dict:
    """A CRM's or booking tool's changes, mapped to stages (crmitems.py), then admitted; what
    its parser marks `recorded` (a cancelled booking) is recorded as not sent."""
    source, parsed = delivery.source, delivery.parsed
    jobs, not_sent = crmitems.jobs(
        source,
        parsed["items"],
        delivery.mapping["crm"][source.name],
        delivery.settings.default_region,
        delivery.owner,
        delivery.mapping["routes"],
    )
    counts = enqueue_new(delivery.queue, source, jobs, delivery.request_id, request_redis=delivery.request_redis)
    return _recorded(delivery, counts, not_sent + parsed.get("recorded", []))


def chat(delivery: Delivery) -> dict:
    """Ad-started chats are kept in the request (chats.py: nothing to read later); every
    other message and status is acknowledged and counted, its text never kept."""
    connection, parsed = delivery.queue.connection, delivery.parsed
    try:
        kept = chats.record(
            connection,
            parsed["leads"],
            delivery.mapping["routes"],
            delivery.settings.default_region,
            delivery.settings.profile_retention_days,
        )
    except redis.RedisError as err:
        raise QueueUnavailable(f"queue unavailable ({type(err).__name__}); retry later") from None
    skipped = parsed["skipped"] + kept["unrouted"] + kept["forgotten"]
    record_ignored(connection, delivery.source.name, skipped)
    replicated(connection)
    return {"accepted": kept["accepted"], "duplicates": kept["duplicates"], "job_ids": [], "skipped": skipped}


HANDLERS: dict[str, Callable[[Delivery], dict]] = {
    LEAD_ADS: lead_ads,
    FORM: form,
    CRM_STAGES: crm_stages,
    CHAT: chat,
    GOOGLE_LEAD: google_lead,
}


def _recorded(
    delivery: Delivery, counts: dict, not_sent: list[dict], waiting: Sequence[dict] = (), arrived: Sequence[dict] = ()
) -> dict:
    """Record what was not sent (after the enqueue: a delivery answered 503 records nothing,
    so its retry does not record the same items twice), then confirm replication, last, so
    it covers every write (a 503 there means the retry records its items again: counts,
    never leads). The answer's counts and everything skipped."""
    unusable = counts.pop("unusable") + counts.pop("forgotten")
    counts.pop("known")
    connection = delivery.queue.connection
    record_ignored(connection, delivery.source.name, not_sent + unusable, waiting, arrived=arrived)
    replicated(connection)
    return {**counts, "skipped": delivery.parsed.get("skipped", []) + not_sent + unusable}


def lead_jobs(
    source: Source, items: list[dict], routes: Routes, processing: dict | None
) -> tuple[list[tuple[str, dict]], list[dict]]:
    """Lead Ads changes to (lead key, job argument), each with its route; those no route
    takes (a Page not in the file) are returned apart, with their reason, to be held.

    The route (and the Limited Data Use fields: the dataset's, else the source's) is
    decided when the lead arrives, so a later change of the file never reaches it."""
    jobs, held = [], []
    for item in items:
        route, reason = routes.lead(item.get("page_id"), item.get("form_id"))
        if route is None:
            held.append({**item, "reason": reason})
            continue
        fields = routes.datasets[route["dataset"]].processing or processing
        jobs.append((source.lead_key(item), {**item, "route": route, **({"processing": fields} if fields else {})}))
    return jobs, held


def _form_jobs(
    source: Source,
    items: list[dict],
    configured: dict,
    settings: Settings,
    routes: Routes,
    processing: dict | None,
    owner: Client | None,
) -> tuple[list[tuple[str, dict]], list[dict]]:
    """Form submissions to (lead key, hashed job argument), each with its route; what is
    not sent, with its reason. A client's own secret reaches its own datasets' forms only."""
    jobs, not_sent = [], []
    for item in items:
        route, reason = routes.form(source.name, item["form_id"])
        if route is not None and owner is not None and route["dataset"] not in owner.datasets:
            route, reason = None, "form_out_of_scope"
        if item["test"]:
            reason = "test_delivery"  # never to a production dataset
        elif configured and item["form_id"] not in configured:
            reason = "unknown_form"
        elif route is not None:
            lead_key = source.lead_key(item)
            payload, reason = forms.prepare(
                item,
                configured.get(item["form_id"]),
                settings.default_region,
                lead_key,
                routes.datasets[route["dataset"]].processing or processing,
            )
            if payload:
                jobs.append((lead_key, {**payload, "route": route}))
                continue
        not_sent.append({"reason": reason, "form_id": item["form_id"], "submission_id": item["submission_id"]})
    return jobs, not_sent


def release_held(queue: Queue, source: Source, routes: Routes, processing: dict | None = None) -> dict:
    """Route the held leads again with the current mapping file and enqueue those that now
    have a route (deduped like a webhook); the rest stay held. Counts."""
    waiting = held(queue.connection)
    jobs, still = lead_jobs(source, waiting, routes, processing)
    counts = enqueue_new(
        queue, source, [(key, {k: v for k, v in arg.items() if k not in ("reason", "held_at")}) for key, arg in jobs]
    )
    if jobs:
        queue.connection.hdel(HELD, *(key for key, _ in jobs))
    return {
        "held": len(waiting),
        "released": counts["accepted"],
        "already_known": counts["duplicates"],
        "still_held": len(still),
    }
