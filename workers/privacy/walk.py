"""Every record in Redis that holds one person, found by reading them all: `forget` removes
what this finds, `export` shows it.

Notes: docs/internals/privacy.md
"""

from __future__ import annotations

import json
import re
import zlib
from dataclasses import dataclass, field

import redis

from workers.config.routing import DEFAULT
from workers.privacy.records import record_of

# Ours to manage elsewhere, or RQ's live bookkeeping (a worker's current job is not a record).
# A privacy request's own record (requests.py) holds the person while its walk runs.
_SKIP = (
    "leadrelay:suppressed",
    "leadrelay:audit",
    "leadrelay:privacy-request",
    "rq:worker",
    "rq:workers",
    "rq:queues",
    "rq:clean_registries",
)
READ = {  # a record's whole value, by its type
    "string": lambda pipe, key: pipe.get(key),
    "list": lambda pipe, key: pipe.lrange(key, 0, -1),
    "set": lambda pipe, key: pipe.smembers(key),
    "zset": lambda pipe, key: pipe.zrange(key, 0, -1),
    "hash": lambda pipe, key: pipe.hgetall(key),
    "stream": lambda pipe, key: pipe.xrange(key),
}


@dataclass
class Marks:
    owned: set[str] = field(default_factory=set)  # ids that are the person's alone
    hashes: set[str] = field(default_factory=set)  # hashed identifiers, and given ids not yet owned
    scope: set[str] = field(default_factory=set)  # the datasets the caller may reach
    names: dict[str, str] = field(default_factory=dict)  # dataset id -> name, for records naming an id

    def _pattern(self, values) -> re.Pattern | None:
        values = sorted(v for v in values if v)
        if not values:
            return None
        # A token, never part of a longer number or word: lead 123 is not lead 91234.
        return re.compile(r"(?<![A-Za-z0-9])(?:" + "|".join(map(re.escape, values)) + r")(?![0-9a-zA-Z])")

    def compile(self) -> "Marks":
        hashes = {h for h in self.hashes if len(h) == 64}
        self._owned = self._pattern(self.owned)
        self._given = self._pattern(self.hashes - hashes)  # ids named but no profile of the caller's holds
        # A stage event of a lead we never had is keyed by its first hash's first 32 characters.
        prefixes = sorted({h[:32] for h in hashes})
        self._hashed = re.compile("|".join(prefixes)) if prefixes else None
        return self

    def holds(self, text: str, key: str = "") -> bool:
        """This record (its text, under this key) is the person's, for this caller."""
        if self._owned and self._owned.search(text):
            return True
        hit = (self._hashed and self._hashed.search(text)) or (self._given and self._given.search(text))
        return bool(hit) and self._in_scope(text, key)

    def _in_scope(self, text: str, key: str) -> bool:
        named = set(re.findall(r'"dataset"\s*:\s*"([^"]+)"', text))
        named |= {self.names[i] for i in re.findall(r'"dataset_id"\s*:\s*"?([0-9]+)', text) if i in self.names}
        named |= {part for part in key.split(":") if part in self.names.values()}
        return (named or {DEFAULT}) <= self.scope


@dataclass
class Found:
    key: str
    type: str
    kind: str
    member: object = None  # the list value, set member, hash field or stream id; None: the whole key
    text: str = ""  # what it holds, for export
    rest: object = None  # a batch job's argument without the person (the job is rewritten)


def _text(value) -> str:
    return json.dumps(_plain(value), sort_keys=True) if not isinstance(value, (str, bytes)) else _plain(value)


