"""Accuracy: of the Lead Ads leads that exist, how many reached Meta, per Page and form.

Notes: docs/internals/events.md
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from functools import lru_cache

import redis

from workers.common.queues import redis_key

FLAGS = {"meta": "m", "webhook": "w", "recovered": "r", "confirmed": "c", "kept": "k", "dead": "d", "too_old": "o"}
KINDS = tuple(FLAGS)
WINDOW_DAYS = 7  # what can still be sent, and what the report looks back over
FORMS = redis_key("accuracy", "forms")  # "page form" pairs ever marked
SILENT = redis_key("accuracy", "silent")  # page id -> why it is flagged webhook_silent
NONE = "-"  # a Page or form the lead did not name

# The report's read: every counts hash named in KEYS, whole, in one reply. 8,000 HGETALLs in
# a pipeline were most of the once-a-minute recompute at a thousand forms (redis-py packs
# and parses each command); here Redis reads _KEYS_PER_READ of them a call, the calls
# pipelined: one round trip, and no call holds Redis for more than a millisecond or two.
_READ_ALL = redis.Redis().register_script(
    "local out = {} for i, key in ipairs(KEYS) do out[i] = redis.call('HGETALL', key) end return out"
)
_KEYS_PER_READ = 100  # hashes per call: Redis runs nothing else while a script runs (a ms or two)


def day(unix: float) -> str:
    return datetime.fromtimestamp(unix, timezone.utc).strftime("%Y-%m-%d")


def pair_keys(page: str, form: str, on: str) -> tuple[str, str]:
    return redis_key("accuracy", on, page, form, "leads"), redis_key("accuracy", on, page, form, "counts")


# A day's rollups (the mark script's KEYS 4 to 10): fewer parts than a form's keys, so
# the two never meet. `page` names the Page's own counts.
ROLLUPS = ("pins", "by-page", "all", "known", "done", "dataset-known", "dataset-done")


def rollup_key(name: str, on: str, page: str = "") -> str:
    """`pins`: "page form" -> the dataset it counts in; `by-page`: a Page's count per flag
    combination; `all`: the day's; `known`, `done`: leads per Page (sorted sets);
    `dataset-known`, `dataset-done`: leads per dataset (hashes)."""
    return redis_key("accuracy", on, name, page) if name == "by-page" else redis_key("accuracy", on, name)


# The window's own (the mark script's KEYS 11 to 14): `from`, the first day the others
# hold; `known`, `done`: leads per Page over the window (sorted sets); `ranked`: the Pages
# with a known lead by accuracy, lowest first. Rebuilt from the days' when a day passes.
WINDOW = ("from", "known", "done", "ranked")


def window_key(name: str) -> str:
    return redis_key("accuracy", "window", name)


# Once after an upgrade from a version that kept no rollups, they are made from the forms'
# counts in bounded steps (accuracyrebuild.py): ROLLED is set when that is done; while it
# runs, CURSOR is where its walk of FORMS stands, PAIRS the "page form" pairs it (or a mark
# of a pair new since it started) has added up, and `rebuilt_pages(day)` the Pages whose
# counts of that day it has started again from zero.
ROLLED = redis_key("accuracy", "rolled-up")
REBUILD_CURSOR = redis_key("accuracy", "rebuild", "cursor")
REBUILD_PAIRS = redis_key("accuracy", "rebuild", "pairs")


def rebuilt_pages(on: str) -> str:
    return redis_key("accuracy", "rebuild", "pages", on)


def report(connection: redis.Redis, days: int = WINDOW_DAYS, now: float | None = None) -> list[dict]:
    """Per Page and form (and per day, for the chart): how many leads Meta holds, came by
    webhook, were recovered, confirmed, dead-lettered, are still waiting, or were too old.
    Reads every form's days: for `leadrelay accuracy` and the admin page, asked for; the
    figures read every minute come from the rollups (accuracyrollup.py)."""
    dates = window(days, now)
    pairs = sorted(p.decode().split(" ") for p in connection.smembers(FORMS))
    combos = iter(read_counts(connection, [pair_keys(page, form, on)[1] for page, form in pairs for on in dates]))
    rows = []
    for page, form in pairs:
        by_day = [next(combos) for _ in dates]
        total = figures(summed(by_day))
        if total["known"]:
            days_ = [figures(counts) | {"day": on} for counts, on in zip(by_day, dates)]
            rows.append({"page_id": page, "form_id": form, **total, "accuracy": share(total), "days": days_})
    return rows


def window(days: int = WINDOW_DAYS, now: float | None = None) -> list[str]:
    """The days a rolling window of `days` × 24 hours touches: one more than `days`."""
    now = time.time() if now is None else now
    return [day(now - n * 86400) for n in range(days, -1, -1)]


def read_counts(connection: redis.Redis, keys: list[str]) -> list[dict[str, int]]:
    """Each hash of counts named in `keys`, whole, as {field: count}: one round trip, a
    script call per _KEYS_PER_READ hashes."""
    with connection.pipeline(transaction=False) as pipe:
        for start in range(0, len(keys), _KEYS_PER_READ):
            _READ_ALL(keys=keys[start : start + _KEYS_PER_READ], client=pipe)
        hashes = [flat for chunk in pipe.execute() for flat in chunk]
    return [{flat[i].decode(): int(flat[i + 1]) for i in range(0, len(flat), 2)} for flat in hashes]


def summed(days: list[dict[str, int]]) -> dict[str, int]:
    """Counts per flag combination added up over days; as _figures counts them (positive
    counts only), so a window's figures are its days' figures added up."""
    out: dict[str, int] = {}
    for counts in days:
        for flags, n in counts.items():
            if n > 0:
                out[flags] = out.get(flags, 0) + n
    return out


def figures(combos: dict[str, int]) -> dict:
    """The report's figures from the count of leads per flag combination."""
    figures = dict.fromkeys(_FIGURES, 0)
    for flags, n in combos.items():
        if n > 0:
            for name in _counted_in(flags):
                figures[name] += n
    return figures


