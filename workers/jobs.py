"""RQ job functions. Each takes one plain JSON dict and logs one line per attempt."""

from __future__ import annotations

import functools
import os
import time

from rq import get_current_job

from workers import logs
from workers.settings import WORKER, Settings, load

from . import capi, deliveries, events, leadfields, counters, profiles, userdata
from .attempts import attempt, finished
from .graph import Graph
from .pauses import Pauses
from .queues import connect

log = logs.get(__name__)


@functools.lru_cache(maxsize=4)
def _context(settings: Settings):
    connection = connect(settings.redis_url)
    return connection, Graph(settings, pauses=Pauses(connection),
                             observe=functools.partial(counters.observe_graph, connection))


def context():
    """Settings, Redis and a Graph client for this worker process."""
    settings = load(os.environ, role=WORKER)
    connection, graph = _context(settings)
    return settings, connection, graph


def process_meta_lead(change: dict) -> dict:
    """Read a Lead Ads lead, keep its profile, and send its `Lead` event.

    Raises:
        DeliveryError, Paused: after attempts.attempt set the job to retry, wait or
            dead-letter.
    """
    settings, connection, graph = context()
    leadgen_id = change["leadgen_id"]
    job = get_current_job()
    subject = {
        "job_id": job.id if job else f"inline-{leadgen_id}",
        "source": "meta",
        "key": leadgen_id,
        "event_name": events.LEAD,
        "event_id": events.event_id("meta", leadgen_id, events.LEAD),
        "event_time": change.get("created_time"),
        "args": change,
    }
    if capi.confirmed(connection, subject["event_id"]):
        finished(connection, subject, "already_confirmed")
        return {"outcome": "already_confirmed", "event_id": subject["event_id"]}
    started = time.monotonic()
    with attempt(connection, graph, subject, settings.retry_base_seconds):
        lead = graph.read_lead(leadgen_id)
        created = events.parse_time(lead.get("created_time")) or change.get("created_time") or int(time.time())
        subject["event_time"] = created
        user_data, dropped = userdata.build(leadfields.match_values(lead.get("field_data")),
                                            settings.default_region)
        for item in dropped:
            log.info("match_key_dropped", leadgen_id=leadgen_id, **item)
        profiles.save(connection, _profile(change, lead, created, user_data), settings.profile_retention_days)
        event = events.build(
            name=events.LEAD,
            time_=events.event_time(created),
            event_id_=subject["event_id"],
            user_data={**user_data, "lead_id": int(leadgen_id)},
            lead_event_source=settings.lead_event_source,
            processing=change.get("processing"),
        )
        profiles.keep_lead_event(connection, event)
        result = capi.deliver(graph, connection, settings, [event])
    finished(connection, subject, result["outcome"], match_keys=sorted(event["user_data"]),
             elapsed_ms=round((time.monotonic() - started) * 1000, 1), leadgen_id=leadgen_id)
    return {**result, "event_id": subject["event_id"]}


def send_form_lead(payload: dict) -> dict:
    """Send the event for a form submission (already mapped and hashed on arrival) and
    keep its profile for later stage events.

    Raises:
        DeliveryError, Paused: after attempts.attempt set the job to retry, wait or
            dead-letter.
    """
    settings, connection, graph = context()
    job = get_current_job()
    subject = {
        "job_id": job.id if job else f"inline-{payload['key']}",
        "source": payload["source"],
        "key": payload["key"],
        "event_name": payload["event_name"],
        "event_id": payload["event_id"],
        "event_time": payload.get("submitted_at"),
        "args": payload,
    }
    if capi.confirmed(connection, payload["event_id"]):
        finished(connection, subject, "already_confirmed")
        return {"outcome": "already_confirmed", "event_id": payload["event_id"]}
    for item in payload.get("dropped", []):
        log.info("match_key_dropped", source=payload["source"], submission_id=payload["submission_id"], **item)
    started = time.monotonic()
    submitted = payload.get("submitted_at") or int(time.time())
    with attempt(connection, graph, subject, settings.retry_base_seconds):
        profiles.save(connection, {
            "source": payload["source"], "key": payload["key"], "lead_id": None, "created_time": submitted,
            "form_id": payload["form_id"], "submission_id": payload["submission_id"],
            "user_data": {k: v for k, v in payload["user_data"].items() if k in userdata.HASHED_KEYS},
            "fbc": payload["user_data"].get("fbc"),
        }, settings.profile_retention_days)
        event = events.build(
            name=payload["event_name"],
            time_=events.event_time(submitted),
            event_id_=payload["event_id"],
            user_data=payload["user_data"],
            lead_event_source=payload["source"].capitalize(),
            action_source=payload["action_source"],
            value=payload.get("value"),
            currency=payload.get("currency"),
            event_source_url=payload.get("event_source_url"),
            processing=payload.get("processing"),
        )
        profiles.keep_lead_event(connection, event)
        result = capi.deliver(graph, connection, settings, [event])
    finished(connection, subject, result["outcome"], match_keys=sorted(event["user_data"]),
             elapsed_ms=round((time.monotonic() - started) * 1000, 1), source=payload["source"])
    return {**result, "event_id": payload["event_id"]}


