"""Marking Lead Ads leads for the accuracy figures (accuracy.py says what each flag means).

Notes: docs/internals/events.md
"""

from __future__ import annotations

import time

import redis

from workers.common import times
from workers.events.accuracy import (
    FLAGS,
    FORMS,
    LUA_PAGE_RESET,
    LUA_STATES,
    NONE,
    REBUILD_CURSOR,
    REBUILD_PAIRS,
    ROLLED,
    ROLLUPS,
    WINDOW,
    WINDOW_DAYS,
    day,
    pair_keys,
    rebuilt_pages,
    rollup_key,
    window_key,
)

# KEYS: the day's flags per lead of the (day, Page, form) (hash), its count per flag
# combination (hash), FORMS, then the day's rollups (ROLLUPS), then the window's (WINDOW),
# in those orders. ARGV: ttl, "page form", the Page, the dataset its leads went to (''
# when unknown), the day, then (lead id, its new flags) pairs, each lead once. One call
# for a batch's leads of one (day, Page, form): one HMGET, one HSET, a few HINCRBYs per
# combination that changed, not a round of commands per lead. Combinations are kept with
# flags sorted. The rollups add the same moves up per Page and for the whole day, and
# count the leads known (m, w, r) and done (c or k, and known) per Page and per dataset;
# a day still in the window adds them to the window's per Page, and ranks the Page by its
# accuracy there. So the once-a-minute figures read a few keys, never a key per form or
# Page (accuracyrollup.py). A (day, Page, form) counts in the dataset it was first marked
# with that day: known and done land in the same dataset even when the routes change
# between two marks of a lead. KEYS 15 to 18 (ROLLED, the rebuild's cursor, its pairs, its
# Pages of the day): until the rollups are made after an upgrade (accuracyrebuild.py), a
# mark moves the form's own counts only, unless the rebuild has added up its pair already.
_MARK = (
    LUA_STATES
    + LUA_PAGE_RESET
    + """
local n = (#ARGV - 5) / 2
if n < 1 then return 0 end
local function one(b) if b then return 1 end return 0 end
local ids = {}
for i = 1, n do ids[i] = ARGV[4 + 2 * i] end
local olds = redis.call('HMGET', KEYS[1], unpack(ids))
local sets, delta, changed, dk, dd = {}, {}, 0, 0, 0
for i = 1, n do
  local old = olds[i] or ''
  local merged = old
  for c in ARGV[5 + 2 * i]:gmatch('.') do
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
    dk = dk + one(known(new)) - one(known(old))
    dd = dd + one(done(new)) - one(done(old))
    changed = changed + 1
  end
end
if changed == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(sets))
local counted = redis.call('EXISTS', KEYS[15]) == 1
if not counted and redis.call('EXISTS', KEYS[16]) == 1 then
  -- A rebuild runs: a pair it has added up, or one new since it started, counts from here.
  if redis.call('SISMEMBER', KEYS[3], ARGV[2]) == 0 or redis.call('SISMEMBER', KEYS[17], ARGV[2]) == 1 then
    counted = true
    redis.call('SADD', KEYS[17], ARGV[2])
    reset_page(KEYS[18], ARGV[3], KEYS[5], KEYS[7], KEYS[8])
  end
end
for combo, by in pairs(delta) do
  if by ~= 0 then
    redis.call('HINCRBY', KEYS[2], combo, by)
    if counted then
      redis.call('HINCRBY', KEYS[5], combo, by)
      redis.call('HINCRBY', KEYS[6], combo, by)
    end
  end
end
local dataset = redis.call('HGET', KEYS[4], ARGV[2])
if not dataset and ARGV[4] ~= '' then
  dataset = ARGV[4]
  redis.call('HSET', KEYS[4], ARGV[2], dataset)
end
if not counted then dk, dd = 0, 0 end
if dk ~= 0 then
  redis.call('ZINCRBY', KEYS[7], dk, ARGV[3])
  if dataset then redis.call('HINCRBY', KEYS[9], dataset, dk) end
end
if dd ~= 0 then
  redis.call('ZINCRBY', KEYS[8], dd, ARGV[3])
  if dataset then redis.call('HINCRBY', KEYS[10], dataset, dd) end
end
local from = redis.call('GET', KEYS[11])
if from and ARGV[5] >= from and (dk ~= 0 or dd ~= 0) then
  local k = tonumber(redis.call('ZINCRBY', KEYS[12], dk, ARGV[3]))
  local d = tonumber(redis.call('ZINCRBY', KEYS[13], dd, ARGV[3]))
  if k > 0 then
    redis.call('ZADD', KEYS[14], string.format('%.17g', d / k), ARGV[3])
  else
    redis.call('ZREM', KEYS[14], ARGV[3])
  end
end
for i = 1, 14 do
  if i ~= 3 then redis.call('EXPIRE', KEYS[i], ARGV[1]) end
end
redis.call('SADD', KEYS[3], ARGV[2])
return changed
"""
)
# Only its sha is computed here; it always runs on the caller's client or pipeline, which
# loads it into Redis when Redis does not know it yet.
_MARK_SCRIPT = redis.Redis().register_script(_MARK)
TTL = (WINDOW_DAYS + 2) * 86400  # seconds every key of a day's marks is kept
_PER_CALL = 500  # leads per script call: Lua's unpack() takes a few thousand at most


