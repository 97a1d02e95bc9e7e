"""The suppression list: the people a `forget` erased, as hashes only, so nothing about
them is sent or kept again (a late webhook, a sweep, a replay, a CRM change).

Notes: docs/internals/events.md
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import Callable

import redis

from workers.common.queues import redis_key
from workers.config.routing import DEFAULT

KEY = redis_key("suppressed")
KINDS = ("em", "ph", "external_id")  # the identifiers a person is found and suppressed by


def lead_field(lead_id: str) -> str:
    return "lead|" + hashlib.sha256(str(lead_id).strip().encode("utf-8")).hexdigest()


def fields(dataset: str | None, user_data: dict | None, lead_id: str | None = None) -> list[str]:
    """The fields that would suppress a person with these hashed identifiers."""
    out = [
        f"{dataset or DEFAULT}|{kind}:{value}"
        for kind in KINDS
        for value in (user_data or {}).get(kind, []) or []
        if isinstance(value, str)
    ]
    lead_id = lead_id or (user_data or {}).get("lead_id")
    if lead_id:
        out.append(lead_field(lead_id))
    return out


def add(connection: redis.Redis, wanted: list[str], ref: str) -> None:
    if wanted:
        record = json.dumps({"ref": ref, "at": int(time.time())})
        connection.hset(KEY, mapping={field: record for field in wanted})


def which(connection: redis.Redis, candidates: list[list[str]]) -> list[str | None]:
    """For each person's fields, the forget reference suppressing them, else None: one
    round trip for a whole batch."""
    flat = [field for wanted in candidates for field in wanted]
    if not flat:
        return [None] * len(candidates)
    found = dict(zip(flat, connection.hmget(KEY, flat)))
    out = []
    for wanted in candidates:
        hit = next((found[field] for field in wanted if found.get(field)), None)
        out.append(json.loads(hit)["ref"] if hit else None)
    return out


def guarded(connection: redis.Redis, candidates: list[list[str]], write: Callable) -> list[str | None]:
    """`write(pipe, refs)` (refs as `which` gives them) in one MULTI/EXEC that is checked
    again if the list changes meanwhile: a forget, which suppresses before it looks, either
    stops the write or finds what it wrote. Writers of a person's records after the first
    check (their profile, the ledger, the Lead kept, accuracy flags) go through here."""

    def step(pipe) -> list[str | None]:
        refs = which(pipe, candidates)
        pipe.multi()
        write(pipe, refs)
        return refs

    return connection.transaction(step, KEY, value_from_callable=True)


def lift(connection: redis.Redis, wanted: list[str] | None = None, ref: str | None = None) -> int:
    """Un-suppress the fields given, or every field of one forget (`ref`); how many."""
    if ref:
        wanted = [
            field.decode() for field, record in connection.hgetall(KEY).items() if json.loads(record).get("ref") == ref
        ]
    return connection.hdel(KEY, *wanted) if wanted else 0
