"""What a request of stage changes reads from Redis, fetched in a few round trips for all its
items.

Notes: docs/internals/intake.md
"""

from __future__ import annotations

import json
from typing import cast

import redis

from workers.common.queues import redis_key
from workers.events import chatevents, conversions, ledger, personindex, profiles
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
    """A read-only Redis for stageitems.check: `get` and `exists` from what was fetched, and
    the person index's sets (`members`) where they were fetched."""

    def __init__(self, connection: redis.Redis, values: dict[str, bytes | None], sets: dict | None = None):
        self.connection, self.values, self.sets = connection, values, sets

    def members(self, owners: list[str]) -> list[str]:
        """The profiles (`source:key`) the person index notes under these owners (`h:...`)."""
        if self.sets is None or any(owner not in self.sets for owner in owners):
            return personindex.entries(self.connection, owners)["p"]
        return sorted({ref for owner in owners for ref in self.sets[owner]})

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


def prefetch(
    connection: redis.Redis, items: list, region: str, datasets: list[str], siblings: bool = False
) -> tuple[Prefetched, dict]:
    """(a reader holding every key the items' checks can read, each item's hashed
    identifiers by its position). `siblings`: also each found lead's other leads under the
    same hashes (the person index) and their profiles, for a person two platforms brought
    (platforms.py): two round trips more."""
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
    sets = _siblings(connection, values) if siblings else None
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
    return Prefetched(connection, values, sets), givens


def _siblings(connection: redis.Redis, values: dict[str, bytes | None]) -> dict[str, set[str]]:
    """The person index's profiles under every found profile's hashes (one round trip), and
    those profiles read into `values` (one more)."""
    owners: set[str] = set()
    for key, raw in values.items():
        if raw is not None and key.startswith(redis_key("profile") + ":"):
            held = json.loads(raw).get("user_data", {})
            owners.update("h:" + h[:32] for k in profiles.LOOKUP_KEYS for h in held.get(k, []))
    ordered = sorted(owners)
    with connection.pipeline(transaction=False) as pipe:
        for owner in ordered:
            pipe.smembers(personindex.KEY + owner)
        found = pipe.execute() if ordered else []
    sets = {owner: {m.decode()[2:] for m in members if m.startswith(b"p ")} for owner, members in zip(ordered, found)}
    wanted = {redis_key("profile", *ref.split(":", 1)) for refs in sets.values() for ref in refs}
    values.update(_mget(connection, sorted(wanted - set(values))))
    return sets


def _mget(connection: redis.Redis, keys: list[str]) -> dict[str, bytes | None]:
    out: dict[str, bytes | None] = {}
    for start in range(0, len(keys), 1000):
        chunk = keys[start : start + 1000]
        out.update(zip(chunk, cast("list[bytes | None]", connection.mget(chunk))))
    return out
