"""Worker-side metrics, kept in Redis so that any web process can serve them.

Notes: docs/internals/common.md
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

import redis

from workers.common.queues import redis_key
from workers.identity import matchkeys

HASH = redis_key("metrics")
RECENT = redis_key("recent-events")
RECENT_KEEP = 200  # recent coverage looks at these
LAST_DELIVERED = "last_delivered_at"
GRAPH_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, float("inf"))


@dataclass(frozen=True)
class Family:
    name: str
    doc: str
    labels: tuple[str, ...]


JOBS = Family("leadrelay_jobs", "Job attempts by source and outcome.", ("source", "outcome"))
# `dataset` is a dataset's name from the mapping file (`default` for the environment's):
# as many values as configured datasets, whatever the traffic.
EVENTS = Family(
    "leadrelay_events_sent",
    "Conversions API events by event name, outcome (delivered, dry_run, or the failure class) and dataset.",
    ("event_name", "outcome", "dataset"),
)
MATCH = Family(
    "leadrelay_event_match_keys",
    "Events delivered or dry-run carrying each match key, by dataset.",
    ("event_name", "key", "dataset"),
)
DEAD = Family("leadrelay_dead_letters_recorded", "Dead letters recorded, by reason and dataset.", ("reason", "dataset"))
RETRIES = Family("leadrelay_retries", "Retries scheduled, by source and failure class.", ("source", "reason"))
IGNORED = Family(
    "leadrelay_items_ignored",
    "Items acknowledged but not sent, by source and reason (unknown_page, "
    "unknown_form, no_consent, test_delivery, negative_stage...).",
    ("source", "reason"),
)
# Meta's X-Ad-Api-Version-Warning: a call it auto-upgraded (graphapi/versionsignals.py).
VERSION_WARNINGS = Family(
    "leadrelay_api_version_warnings",
    "Answers from Meta saying the call's API version is ending, by the version Meta served.",
    ("served",),
)
# Chats an ad started, and their stages sent back as business-messaging events (docs/whatsapp.md).
CHATS = Family("leadrelay_chats_started", "Chats started from an ad and kept, by channel.", ("channel",))
CHAT_STAGES = Family(
    "leadrelay_chat_stages",
    "Business-messaging events for chats' stages, by channel, event name and outcome.",
    ("channel", "event_name", "outcome"),
)
# What Google reported of the requests it accepted (googleapi/status.py): records ingested,
# and errors and warnings by Google's processing reason. `destination`: a [google.<name>].
GOOGLE_PROCESSING = Family(
    "leadrelay_google_processed_records",
    "Records Google reported after processing accepted requests, by destination, kind "
    "(ingested, error, warning) and Google's reason.",
    ("destination", "kind", "reason"),
)
COUNTERS = (JOBS, EVENTS, MATCH, DEAD, RETRIES, IGNORED, VERSION_WARNINGS, CHATS, CHAT_STAGES, GOOGLE_PROCESSING)
GRAPH = Family(
    "leadrelay_graph_request_duration_seconds",
    "Graph API call latency by operation and outcome.",
    ("operation", "outcome"),
)


def field(family: Family, *labels: str) -> str:
    """A counter's field in the metrics hash (a script that counts names it so)."""
    return json.dumps([family.name, *labels])


def count(conn: redis.Redis, family: Family, *labels: str, by: int = 1) -> None:
    """Add to a counter; `conn` may be a pipeline, so the count rides with other writes."""
    conn.hincrby(HASH, field(family, *labels), by)


def observe(conn, family: Family, labels: tuple[str, ...], value: float, buckets: tuple[float, ...]) -> None:
    """One observation of a histogram: its bucket (cumulated at scrape) and the sum; the
    bucket is the family's last label."""
    bucket = next(b for b in buckets if value <= b)
    conn.hincrby(HASH, field(family, *labels, str(bucket)), 1)
    conn.hincrbyfloat(HASH, field(family, *labels, "sum"), value)


def cumulative(values: dict[tuple, float], family: Family, labels: tuple[str, ...], buckets: tuple[float, ...]):
    """A histogram's series as Prometheus wants it from what `observe` stored: ([(le,
    cumulative count)], sum). `values` is read()."""
    total, out = 0.0, []
    for bound in buckets:
        total += values.get((family.name, *labels, str(bound)), 0)
        out.append(("+Inf" if bound == float("inf") else str(bound), total))
    return out, values.get((family.name, *labels, "sum"), 0.0)


def observe_graph(connection: redis.Redis, operation: str, outcome: str, seconds: float) -> None:
    """One Graph call's latency."""
    try:
        with connection.pipeline(transaction=False) as pipe:
            observe(pipe, GRAPH, (operation, outcome), seconds, GRAPH_BUCKETS)
            pipe.execute()
    except redis.RedisError:
        pass  # a lost figure must never fail a delivery; Redis trouble shows elsewhere


