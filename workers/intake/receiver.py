"""What the receiver does with a delivery, for every source alike: verify, parse, turn
items into job arguments, dedupe and enqueue durably, record what is not sent."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Mapping

import redis
from rq import Queue

from workers.common import counters, logs, replication
from workers.common.queues import job_id, redis_key
from workers.common.refusals import BadSignature, MalformedBody, QueueUnavailable
from workers.config.routing import Client, Routes, dataset_of
from workers.config.settings import Settings
from workers.events import accuracymarks, suppression
from workers.intake import chats, crmitems, forms, inbox
from workers.intake.unusable import item as unusable_item
from workers.sources.registry import CHAT, CRM_STAGES, FORM, LEAD_ADS, Source

if TYPE_CHECKING:
    from workers.intake.requestredis import RequestRedis

IGNORED = redis_key("ignored")
IGNORED_KEEP = 1000
log = logs.get(__name__)
HELD = redis_key("held")  # leadgen id -> a Lead Ads change from a Page not (yet) in the mapping file


def receive(
    source: Source,
    body: bytes,
    headers: Mapping[str, str],
    settings: Settings,
    mapping: dict,
    queue: Queue,
    request_id: str | None = None,
    request_redis: RequestRedis | None = None,
    url: str = "",
    peer: str = "",
) -> dict:
    """Verify, parse, prepare and enqueue one delivery; counts, new job ids and what was skipped.

    `mapping` is the mapping file as `mappingfile.validate` reads it; `request_redis`, the
    receiver's connections for the enqueue (workers/intake/requestredis.py), else the queue's
    client; `url`, the address the sender called (HubSpot signs it); `peer`, the sender's
    address (Source.verify says which sources read them).

    Raises:
        BadSignature: see the source's verify; `source_disabled` when it has no secret and
            unsigned delivery is not allowed for it. A body that authenticates is never
            refused: what parse cannot read is recorded (unusable.py) and answered.
        QueueUnavailable: Redis could not be reached or refused the write.
    """
    owner = _verify(source, body, headers, settings, mapping["routes"], url, peer)
    try:
        parsed = source.parse(body, headers)
    except MalformedBody as err:  # authenticated: acknowledged and recorded, never refused
        record_ignored(queue.connection, source.name, [unusable_item(err.reason, body)])
        return {"accepted": 0, "duplicates": 0, "job_ids": [], "skipped": [unusable_item(err.reason, body)]}
    if source.kind == CHAT:
        return _chats(source, parsed, settings, mapping["routes"], queue.connection)
    processing = mapping["processing"].get(source.name)
    if source.kind == CRM_STAGES:
        table = mapping["crm"][source.name]
        jobs, not_sent = crmitems.jobs(
            source, parsed["items"], table, settings.default_region, owner, mapping["routes"]
        )
        # A cancelled booking is answered as skipped, and recorded: `leadrelay ignored` shows it.
        not_sent += [item for item in parsed["skipped"] if item["reason"].startswith("booking_")]
        parsed["skipped"] = [item for item in parsed["skipped"] if not item["reason"].startswith("booking_")]
        held = []
    elif source.kind == FORM:
        jobs, not_sent = _form_jobs(
            source, parsed["leads"], mapping["forms"][source.name], settings, mapping["routes"], processing, owner
        )
        held = []
    else:
        jobs, held = lead_jobs(source, parsed["leads"], mapping["routes"], processing)
        not_sent = [
            {
                "reason": item["reason"],
                "leadgen_id": item["leadgen_id"],
                "page_id": item["page_id"],
                "form_id": item["form_id"],
            }
            for item in held
        ]
    via_webhook = source.kind == LEAD_ADS
    counts = enqueue_new(
        queue, source, jobs, request_id, via="webhook" if via_webhook else None, request_redis=request_redis
    )
    unusable, known = counts.pop("unusable") + counts.pop("forgotten"), counts.pop("known")
    # New Lead Ads leads are marked "came by webhook" by the drain job that takes them (the
    # accuracy figures): this request's one write stays one. What needs another write is
    # rare: a redelivery (its lead may have come by the sweep first), or items not sent.
    # After the enqueue: a delivery answered 503 records nothing, so its retry does not
    # record the same items twice.
    record_ignored(
        queue.connection,
        source.name,
        not_sent + unusable,
        held,
        arrived=[jobs[i][1] for i in known] if via_webhook else [],
    )
    # Last, so it covers every write above (held leads are acknowledged leads too). A 503
    # here means the retry records its ignored items again: counts, never leads.
    _replicated(queue.connection)
    return {**counts, "skipped": parsed["skipped"] + not_sent + unusable}


def _suppression_fields(argument: dict) -> list[str]:
    """What would keep this lead's person out (suppression.py), checked in the admit."""
    return suppression.fields(dataset_of(argument.get("route")), argument.get("user_data"), argument.get("leadgen_id"))


