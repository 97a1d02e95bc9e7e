"""The accuracy figures as the marks add them up: per Page and per dataset, per day.

Notes: docs/internals/events.md
"""

from __future__ import annotations

import redis

from workers.common.queues import redis_key
from workers.events import accuracy, accuracymarks
from workers.events.accuracy import ROLLUPS, WINDOW, WINDOW_DAYS, rollup_key, window_key

PAGE_SERIES = 50  # Pages /metrics names one by one; the rest are summed as OTHER_PAGES
OTHER_PAGES = "_other"
ROLLED = redis_key("accuracy", "rolled-up")  # set once the forms' older counts are added up

# KEYS: the window's keys (WINDOW), then each day's `known` sorted set, then each day's
# `done`. ARGV: the window's first day, the ttl. The window's per-Page sums made again
# from its days, and the Pages ranked: when a day leaves the window (once a day), or once
# after an upgrade. Linear in the Pages, once a day; the marks keep it between.
_ROLL = redis.Redis().register_script("""
local days = (#KEYS - 4) / 2
redis.call('ZUNIONSTORE', KEYS[2], days, unpack(KEYS, 5, 4 + days))
redis.call('ZUNIONSTORE', KEYS[3], days, unpack(KEYS, 5 + days, 4 + 2 * days))
redis.call('DEL', KEYS[4])
local done, ranked = {}, {}
local flat = redis.call('ZRANGE', KEYS[3], 0, -1, 'WITHSCORES')
for j = 1, #flat, 2 do done[flat[j]] = tonumber(flat[j + 1]) end
flat = redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')
for j = 1, #flat, 2 do
  local k = tonumber(flat[j + 1])
  if k > 0 then
    ranked[#ranked + 1] = string.format('%.17g', (done[flat[j]] or 0) / k)
    ranked[#ranked + 1] = flat[j]
  end
  if #ranked >= 1000 or (j + 1 >= #flat and #ranked > 0) then
    redis.call('ZADD', KEYS[4], unpack(ranked))
    ranked = {}
  end
end
redis.call('SET', KEYS[1], ARGV[1])
for i = 1, 4 do redis.call('EXPIRE', KEYS[i], ARGV[2]) end
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
    """The report's window, its days' rollups complete (`_rolled_up`) and the window's own
    summed over them since its first day last changed."""
    dates = accuracy.window(WINDOW_DAYS, now)
    with connection.pipeline(transaction=False) as pipe:
        pipe.exists(ROLLED)
        pipe.get(window_key("from"))
        rolled, since = pipe.execute()
    if not rolled:
        _rolled_up(connection, routes, dates)
    if not rolled or since != dates[0].encode():
        keys = [*(window_key(name) for name in WINDOW), *(rollup_key(n, on) for n in ("known", "done") for on in dates)]
        _ROLL(keys=keys, args=[dates[0], accuracymarks.TTL], client=connection)
    return dates


def _figures(days: list[dict[str, int]]) -> dict:
    figures = accuracy.figures(accuracy.summed(days))
    return {**figures, "accuracy": accuracy.share(figures)}


# KEYS: FORMS, then the day's rollups but `by-page` (ROLLUPS' order). ARGV: the ttl, the
# day's prefix of a form's keys and of a Page's counts, then "page form" and the dataset
# the routes give it now, for each form the caller knew of. The day's rollups are made
# again from the forms' counts in one step: a mark landing meanwhile waits, and a form
# first marked since the caller listed them is still counted (its pin names its dataset).
_REBUILD = redis.Redis().register_script(
    accuracy.LUA_STATES
    + """
local routed = {}
for n = 4, #ARGV, 2 do routed[ARGV[n]] = ARGV[n + 1] end
for i = 3, #KEYS do redis.call('DEL', KEYS[i]) end
local pages = {}
for _, pair in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local page, form = string.match(pair, '^(%S+) (%S+)$')
  local flat = redis.call('HGETALL', ARGV[2] .. page .. ':' .. form .. ':counts')
  if #flat > 0 then
    local dataset = redis.call('HGET', KEYS[2], pair)
    if not dataset and (routed[pair] or '') ~= '' then
      dataset = routed[pair]
      redis.call('HSET', KEYS[2], pair, dataset)
    end
    local page_key = ARGV[3] .. page
    if not pages[page] then redis.call('DEL', page_key) pages[page] = true end
    for j = 1, #flat, 2 do
      local combo, by = flat[j], tonumber(flat[j + 1])
      redis.call('HINCRBY', page_key, combo, by)
      redis.call('HINCRBY', KEYS[3], combo, by)
      if known(combo) then
        redis.call('ZINCRBY', KEYS[4], by, page)
        if dataset then redis.call('HINCRBY', KEYS[6], dataset, by) end
      end
      if done(combo) then
        redis.call('ZINCRBY', KEYS[5], by, page)
        if dataset then redis.call('HINCRBY', KEYS[7], dataset, by) end
      end
    end
    redis.call('EXPIRE', page_key, ARGV[1])
  end
end
for i = 2, #KEYS do redis.call('EXPIRE', KEYS[i], ARGV[1]) end
return 1
"""
)


def _rolled_up(connection: redis.Redis, routes, dates: list[str]) -> None:
    """Once, after an upgrade: the rollups of each day of the window made from the forms'
    counts (marks from before kept none). Linear in forms, once; every read after it is not."""
    pairs = sorted(p.decode() for p in connection.smembers(accuracy.FORMS))
    routed = []
    for pair in pairs:
        page, form = pair.split(" ")
        routed += [pair, accuracymarks.dataset({"page_id": page, "form_id": form}, routes)]
    for on in dates:
        _REBUILD(
            keys=[accuracy.FORMS, *(rollup_key(name, on) for name in ROLLUPS if name != "by-page")],
            args=[accuracymarks.TTL, redis_key("accuracy", on, ""), rollup_key("by-page", on, ""), *routed],
            client=connection,
        )
    connection.set(ROLLED, 1)
