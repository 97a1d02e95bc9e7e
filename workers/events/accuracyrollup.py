"""The accuracy figures as the marks add them up: per Page and per dataset, per day.

Notes: docs/internals/events.md
"""

from __future__ import annotations

from datetime import datetime, timezone

import redis

from workers.common.queues import redis_key
from workers.events import accuracy, accuracymarks, accuracyrebuild
from workers.events.accuracy import WINDOW, WINDOW_DAYS, rollup_key, window_key

PAGE_SERIES = 50  # Pages /metrics names one by one; the rest are summed as OTHER_PAGES
OTHER_PAGES = "_other"
ROLLED = accuracy.ROLLED  # set once the forms' older counts are added up (accuracyrebuild.py)
MEMBERS_PER_STEP = 32  # Pages a step of the window's roll sums again: 16 ZSCOREs each, a few ms
ROLL_DAYS = redis_key("accuracy", "window", "roll")  # the days whose Pages are still to sum again
ROLL_CURSOR = redis_key("accuracy", "window", "roll-cursor")  # where the first of them stands
ROLL_SUMMED = redis_key("accuracy", "window", "roll-summed")  # Pages this roll has summed again

# KEYS: the window's `from`, known, done, ranked, ROLL_DAYS, ROLL_CURSOR, ROLL_SUMMED.
# ARGV: the `from` the caller read ('' none), the new first day, the ttl, '1' when every Page
# is to be summed again (what is pending is replaced), then the `known` keys whose Pages are
# to be. Marks landing from here add to the window for the new days alone (accuracymarks.py).
# Nothing large is deleted: each Page's sums are set, or removed, as its turn comes.
_ROLL_START = redis.Redis().register_script("""
if (redis.call('GET', KEYS[1]) or '') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
if ARGV[4] == '1' then redis.call('DEL', KEYS[5], KEYS[6]) end
redis.call('UNLINK', KEYS[7])
for i = 5, #ARGV do redis.call('RPUSH', KEYS[5], ARGV[i]) end
redis.call('EXPIRE', KEYS[5], ARGV[3])
return 1
""")

# KEYS: as _ROLL_START's. ARGV: the window's first day, the ttl, the step's size, then the
# window days' `known` keys, then their `done` keys. Each Page of the next stretch of the
# first pending day is set to its sums over the window's days (not added to: a mark landing
# before or after it is counted once either way). -1: the window moved (a new day).
_ROLL_STEP = redis.Redis().register_script("""
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
local day = redis.call('LINDEX', KEYS[5], 0)
if not day then return 0 end
local n = (#ARGV - 3) / 2
local scan = redis.call('ZSCAN', day, redis.call('GET', KEYS[6]) or '0', 'COUNT', ARGV[3])
for j = 1, #scan[2], 2 do
  local page, k, d = scan[2][j], 0, 0
  if redis.call('SADD', KEYS[7], page) == 1 then  -- not summed yet by this roll, from another day
    for i = 4, 3 + n do k = k + (tonumber(redis.call('ZSCORE', ARGV[i], page)) or 0) end
    for i = 4 + n, 3 + 2 * n do d = d + (tonumber(redis.call('ZSCORE', ARGV[i], page)) or 0) end
    if k > 0 then
      redis.call('ZADD', KEYS[2], k, page)
      redis.call('ZADD', KEYS[3], d, page)
      redis.call('ZADD', KEYS[4], string.format('%.17g', d / k), page)
    else
      redis.call('ZREM', KEYS[2], page)
      redis.call('ZREM', KEYS[3], page)
      redis.call('ZREM', KEYS[4], page)
    end
  end
end
if scan[1] == '0' then
  redis.call('LPOP', KEYS[5])
  redis.call('DEL', KEYS[6])
else
  redis.call('SET', KEYS[6], scan[1], 'EX', ARGV[2])
end
for i = 2, 4 do redis.call('EXPIRE', KEYS[i], ARGV[2]) end
if redis.call('EXISTS', KEYS[5]) == 1 then
  redis.call('EXPIRE', KEYS[7], ARGV[2])
else
  redis.call('UNLINK', KEYS[7])
end
return 1
""")


