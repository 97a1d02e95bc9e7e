"""Stage lag and silent sources: how late each stage source posts, and which one stopped.

Notes: docs/internals/events.md
"""

from __future__ import annotations

import time

from workers.common import counters, times
from workers.common.counters import Family
from workers.common.queues import redis_key
from workers.events import funnel

DAY = 86400
BUCKETS = (3600, 6 * 3600, DAY, 3 * DAY, 6 * DAY, 7 * DAY, float("inf"))
BUCKET_NAMES = ("under 1 h", "1-6 h", "6-24 h", "1-3 days", "3-6 days", "6-7 days", "over 7 days")
EDGE = 6 * DAY  # within a day of Meta's 7-day edge: one more day late and it is lost
LAST = redis_key("stagelag", "last")  # source -> unix time of its last post
LAG = Family(
    "leadrelay_stage_lag_seconds", "Delay between a stage's time and its arrival, by source.", ("source", "le")
)
NEAR_EDGE = Family(
    "leadrelay_stages_near_edge", "Stage changes that arrived within a day of Meta's 7-day edge.", ("source",)
)
TOO_LATE = Family(
    "leadrelay_stages_too_late", "Stage changes that arrived past Meta's 7 days: never sent.", ("source",)
)


def record(pipe, source: str, items: list, results: list[dict], now: float | None = None) -> None:
    """Count one post's stage changes (with their results from stageitems.accept) for
    `source`; `pipe` may be a pipeline."""
    now = time.time() if now is None else now
    posted = False
    for item, result in zip(items, results):
        if not isinstance(item, dict):
            continue
        occurred = times.unix_time(item.get("occurred_at") if item.get("occurred_at") is not None else item.get("time"))
        if occurred is None:
            continue
        posted = True
        if result.get("reason") == "too_old":
            counters.count(pipe, TOO_LATE, source)
        elif result["status"] == "accepted":
            lag = max(0.0, now - occurred)
            counters.observe(pipe, LAG, (source,), lag, BUCKETS)
            if lag >= EDGE:
                counters.count(pipe, NEAR_EDGE, source)
    if posted:
        pipe.hset(LAST, source, now)


def report(connection, values: dict[tuple, float], silent_hours: float, now: float | None = None) -> list[dict]:
    """Per source: its lag in buckets (with the bucket the median falls in), near the edge,
    too late, its last post and whether it is silent. `values` is counters.read()."""
    now = time.time() if now is None else now
    last = {k.decode(): float(v) for k, v in connection.hgetall(LAST).items()}
    last_lead = float(connection.hget(funnel.LAST, "lead") or 0)
    sources = sorted(set(last) | {k[1] for k in values if k[0] in (LAG.name, TOO_LATE.name)})
    out = []
    for source in sources:
        counts = [int(values.get((LAG.name, source, str(b)), 0)) for b in BUCKETS]
        total = sum(counts)
        posted = last.get(source)
        quiet = now - posted if posted else None
        silent = bool(posted and quiet > silent_hours * 3600 and last_lead > posted)
        out.append(
            {
                "source": source,
                "arrived": total,
                "buckets": dict(zip(BUCKET_NAMES, counts)),
                "median": _median_bucket(counts),
                "near_edge": int(values.get((NEAR_EDGE.name, source), 0)),
                "too_late": int(values.get((TOO_LATE.name, source), 0)),
                "last_post": posted,
                "quiet_hours": round(quiet / 3600, 1) if quiet is not None else None,
                "silent": silent,
                "fix": _fix(source) if silent else None,
            }
        )
    return out


def _median_bucket(counts: list[int]) -> str | None:
    total, seen = sum(counts), 0
    for name, n in zip(BUCKET_NAMES, counts):
        seen += n
        if total and seen * 2 >= total:
            return name
    return None


def _fix(source: str) -> str:
    if source.startswith("api"):
        return "the CRM posting to /api/v1/stage-events stopped: check its job or automation, and its token"
    if source == "sheet":
        return "no sheet was imported lately: run `leadrelay import-stages` on today's export"
    return (
        f"{source} stopped posting: check its webhook subscription and its secret in {source}'s settings "
        f"({doc_page(source)}, its set-up steps), then `leadrelay ignored` for refusals"
    )


_PAGES = {"calcom": "calendly"}  # Cal.com shares Calendly's page


def doc_page(source: str) -> str:
    """The page that sets a stage source up (a test checks each exists)."""
    return f"docs/{_PAGES.get(source, source)}.md"