def _chats(source: Source, parsed: dict, settings: Settings, routes: Routes, connection: redis.Redis) -> dict:
    """Ad-started chats are kept in the request (chats.py: nothing to read later); every
    other message and status is acknowledged and counted, its text never kept."""
    try:
        kept = chats.record(
            connection, parsed["leads"], routes, settings.default_region, settings.profile_retention_days
        )
    except redis.RedisError as err:
        raise QueueUnavailable(f"queue unavailable ({type(err).__name__}); retry later") from None
    skipped = parsed["skipped"] + kept["unrouted"] + kept["forgotten"]
    record_ignored(connection, source.name, skipped)
    _replicated(connection)
    return {"accepted": kept["accepted"], "duplicates": kept["duplicates"], "job_ids": [], "skipped": skipped}


def _replicated(connection: redis.Redis) -> None:
    try:
        replication.confirm(connection)
    except redis.RedisError as err:
        raise QueueUnavailable(f"queue unavailable ({type(err).__name__}); retry later") from None


def lead_jobs(
    source: Source, items: list[dict], routes: Routes, processing: dict | None
) -> tuple[list[tuple[str, dict]], list[dict]]:
    """Lead Ads changes to (lead key, job argument), each with its route; those no route
    takes (a Page not in the file) are returned apart, with their reason, to be held.

    The route (and the Limited Data Use fields: the dataset's, else the source's) is
    decided when the lead arrives, so a later change of the file never reaches it."""
    jobs, held = [], []
    for item in items:
        route, reason = routes.lead(item.get("page_id"), item.get("form_id"))
        if route is None:
            held.append({**item, "reason": reason})
            continue
        fields = routes.datasets[route["dataset"]].processing or processing
        jobs.append((source.lead_key(item), {**item, "route": route, **({"processing": fields} if fields else {})}))
    return jobs, held


def _verify(
    source: Source,
    body: bytes,
    headers: Mapping[str, str],
    settings: Settings,
    routes: Routes,
    url: str = "",
    peer: str = "",
) -> Client | None:
    """Whose secret signed the delivery: a client (`[clients.NAME.secrets]`), or None for
    the operator's setting (every dataset). Fail closed: a source without a secret
    refuses deliveries, unless the operator allowed unsigned delivery for it
    (LEADRELAY_ALLOW_UNSIGNED: then it is the operator's).

    Raises:
        BadSignature: no one's secret verifies it (the first owner's reason), or none is set.
    """
    owners = routes.owners(source.name, settings.source_secrets.get(source.name, ()))
    if not owners:
        if source.name in settings.allow_unsigned:
            return None
        raise BadSignature(
            f"no secret is configured for {source.name} and unsigned delivery is not allowed", reason="source_disabled"
        )
    first = None
    for owner, secrets in owners:
        try:
            source.verify(body, headers, secrets, url, peer)
            return owner
        except BadSignature as err:
            first = first or err
    raise first


def _form_jobs(
    source: Source,
    items: list[dict],
    configured: dict,
    settings: Settings,
    routes: Routes,
    processing: dict | None,
    owner: Client | None,
) -> tuple[list[tuple[str, dict]], list[dict]]:
    """Form submissions to (lead key, hashed job argument), each with its route; what is
    not sent, with its reason. A client's own secret reaches its own datasets' forms only."""
    jobs, not_sent = [], []
    for item in items:
        route, reason = routes.form(source.name, item["form_id"])
        if route is not None and owner is not None and route["dataset"] not in owner.datasets:
            route, reason = None, "form_out_of_scope"
        if item["test"]:
            reason = "test_delivery"  # never to a production dataset
        elif configured and item["form_id"] not in configured:
            reason = "unknown_form"
        elif route is not None:
            lead_key = source.lead_key(item)
            payload, reason = forms.prepare(
                item,
                configured.get(item["form_id"]),
                settings.default_region,
                lead_key,
                routes.datasets[route["dataset"]].processing or processing,
            )
            if payload:
                jobs.append((lead_key, {**payload, "route": route}))
                continue
        not_sent.append({"reason": reason, "form_id": item["form_id"], "submission_id": item["submission_id"]})
    return jobs, not_sent


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


def record_ignored(
    connection: redis.Redis, source: str, skipped: list[dict], held: list[dict] = (), arrived: list[dict] = ()
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
            accuracymarks.mark(pipe, "webhook", arrived, now)
            pipe.execute()
    except redis.RedisError as err:
        raise QueueUnavailable(f"queue unavailable ({type(err).__name__}); retry later") from None


def held(connection: redis.Redis) -> list[dict]:
    """Lead Ads changes held for want of a route, oldest first."""
    return sorted((json.loads(raw) for raw in connection.hvals(HELD)), key=lambda item: item["held_at"])


def release_held(queue: Queue, source: Source, routes: Routes, processing: dict | None = None) -> dict:
    """Route the held leads again with the current mapping file and enqueue those that now
    have a route (deduped like a webhook); the rest stay held. Counts."""
    waiting = held(queue.connection)
    jobs, still = lead_jobs(source, waiting, routes, processing)
    counts = enqueue_new(
        queue, source, [(key, {k: v for k, v in arg.items() if k not in ("reason", "held_at")}) for key, arg in jobs]
    )
    if jobs:
        queue.connection.hdel(HELD, *(key for key, _ in jobs))
    return {
        "held": len(waiting),
        "released": counts["accepted"],
        "already_known": counts["duplicates"],
        "still_held": len(still),
    }
