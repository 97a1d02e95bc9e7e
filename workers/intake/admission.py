"""What every kind of delivery does with its items: admit the new ones (deduped, stored
durably, a drain woken), record what is not sent, hold Lead Ads changes no route takes."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Sequence

import redis
from rq import Queue

from workers.common import counters, logs, replication
from workers.common.queues import job_id, redis_key
from workers.common.refusals import QueueUnavailable
from workers.config.routing import dataset_of
from workers.events import accuracymarks, suppression
from workers.intake import inbox
from workers.sources.registry import CRM_STAGES, Source

if TYPE_CHECKING:
    from workers.intake.requestredis import RequestRedis

IGNORED = redis_key("ignored")
IGNORED_KEEP = 1000
log = logs.get(__name__)
HELD = redis_key("held")  # leadgen id -> a Lead Ads change from a Page not (yet) in the mapping file


def enqueue_new(
    queue: Queue,
    source: Source,
    jobs: list[tuple[str, dict]],
    request_id: str | None = None,
    via: str | None = None,
    request_redis: RequestRedis | None = None,
) -> dict:
    """Put each (lead key, job argument) not seen before into the inbox, in one atomic
    Redis call (inbox.admit), and wake a drain job if none is awake; counts, the new
    leads' job ids, and `known`: the indexes in `jobs` of the leads already known.
    `via`: how they came ("webhook", "sweep"), for the accuracy figures.

    A lead is either stored with its dedupe record or not at all, never marked seen
    without being stored. The dedupe record outlives Meta's 36-hour redelivery window
    and the sweep's 7 days (policy.SEEN_TTL).

    Raises:
        QueueUnavailable: Redis could not be reached or refused the write.
    """
    entries, positions, unusable, checks = [], [], [], []
    function = source.job
    kind = "stage" if source.kind == CRM_STAGES else "lead"
    for position, (lead_key, argument) in enumerate(jobs):
        new_id = job_id(kind, source.name, lead_key)
        try:
            entries.append((new_id, inbox.entry(new_id, function, argument, request_id, via)))
            positions.append(position)
            # A CRM change names its person once read back (stageitems.check asks then).
            checks.append([] if kind == "stage" else _suppression_fields(argument))
        except (ValueError, TypeError):  # no check foresaw it: this item alone is not sent
            unusable.append({"reason": "unusable_item", "key": lead_key[:64]})
    try:
        admitted = inbox.admit(request_redis or queue.connection, entries, inbox.SLOTS, suppressions=checks)
        new, woken, forgotten = admitted
    except redis.RedisError as err:
        raise QueueUnavailable(f"queue unavailable ({type(err).__name__}); retry later") from None
    try:
        inbox.wake(queue, woken)
    except redis.RedisError as err:
        # The leads are stored. Their slots must not stay claimed with no drain job behind
        # them until they expire (a minute; after a Redis restart the first lead waited 77 s):
        # freed, the next delivery or the worker's reconnect or maintenance pass wakes one.
        log.warning("drain_wake_failed", error=type(err).__name__, slots=woken)
        inbox.free_slots(request_redis or queue.connection, woken)
    fresh = set(new) | {i for i, _ in forgotten}
    return {
        "accepted": len(new),
        "duplicates": len(entries) - len(fresh),
        # A forgotten person's: acknowledged, recorded by the forget's reference alone.
        "forgotten": [{"reason": "suppressed", "ref": ref} for _, ref in forgotten],
        "job_ids": [entries[i][0] for i in new],
        "unusable": unusable,
        "known": [positions[i] for i in range(len(entries)) if i not in fresh],
    }


def _suppression_fields(argument: dict) -> list[str]:
    """What would keep this lead's person out (suppression.py), checked in the admit."""
    return suppression.fields(dataset_of(argument.get("route")), argument.get("user_data"), argument.get("leadgen_id"))


def record_ignored(
    connection: redis.Redis, source: str, skipped: list[dict], held: Sequence[dict] = (), arrived: Sequence[dict] = ()
) -> None:
    """Keep what was acknowledged but not sent (unknown form or Page, no consent, test
    delivery, negative stages), newest first, for `leadrelay ignored`, and count it by
    reason. Ids and reasons only. `held`: Lead Ads changes no route took, kept whole
    (they are ids too) until `release_held` sends them. `arrived`: the Lead Ads leads a
    webhook brought, for the accuracy figures.

    Raises:
        QueueUnavailable: Redis could not be reached.
    """
    if not skipped and not arrived:
        return
    now = int(time.time())
    try:
        with connection.pipeline() as pipe:
            for item in skipped:
                pipe.lpush(IGNORED, json.dumps({"source": source, "at": now, **item}, sort_keys=True))
                counters.count(pipe, counters.IGNORED, source, item.get("reason") or "unknown")
            pipe.ltrim(IGNORED, 0, IGNORED_KEEP - 1)
            for item in held:
                pipe.hset(HELD, item["leadgen_id"], json.dumps({**item, "held_at": now}, sort_keys=True))
            accuracymarks.mark(pipe, "webhook", list(arrived), now)
            pipe.execute()
    except redis.RedisError as err:
        raise QueueUnavailable(f"queue unavailable ({type(err).__name__}); retry later") from None


def held(connection: redis.Redis) -> list[dict]:
    """Lead Ads changes held for want of a route, oldest first."""
    return sorted((json.loads(raw) for raw in connection.hvals(HELD)), key=lambda item: item["held_at"])


def replicated(connection: redis.Redis) -> None:
    try:
        replication.confirm(connection)
    except redis.RedisError as err:
        raise QueueUnavailable(f"queue unavailable ({type(err).__name__}); retry later") from None
