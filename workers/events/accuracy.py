"""Accuracy: of the Lead Ads leads that exist, how many reached Meta, per Page and form.

Each lead has a few flags, per (day it was created, Page, form):

    meta        listed by Meta (the sweep reads every form's lead list)
    webhook     brought by a webhook
    recovered   enqueued by the sweep: no webhook had brought it
    confirmed   its Lead event confirmed by Meta
    kept        its Lead event kept in dry run (a dataset without a CAPI token): never sent
    dead        dead-lettered
    too_old     listed by Meta but past what can still be sent: counted, never sent

A lead marked twice with the same flag (a redelivered webhook, a replayed job) counts
once. One Lua script sets the flags of a batch's leads and moves each between flag
combinations, in one call per (day, Page, form) of the batch, counted
per (day, Page, form): the report reads those few counters, never the leads, so it
costs the same at ten leads a day or a hundred thousand. Ids only; everything expires
two days after the report's window.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from functools import lru_cache

import redis

from workers.common import times
from workers.common.queues import redis_key

FLAGS = {"meta": "m", "webhook": "w", "recovered": "r", "confirmed": "c", "kept": "k", "dead": "d", "too_old": "o"}
KINDS = tuple(FLAGS)
WINDOW_DAYS = 7  # what can still be sent, and what the report looks back over
FORMS = redis_key("accuracy", "forms")  # "page form" pairs ever marked
SILENT = redis_key("accuracy", "silent")  # page id -> why it is flagged webhook_silent
NONE = "-"  # a Page or form the lead did not name

# KEYS: the day's flags per lead (hash), the day's count per flag combination (hash), FORMS.
# ARGV: ttl, "page form", then (lead id, its new flags) pairs, each lead once. One call for
# a batch's leads of one (day, Page, form): one HMGET, one HSET, one HINCRBY per combination
# that changed, not a round of commands per lead. Combinations are kept with flags sorted.
_MARK = """
local n = (#ARGV - 2) / 2
if n < 1 then return 0 end
local ids = {}
for i = 1, n do ids[i] = ARGV[1 + 2 * i] end
local olds = redis.call('HMGET', KEYS[1], unpack(ids))
local sets, delta, changed = {}, {}, 0
for i = 1, n do
  local old = olds[i] or ''
  local merged = old
  for c in ARGV[2 + 2 * i]:gmatch('.') do
    if not string.find(merged, c, 1, true) then merged = merged .. c end
  end
  if merged ~= old then
    local flags = {}
    for c in merged:gmatch('.') do flags[#flags + 1] = c end
    table.sort(flags)
    local new = table.concat(flags)
    sets[#sets + 1] = ids[i]
    sets[#sets + 1] = new
    if old ~= '' then delta[old] = (delta[old] or 0) - 1 end
    delta[new] = (delta[new] or 0) + 1
    changed = changed + 1
  end
end
if changed == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(sets))
for combo, by in pairs(delta) do
  if by ~= 0 then redis.call('HINCRBY', KEYS[2], combo, by) end
end
redis.call('EXPIRE', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[1])
redis.call('SADD', KEYS[3], ARGV[2])
return changed
"""
# Only its sha is computed here; it always runs on the caller's client or pipeline, which
# loads it into Redis when Redis does not know it yet.
_MARK_SCRIPT = redis.Redis().register_script(_MARK)
_PER_CALL = 500  # leads per script call: Lua's unpack() takes a few thousand at most
# The report's read: every counts hash named in KEYS, whole, in one reply. 8,000 HGETALLs in
# a pipeline were most of the once-a-minute recompute at a thousand forms (redis-py packs
# and parses each command); here Redis reads them in one call of a few milliseconds.
_READ_ALL = redis.Redis().register_script(
    "local out = {} for i, key in ipairs(KEYS) do out[i] = redis.call('HGETALL', key) end return out"
)
_KEYS_PER_READ = 2000  # hashes per call: Redis runs nothing else while a script runs


def day(unix: float) -> str:
    return datetime.fromtimestamp(unix, timezone.utc).strftime("%Y-%m-%d")


def _keys(page: str, form: str, on: str) -> tuple[str, str]:
    return redis_key("accuracy", on, page, form, "leads"), redis_key("accuracy", on, page, form, "counts")


def mark(pipe, kind: str, leads: list[dict], now: float | None = None) -> None:
    """Mark Lead Ads leads (dicts with leadgen_id or id, page_id, form_id, created_time) as
    `kind`; `pipe` may be a pipeline, so the marks ride with the work's own writes."""
    mark_all(pipe, [(kind, leads)], now)


def mark_all(pipe, marks: list[tuple[str, list[dict]]], now: float | None = None) -> None:
    """Several kinds of marks at once (a drain batch: came by webhook, confirmed), one
    script call per (day, Page, form) they touch, whatever the number of leads."""
    now = time.time() if now is None else now
    groups: dict[tuple[str, str, str], dict[str, str]] = {}
    for kind, leads in marks:
        for lead in leads:
            page, form = str(lead.get("page_id") or NONE), str(lead.get("form_id") or NONE)
            # A time outside what times.unix_time accepts (an entry admitted before intake
            # refused them) counts on today: it must not fail the batch it rides with.
            on = day(times.unix_time(lead.get("created_time")) or now)
            flags = groups.setdefault((page, form, on), {})
            lead_id = str(lead.get("leadgen_id") or lead.get("id"))
            flags[lead_id] = flags.get(lead_id, "") + FLAGS[kind]
    for (page, form, on), flags in groups.items():
        pairs = list(flags.items())
        for start in range(0, len(pairs), _PER_CALL):
            chunk = [value for pair in pairs[start : start + _PER_CALL] for value in pair]
            _MARK_SCRIPT(
                keys=[*_keys(page, form, on), FORMS],
                args=[(WINDOW_DAYS + 2) * 86400, f"{page} {form}", *chunk],
                client=pipe,
            )


def mark_now(connection: redis.Redis, kind: str, leads: list[dict]) -> None:
    """`mark` in a pipeline of its own; a lost mark never fails the work it describes."""
    try:
        with connection.pipeline(transaction=False) as pipe:
            mark(pipe, kind, leads)
            pipe.execute()
    except redis.RedisError:
        pass


def report(connection: redis.Redis, days: int = WINDOW_DAYS, now: float | None = None) -> list[dict]:
    """Per Page and form (and per day, for the chart): how many leads Meta holds, came by
    webhook, were recovered, confirmed, dead-lettered, are still waiting, or were too old."""
    now = time.time() if now is None else now
    # The days a rolling window of `days` × 24 hours touches: one more than `days`.
    dates = [day(now - n * 86400) for n in range(days, -1, -1)]
    pairs = sorted(p.decode().split(" ") for p in connection.smembers(FORMS))
    keys = [_keys(page, form, on)[1] for page, form in pairs for on in dates]
    hashes = []
    for start in range(0, len(keys), _KEYS_PER_READ):
        hashes += _READ_ALL(keys=keys[start : start + _KEYS_PER_READ], client=connection)
    combos = iter(hashes)
    rows = []
    for page, form in pairs:
        by_day, summed = [], {}
        for on in dates:
            flat = next(combos)
            counts = {flat[i].decode(): int(flat[i + 1]) for i in range(0, len(flat), 2)}
            by_day.append(_figures(counts) | {"day": on})
            for flags, n in counts.items():
                if n > 0:  # as _figures counts them: a day's figures add up to the window's
                    summed[flags] = summed.get(flags, 0) + n
        total = _figures(summed)
        if total["known"]:
            rows.append({"page_id": page, "form_id": form, **total, "accuracy": _share(total), "days": by_day})
    return rows


def _figures(combos: dict[str, int]) -> dict:
    """The report's figures from the count of leads per flag combination."""
    figures = dict.fromkeys(_FIGURES, 0)
    for flags, n in combos.items():
        if n > 0:
            for name in _counted_in(flags):
                figures[name] += n
    return figures


_KNOWN, _DONE = frozenset("mwr"), frozenset("ck")  # done: confirmed by Meta, or kept in dry run
_FIGURES = {
    "known": lambda f: f & _KNOWN,
    "meta": lambda f: "m" in f,
    "webhook": lambda f: "w" in f,
    "recovered": lambda f: "r" in f and "w" not in f,
    "confirmed": lambda f: "c" in f and f & _KNOWN,
    "kept": lambda f: "k" in f and "c" not in f and f & _KNOWN,
    "dead": lambda f: "d" in f and not f & _DONE and f & _KNOWN,
    "too_old": lambda f: "o" in f and not (f & _DONE and f & _KNOWN),
    "waiting": lambda f: f & {"w", "r"} and not f & {*_DONE, "d"},
    "missing": lambda f: "m" in f and not f & {"w", "r", "o"},
}


@lru_cache(maxsize=256)  # at most 2^7 combinations of the seven flags
def _counted_in(flags: str) -> tuple[str, ...]:
    """The figures a lead with these flags counts in: decided once per combination, not once
    per (day, Page, form) of the report (8,000 of them at a thousand forms)."""
    found = set(flags)
    return tuple(name for name, test in _FIGURES.items() if test(found))


def _share(figures: dict) -> float | None:
    """Confirmed (or kept, in dry run) over every lead known to exist (Meta's list,
    webhooks, recoveries)."""
    return round((figures["confirmed"] + figures["kept"]) / figures["known"], 4) if figures["known"] else None


def by_page(rows: list[dict]) -> dict[str, dict]:
    """The report's rows added up per Page, with their accuracy."""
    out: dict[str, dict] = {}
    for row in rows:
        page = out.setdefault(row["page_id"], {})
        for name, value in row.items():
            if isinstance(value, int) and not isinstance(value, bool):
                page[name] = page.get(name, 0) + value
    return {page: {**figures, "accuracy": _share(figures)} for page, figures in out.items()}


PAGE_SERIES = 50  # Pages /metrics names one by one; the rest are summed as OTHER_PAGES
OTHER_PAGES = "_other"


def bounded(pages: dict[str, dict], limit: int = PAGE_SERIES) -> dict[str, dict]:
    """`by_page`'s Pages, at most `limit` of them by name, the ones that most need looking at
    (lowest accuracy first), the rest added up under OTHER_PAGES: an agency's thousand Pages
    are not thousands of series at every scrape, and a Page in trouble is always named."""
    if len(pages) <= limit:
        return pages
    ranked = sorted(pages, key=lambda page: (2.0 if pages[page]["accuracy"] is None else pages[page]["accuracy"], page))
    rest: dict[str, int] = {}
    for page in ranked[limit:]:
        for name, value in pages[page].items():
            if name != "accuracy":
                rest[name] = rest.get(name, 0) + value
    return {**{page: pages[page] for page in ranked[:limit]}, OTHER_PAGES: {**rest, "accuracy": _share(rest)}}


def flag_silent(connection: redis.Redis, page_id: str, recovered: int, now: float | None = None) -> bool:
    """Flag a Page whose leads came only through the sweep; True when newly flagged (the
    caller logs it once, loudly)."""
    record = {"page_id": page_id, "since": int(time.time() if now is None else now), "recovered": recovered}
    return bool(connection.hsetnx(SILENT, page_id, json.dumps(record)))


def clear_silent(connection: redis.Redis, page_id: str) -> None:
    connection.hdel(SILENT, page_id)


def silent(connection: redis.Redis) -> dict[str, dict]:
    """Pages flagged webhook_silent, with when and how many leads the sweep recovered."""
    return {k.decode(): json.loads(v) for k, v in connection.hgetall(SILENT).items()}
