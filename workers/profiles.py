"""Lead profiles: what later stage events need to refer to a lead. Never raw PII.

A profile holds hashed match keys, the lead_id, the creation time and the page, form
and ad ids. It is found by its source key, or by a hashed email or phone. Everything
expires after the configured retention.
"""

from __future__ import annotations

import json
import time

import redis

from . import events
from .queues import redis_key

LOOKUP_KEYS = ("em", "ph", "external_id")


def save(connection: redis.Redis, profile: dict, retention_days: int) -> str:
    """Store the profile and its lookups; return its Redis key."""
    ttl = retention_days * 24 * 3600
    profile_key = redis_key("profile", profile["source"], profile["key"])
    with connection.pipeline() as pipe:
        pipe.set(profile_key, json.dumps(profile, sort_keys=True), ex=ttl)
        for match_key in LOOKUP_KEYS:
            for hashed in profile.get("user_data", {}).get(match_key, []):
                pipe.set(redis_key("profile-by", match_key, hashed), profile_key, ex=ttl)
        pipe.execute()
    return profile_key


def keep_lead_event(connection: redis.Redis, event: dict) -> None:
    """Keep a lead's `Lead` event as built, until Meta's window for it closes, so a stage
    event that finds it unsent (dry run, an outage) sends this very event: the same keys,
    source, LDU fields and event_id, not a rebuilt, poorer one."""
    ttl = int(events.deadline(event["event_time"]) - time.time())
    if ttl > 0:
        connection.set(redis_key("lead-event", event["event_id"]), json.dumps(event, sort_keys=True), ex=ttl)


def lead_event(connection: redis.Redis, event_id: str) -> dict | None:
    raw = connection.get(redis_key("lead-event", event_id))
    return json.loads(raw) if raw else None


def load(connection: redis.Redis, source: str, source_key: str) -> dict | None:
    raw = connection.get(redis_key("profile", source, source_key))
    return json.loads(raw) if raw else None


def find(connection: redis.Redis, match_key: str, hashed: str) -> dict | None:
    """The profile a hashed email, phone or external id points at, if any."""
    profile_key = connection.get(redis_key("profile-by", match_key, hashed))
    raw = connection.get(profile_key) if profile_key else None
    return json.loads(raw) if raw else None
