"""What a request of stage changes reads from Redis, fetched in a few round trips for all its
items.

Notes: docs/internals/intake.md
"""

from __future__ import annotations

from typing import cast

import redis

from workers.common.queues import redis_key
from workers.events import chatevents, conversions, ledger, profiles
from workers.identity import userdata

_DATA_ERRORS = (TypeError, ValueError, KeyError, AttributeError, OverflowError, UnicodeError)


_FIELDS = {"em": "email", "ph": "phone", "external_id": "external_id", "country": "country"}  # key: item field


def given(item: dict, region: str) -> dict:
    """The item's identifiers, normalised and hashed as Meta wants them; its `country` (a
    CRM contact's) places a phone written in national form, and is a match key itself."""
    fields = {key: item.get(name) or [] for key, name in _FIELDS.items()}
    hashed, _ = userdata.build(fields, region)
    return hashed


class Prefetched:
    """A read-only Redis for stageitems.check: `get` and `exists` from what was fetched."""

    def __init__(self, connection: redis.Redis, values: dict[str, bytes | None]):
        self.connection, self.values = connection, values

    def get(self, key: str | bytes):
        key = _text(key)
        return self.values[key] if key in self.values else self.connection.get(key)

    def exists(self, key: str | bytes) -> int:
        key = _text(key)
        return int(self.values[key] is not None) if key in self.values else self.connection.exists(key)


def _text(key: str | bytes) -> str:
    """A key as the prefetch holds it: a lookup's value, the profile's key, comes back from
    Redis as bytes, and read by it every known lead went back to Redis (508 round trips for
    500 items instead of a few)."""
    return key.decode() if isinstance(key, bytes) else key


def prefetch(connection: redis.Redis, items: list, region: str, datasets: list[str]) -> tuple[Prefetched, dict]:
    """(a reader holding every key the items' checks can read, each item's hashed
    identifiers by its position)."""
    givens: dict[int, dict] = {}
    first: set[str] = set()
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        try:
            givens[index] = given(item, region)
            if item.get("leadgen_id"):
                first.add(redis_key("profile", "meta", str(item["leadgen_id"]).strip()))
            source, _, rest = str(item.get("submission_id") or "").partition(":")
            if rest:
                first.add(redis_key("profile", source, rest))
        except _DATA_ERRORS:
            continue  # its check meets the same problem and answers for it
        for dataset in datasets:
            for match_key in profiles.LOOKUP_KEYS:
                first.update(profiles.lookup_key(dataset, match_key, h) for h in givens[index].get(match_key, []))
            first.update(chatevents.lookup_key(dataset, h) for h in givens[index].get("ph", []))  # a chat's phone
        conversation = item.get("conversation")
        if isinstance(conversation, str) and conversation.count(":") == 2:
            first.add(chatevents.chat_key(*conversation.split(":")))
    values = _mget(connection, sorted(first))
    lookups = (redis_key("profile-by"), redis_key("chat-by"))
    pointed = {v.decode() for k, v in values.items() if v is not None and k.startswith(lookups)}
    values.update(_mget(connection, sorted(pointed - set(values))))
    leads = set()
    for key, raw in values.items():
        if raw is not None and key.startswith(redis_key("profile") + ":"):
            _, _, source_key = key.partition(redis_key("profile") + ":")
            source, _, lead_key = source_key.partition(":")
            leads.add(ledger.key(conversions.event_id(source, lead_key, conversions.LEAD)))
    ordered = sorted(leads)
    with connection.pipeline(transaction=False) as pipe:
        for key in ordered:
            pipe.exists(key)
        values.update({key: (b"1" if found else None) for key, found in zip(ordered, pipe.execute())})
    return Prefetched(connection, values), givens


def _mget(connection: redis.Redis, keys: list[str]) -> dict[str, bytes | None]:
    out: dict[str, bytes | None] = {}
    for start in range(0, len(keys), 1000):
        chunk = keys[start : start + 1000]
        out.update(zip(chunk, cast("list[bytes | None]", connection.mget(chunk))))
    return out