def record_sent(
    pipe, events: list[dict], outcome: str, dataset: str, now: float | None = None, forgotten: frozenset = frozenset()
) -> None:
    """Count events by name, outcome and dataset; for delivered and dry-run ones also their
    match keys, the time of the last delivery, and a recent-events line (key names, no
    values; none for the event ids in `forgotten`: a person forgotten meanwhile). A batch's
    counts are added up first: one HINCRBY per figure, not per event, and one LPUSH for its lines."""
    now = time.time() if now is None else now
    figures: dict[str, int] = {}
    lines = []
    for event in events:
        name = field(EVENTS, event["event_name"], outcome, dataset)
        figures[name] = figures.get(name, 0) + 1
        if event.get("messaging_channel"):  # a chat's stage: counted per channel too
            name = field(CHAT_STAGES, event["messaging_channel"], event["event_name"], outcome)
            figures[name] = figures.get(name, 0) + 1
        if outcome not in ("delivered", "dry_run"):
            continue
        carried = sorted(k for k in event.get("user_data", {}) if k in matchkeys.ALL)
        for match_key in carried:
            name = field(MATCH, event["event_name"], match_key, dataset)
            figures[name] = figures.get(name, 0) + 1
        if event["event_id"] in forgotten:
            continue
        lines.append(
            json.dumps(
                {
                    "event_id": event["event_id"],
                    "event_name": event["event_name"],
                    "dataset": dataset,
                    "event_time": event.get("event_time"),
                    "sent_at": int(now),
                    "outcome": outcome,
                    "match_keys": carried,
                    "action_source": event.get("action_source"),
                }
            )
        )
    for name, by in figures.items():
        pipe.hincrby(HASH, name, by)
    if lines:
        pipe.lpush(RECENT, *lines)
        pipe.ltrim(RECENT, 0, RECENT_KEEP - 1)
    if outcome == "delivered" and events:
        pipe.hset(HASH, LAST_DELIVERED, now)


def recent(connection: redis.Redis, count_: int = RECENT_KEEP) -> list[dict]:
    """The newest sent events first: ids, names, match key names."""
    return [json.loads(raw) for raw in connection.lrange(RECENT, 0, count_ - 1)]


def coverage(values: dict[tuple, float], dataset: str | None = None) -> dict[str, dict]:
    """Per event name: events sent (delivered or dry-run) since the counters began, and the
    share of them carrying each match key; over every dataset, or one."""
    sent: dict[str, float] = {}
    carried: dict[str, dict[str, float]] = {}
    for labels, value in values.items():
        if dataset is not None and labels[0] in (EVENTS.name, MATCH.name) and labels[3] != dataset:
            continue
        if labels[0] == EVENTS.name and labels[2] in ("delivered", "dry_run"):
            sent[labels[1]] = sent.get(labels[1], 0) + value
        elif labels[0] == MATCH.name:
            row = carried.setdefault(labels[1], {})
            row[labels[2]] = row.get(labels[2], 0) + value
    return {
        name: {"events": int(total), "keys": {k: carried.get(name, {}).get(k, 0) / total for k in matchkeys.ALL}}
        for name, total in sorted(sent.items())
        if total
    }


def recent_coverage(events: list[dict]) -> dict[str, dict]:
    """The same shares over the recent events only, where a form change shows at once."""
    out: dict[str, dict] = {}
    for event in events:
        row = out.setdefault(event["event_name"], {"events": 0, "keys": dict.fromkeys(matchkeys.ALL, 0.0)})
        row["events"] += 1
        for match_key in event.get("match_keys", []):
            if match_key in row["keys"]:
                row["keys"][match_key] += 1
    for row in out.values():
        row["keys"] = {k: v / row["events"] for k, v in row["keys"].items()}
    return dict(sorted(out.items()))


def read(connection: redis.Redis) -> dict[tuple, float]:
    """All stored figures as {(metric name, *labels): value}."""
    out: dict[tuple, float] = {}
    for raw, value in connection.hgetall(HASH).items():
        name = raw.decode()
        key = (name,) if name == LAST_DELIVERED else tuple(json.loads(name))
        if key[0] in _GAINED_DATASET and len(key) == len(_GAINED_DATASET[key[0]].labels):
            key = (*key, "default")  # counted before datasets were labelled: the environment's
        out[key] = out.get(key, 0.0) + float(value)
    return out


_GAINED_DATASET = {family.name: family for family in (EVENTS, MATCH, DEAD)}


def chats(values: dict[tuple, float]) -> list[dict]:
    """Per channel: chats started from an ad, and their stages sent (delivered or kept in dry run)."""
    out: dict[str, dict] = {}
    for labels, value in values.items():
        if labels[0] == CHATS.name:
            out.setdefault(labels[1], {"channel": labels[1], "started": 0, "stages": {}})["started"] += int(value)
        elif labels[0] == CHAT_STAGES.name and labels[3] in ("delivered", "dry_run"):
            row = out.setdefault(labels[1], {"channel": labels[1], "started": 0, "stages": {}})
            row["stages"][labels[2]] = row["stages"].get(labels[2], 0) + int(value)
    return [out[channel] for channel in sorted(out)]
