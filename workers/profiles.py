"""Lead profiles: what later stage events need to refer to a lead. Never raw PII.

A profile holds hashed match keys, the lead_id, the creation time and the page, form
and ad ids. It is found by its source key, or by a hashed email or phone. Everything
expires after the configured retention.
"""

from __future__ import annotations

import json

import redis

from .queues import key

LOOKUP_KEYS = ("em", "ph", "external_id")


def save(connection: redis.Redis, profile: dict, retention_days: int) -> str:
    """Store the profile and its lookups; return its Redis key."""
    ttl = retention_days * 24 * 3600
    profile_key = key("profile", profile["source"], profile["key"])
    with connection.pipeline() as pipe:
        pipe.set(profile_key, json.dumps(profile, sort_keys=True), ex=ttl)
        for match_key in LOOKUP_KEYS:
            for hashed in profile.get("user_data", {}).get(match_key, []):
                pipe.set(key("profile-by", match_key, hashed), profile_key, ex=ttl)
        pipe.execute()
    return profile_key


def load(connection: redis.Redis, source: str, source_key: str) -> dict | None:
    raw = connection.get(key("profile", source, source_key))
    return json.loads(raw) if raw else None


def find(connection: redis.Redis, match_key: str, hashed: str) -> dict | None:
    """The profile a hashed email, phone or external id points at, if any."""
    profile_key = connection.get(key("profile-by", match_key, hashed))
    raw = connection.get(profile_key) if profile_key else None
    return json.loads(raw) if raw else None
