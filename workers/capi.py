"""The Conversions API sender, the ledger of what Meta confirmed, and the dry-run store."""

from __future__ import annotations

import json
import time

import redis

from . import counters, logs, policy
from .events import validate
from .graph import Graph
from .policy import TRANSIENT, DeliveryError
from .queues import redis_key
from .settings import Settings

DRY_RUN_LIST = redis_key("dry-run", "events")
log = logs.get(__name__)


def warn_at_start(settings: Settings, process: str) -> None:
    """What every process says at start about where events go, when it is not plainly Meta."""
    if settings.dry_run:
        log.warning("dry_run", process=process,
                    detail="META_CAPI_ACCESS_TOKEN is not set: events are built and kept, NOT sent to Meta. "
                           "See them with `leadrelay dry-run`.")
    if settings.test_event_code:
        log.warning("test_event_code", process=process,
                    detail="META_TEST_EVENT_CODE is set: events carry a test code and show in Events Manager's "
                           "Test Events panel. Never leave it on in production.")


def confirmed(connection: redis.Redis, event_id: str) -> bool:
    """Meta already counted this event: never send it again."""
    return bool(connection.exists(redis_key("confirmed", event_id)))


def deliver(graph: Graph, connection: redis.Redis, settings: Settings, events: list[dict]) -> dict:
    """Send events to the dataset; in dry-run, keep them for inspection instead.

    Delivered means HTTP 200 with `events_received` equal to the events sent; then
    each event_id goes into the confirmed ledger.

    Raises:
        DeliveryError: an event Meta would refuse (invalid, before any call), a
            classified Graph failure, or a short count (transient).
    """
    try:
        return _deliver(graph, connection, settings, events)
    except DeliveryError as err:
        _count_failed(connection, events, err.reason)
        raise


def _deliver(graph: Graph, connection: redis.Redis, settings: Settings, events: list[dict]) -> dict:
    for event in events:
        validate(event)
    if settings.dry_run:
        keep_dry_run(connection, settings, events)
        return {"outcome": "dry_run", "events": len(events)}
    body: dict = {"data": events}
    if settings.test_event_code:
        body["test_event_code"] = settings.test_event_code
    answer = graph.call("POST", f"{settings.dataset_id}/events", settings.capi_access_token, json=body,
                        operation="events")
    received = answer.get("events_received")
    if received != len(events):
        raise DeliveryError(TRANSIENT, f"Meta received {received} of {len(events)} events",
                            fbtrace_id=answer.get("fbtrace_id"))
    with connection.pipeline(transaction=False) as pipe:
        for event in events:
            pipe.set(redis_key("confirmed", event["event_id"]), answer.get("fbtrace_id") or "1", ex=policy.CONFIRMED_TTL)
        counters.record_sent(pipe, events, "delivered")
        pipe.execute()
    return {"outcome": "delivered", "events": len(events), "fbtrace_id": answer.get("fbtrace_id")}


def _count_failed(connection: redis.Redis, events: list[dict], reason: str) -> None:
    try:
        with connection.pipeline(transaction=False) as pipe:
            counters.record_sent(pipe, events, reason)
            pipe.execute()
    except redis.RedisError:
        pass  # the delivery error is what matters; it is raised either way


def keep_dry_run(connection: redis.Redis, settings: Settings, events: list[dict]) -> None:
    kept_at = int(time.time())
    with connection.pipeline() as pipe:
        for event in events:
            pipe.lpush(DRY_RUN_LIST, json.dumps({"kept_at": kept_at, "dataset_id": settings.dataset_id,
                                                 "event": event}))
        pipe.ltrim(DRY_RUN_LIST, 0, settings.dry_run_keep - 1)
        counters.record_sent(pipe, events, "dry_run")
        pipe.execute()


def last_dry_run(connection: redis.Redis, count: int) -> list[dict]:
    """The newest dry-run events first."""
    return [json.loads(raw) for raw in connection.lrange(DRY_RUN_LIST, 0, count - 1)]
