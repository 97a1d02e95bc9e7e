"""A new lead's profile and `Lead` event, built one way whether the lead is sent alone
(its own job, jobs.py) or in a batch (batches.py)."""

from __future__ import annotations

import time

from . import events, logs, matchkeys, times, userdata
from .routing import Dataset

log = logs.get(__name__)


def lead_ads_profile(leadgen: dict, lead: dict, dataset: Dataset, default_region: str | None) -> dict:
    """The profile of a Lead Ads lead: `leadgen` is its webhook change (with its route and
    Limited Data Use fields), `lead` what Graph answered for it."""
    leadgen_id = leadgen["leadgen_id"]
    created = times.unix_time(lead.get("created_time")) or leadgen.get("created_time") or int(time.time())
    user_data, dropped = userdata.build(matchkeys.from_lead_ads(lead.get("field_data")), default_region)
    for item in dropped:
        log.info("match_key_dropped", leadgen_id=leadgen_id, **item)
    profile = {
        "dataset": dataset.name,  # stage events for the lead go where the lead went
        "dataset_id": dataset.id,
        "source": "meta",
        "key": leadgen_id,
        "lead_id": int(leadgen_id),
        "created_time": created,
        "page_id": leadgen.get("page_id"),
        "form_id": lead.get("form_id") or leadgen.get("form_id"),
        "ad_id": lead.get("ad_id") or leadgen.get("ad_id"),
        "adset_id": lead.get("adset_id"),
        "campaign_id": lead.get("campaign_id"),
        "platform": lead.get("platform"),
        "is_organic": lead.get("is_organic"),
        "user_data": user_data,
        "fbc": None,  # Lead Ads leads carry no click id; form sources fill it in
    }
    return profile


def lead_ads_event(profile: dict, leadgen: dict, dataset: Dataset) -> dict:
    """Its `Lead` event. Raises DeliveryError (expired, invalid) as events.build does; the
    profile is kept all the same, for the lead's later stages."""
    leadgen_id = leadgen["leadgen_id"]
    return events.build(name=events.LEAD, time=events.event_time(profile["created_time"]),
                        event_id=events.event_id("meta", leadgen_id, events.LEAD),
                        user_data={**profile["user_data"], "lead_id": int(leadgen_id)},
                        lead_event_source=dataset.lead_event_source, processing=leadgen.get("processing"))


def form_profile(submission: dict, dataset: Dataset) -> dict:
    """The profile of a form submission, mapped and hashed when it arrived."""
    for item in submission.get("dropped", []):
        log.info("match_key_dropped", source=submission["source"], submission_id=submission["submission_id"], **item)
    submitted = submission.get("submitted_at") or int(time.time())
    return {
        "source": submission["source"], "key": submission["key"], "lead_id": None, "created_time": submitted,
        "form_id": submission["form_id"], "submission_id": submission["submission_id"],
        "user_data": {k: v for k, v in submission["user_data"].items() if k in matchkeys.HASHED},
        "fbc": submission["user_data"].get("fbc"), "dataset": dataset.name, "dataset_id": dataset.id,
    }


def form_event(submission: dict) -> dict:
    """Its event (Raises DeliveryError as events.build does)."""
    submitted = submission.get("submitted_at") or int(time.time())
    return events.build(
        name=submission["event_name"], time=events.event_time(submitted), event_id=submission["event_id"],
        user_data=submission["user_data"], lead_event_source=submission["source"].capitalize(),
        action_source=submission["action_source"], value=submission.get("value"),
        currency=submission.get("currency"), event_source_url=submission.get("event_source_url"),
        processing=submission.get("processing"))
