"""Lead profiles: what later stage events need to refer to a lead. Never raw PII.

Notes: docs/internals/events.md
"""

from __future__ import annotations

import json
import time

import redis

from workers.common.queues import redis_key
from workers.config.routing import DEFAULT
from workers.events import conversions, personindex

LOOKUP_KEYS = personindex.LOOKUP_KEYS


def save(connection: redis.Redis, profile: dict, retention_days: int) -> str:
    """Store the profile and its lookups; return its Redis key."""
    with connection.pipeline() as pipe:
        profile_key = write(pipe, profile, retention_days)
        pipe.execute()
    return profile_key


def write(pipe, profile: dict, retention_days: int) -> str:
    """`save` on a pipeline (a batch writes all its leads' profiles in one round trip)."""
    ttl = retention_days * 24 * 3600
    profile_key = redis_key("profile", profile["source"], profile["key"])
    pipe.set(profile_key, json.dumps(profile, sort_keys=True, separators=(",", ":")), ex=ttl)
    hashes = [hashed for match_key in LOOKUP_KEYS for hashed in profile.get("user_data", {}).get(match_key, [])]
    for match_key in LOOKUP_KEYS:
        for hashed in profile.get("user_data", {}).get(match_key, []):
            pipe.set(lookup_key(profile.get("dataset"), match_key, hashed), profile_key, ex=ttl)
    personindex.note_profile(pipe, f"{profile['source']}:{profile['key']}", hashes, ttl)
    return profile_key


def keep_lead_event(connection, event: dict) -> None:
    """Keep a lead's `Lead` event as built, until Meta's window for it closes, so a stage
    event that finds it unsent (dry run, an outage) sends this very event: the same keys,
    source, LDU fields and event_id, not a rebuilt, poorer one. `connection` may be a
    pipeline."""
    ttl = int(conversions.deadline(event["event_time"]) - time.time())
    if ttl > 0:
        connection.set(redis_key("lead-event", event["event_id"]), json.dumps(event, sort_keys=True), ex=ttl)


def lead_event(connection: redis.Redis, event_id: str) -> dict | None:
    raw = connection.get(redis_key("lead-event", event_id))
    return json.loads(raw) if raw else None


def load(connection: redis.Redis, source: str, source_key: str) -> dict | None:
    raw = connection.get(redis_key("profile", source, source_key))
    return json.loads(raw) if raw else None


def lookup_key(dataset: str | None, match_key: str, hashed: str) -> str:
    # One person may be a lead of two clients: each dataset has its own lookups. The
    # environment's dataset keeps the names it had before datasets existed.
    if dataset in (None, DEFAULT):
        return redis_key("profile-by", match_key, hashed)
    return redis_key("profile-by", dataset, match_key, hashed)


def find(connection: redis.Redis, match_key: str, hashed: str, dataset: str | None = None) -> dict | None:
    """The profile a hashed email, phone or external id points at in a dataset, if any."""
    profile_key = connection.get(lookup_key(dataset, match_key, hashed))
    raw = connection.get(profile_key) if profile_key else None
    return json.loads(raw) if raw else None
