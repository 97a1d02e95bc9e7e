"""The funnel Meta's Conversion Leads sees, counted per dataset as events go out, and the
gates Events Manager checks before it optimises for a stage.

Notes: docs/internals/events.md
"""

from __future__ import annotations

from dataclasses import dataclass

from workers.common.queues import redis_key
from workers.events import accuracy, conversions

LEAD_DAYS = 30  # Meta's "about 200 leads a month"
REACH_DAYS = 28  # a stage counts when reached within 28 days of the lead
KEEP_DAYS = LEAD_DAYS + REACH_DAYS + 7  # a lead's day is read for 30 days; its stages come up to 28 later
LAST = redis_key("funnel", "last")  # "upload <dataset>" and "lead" -> unix time
LATER = REACH_DAYS + 1

MIN_LEADS = 200
MIN_COVERAGE = 0.6
SHARE_RANGE = (0.01, 0.40)
UPLOAD_HOURS = 24


def _key(dataset: str, on: str) -> str:
    return redis_key("funnel", dataset, on)


def record(pipe, events: list[dict], dataset: str, now: float, lead_times: dict | None = None) -> None:
    """Count events that went out (delivered or kept in dry run) for `dataset`; `lead_times`
    maps a stage event's id to its lead's creation time. `pipe` is the sender's pipeline;
    a batch's counts are added up first (one HINCRBY per field and day)."""
    figures: dict[tuple[str, str], int] = {}

    def add(on: str, field: str) -> None:
        figures[(on, field)] = figures.get((on, field), 0) + 1

    leads = False
    stages_of: dict[str, set[str]] = {}  # lead_id -> the stages this upload sends for it
    for event in events:
        if not (event.get("user_data") or {}).get("lead_id"):
            continue
        name = event["event_name"]
        add(accuracy.day(now), f"sent {name}")
        if name == conversions.LEAD:
            add(accuracy.day(event["event_time"]), "leads")
            leads = True
            continue
        stages_of.setdefault(str(event["user_data"]["lead_id"]), set()).add(name)
        lead_time = (lead_times or {}).get(event["event_id"])
        if lead_time:
            after = min(LATER, max(0, int((event["event_time"] - lead_time) // 86400)))
            add(accuracy.day(lead_time), f"reach {name} {after}")
    for stages in stages_of.values():
        if len(stages) > 1:
            add(accuracy.day(now), "histories")
            for _ in stages:
                add(accuracy.day(now), "history events")
    for (on, field), by in figures.items():
        pipe.hincrby(_key(dataset, on), field, by)
    for on in {on for on, _ in figures}:
        pipe.expire(_key(dataset, on), KEEP_DAYS * 86400)
    if leads:
        pipe.hset(LAST, "lead", now)
    if events:
        pipe.hset(LAST, f"upload {dataset}", now)


@dataclass(frozen=True)
class Stage:
    event_name: str
    reached: int  # leads of the last 30 days that reached it within 28 days
    share: float | None
    median_days: float | None
    later: int  # reached it, but more than 28 days after the lead

    @property
    def in_range(self) -> bool:
        return self.share is not None and SHARE_RANGE[0] <= self.share <= SHARE_RANGE[1]


@dataclass(frozen=True)
class Figures:
    dataset: str
    leads: int  # Lead events with lead_id for leads created in the last 30 days
    by_day: list[tuple[str, int, int]]  # (day, leads, stage events sent), oldest first
    stages_seen: list[str]  # event names sent in the last 28 days, Lead first
    stages: list[Stage]
    last_upload: float | None
    histories: int = 0  # leads that moved through more than one stage between two uploads
    history_events: int = 0  # their events


def read(connection, datasets: list[str], now: float) -> dict[str, Figures]:
    """Each dataset's figures over the last 30 days: one pipelined read of 30 hashes each."""
    days = [accuracy.day(now - n * 86400) for n in range(LEAD_DAYS - 1, -1, -1)]
    with connection.pipeline(transaction=False) as pipe:
        for dataset in datasets:
            for on in days:
                pipe.hgetall(_key(dataset, on))
        pipe.hgetall(LAST)
        answers = pipe.execute()
    last = {k.decode(): float(v) for k, v in answers.pop().items()}
    out = {}
    for index, dataset in enumerate(datasets):
        hashes = answers[index * len(days) : (index + 1) * len(days)]
        counts = [{k.decode(): int(v) for k, v in found.items()} for found in hashes]
        out[dataset] = _figures(dataset, days, counts, last.get(f"upload {dataset}"))
    return out


def _figures(dataset: str, days: list[str], counts: list[dict], last_upload: float | None) -> Figures:
    leads = sum(c.get("leads", 0) for c in counts)
    seen: set[str] = set()
    reach: dict[str, dict[int, int]] = {}
    by_day = []
    for on, fields in zip(days, counts):
        stage_events = 0
        for field, n in fields.items():
            kind, _, rest = field.partition(" ")
            if kind == "sent":
                stage_events += n if rest != conversions.LEAD else 0
                if on >= days[LEAD_DAYS - REACH_DAYS] and n > 0:
                    seen.add(rest)
            elif kind == "reach":
                name, _, after = rest.rpartition(" ")
                row = reach.setdefault(name, {})
                row[int(after)] = row.get(int(after), 0) + n
        by_day.append((on, fields.get("leads", 0), stage_events))
    stages = [_stage(name, row, leads) for name, row in sorted(reach.items())]
    order = sorted(seen, key=lambda n: (n != conversions.LEAD, n))
    histories = sum(c.get("histories", 0) for c in counts)
    history_events = sum(c.get("history events", 0) for c in counts)
    return Figures(dataset, leads, by_day, order, stages, last_upload, histories, history_events)


def _stage(name: str, after: dict[int, int], leads: int) -> Stage:
    within = {d: n for d, n in after.items() if d < LATER and n > 0}
    reached = sum(within.values())
    return Stage(
        event_name=name,
        reached=reached,
        share=round(reached / leads, 4) if leads else None,
        median_days=_median(within),
        later=after.get(LATER, 0),
    )


def _median(counts: dict[int, int]) -> float | None:
    """The median of values given as {value: how many}, without expanding them."""
    total = sum(counts.values())
    if not total:
        return None

    def at(index: int) -> int:
        seen = 0
        for value, n in sorted(counts.items()):
            seen += n
            if index < seen:
                return value
        raise IndexError(index)

    return (at((total - 1) // 2) + at(total // 2)) / 2
