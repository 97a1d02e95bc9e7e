"""A new lead's profile and `Lead` event, built one way whether the lead is sent alone
(its own job, jobs.py) or in a batch (batches.py)."""

from __future__ import annotations

import time

from workers.common import logs, times
from workers.config.routing import Dataset
from workers.events import conversions, googleevents
from workers.events.profiles import LOOKUP_KEYS
from workers.identity import matchkeys, userdata

log = logs.get(__name__)


def lead_ads_profile(leadgen: dict, lead: dict, dataset: Dataset, default_region: str | None) -> tuple[dict, dict]:
    """(the profile of a Lead Ads lead, every match key its answers gave): `leadgen` is its
    webhook change (with its route and Limited Data Use fields), `lead` what Graph
    answered for it."""
    return profile_of(leadgen, hashed(leadgen, lead, default_region), dataset)


def hashed(leadgen: dict, lead: dict, default_region: str | None) -> dict:
    """What a Lead Ads lead's answers give, normalised and hashed: its creation time and
    match keys, never a raw answer (the sweep keeps this in the job of a lead it listed)."""
    leadgen_id = leadgen["leadgen_id"]
    created = times.unix_time(lead.get("created_time")) or leadgen.get("created_time") or int(time.time())
    user_data, dropped = userdata.build(matchkeys.from_lead_ads(lead.get("field_data")), default_region)
    for item in dropped:
        log.info("match_key_dropped", leadgen_id=leadgen_id, **item)
    return {"created_time": created, "user_data": user_data}


def profile_of(leadgen: dict, read: dict, dataset: Dataset) -> tuple[dict, dict]:
    """The profile and match keys of a Lead Ads lead from its `hashed` answers."""
    leadgen_id = leadgen["leadgen_id"]
    return _kept(
        source="meta",
        key=leadgen_id,
        lead_id=int(leadgen_id),
        created_time=read["created_time"],
        page_id=leadgen.get("page_id"),
        form_id=leadgen.get("form_id"),
        user_data=read["user_data"],
        fbc=None,
        dataset=dataset,
    ), read["user_data"]


def lead_ads_event(profile: dict, user_data: dict, leadgen: dict, dataset: Dataset) -> dict:
    """Its `Lead` event, with every match key. Raises JobError (expired, invalid) as
    conversions.build does; the profile is kept all the same, for the lead's later stages."""
    leadgen_id = leadgen["leadgen_id"]
    return conversions.build(
        name=conversions.LEAD,
        time=conversions.event_time(profile["created_time"]),
        event_id=conversions.event_id("meta", leadgen_id, conversions.LEAD),
        user_data={**user_data, "lead_id": int(leadgen_id)},
        lead_event_source=dataset.lead_event_source,
        processing=leadgen.get("processing"),
    )


def form_profile(submission: dict, dataset: Dataset) -> dict:
    """The profile of a form submission, mapped and hashed when it arrived."""
    for item in submission.get("dropped", []):
        log.info("match_key_dropped", source=submission["source"], submission_id=submission["submission_id"], **item)
    submitted = submission.get("submitted_at") or int(time.time())
    return _kept(
        source=submission["source"],
        key=submission["key"],
        lead_id=None,
        created_time=submitted,
        page_id=None,
        user_data=submission["user_data"],
        fbc=submission["user_data"].get("fbc"),
        dataset=dataset,
    )


def form_event(submission: dict) -> dict:
    """Its event (Raises JobError as conversions.build does)."""
    submitted = submission.get("submitted_at") or int(time.time())
    return conversions.build(
        name=submission["event_name"],
        time=conversions.event_time(submitted),
        event_id=submission["event_id"],
        user_data=submission["user_data"],
        lead_event_source=submission["source"].capitalize(),
        action_source=submission["action_source"],
        value=submission.get("value"),
        currency=submission.get("currency"),
        event_source_url=submission.get("event_source_url"),
        processing=submission.get("processing"),
    )


def google_lead(submission: dict, destination) -> tuple[dict, dict]:
    """A Google lead's profile (Google's identifiers and click id kept beside the lookups,
    for its later stages) and its `Lead` event (googleevents.internal)."""
    profile = {**form_profile(submission, destination), "google": submission["google"]}
    event = googleevents.internal(
        event_name=submission["event_name"],
        event_id=submission["event_id"],
        event_time=min(profile["created_time"], int(time.time())),
        user_data=submission["user_data"],
        google=submission["google"],
        value=submission.get("value"),
        currency=submission.get("currency"),
        test=submission.get("test", False),
    )
    return profile, event


def _kept(
    *,
    source: str,
    key: str,
    lead_id: int | None,
    created_time: int,
    page_id: str | None,
    user_data: dict,
    fbc: str | None,
    dataset: Dataset,
    form_id: str | None = None,
) -> dict:
    """A profile holds only what a later stage event uses (stages.py): the lead's keys and
    creation time, the hashed email, phone and external id it is found by and sends, the
    click id, and where its Lead went. Kept for LEADRELAY_PROFILE_RETENTION_DAYS, so every
    byte counts (bench/memory.py)."""
    return {
        "source": source,
        "key": key,
        "lead_id": lead_id,
        "created_time": created_time,
        "page_id": page_id,
        **({"form_id": form_id} if form_id else {}),  # where forget finds its accuracy flag
        "user_data": {k: v for k, v in user_data.items() if k in LOOKUP_KEYS},
        "fbc": fbc,
        # stage events for the lead go where the lead went
        "dataset": dataset.name,
        "dataset_id": dataset.id,
    }
