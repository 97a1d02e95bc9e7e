"""The inbox: where the receiver puts new leads, in one atomic Redis call per delivery,
and where drain jobs (workers/engine/inboxdrain.py) take them from.

Notes: docs/internals/intake.md
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import uuid
from typing import TYPE_CHECKING, Any

import redis
from rq import Queue, Worker
from rq.job import Job

from workers import jobnames
from workers.common import policy
from workers.common.queues import INBOX, redis_key
from workers.events import suppression

if TYPE_CHECKING:
    from workers.intake.requestredis import RequestRedis

STREAM = INBOX
GROUP = "drainers"
SLOT = redis_key("inbox", "slot", "")  # + slot number
SEEN = redis_key("seen", "")  # + job id: a lead's dedupe record
SLOTS = 4  # drain jobs at most at once, at the least: one more per 50 leads waiting (see `admit`)
# The installation's drain slots, kept by the workers (`follow_workers`): one per live
# worker, at least SLOTS, or LEADRELAY_DRAIN_SLOTS; more worker hosts then deliver more.
SLOT_COUNT = redis_key("inbox", "slots")
SLOT_COUNT_TTL = 600  # no worker kept it for ten minutes: the default again
SLOT_TTL = 60  # a slot whose drain job died frees itself; a live one renews it each batch
ALIVE = redis_key("inbox", "alive", "")  # + consumer: renewed by a drain job after each batch
ALIVE_TTL = 120  # longer than any one batch can take (two Graph calls and their timeouts)
DRAIN = jobnames.DRAIN
TRIES = redis_key("inbox", "tries")  # entry id -> times taken up from a dead or stopped drain job

# KEYS: the stream, the slot count, then (dedupe record, RQ job hash) per lead. ARGV:
# dedupe TTL, slot prefix, slots when no count is kept, leads per drain job, slot TTL,
# then one entry per lead.
_ADMIT = """
local n = (#KEYS - 3) / 2
local new, forgotten = {}, {}
for i = 1, n do
  local seen, job = KEYS[2 * i + 2], KEYS[2 * i + 3]
  local ref = false
  if ARGV[5 + n + i] ~= '' then  -- a forgotten person's lead is acknowledged, never stored
    for _, hit in ipairs(redis.call('HMGET', KEYS[3], unpack(cjson.decode(ARGV[5 + n + i])))) do
      if hit then ref = hit break end
    end
  end
  if ref then
    forgotten[#forgotten + 1] = {i, ref}
  elseif redis.call('EXISTS', job) == 0 and redis.call('SET', seen, '1', 'NX', 'EX', ARGV[1]) then
    redis.call('XADD', KEYS[1], '*', 'e', ARGV[5 + i])
    new[#new + 1] = i
  end
end
local woken = {}
if #new > 0 then
  local waiting = redis.call('XLEN', KEYS[1])
  local most = tonumber(redis.call('GET', KEYS[2]) or ARGV[3])
  local wanted = math.min(most, 1 + math.floor((waiting - 1) / tonumber(ARGV[4])))
  local slots = {}
  for k = 0, wanted - 1 do slots[k + 1] = ARGV[2] .. k end
  local held = redis.call('MGET', unpack(slots))  -- one look at every slot: most calls find them all awake
  for k = 0, wanted - 1 do
    if not held[k + 1] then
      redis.call('SET', slots[k + 1], 'woken', 'EX', ARGV[5])
      woken[#woken + 1] = k
    end
  end
end
return {new, woken, forgotten}
"""


_ADMIT_SHA = hashlib.sha1(_ADMIT.encode()).hexdigest()  # EVALSHA's name for it


def entry(job_id: str, function: str, argument: dict, request_id: str | None = None, via: str | None = None) -> str:
    """One inbox entry: what the lead's own RQ job would run, should it need one; `via`:
    how it came (the drain job marks Lead Ads leads that came by webhook)."""
    return json.dumps(
        {"id": job_id, "fn": function, "arg": argument, "rid": request_id, "via": via}, separators=(",", ":")
    )


def admit(
    connection: "redis.Redis | RequestRedis",
    entries: list[tuple[str, str]],
    slots: int,
    per_job: int = 50,
    suppressions: list[list[str]] | None = None,
) -> tuple[list[int], list[int], list[tuple[int, str]]]:
    """Dedupe and store (job id, entry) pairs in one atomic call; (indexes of the new
    ones, drain slots to wake, (index, forget reference) of a forgotten person's). A lead
    is new unless its dedupe record or its own RQ job exists; one whose `suppressions`
    (suppression.fields, per entry) are on the suppression list is not stored at all, in
    the same round trip. `connection`: a client, or the receiver's RequestRedis
    (workers/intake/requestredis.py)."""
    if not entries:
        return [], [], []
    keys = [STREAM, SLOT_COUNT, suppression.KEY]
    for job_id, _ in entries:
        keys += [SEEN + job_id, Job.key_for(job_id)]
    wanted = suppressions or [[] for _ in entries]
    checks = [json.dumps(fields) if fields else "" for fields in wanted]
    args = [len(keys), *keys, policy.SEEN_TTL, SLOT, slots, per_job, SLOT_TTL, *(raw for _, raw in entries), *checks]
    try:
        new, woken, forgotten = connection.execute_command("EVALSHA", _ADMIT_SHA, *args)
    except redis.exceptions.NoScriptError:  # Redis restarted since: EVAL sends it whole, and caches it again
        new, woken, forgotten = connection.execute_command("EVAL", _ADMIT, *args)
    refs = [(i - 1, json.loads(ref)["ref"]) for i, ref in forgotten]
    return [i - 1 for i in new], list(woken), refs


def wake(queue: Queue, slots: list[int]) -> None:
    """Enqueue a drain job for each slot just claimed (by `admit`, `claim_slot`)."""
    for slot in slots:
        queue.enqueue(
            DRAIN,
            slot,
            job_id=f"drain-{slot}-{uuid.uuid4().hex[:12]}",
            result_ttl=0,
            failure_ttl=policy.DAY,
            job_timeout=policy.DRAIN_JOB_TIMEOUT,
            description=f"drain the inbox (slot {slot})",
        )


def revive(queue: Queue) -> bool:
    """Wake drain jobs when leads wait and their slots are free (a worker's start and each
    maintenance pass: after a crash, or a wake the receiver could not enqueue)."""
    return bool(wake_for(queue, queue.connection.xlen(STREAM)))


def wake_for(queue: Queue, waiting: int, per_job: int = 50) -> list[int]:
    """`admit`'s rule, for leads put in the inbox another way (replay): one drain slot,
    one more per `per_job` leads waiting, at most the installation's slots; wake those
    that were free."""
    wanted = min(slot_count(queue.connection), 1 + (waiting - 1) // per_job) if waiting else 0
    woken = [slot for slot in range(wanted) if claim_slot(queue.connection, slot)]
    wake(queue, woken)
    return woken


def slot_count(connection: redis.Redis) -> int:
    return int(connection.get(SLOT_COUNT) or SLOTS)


def follow_workers(connection: redis.Redis, setting: int = 0, joining: bool = False) -> int:
    """Keep the drain slots at the setting, or at one per live worker (at least SLOTS): a
    worker's start (`joining`: it counts itself, and does not lower what another starting
    worker kept) and each maintenance pass, every 30 s (which may lower it as workers
    leave). The count lapses with the workers that keep it."""
    if setting:
        connection.set(SLOT_COUNT, setting, ex=SLOT_COUNT_TTL)
        return setting
    count = max(SLOTS, Worker.count(connection=connection) + (1 if joining else 0))
    if joining:  # two starting at once may each keep a count short of the other's: the next pass mends it
        count = max(count, int(connection.get(SLOT_COUNT) or 0))
    connection.set(SLOT_COUNT, count, ex=SLOT_COUNT_TTL)
    return count


def claim_slot(connection: redis.Redis, slot: int = 0) -> bool:
    return bool(connection.set(SLOT + str(slot), "woken", nx=True, ex=SLOT_TTL))


def hold_slot(connection: redis.Redis, slot: int) -> None:
    connection.set(SLOT + str(slot), "draining", ex=SLOT_TTL)


def free_slot(connection: redis.Redis, slot: int) -> None:
    connection.delete(SLOT + str(slot))


def free_slots(connection: "redis.Redis | RequestRedis", slots: list[int]) -> None:
    """Free slots a drain job could not be queued for; a Redis that fails again lets them
    expire instead."""
    if not slots:
        return
    try:
        connection.execute_command("DEL", *(SLOT + str(slot) for slot in slots))
    except redis.RedisError:
        pass


def ensure_group(connection: redis.Redis) -> None:
    try:
        connection.xgroup_create(STREAM, GROUP, id="0", mkstream=True)
    except redis.ResponseError as err:
        if "BUSYGROUP" not in str(err):
            raise


def take(connection: redis.Redis, consumer: str, count: int) -> list[tuple[str, dict]]:
    """Up to `count` new entries for this consumer, oldest first: (entry id, entry)."""
    answer: Any = connection.xreadgroup(GROUP, consumer, {STREAM: ">"}, count=count)
    return [(_text(entry_id), json.loads(fields[b"e"])) for _, items in answer or [] for entry_id, fields in items]


def left_over(connection: redis.Redis, consumer: str, count: int = 1000) -> list[tuple[str, dict]]:
    """Entries this consumer took and never finished (an earlier drain job of this process
    that failed half-way: drain jobs of one process run one at a time)."""
    answer: Any = connection.xreadgroup(GROUP, consumer, {STREAM: "0"}, count=count)
    return _unfinished(connection, [item for _, items in answer or [] for item in items])


def _unfinished(connection: redis.Redis, items) -> list[tuple[str, dict]]:
    """(entry id, entry) for the pending entries still in the stream; one deleted since
    comes back empty: it was finished, and is acknowledged now."""
    out = []
    for entry_id, fields in items:
        if fields:
            out.append((_text(entry_id), json.loads(fields[b"e"])))
        else:
            connection.xack(STREAM, GROUP, entry_id)
    return out


def done(pipe, entry_ids: list[str]) -> None:
    """Forget finished entries (on a pipeline, with the rest of the batch's writes)."""
    if entry_ids:
        pipe.xack(STREAM, GROUP, *entry_ids)
        pipe.xdel(STREAM, *entry_ids)
        pipe.hdel(TRIES, *entry_ids)


def count_tries(connection: redis.Redis, entry_ids: list[str]) -> list[int]:
    """One more taking up of each entry (from a dead drain job, or an earlier one in this
    process that stopped half-way); how many so far. An entry that keeps killing whoever
    handles it is found this way (quarantine.py)."""
    with connection.pipeline(transaction=False) as pipe:
        for entry_id in entry_ids:
            pipe.hincrby(TRIES, entry_id, 1)
        return pipe.execute()


def consumer_name() -> str:
    """This process as a consumer of the inbox: its host and pid, so a drain job on the same
    host can tell at once that a killed one's process is gone."""
    return f"{socket.gethostname()}:{os.getpid()}"


def beat(connection: redis.Redis, consumer: str) -> None:
    """Say this consumer is alive (a drain job, at its start and after each batch)."""
    connection.set(ALIVE + consumer, 1, ex=ALIVE_TTL)


def gone(connection: redis.Redis, consumer: str, pid_alive) -> bool:
    """A consumer is gone when it stopped saying it is alive, or when it ran on this host
    under a pid that no longer runs. Not RQ's worker record: a worker busy with a long job
    lets that record lapse, and its entries must not be taken from under it."""
    host, _, pid = consumer.rpartition(":")
    if host == socket.gethostname() and pid.isdigit() and not pid_alive(int(pid)):
        return True
    return not connection.exists(ALIVE + consumer)


def reclaim(
    connection: redis.Redis, consumer: str, gone, idle_ms: int = 15 * 60 * 1000, count: int = 1000
) -> list[tuple[str, dict]]:
    """Entries taken by a consumer `gone(name)` says is dead (or idle past `idle_ms`,
    a safety net), now this consumer's: (entry id, entry)."""
    claimed = []
    pending: Any
    for pending in connection.xpending_range(STREAM, GROUP, "-", "+", count):
        owner = _text(pending["consumer"])
        if owner == consumer or (pending["time_since_delivered"] < idle_ms and not gone(owner)):
            continue
        claimed += _unfinished(connection, connection.xclaim(STREAM, GROUP, consumer, 0, [pending["message_id"]]))
    return claimed


def waiting(connection: redis.Redis) -> dict:
    """Entries not yet finished, and how many of them a consumer holds."""
    try:
        pending = connection.xpending(STREAM, GROUP)["pending"]
    except redis.ResponseError:  # no group yet
        pending = 0
    return {"inbox": connection.xlen(STREAM), "taken": pending}


def state(connection: redis.Redis, job_id: str) -> str:
    """Where a lead without a job of its own stands: "finished" (done in a batch),
    "queued" (still in the inbox) or "not found". It reads the whole inbox: for the
    command line, not for a hot path."""
    if not connection.exists(SEEN + job_id):
        return "not found"
    entries: Any = connection.xrange(STREAM)
    for _, fields in entries:
        if json.loads(fields[b"e"])["id"] == job_id:
            return "queued"
    return "finished"


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else value
