"""Every record in Redis that holds one person, found from their ids alone: the keys their ids
name, their entries in shared records, and the person index (events/personindex.py) for what
their ids cannot name. The same records `walk.find` finds, at a cost that follows the person.

Notes: docs/internals/privacy.md
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

import redis

from workers.common.queues import PREFIX, job_id, redis_key
from workers.events import accuracy, accuracymarks, chatevents, conversions, personindex, profiles
from workers.failures import deadletters
from workers.intake import admission
from workers.privacy.person import Person
from workers.privacy.walk import READ, Found, Marks, in_record, owned_by

# Shared records read whole: each is capped whatever the account's size (records.py says how).
WHOLE = (
    admission.IGNORED,
    redis_key("recent-events"),
    redis_key("dry-run", "events"),
    redis_key("quarantine"),
    redis_key("inbox"),
)
PROFILE = redis_key("profile", "")
_PAGE = re.compile(r'"page_id": ?"?([0-9]+)')
_FORM = re.compile(r'"form_id": ?"?([0-9]+)')
REGISTRIES = ("failed", "finished", "started", "scheduled", "deferred", "canceled")


# How each kind of record that can hold a person (records.RECORDS, person=True) is reached:
# a key its ids name, an entry of a shared record by id, the whole of a capped record, or the
# person index. A new such kind fails tests/privacy/test_reach.py until it is added here.
REACHED = {
    "leadrelay:profile:*": "named: profile:<source>:<key>, and the index's profiles under their hashes",
    "leadrelay:profile-by:*": "named: each hash of theirs, in each dataset they may reach",
    "leadrelay:chat:*": "named: the chat their phone's lookup names, and the index's chats under their hashes",
    "leadrelay:chat-by:*": "named: each hash of theirs, in each dataset they may reach",
    "leadrelay:lead-event:*": "named: each event id of theirs",
    "leadrelay:confirmed:*": "named: each event id of theirs (the Lead's, and the index's stage events)",
    "leadrelay:kept:*": "named: each event id of theirs",
    "leadrelay:stage:*": "named: each stage event id the index holds",
    "leadrelay:person:*": "named: each lead of theirs, and each hash's first half",
    "leadrelay:seen:*": "named: each job id of theirs",
    "leadrelay:inbox": "whole: trimmed as taken",
    "leadrelay:dead": "entry: each job id of theirs",
    "leadrelay:dead:*": "named: each job id of theirs",
    "leadrelay:dead-reasons": "entry: each job id of theirs",
    "leadrelay:dead-waiting": "entry: each job id of theirs",
    "leadrelay:quarantine": "whole: kept 30 days, rare",
    "leadrelay:recovering:*": "named: each job id of theirs",
    "leadrelay:ignored": "whole: the newest 1,000",
    "leadrelay:held": "entry: each lead id of theirs",
    "leadrelay:accuracy:*": "entry: each lead id, under the Page and form their records name, each day kept",
    "leadrelay:dry-run:events": "whole: the newest LEADRELAY_DRY_RUN_KEEP",
    "leadrelay:recent-events": "whole: the newest 200",
    "leadrelay:pause*": "entry: each job id of theirs, in each paused token's waiting set",
    "rq:job:*": "named: each job id of theirs, and the index's batch jobs",
    "rq:*": "entry: each job id of theirs, in each queue's registries and list",
}


@dataclass(frozen=True)
class Look:
    key: str
    member: str | None = None  # None: the whole key
    type: str = ""  # the member's container: hash, zset, set, list


def find(connection: redis.Redis, person: Person, marks: Marks) -> list[Found]:
    """What `walk.find(connection, marks)` finds for this person, read from their ids; as
    there, a profile found makes its lead's ids theirs: read again until none turns up."""
    seen: set[str] = set()
    forms = {(str(p["page_id"]), str(p["form_id"])) for p in person.profiles if p.get("page_id") and p.get("form_id")}
    while True:
        marks.compile()
        owners = _owners(connection, person, marks, seen)
        noted = personindex.entries(connection, owners)
        forms |= {tuple(f.split(" ")) for f in noted["f"]}  # type: ignore[misc]
        found = _read(connection, marks, _looks(connection, person, marks, owners, noted, forms))
        more = owned_by(found)
        seen |= {f.key[len(PROFILE) :] for f in found if f.kind == "profile" and f.member is None}
        named = {pair for f in found for pair in _forms(f.text)}
        if more <= marks.owned and seen <= owners and named <= forms:
            return found
        marks.owned |= more
        forms |= named


def _forms(text: str) -> set[tuple[str, str]]:
    """The (Page, form) a record of a lead names (its profile, job, dead letter, held change)."""
    pages, forms = _PAGE.findall(text), _FORM.findall(text)
    return {(pages[0], forms[0])} if len(set(pages)) == 1 and len(set(forms)) == 1 else set()


def _owners(connection, person: Person, marks: Marks, profiles_seen: set[str]) -> set[str]:
    """The person's leads (`source:key`): their profiles', the ids given, and the profiles
    the index keeps under their hashes (older leads, whose lookups name the newest)."""
    owners = {f"{p['source']}:{p['key']}" for p in person.profiles} | profiles_seen
    owners |= {f"meta:{lead_id}" for lead_id in person.lead_ids} | set(person.person_ids)
    owners |= {f"meta:{owned}" for owned in marks.owned if owned.isdigit()}
    prefixes = _prefixes(marks)
    hashed = personindex.entries(connection, ["h:" + p for p in prefixes])
    owners |= set(hashed["p"]) | {chat[len(PREFIX) :] for chat in hashed["c"] + _chats(connection, person, marks)}
    # A stage event of a lead never had is keyed by its first hash's start (stageitems.check).
    owners |= {f"crm:{p}" for p in prefixes} | {f"crm:{d}:{p}" for p in prefixes for d in person.datasets}
    return owners


