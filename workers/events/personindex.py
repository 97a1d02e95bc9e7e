"""The person index: for each lead (`source:key`), the records of theirs its ids cannot name,
kept as they are written (a stage event's id, a batch job holding their events), so forget
and export read the person's own keys and nothing else (privacy/reach.py).

Notes: docs/internals/events.md
"""

from __future__ import annotations

import json
import time
import zlib
from collections.abc import Iterable

import redis

from workers.common import policy
from workers.common.queues import redis_key

# + source:key -> "e <event id>", "j <job id>", "f <page> <form>"; + h:<hash's first half> ->
# "p <source:key>" (a profile), "c <chat key>" (a set each)
KEY = redis_key("person", "")
BACKFILL = redis_key("person-index")  # what was kept before the index: cursor, scanned, done
LIFE = policy.STAGE_SEEN_TTL  # the longest-kept record it names: a stage claim
KEYS_PER_STEP = 1000
STAGE = redis_key("stage", "")
PROFILE = redis_key("profile", "")
ACCURACY = redis_key("accuracy", "")
CHAT = redis_key("chat", "")
LOOKUP_KEYS = ("em", "ph", "external_id")  # as profiles.LOOKUP_KEYS (which imports this module)
JOB = "rq:job:"


def owner(event_id: str) -> str:
    """The lead an event id is about: `meta:123:Lead` -> `meta:123`, `typeform:F:T:Lead` -> `typeform:F:T`."""
    return event_id.rsplit(":", 1)[0]


def note(pipe, owners: Iterable[str], entries: Iterable[str], life: int = LIFE) -> None:
    """Into a pipeline (or a client): these entries (`e <event id>`, `j <job id>`, `p <profile>`)
    are the owners' (a lead's `source:key`, or `h:` and a hash's first 32 characters)."""
    entries = list(entries)
    for name in set(owners):
        pipe.sadd(KEY + name, *entries)
        pipe.expire(KEY + name, max(life, LIFE))  # one life for every owner: never shortened


def note_profile(pipe, profile_key: str, hashes: Iterable[str], life: int) -> None:
    """A profile (`source:key`) under each of its hashed identifiers: a person's older leads,
    whose lookups now name their newest."""
    note(pipe, ["h:" + h[:32] for h in hashes], ["p " + profile_key], life)


def note_events(pipe, event_ids: Iterable[str]) -> None:
    """Each stage event's id under its lead."""
    for event_id in event_ids:
        note(pipe, [owner(event_id)], ["e " + event_id])


def note_job(pipe, job_id: str, events: Iterable[dict]) -> None:
    """A batch job whose argument holds these events: the job under each of their leads."""
    note(pipe, [owner(e["event_id"]) for e in events if isinstance(e, dict) and e.get("event_id")], ["j " + job_id])


def entries(connection: redis.Redis, owners: Iterable[str]) -> dict[str, list[str]]:
    """What is noted for these owners, by letter (`e`, `j`, `p`), in one round trip."""
    owners = sorted(set(owners))
    with connection.pipeline(transaction=False) as pipe:
        for name in owners:
            pipe.smembers(KEY + name)
        found = {m.decode() if isinstance(m, bytes) else m for members in pipe.execute() for m in members}
    return {letter: sorted(e[2:] for e in found if e.startswith(letter + " ")) for letter in "ejpfc"}


def complete(connection: redis.Redis) -> bool:
    """Every record kept before the index is in it: forget may read the index alone."""
    return int(connection.hget(BACKFILL, "done") or 0) > 0


def progress(connection: redis.Redis) -> dict:
    """The backfill's state: keys scanned so far and whether it is done (for /metrics and the admin page)."""
    state = connection.hgetall(BACKFILL)
    return {"scanned": int(state.get(b"scanned", 0)), "done": int(state.get(b"done", 0)) > 0}


def step(connection: redis.Redis, steps: int = 1, seconds: float | None = None, count: int = KEYS_PER_STEP) -> bool:
    """Index what was kept before the index, KEYS_PER_STEP keys at a time from where the last
    step stopped (a SCAN cursor kept in Redis): `steps` of them, or as many as fit in
    `seconds`. True once done."""
    start = time.monotonic()
    for _ in range(steps if seconds is None else 1_000_000):
        if complete(connection):
            return True
        cursor = int(connection.hget(BACKFILL, "cursor") or 0)
        cursor, keys = connection.scan(cursor, count=count)
        _index(connection, [k.decode() for k in keys])
        with connection.pipeline(transaction=False) as pipe:
            pipe.hset(BACKFILL, "cursor", cursor)
            pipe.hincrby(BACKFILL, "scanned", len(keys))
            if cursor == 0:
                pipe.hset(BACKFILL, "done", int(time.time()))
            pipe.execute()
        if seconds is not None and time.monotonic() - start >= seconds:
            break
    return complete(connection)


def _index(connection: redis.Redis, keys: list[str]) -> None:
    """Stage claims, batch jobs, profiles, accuracy flags and chats keyed by a hash among `keys`, under their owners."""
    claims = [k[len(STAGE) :] for k in keys if k.startswith(STAGE)]
    jobs = [k for k in keys if k.startswith(JOB) and k.count(":") == 2]
    kept = [k for k in keys if k.startswith(PROFILE)]
    flags = [k for k in keys if k.startswith(ACCURACY) and k.endswith(":leads") and k.count(":") == 5]
    chats = [k for k in keys if k.startswith(CHAT) and _hashed_user(k)]  # keyed by a phone's hash
    with connection.pipeline(transaction=False) as pipe:
        for key in jobs:
            pipe.hget(key, "data")
        for key in kept:
            pipe.get(key)
        for key in flags:
            pipe.hkeys(key)
        read = pipe.execute() if jobs or kept or flags else []
    with connection.pipeline(transaction=False) as pipe:
        note_events(pipe, claims)
        for key, raw in zip(jobs, read):
            note_job(pipe, key[len(JOB) :], _events(raw))
        for key, raw in zip(kept, read[len(jobs) :]):
            held = json.loads(raw) if raw else {}
            hashes = [h for kind in LOOKUP_KEYS for h in held.get("user_data", {}).get(kind, [])]
            note_profile(pipe, key[len(PROFILE) :], hashes, LIFE)
        for key in chats:
            note(pipe, ["h:" + key.rsplit(":", 1)[1][:32]], ["c " + key])
        for key, leads in zip(flags, read[len(jobs) + len(kept) :]):
            _, _, _, page, form, _ = key.split(":")  # a Lead Ads lead's accuracy flag: its form
            for lead in leads:
                note(pipe, ["meta:" + lead.decode()], [f"f {page} {form}"])
        pipe.execute()


def _hashed_user(chat_key: str) -> bool:
    """A chat whose user is a phone's hash (a number no region reads): no lookup names it."""
    user = chat_key.rsplit(":", 1)[1]
    return len(user) == 64 and all(c in "0123456789abcdef" for c in user)


def _events(raw: bytes | None) -> list:
    """A job's `events` argument (a batch of stage events), else nothing."""
    try:
        args = json.loads(zlib.decompress(raw))[2] if raw else []
    except (zlib.error, ValueError, IndexError, TypeError):
        return []
    first = args[0] if args and isinstance(args[0], dict) else {}
    return first.get("events") or [] if isinstance(first.get("events"), list) else []