def _plain(value):
    """Redis replies as JSON-able values: bytes read as text, keys included."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_plain(v) for v in value]
    return value


def find(connection: redis.Redis, marks: Marks) -> list[Found]:
    """Every record (or entry of one) that holds the person. A profile found by a hash
    (a lookup names one profile, their newest lead's) makes that lead's ids theirs too:
    read again until no new profile turns up."""
    while True:
        found = _find_once(connection, marks)
        more = owned_by(found)
        if more <= marks.owned:
            return found
        marks.owned |= more


def owned_by(found: list[Found]) -> set[str]:
    """The ids the profiles among `found` make the person's: each profile's key and lead id."""
    more = set()
    for item in found:
        if item.kind == "profile" and item.member is None:
            profile = json.loads(item.text)
            more |= {str(profile["key"])} | ({str(profile["lead_id"])} if profile.get("lead_id") else set())
    return more


def _find_once(connection: redis.Redis, marks: Marks) -> list[Found]:
    marks.compile()
    found: list[Found] = []
    keys = [k for k in connection.scan_iter(match="leadrelay:*", count=1000)]
    keys += [k for k in connection.scan_iter(match="rq:*", count=1000)]
    keys = [k.decode() for k in keys]
    keys = [k for k in keys if not k.startswith(_SKIP)]
    for start in range(0, len(keys), 1000):
        chunk = keys[start : start + 1000]
        with connection.pipeline(transaction=False) as pipe:
            for key in chunk:
                pipe.type(key)
            types = [t.decode() for t in pipe.execute()]
        readable = [(k, t) for k, t in zip(chunk, types) if t in READ]
        with connection.pipeline(transaction=False) as pipe:
            for key, kind in readable:
                READ[kind](pipe, key)
            values = pipe.execute()
        for (key, kind), value in zip(readable, values):
            found += in_record(connection, marks, key, kind, value)
    return found


def in_record(connection, marks: Marks, key: str, kind: str, value) -> list[Found]:
    """The person's entries in one record (its whole value, or the entries read of it)."""
    record = record_of(key)
    name = record.kind if record else "other"
    if key.startswith("rq:job:") and kind == "hash" and key.count(":") == 2:
        return _in_job(connection, marks, key, value)
    if marks.holds(key, key) or (kind == "string" and marks.holds(_text(value), key)):
        return [Found(key, kind, name, None, _text(value))]
    if kind in ("list", "set", "zset"):
        return [Found(key, kind, name, v, _text(v)) for v in value if marks.holds(_text(v), key)]
    if kind == "hash":
        return [
            Found(key, kind, name, f, _text(v)) for f, v in value.items() if marks.holds(_text(f) + " " + _text(v), key)
        ]
    if kind == "stream":
        return [Found(key, kind, name, i, _text(fields)) for i, fields in value if marks.holds(_text(fields), key)]
    return []


def _in_job(connection, marks: Marks, key: str, value: dict) -> list[Found]:
    """An RQ job: its argument is compressed JSON. A batch (a list of events or leads)
    loses the person's entries; a job of theirs alone is removed."""
    job_id = key.split(":", 2)[2]
    try:
        args = json.loads(zlib.decompress(value[b"data"]))[2] if b"data" in value else []
    except (zlib.error, ValueError, IndexError, TypeError):
        args = []
    text = _text(args)
    about = " ".join(_text(value.get(f, b"")) for f in (b"description", b"meta", b"origin"))
    if marks.holds(job_id, key) or marks.holds(about, key):
        return [Found(key, "job", "job", None, text)]
    if not marks.holds(text, key):
        return []
    rest = _without(args, marks, key)
    return [Found(key, "job", "job", None, text, rest)]


def _without(args: list, marks: Marks, key: str):
    """The first argument's lists without the person's entries; None when what is left
    still holds them (the job is theirs) or nothing is left."""
    if not (args and isinstance(args[0], dict)):
        return None
    first = dict(args[0])
    for name, entries in first.items():
        if isinstance(entries, list):
            first[name] = [e for e in entries if not marks.holds(_text(e), key)]
    if marks.holds(_text(first), key) or not any(isinstance(v, list) and v for v in first.values()):
        return None
    return [first, *args[1:]]
