"""The Conversions API sender, the ledger of what Meta confirmed, and the dry-run store."""

from __future__ import annotations

import json
import time
from importlib import metadata

import redis

from workers.common import counters, logs
from workers.common.policy import TRANSIENT, JobError
from workers.common.queues import redis_key
from workers.config.routing import Dataset
from workers.config.settings import Settings
from workers.events import funnel, ledger, suppression
from workers.events.conversions import validate
from workers.graphapi.graph import Graph


def _version() -> str:
    try:
        return metadata.version("leadrelay")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "dev"


DRY_RUN_LIST = redis_key("dry-run", "events")
# Integrations name themselves on each Conversions API request (Meta's partner_agent field).
PARTNER_AGENT = f"leadrelay-{_version()}"
log = logs.get(__name__)


def warn_at_start(datasets, process: str) -> None:
    """What every process says at start about where events go, when it is not plainly Meta:
    per dataset (routing.Dataset), the ones kept in dry-run and the ones with a test code."""
    for dataset in datasets:
        if dataset.dry_run and dataset.id:
            log.warning(
                "dry_run",
                process=process,
                dataset=dataset.name,
                detail=f"{dataset.token_env} is not set: events are built and kept, NOT sent to Meta. "
                "See them with `leadrelay dry-run`.",
            )
        if dataset.test_event_code:
            log.warning(
                "test_event_code",
                process=process,
                dataset=dataset.name,
                detail="a test event code is set: events carry it and show in Events Manager's "
                "Test Events panel. Never leave it on in production.",
            )


def deliver(
    graph: Graph,
    connection: redis.Redis,
    settings: Settings,
    events: list[dict],
    dataset: Dataset,
    lead_times: dict | None = None,
) -> dict:
    """Send events to the dataset with its token; in dry-run (a dataset without a CAPI
    token), keep them for inspection instead.

    Delivered means HTTP 200 with `events_received` equal to the events sent; then
    each event_id goes into the confirmed ledger, and the events into the funnel's counts
    (`lead_times`: a stage event's id -> its lead's creation time, funnel.py).

    Raises:
        JobError: an event Meta would refuse (invalid, before any call), a
            classified Graph failure, or a short count (transient).
    """
    try:
        return _deliver(graph, connection, settings, events, dataset, lead_times)
    except JobError as err:
        _count_failed(connection, events, err.reason, dataset.name)
        raise


def _deliver(graph, connection, settings, events: list[dict], dataset: Dataset, lead_times: dict | None) -> dict:
    for event in events:
        validate(event)
    # The last gate: a job queued or replayed before its person was forgotten sends nothing.
    refs = suppression.which(connection, [suppression.fields(dataset.name, e.get("user_data")) for e in events])
    events = [event for event, ref in zip(events, refs) if not ref]
    if not events:
        return {"outcome": "suppressed", "events": 0}
    if dataset.dry_run:
        keep_dry_run(connection, settings, events, dataset, lead_times)
        return {"outcome": "dry_run", "events": len(events)}
    body: dict = {"data": events, "partner_agent": PARTNER_AGENT}
    if dataset.test_event_code:
        body["test_event_code"] = dataset.test_event_code
    answer = graph.call("POST", f"{dataset.id}/events", dataset.token, json=body, operation="events")
    if not isinstance(answer, dict):  # `200 []`: not what Meta documents; nothing says it took them
        raise JobError(TRANSIENT, "Meta's answer is not an object", http_status=200, call="events")
    received = answer.get("events_received")
    if received != len(events):
        raise JobError(
            TRANSIENT, f"Meta received {received} of {len(events)} events", fbtrace_id=answer.get("fbtrace_id")
        )

    # MULTI/EXEC: the ledger and the counts land together or not at all. A worker killed
    # while sending a long pipeline otherwise leaves a prefix of it applied: events in the
    # ledger (so never resent, never counted again) whose delivery was never counted.
    # A person forgotten while the request was on the wire gets no ledger entry (suppression.guarded).
    def record(pipe, refs) -> None:
        for event, ref in zip(events, refs):
            if not ref:
                ledger.confirm(pipe, event["event_id"], answer.get("fbtrace_id"))
        gone = frozenset(event["event_id"] for event, ref in zip(events, refs) if ref)
        counters.record_sent(pipe, events, "delivered", dataset.name, forgotten=gone)
        funnel.record(pipe, events, dataset.name, time.time(), lead_times)

    suppression.guarded(connection, [suppression.fields(dataset.name, e.get("user_data")) for e in events], record)
    return {"outcome": "delivered", "events": len(events), "fbtrace_id": answer.get("fbtrace_id")}


def _count_failed(connection: redis.Redis, events: list[dict], reason: str, dataset: str) -> None:
    try:
        with connection.pipeline(transaction=False) as pipe:
            counters.record_sent(pipe, events, reason, dataset)
            pipe.execute()
    except redis.RedisError:
        pass  # the delivery error is what matters; it is raised either way


def keep_dry_run(connection, settings: Settings, events: list[dict], dataset: Dataset, lead_times=None) -> None:
    """Keep the events instead of sending them. A Lead kept again ahead of a later stage
    (dry run never confirms it) is shown again but counted in the funnel once."""
    kept_at = int(time.time())
    before = ledger.kept_before(connection, [event["event_id"] for event in events])
    new = [event for event, kept in zip(events, before) if not kept]

    def keep(pipe, refs) -> None:
        for event, ref in zip(events, refs):
            if ref:
                continue  # forgotten since the last check: kept nowhere
            entry = {"kept_at": kept_at, "dataset_id": dataset.id, "dataset": dataset.name, "event": event}
            pipe.lpush(DRY_RUN_LIST, json.dumps(entry))
            ledger.keep(pipe, event["event_id"])
        pipe.ltrim(DRY_RUN_LIST, 0, settings.dry_run_keep - 1)
        gone = frozenset(event["event_id"] for event, ref in zip(events, refs) if ref)
        counters.record_sent(pipe, events, "dry_run", dataset.name, forgotten=gone)
        funnel.record(pipe, new, dataset.name, kept_at, lead_times)

    suppression.guarded(connection, [suppression.fields(dataset.name, e.get("user_data")) for e in events], keep)


def last_dry_run(connection: redis.Redis, count: int, dataset: str | None = None) -> list[dict]:
    """The newest dry-run events first; with a dataset name, only that dataset's."""
    kept = (json.loads(raw) for raw in connection.lrange(DRY_RUN_LIST, 0, -1 if dataset else count - 1))
    return [item for item in kept if dataset in (None, item.get("dataset", "default"))][:count]