def send_stage_events(batch: dict) -> dict:
    """Send funnel stage events many per Conversions API request; a lead's raw `Lead`
    goes first when it was never sent.

    Meta rejects a whole request for one invalid event, so a rejected request is split
    in halves until the offending events stand alone; each is dead-lettered with its
    reason on its own job, the rest are delivered.

    Raises:
        DeliveryError, Paused: a failure of the whole batch (transient, auth...), after
            attempts.attempt set the job to retry, wait or dead-letter.
    """
    settings, connection, graph = context()
    job = get_current_job()
    items = [i for i in batch["events"] if not capi.confirmed(connection, i["event_id"])]
    subject = {"job_id": job.id if job else "inline-stages", "source": "crm", "key": None,
               "event_name": items[0]["event_name"] if len(items) == 1 else "stages",
               "event_id": items[0]["event_id"] if len(items) == 1 else None,
               "event_time": min((i["event_time"] for i in items), default=None), "args": batch}
    if not items:
        finished(connection, subject, "already_confirmed")
        return {"outcome": "already_confirmed", "events": 0}
    started = time.monotonic()
    with attempt(connection, graph, subject, settings.retry_base_seconds):
        outgoing = _stage_events(connection, items)
        delivered, isolated = deliveries.deliver_isolating(graph, connection, settings, outgoing)
    for item, err in isolated:
        deliveries.dead_letter_one(connection, job, item, err)
    finished(connection, subject, "dry_run" if settings.dry_run else "delivered", events=delivered,
             isolated=len(isolated), elapsed_ms=round((time.monotonic() - started) * 1000, 1))
    return {"outcome": "delivered", "events": delivered, "dead_lettered": len(isolated)}


def _stage_events(connection, items: list[dict]) -> list[tuple[dict, dict]]:
    """(event, the item it came from) pairs, each lead's missing `Lead` first, once: the
    Lead event as it was built when the lead arrived, when it is still kept."""
    out, seen = [], set()
    for item in items:
        first = item.get("lead_first")
        if first and first["event_id"] not in seen:
            seen.add(first["event_id"])
            lead_item = {**item, "event_name": events.LEAD, "event_id": first["event_id"],
                         "event_time": first["event_time"], "value": None, "currency": None, "lead_first": None}
            kept = profiles.lead_event(connection, first["event_id"])
            if kept:
                kept["event_time"] = events.event_time(kept["event_time"])
            out.append((kept or _stage_event(lead_item), lead_item))
        if item["event_id"] not in seen:
            seen.add(item["event_id"])
            out.append((_stage_event(item), item))
    return out


def _stage_event(item: dict) -> dict:
    return events.build(name=item["event_name"], time_=events.event_time(item["event_time"]),
                        event_id_=item["event_id"], user_data=item["user_data"],
                        lead_event_source=item["lead_event_source"], value=item.get("value"),
                        currency=item.get("currency"), processing=item.get("processing"))


def _profile(change: dict, lead: dict, created: int, user_data: dict) -> dict:
    return {
        "source": "meta",
        "key": change["leadgen_id"],
        "lead_id": int(change["leadgen_id"]),
        "created_time": created,
        "page_id": change.get("page_id"),
        "form_id": lead.get("form_id") or change.get("form_id"),
        "ad_id": lead.get("ad_id") or change.get("ad_id"),
        "adset_id": lead.get("adset_id"),
        "campaign_id": lead.get("campaign_id"),
        "platform": lead.get("platform"),
        "is_organic": lead.get("is_organic"),
        "user_data": user_data,
        "fbc": None,  # Lead Ads leads carry no click id; form sources fill it in
    }