def pages(connection: redis.Redis, routes, limit: int = PAGE_SERIES, now: float | None = None) -> dict[str, dict]:
    """The window's figures per Page (accuracy.by_page's shape), at most `limit` Pages by
    name, the ones that most need looking at (lowest accuracy first), the rest added up
    under OTHER_PAGES: an agency's thousand Pages are not thousands of series at every
    scrape, and a Page in trouble is always named."""
    dates = window_days(connection, routes, now)
    with connection.pipeline(transaction=False) as pipe:
        pipe.zcard(window_key("ranked"))
        pipe.zrange(window_key("ranked"), 0, limit - 1)
        count, named = pipe.execute()
    named = [page.decode() for page in named]
    keys = [rollup_key("by-page", on, page) for page in named for on in dates]
    if count > limit:
        keys += [rollup_key("all", on) for on in dates]
    counts = accuracy.read_counts(connection, keys)
    out = {page: _figures(counts[n * len(dates) : (n + 1) * len(dates)]) for n, page in enumerate(named)}
    if count > limit:
        rest = accuracy.figures(accuracy.summed(counts[-len(dates) :]))
        for figures in out.values():
            for name in rest:
                rest[name] -= figures[name]
        out[OTHER_PAGES] = {**rest, "accuracy": accuracy.share(rest)}
    return out


def coverage(connection: redis.Redis, routes, now: float | None = None) -> dict[str, dict[str, tuple[int, int]]]:
    """Per dataset and day of the window: (leads with their Lead event confirmed or kept in
    dry run, leads known): what the lead coverage gates judge (events/gates.py)."""
    dates = window_days(connection, routes, now)
    keys = [rollup_key(name, on) for on in dates for name in ("dataset-known", "dataset-done")]
    counts = accuracy.read_counts(connection, keys)
    out: dict[str, dict[str, tuple[int, int]]] = {}
    for n, on in enumerate(dates):
        known, done = counts[2 * n], counts[2 * n + 1]
        for dataset, leads in known.items():
            if leads > 0:
                out.setdefault(dataset, {})[on] = (done.get(dataset, 0), leads)
    return out


def window_days(connection: redis.Redis, routes, now: float | None = None) -> list[str]:
    """The report's window, its days' rollups complete (accuracyrebuild.py) and the window's
    own sums over them moved on to its first day, in bounded steps (`_roll`)."""
    dates = accuracy.window(WINDOW_DAYS, now)
    if not connection.exists(ROLLED):
        accuracyrebuild.rebuild(connection, routes, dates)
    roll(connection, dates)
    return dates


def roll(connection: redis.Redis, dates: list[str], steps: int | None = None) -> bool:
    """When a day has left the window: its Pages' window sums made again over the days still
    in it; when the window's sums are missing or far behind: every Page's.
    MEMBERS_PER_STEP Pages a step, all of them or `steps`: False while some are left."""
    with connection.pipeline(transaction=False) as pipe:
        pipe.get(window_key("from"))
        pipe.exists(ROLL_DAYS)
        since, pending = pipe.execute()
    since = since.decode() if since else ""
    keys = [*(window_key(name) for name in WINDOW), ROLL_DAYS, ROLL_CURSOR, ROLL_SUMMED]
    if since != dates[0]:
        # The day before the new first one left: its Pages are summed again. No sums yet, the
        # clock gone back, or days missed (their counts may have expired): every Page's.
        # The window's own Pages are among them then: one it holds that no day still does goes.
        whole = since != accuracy.day(_noon(dates[0]) - 86400)
        known = [rollup_key("known", since)]
        if whole:
            known = [window_key("known"), *(rollup_key("known", on) for on in dates)]
        args = [since, dates[0], accuracymarks.TTL, "1" if whole else "0", *known]
        _ROLL_START(keys=keys, args=args, client=connection)
    elif not pending:
        return True
    sums = [rollup_key(name, on) for name in ("known", "done") for on in dates]
    taken = 0
    while steps is None or taken < steps:
        taken += 1
        if _ROLL_STEP(keys=keys, args=[dates[0], accuracymarks.TTL, MEMBERS_PER_STEP, *sums], client=connection) != 1:
            return True
    return False


def _noon(on: str) -> float:
    return datetime.strptime(on, "%Y-%m-%d").replace(hour=12, tzinfo=timezone.utc).timestamp()


def _figures(days: list[dict[str, int]]) -> dict:
    figures = accuracy.figures(accuracy.summed(days))
    return {**figures, "accuracy": accuracy.share(figures)}