def _prefixes(marks: Marks) -> set[str]:
    return {h[:32] for h in marks.hashes if len(h) == 64}


def _looks(connection, person: Person, marks: Marks, owners: set[str], noted: dict, forms: set) -> list[Look]:
    events = set(noted["e"]) | {conversions.event_id(*o.split(":", 1), conversions.LEAD) for o in owners}
    jobs = {job_id("lead", *o.split(":", 1)) for o in owners} | {job_id("stage", e) for e in events}
    looks = [Look(redis_key("profile", o)) for o in owners] + [Look(personindex.KEY + o) for o in owners]
    looks += [Look(PREFIX + o) for o in owners if o.startswith("chat:")]
    looks += [Look(personindex.KEY + "h:" + p) for p in _prefixes(marks)]
    for event in events:
        looks += [Look(redis_key(kind, event)) for kind in ("stage", "confirmed", "kept", "lead-event")]
    looks += _job_looks(connection, jobs, set(noted["j"]))
    looks += _lookup_looks(connection, person, marks)
    looks += [Look(key) for key in WHOLE]
    lead_ids = {o.split(":", 1)[1] for o in owners if o.startswith("meta:")}
    looks += [Look(admission.HELD, lead, "hash") for lead in lead_ids]
    looks += _accuracy_looks(forms, lead_ids)
    return looks


def _job_looks(connection, jobs: set[str], batches: set[str]) -> list[Look]:
    """A job's own keys and its entries in RQ's registries, the dead letters' and the pauses'."""
    queues = [q.decode().split(":", 2)[2] for q in connection.smembers("rq:queues")]
    paused = [p.decode() for p in connection.smembers(redis_key("pauses"))]
    looks = []
    for job in jobs | batches:
        looks += [Look("rq:job:" + job), Look("rq:results:" + job)]
        looks += [Look(f"rq:{name}:{q}", job, "zset") for q in queues for name in REGISTRIES]
        looks += [Look(f"rq:queue:{q}", job, "list") for q in queues]
    for job in jobs:
        looks += [Look(redis_key(kind, job)) for kind in ("seen", "dead", "recovering")]
        looks += [Look(deadletters.INDEX, job, "zset"), Look(deadletters.REASONS, job, "hash")]
        looks += [Look(deadletters.WAITING, job, "hash")]
        looks += [Look(redis_key("pause", fp, "waiting"), job, "set") for fp in paused]
    return looks


def _lookup_looks(connection, person: Person, marks: Marks) -> list[Look]:
    """Their hashes' lookups in each dataset they may reach, and the chats those name."""
    hashes = {h for h in marks.hashes if len(h) == 64}
    held = {(k, h) for p in person.profiles for k in profiles.LOOKUP_KEYS for h in p.get("user_data", {}).get(k, [])}
    held |= {(k, h) for k, values in person.hashed.items() for h in values}
    datasets = [*person.datasets, None]
    looks = [Look(profiles.lookup_key(d, k, h)) for k, h in held for d in datasets]
    looks += [Look(profiles.lookup_key(d, k, h)) for h in hashes for k in profiles.LOOKUP_KEYS for d in datasets]
    return looks + [Look(chatevents.lookup_key(d, h)) for h in hashes for d in person.datasets]


def _chats(connection, person: Person, marks: Marks) -> list[str]:
    """The chats their phone's hashes look up, in each dataset they may reach."""
    chat_by = [chatevents.lookup_key(d, h) for h in marks.hashes if len(h) == 64 for d in person.datasets]
    with connection.pipeline(transaction=False) as pipe:
        for key in chat_by:
            pipe.get(key)
        return [c.decode() for c in pipe.execute() if c] if chat_by else []


def _accuracy_looks(forms: set[tuple[str, str]], lead_ids: set[str]) -> list[Look]:
    """A lead's webhook-or-sweep mark under its Page and form, on each day its marks are kept."""
    days = accuracy.window(accuracymarks.TTL // 86400, time.time())
    keys = [accuracy.pair_keys(page, form, day)[0] for day in days for page, form in forms]
    return [Look(key, lead, "hash") for key in keys for lead in lead_ids]


def _read(connection, marks: Marks, looks: list[Look]) -> list[Found]:
    """Each look read as walk reads a record, and judged by walk's own rule (in_record)."""
    looks = list(dict.fromkeys(looks))
    whole = [look for look in looks if look.member is None]
    with connection.pipeline(transaction=False) as pipe:
        for look in whole:
            pipe.type(look.key)
        types = [t.decode() for t in pipe.execute()] if whole else []
    present = [(look.key, kind) for look, kind in zip(whole, types) if kind in READ]
    entries = [look for look in looks if look.member is not None]
    with connection.pipeline(transaction=False) as pipe:
        for key, kind in present:
            READ[kind](pipe, key)
        for look in entries:
            _READ_ENTRY[look.type](pipe, look.key, look.member)
        values = pipe.execute() if present or entries else []
    found: list[Found] = []
    for (key, kind), value in zip(present, values):
        found += in_record(connection, marks, key, kind, value)
    for look, value in zip(entries, values[len(present) :]):
        if value is not None and value is not False:
            held = {look.member.encode(): value} if look.type == "hash" else [look.member.encode()]
            found += in_record(connection, marks, look.key, look.type, held)
    return found


_READ_ENTRY = {
    "hash": lambda pipe, key, member: pipe.hget(key, member),
    "zset": lambda pipe, key, member: pipe.zscore(key, member),
    "set": lambda pipe, key, member: pipe.sismember(key, member),
    "list": lambda pipe, key, member: pipe.lpos(key, member),
}
