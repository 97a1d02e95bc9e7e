"""The accuracy rollups made once from the forms' counts after an upgrade from a version that
kept none, in bounded steps any process may resume.

Notes: docs/internals/events.md
"""

from __future__ import annotations

import redis

from workers.common.queues import redis_key
from workers.events import accuracy, accuracymarks
from workers.events.accuracy import (
    FORMS,
    REBUILD_CURSOR,
    REBUILD_PAIRS,
    ROLLED,
    rebuilt_pages,
    rollup_key,
    window_key,
)

PAIRS_PER_STEP = 10  # "page form" pairs a step adds up, each over the window's 8 days: a few ms
# A day's rollups made again whole: the small ones cleared at the start; the Pages' own (their
# counts and their place in `known` and `done`) each at the first step or mark that touches
# it, so nothing large is freed at once.
_CLEARED = ("all", "dataset-known", "dataset-done")
_PER_DAY = ("all", "known", "done", "dataset-known", "dataset-done", "pins")  # then the Page counts'
# prefix, the forms' counts' prefix, the day's rebuilt Pages

# KEYS: ROLLED, the cursor, the pairs, the window's first day, then the keys started again
# from nothing (each window day's _CLEARED and rebuilt Pages). ARGV: the ttl. Starts a
# rebuild unless one runs or is done; marks from here count in the rollups only once their
# pair is added up (accuracymarks.py).
_START = redis.Redis().register_script("""
if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
for i = 3, #KEYS do redis.call('UNLINK', KEYS[i]) end
redis.call('SET', KEYS[2], '0', 'EX', ARGV[1])
return 1
""")

# KEYS: ROLLED, the cursor, the pairs. ARGV: the ttl, the cursor this step read FORMS from,
# the cursor after it, the number of days, each day's keys (_PER_DAY, then the prefixes of
# its Page counts and its forms' counts, then its rebuilt Pages), then "page form" and the
# dataset the routes give it, per pair of the step. A step another process already took
# does nothing; a pair already added up (by a step or a mark) is skipped.
_STEP = redis.Redis().register_script(
    accuracy.LUA_STATES
    + accuracy.LUA_PAGE_RESET
    + """
if redis.call('GET', KEYS[2]) ~= ARGV[2] then return 0 end
local ttl, days = ARGV[1], tonumber(ARGV[4])
local first = 5 + days * 9
for p = first, #ARGV, 2 do
  local pair, routed = ARGV[p], ARGV[p + 1]
  if redis.call('SADD', KEYS[3], pair) == 1 then
    local page, form = string.match(pair, '^(%S+) (%S+)$')
    for d = 0, days - 1 do
      local o = 5 + d * 9
      local all, known_, done_ = ARGV[o], ARGV[o + 1], ARGV[o + 2]
      local dknown, ddone, pins = ARGV[o + 3], ARGV[o + 4], ARGV[o + 5]
      local flat = redis.call('HGETALL', ARGV[o + 7] .. page .. ':' .. form .. ':counts')
      if #flat > 0 then
        local dataset = redis.call('HGET', pins, pair)
        if not dataset and routed ~= '' then
          dataset = routed
          redis.call('HSET', pins, pair, dataset)
        end
        local page_key = ARGV[o + 6] .. page
        reset_page(ARGV[o + 8], page, page_key, known_, done_)
        for j = 1, #flat, 2 do
          local combo, by = flat[j], tonumber(flat[j + 1])
          redis.call('HINCRBY', page_key, combo, by)
          redis.call('HINCRBY', all, combo, by)
          if known(combo) then
            redis.call('ZINCRBY', known_, by, page)
            if dataset then redis.call('HINCRBY', dknown, dataset, by) end
          end
          if done(combo) then
            redis.call('ZINCRBY', done_, by, page)
            if dataset then redis.call('HINCRBY', ddone, dataset, by) end
          end
        end
        redis.call('EXPIRE', page_key, ttl)
      end
    end
  end
end
for d = 0, days - 1 do
  for i = 0, 8 do
    if i ~= 6 and i ~= 7 then redis.call('EXPIRE', ARGV[5 + d * 9 + i], ttl) end
  end
end
if ARGV[3] ~= '0' then
  redis.call('SET', KEYS[2], ARGV[3], 'EX', ttl)
  redis.call('EXPIRE', KEYS[3], ttl)
  return 1
end
redis.call('SET', KEYS[1], 1)
redis.call('UNLINK', KEYS[2], KEYS[3])  -- freed off the main thread: 100,000s of pairs
for d = 0, days - 1 do redis.call('UNLINK', ARGV[5 + d * 9 + 8]) end
return 2
"""
)


def rebuild(connection: redis.Redis, routes, dates: list[str], steps: int | None = None) -> bool:
    """The rollups of each day of `dates` made from the forms' counts, PAIRS_PER_STEP pairs
    a step, until ROLLED is set (by this process or another that runs steps too), or after
    `steps` steps: False while it is not done."""
    cleared = [rollup_key(name, on) for on in dates for name in _CLEARED] + [rebuilt_pages(on) for on in dates]
    per_day = [
        key
        for on in dates
        for key in (
            *(rollup_key(name, on) for name in _PER_DAY),
            rollup_key("by-page", on, ""),
            redis_key("accuracy", on, ""),
            rebuilt_pages(on),
        )
    ]
    keys = [ROLLED, REBUILD_CURSOR, REBUILD_PAIRS]
    _START(keys=[*keys, window_key("from"), *cleared], args=[accuracymarks.TTL], client=connection)
    taken = 0
    while True:
        with connection.pipeline(transaction=False) as pipe:
            pipe.exists(ROLLED)
            pipe.get(REBUILD_CURSOR)
            rolled, cursor = pipe.execute()
        if rolled or (steps is not None and taken >= steps):
            return bool(rolled)
        taken += 1
        if cursor is None:  # the rebuild's state expired with no process to finish it: again
            _START(keys=[*keys, window_key("from"), *cleared], args=[accuracymarks.TTL], client=connection)
            continue
        after, members = connection.sscan(FORMS, int(cursor), count=PAIRS_PER_STEP)
        routed = []
        for pair in sorted(member.decode() for member in members):
            page, form = pair.split(" ")
            routed += [pair, accuracymarks.dataset({"page_id": page, "form_id": form}, routes)]
        _STEP(
            keys=keys,
            args=[accuracymarks.TTL, cursor.decode(), str(after), len(dates), *per_day, *routed],
            client=connection,
        )