def mark(pipe, kind: str, leads: list[dict], now: float | None = None, routes=None) -> None:
    """Mark Lead Ads leads (dicts with leadgen_id or id, page_id, form_id, created_time,
    and the job's `route` when they have one) as `kind`; `pipe` may be a pipeline, so the
    marks ride with the work's own writes. `routes` names the dataset of leads without a
    route (a listing of the sweep)."""
    mark_all(pipe, [(kind, leads)], now, routes)


def mark_all(pipe, marks: list[tuple[str, list[dict]]], now: float | None = None, routes=None) -> None:
    """Several kinds of marks at once (a drain batch: came by webhook, confirmed), one
    script call per (day, Page, form) they touch, whatever the number of leads."""
    now = time.time() if now is None else now
    groups: dict[tuple[str, str, str], dict[str, str]] = {}
    datasets: dict[tuple[str, str, str], str] = {}
    for kind, leads in marks:
        for lead in leads:
            page, form = str(lead.get("page_id") or NONE), str(lead.get("form_id") or NONE)
            # A time outside what times.unix_time accepts (an entry admitted before intake
            # refused them) counts on today: it must not fail the batch it rides with.
            on = day(times.unix_time(lead.get("created_time")) or now)
            flags = groups.setdefault((page, form, on), {})
            lead_id = str(lead.get("leadgen_id") or lead.get("id"))
            flags[lead_id] = flags.get(lead_id, "") + FLAGS[kind]
            if not datasets.get((page, form, on)):
                datasets[(page, form, on)] = dataset(lead, routes)
    rebuild = (ROLLED, REBUILD_CURSOR, REBUILD_PAIRS)
    for (page, form, on), flags in groups.items():
        pairs = list(flags.items())
        rollups = [*(rollup_key(name, on, page) for name in ROLLUPS), *(window_key(name) for name in WINDOW)]
        for start in range(0, len(pairs), _PER_CALL):
            chunk = [value for pair in pairs[start : start + _PER_CALL] for value in pair]
            _MARK_SCRIPT(
                keys=[*pair_keys(page, form, on), FORMS, *rollups, *rebuild, rebuilt_pages(on)],
                args=[TTL, f"{page} {form}", page, datasets[(page, form, on)], on, *chunk],
                client=pipe,
            )


def dataset(lead: dict, routes) -> str:
    """The dataset a lead went to: its job's route, else what `routes` says; '' unknown."""
    route = lead.get("route")
    if not route and routes is not None:
        route, _ = routes.lead(lead.get("page_id"), lead.get("form_id"))
    return (route or {}).get("dataset") or ""


def mark_now(connection: redis.Redis, kind: str, leads: list[dict]) -> None:
    """`mark` in a pipeline of its own; a lost mark never fails the work it describes."""
    try:
        with connection.pipeline(transaction=False) as pipe:
            mark(pipe, kind, leads)
            pipe.execute()
    except redis.RedisError:
        pass