_KNOWN, _DONE = frozenset("mwr"), frozenset("ck")  # done: confirmed by Meta, or kept in dry run
# Every figure needs a flag that says the lead exists (known): a lead only marked dead, or
# too old, by nothing that listed it counts nowhere, so a Page's figures are its known
# leads' and the Pages not named are the day's totals less the named (accuracyrollup.py).
_FIGURES = {
    "known": lambda f: f & _KNOWN,
    "meta": lambda f: "m" in f,
    "webhook": lambda f: "w" in f,
    "recovered": lambda f: "r" in f and "w" not in f,
    "confirmed": lambda f: "c" in f and f & _KNOWN,
    "kept": lambda f: "k" in f and "c" not in f and f & _KNOWN,
    "dead": lambda f: "d" in f and not f & _DONE and f & _KNOWN,
    "too_old": lambda f: "o" in f and f & _KNOWN and not f & _DONE,
    "waiting": lambda f: f & {"w", "r"} and not f & {*_DONE, "d"},
    "missing": lambda f: "m" in f and not f & {"w", "r", "o"},
}
# The same two states for the Lua scripts that count leads in them as they are marked
# (accuracymarks.py) or sum them again (accuracyrollup.py).
LUA_STATES = f"""
local function known(f) return string.find(f, '[{"".join(sorted(_KNOWN))}]') ~= nil end
local function done(f) return known(f) and string.find(f, '[{"".join(sorted(_DONE))}]') ~= nil end
"""


# While the rollups are made again (accuracyrebuild.py), a Page's counts of a day start again
# at the first touch, the rebuild's or a mark's: `pages` holds the Pages of the day touched.
LUA_PAGE_RESET = """
local function reset_page(pages, page, page_key, known_key, done_key)
  if redis.call('SADD', pages, page) == 1 then
    redis.call('DEL', page_key)
    redis.call('ZREM', known_key, page)
    redis.call('ZREM', done_key, page)
  end
end
"""


@lru_cache(maxsize=256)  # at most 2^7 combinations of the seven flags
def _counted_in(flags: str) -> tuple[str, ...]:
    """The figures a lead with these flags counts in: decided once per combination, not once
    per (day, Page, form) of the report (8,000 of them at a thousand forms)."""
    found = set(flags)
    return tuple(name for name, test in _FIGURES.items() if test(found))


def share(figures: dict) -> float | None:
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
    return {page: {**figures, "accuracy": share(figures)} for page, figures in out.items()}


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
