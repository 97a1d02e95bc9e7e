"""Accuracy: of the Lead Ads leads that exist, how many reached Meta, per Page and form.

Each lead leaves its id in a few sets, one per (day it was created, Page, form, kind):

    meta        listed by Meta (the sweep reads every form's lead list)
    webhook     brought by a webhook
    recovered   enqueued by the sweep: no webhook had brought it
    confirmed   its Lead event confirmed by Meta (or kept, in dry run)
    dead        dead-lettered
    too_old     listed by Meta but past what can still be sent: counted, never sent

Sets, not counters: a lead marked twice (a redelivered webhook, a replayed job) counts
once, and the report can tell "recovered and then confirmed" from "still waiting". Ids
only; the sets expire a day after the report's window.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone

import redis

from .queues import redis_key

KINDS = ("meta", "webhook", "recovered", "confirmed", "dead", "too_old")
WINDOW_DAYS = 7  # what can still be sent, and what the report looks back over
FORMS = redis_key("accuracy", "forms")  # "page form" pairs ever marked
SILENT = redis_key("accuracy", "silent")  # page id -> why it is flagged webhook_silent
NONE = "-"  # a Page or form the lead did not name


def day(unix: float) -> str:
    return datetime.fromtimestamp(unix, timezone.utc).strftime("%Y-%m-%d")


def _key(kind: str, page: str, form: str, on: str) -> str:
    return redis_key("accuracy", on, page, form, kind)


def mark(pipe, kind: str, leads: list[dict], now: float | None = None) -> None:
    """Mark Lead Ads leads (dicts with leadgen_id or id, page_id, form_id, created_time) as
    `kind`; `pipe` may be a pipeline, so the marks ride with the work's own writes."""
    now = time.time() if now is None else now
    for lead in leads:
        page, form = str(lead.get("page_id") or NONE), str(lead.get("form_id") or NONE)
        created = lead.get("created_time")
        key = _key(kind, page, form, day(created if isinstance(created, (int, float)) else now))
        pipe.sadd(key, str(lead.get("leadgen_id") or lead.get("id")))
        pipe.expire(key, (WINDOW_DAYS + 2) * 86400)
        pipe.sadd(FORMS, f"{page} {form}")


def mark_now(connection: redis.Redis, kind: str, leads: list[dict]) -> None:
    """`mark` in a pipeline of its own; a lost mark never fails the work it describes."""
    try:
        with connection.pipeline(transaction=False) as pipe:
            mark(pipe, kind, leads)
            pipe.execute()
    except redis.RedisError:
        pass


def report(connection: redis.Redis, days: int = WINDOW_DAYS, now: float | None = None) -> list[dict]:
    """Per Page and form (and per day, for the chart): how many leads Meta holds, came by
    webhook, were recovered, confirmed, dead-lettered, are still waiting, or were too old."""
    now = time.time() if now is None else now
    # The days a rolling window of `days` × 24 hours touches: one more than `days`.
    dates = [day(now - n * 86400) for n in range(days, -1, -1)]
    pairs = sorted(p.decode().split(" ") for p in connection.smembers(FORMS))
    with connection.pipeline(transaction=False) as pipe:
        for page, form in pairs:
            for on in dates:
                for kind in KINDS:
                    pipe.smembers(_key(kind, page, form, on))
        members = iter(pipe.execute()) if pairs else iter(())
    rows = []
    for page, form in pairs:
        by_day = [_figures({kind: next(members) for kind in KINDS}) | {"day": on} for on in dates]
        total = {k: sum(d[k] for d in by_day) for k in by_day[0] if k != "day"}
        if total["known"]:
            rows.append({"page_id": page, "form_id": form, **total, "accuracy": _share(total), "days": by_day})
    return rows


def _figures(sets: dict[str, set]) -> dict:
    known = sets["meta"] | sets["webhook"] | sets["recovered"]
    sent = sets["confirmed"] & known
    dead = (sets["dead"] & known) - sent
    return {"known": len(known), "meta": len(sets["meta"]), "webhook": len(sets["webhook"]),
            "recovered": len(sets["recovered"] - sets["webhook"]), "confirmed": len(sent), "dead": len(dead),
            "too_old": len(sets["too_old"] - sent),
            "waiting": len((sets["webhook"] | sets["recovered"]) - sent - dead),
            "missing": len(sets["meta"] - sets["webhook"] - sets["recovered"] - sets["too_old"])}


def _share(figures: dict) -> float | None:
    """Confirmed over every lead known to exist (Meta's list, webhooks, recoveries)."""
    return round(figures["confirmed"] / figures["known"], 4) if figures["known"] else None


def by_page(rows: list[dict]) -> dict[str, dict]:
    """The report's rows added up per Page, with their accuracy."""
    out: dict[str, dict] = {}
    for row in rows:
        page = out.setdefault(row["page_id"], {})
        for name, value in row.items():
            if isinstance(value, int) and not isinstance(value, bool):
                page[name] = page.get(name, 0) + value
    return {page: {**figures, "accuracy": _share(figures)} for page, figures in out.items()}


def flag_silent(connection: redis.Redis, page_id: str, recovered: int, now: float | None = None) -> bool:
    """Flag a Page whose leads came only through the sweep; True when newly flagged (the
    caller logs it once, loudly)."""
    record = {"page_id": page_id, "since": int(time.time() if now is None else now), "recovered": recovered}
    return bool(connection.hsetnx(SILENT, page_id, json.dumps(record)))


def clear_silent(connection: redis.Redis, page_id: str) -> None:
    connection.hdel(SILENT, page_id)


def silent(connection: redis.Redis) -> dict[str, dict]:
    """Pages flagged webhook_silent, with when and how many leads the sweep recovered."""
    return {k.decode(): json.loads(v) for k, v in connection.hgetall(SILENT).items()}
