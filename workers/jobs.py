"""RQ job functions. Each takes one plain JSON dict and logs one line per attempt."""

from __future__ import annotations

import functools
import os
import time

from rq import get_current_job

from webhook_app import logs
from webhook_app.config import WORKER, Settings, load

from . import capi, events, leadfields, profiles, userdata
from .graph import Graph
from .policy import DeliveryError
from .queues import connect

log = logs.get(__name__)


@functools.lru_cache(maxsize=4)
def _context(settings: Settings):
    return connect(settings.redis_url), Graph(settings)


def context():
    """Settings, Redis and a Graph client for this worker process."""
    settings = load(os.environ, role=WORKER)
    connection, graph = _context(settings)
    return settings, connection, graph


def _stop_retrying() -> None:
    # RQ retries every exception of a job enqueued with Retry; a permanent failure
    # must go straight to the failed registry instead of burning the schedule.
    job = get_current_job()
    if job is not None:
        job.retries_left = 0


def process_meta_lead(change: dict) -> dict:
    """Read a Lead Ads lead, keep its profile, and send its `Lead` event.

    Raises:
        DeliveryError: the lead read or the send failed; retried only when its class
            is retryable (policy.RETRYABLE).
    """
    settings, connection, graph = context()
    leadgen_id = change["leadgen_id"]
    event_id = events.event_id("meta", leadgen_id, events.LEAD)
    job = get_current_job()
    attempt = {"job_id": job.id if job else None, "leadgen_id": leadgen_id, "event_id": event_id}
    started = time.monotonic()
    if capi.confirmed(connection, event_id):
        log.info("job_done", outcome="already_confirmed", **attempt)
        return {"outcome": "already_confirmed", "event_id": event_id}
    try:
        lead = graph.read_lead(leadgen_id)
        created = events.parse_time(lead.get("created_time")) or change.get("created_time") or int(time.time())
        user_data, dropped = userdata.build(leadfields.match_values(lead.get("field_data")),
                                            settings.default_region)
        for item in dropped:
            log.info("match_key_dropped", leadgen_id=leadgen_id, **item)
        profiles.save(connection, _profile(change, lead, created, user_data), settings.profile_retention_days)
        event = events.build(
            name=events.LEAD,
            time_=events.event_time(created),
            event_id_=event_id,
            user_data={**user_data, "lead_id": int(leadgen_id)},
            lead_event_source=settings.lead_event_source,
        )
        result = capi.deliver(graph, connection, settings, [event])
    except DeliveryError as err:
        if not err.retryable:
            _stop_retrying()
        log.warning("job_failed", outcome="retry" if err.retryable else "dead_letter",
                    elapsed_ms=round((time.monotonic() - started) * 1000, 1), **attempt, **err.as_dict())
        raise
    log.info("job_done", outcome=result["outcome"], match_keys=sorted(event["user_data"]),
             elapsed_ms=round((time.monotonic() - started) * 1000, 1), **attempt)
    return {**result, "event_id": event_id}


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
