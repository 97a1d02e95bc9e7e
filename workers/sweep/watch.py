"""Tokens and Page subscriptions watched on a schedule: Meta warns no one when a token is about
to expire or a Page stops sending `leadgen` (a permission reset unsubscribes the app without
a word), and leads then stop at once.

Notes: docs/internals/sweep.md
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone

from rq import Queue

from workers import jobnames
from workers.common import clock, logs
from workers.common.policy import AUTH, JobError
from workers.common.queues import job_id, redis_key
from workers.engine.context import Context
from workers.reports.watched import CHANGE_SHOWN_DAYS, READS, STATE, problems
from workers.sweep import sweeper

SAID = redis_key("watch", "said")  # problems already logged today
log = logs.get(__name__)


def schedule(queue: Queue, interval: int, now: float | None = None) -> str | None:
    """The next check, one job per time slot whoever schedules it; None when off."""
    if interval <= 0:
        return None
    slot = int(((clock.now() if now is None else now) + interval) // interval)  # Redis's time on a skewed host
    queue.enqueue_at(
        datetime.fromtimestamp(slot * interval, timezone.utc),
        jobnames.WATCH,
        {},
        job_id=job_id("watch", str(slot)),
        result_ttl=interval * 2,
        failure_ttl=86400,
        description="check tokens and Page subscriptions",
    )
    return job_id("watch", str(slot))


def check(ctx: Context, now: float | None = None) -> dict:
    """Each token's days left, validity and reach, and each Page's subscription, as Meta
    answers now."""
    now = time.time() if now is None else now
    tokens = {p.token: p.token_env for p in ctx.routes.pages.values() if p.token}
    tokens.update({d.token: d.token_env for d in ctx.routes.datasets.values() if d.token and not d.dry_run})
    found = {"checked_at": int(now), "tokens": [], "pages": []}
    inspected = {}
    for token, setting in sorted(tokens.items(), key=lambda pair: pair[1]):
        inspected[token] = _inspect(ctx, token, now)
        found["tokens"].append({"token": setting, **{k: v for k, v in inspected[token].items() if k != "reaches"}})
    for page_id, token in sweeper.pages(ctx):
        reaches = (inspected.get(token) or {}).get("reaches")
        reached = {} if reaches is None else {"reached": page_id in reaches, "token": tokens.get(token)}
        found["pages"].append({"page": page_id, **_subscription(ctx, page_id, token), **reached})
    found["dataset_changes"] = _dataset_changes(ctx, now)
    found["dataset_quality"] = {
        name: _dataset_quality(ctx, dataset)
        for name, dataset in sorted(ctx.routes.datasets.items())
        if dataset.id and dataset.token and not dataset.dry_run
    }
    return found


# What the Dataset Quality API is asked: its web events' match quality and coverage, for our
# events only (`agent_name`: our partner_agent's first segment, lowercased, as Meta normalises it).
QUALITY_FIELDS = "web{event_name,event_match_quality{composite_score},event_coverage{percentage}}"
AGENT_NAME = "leadrelay"


def _dataset_quality(ctx: Context, dataset) -> dict:
    """Meta's figures for the dataset's web events (form tools' website leads), or why there
    are none: Meta documents them for web events only, and tells Conversion Leads users to
    ask their Meta representative for CRM events. Never a zero standing in for "none"."""
    params = {"dataset_id": dataset.id, "agent_name": AGENT_NAME, "fields": QUALITY_FIELDS}
    try:
        answer = ctx.graph.call("GET", "dataset_quality", dataset.token, params=params, probe=True)
    except JobError as err:
        return {"available": False, "reason": f"Meta refused the call ({err.reason}): {err.detail}"[:300]}
    web = [
        {
            "event_name": row.get("event_name"),
            "composite_score": (row.get("event_match_quality") or {}).get("composite_score"),
            "coverage": (row.get("event_coverage") or {}).get("percentage"),
        }
        for row in answer.get("web") or []
        if isinstance(row, dict) and row.get("event_name")
    ]
    if not web:
        return {"available": False, "reason": "Meta gives no figures for this dataset's events (none are web events)"}
    return {"available": True, "web": web}


FIRST_DATASET = redis_key("page-dataset")  # Page -> "dataset id|since": where its leads went at setup


def _dataset_changes(ctx: Context, now: float) -> list[dict]:
    """Pages whose leads now go to another dataset than at setup. Meta's Conversion Leads
    guide: changing the pixel after setup restarts the model's training. Each Page's setup
    is kept (one small hash, no TTL: it is what this check compares with); a change is
    shown for CHANGE_SHOWN_DAYS from when the watch first saw it, then becomes the setup."""
    current = {p.id: ctx.routes.datasets[p.dataset].id for p in ctx.routes.pages.values() if p.dataset}
    current = {page: dataset for page, dataset in current.items() if dataset}
    if not current:
        return []
    with ctx.connection.pipeline(transaction=False) as pipe:
        for page, dataset in current.items():
            pipe.hsetnx(FIRST_DATASET, page, f"{dataset}|0")
        pipe.hmget(FIRST_DATASET, list(current))
        kept = pipe.execute()[-1]
    changes = []
    for (page, dataset), raw in zip(current.items(), kept):
        first, _, since = raw.decode().partition("|")
        if first == dataset:
            continue
        seen = int(since or 0) or int(now)
        if now - seen > CHANGE_SHOWN_DAYS * 86400:
            ctx.connection.hset(FIRST_DATASET, page, f"{dataset}|0")  # long ago: the new setup
            continue
        if not int(since or 0):
            ctx.connection.hset(FIRST_DATASET, page, f"{first}|{seen}")  # when the change was first seen
        changes.append({"page": page, "first": first, "now": dataset, "seen_at": seen})
    return changes


def _inspect(ctx: Context, token: str, now: float) -> dict:
    """When a token (or its data access) ends, whether Meta still takes it, and the Pages
    its `leads_retrieval` grant names (None: Meta did not list them)."""
    try:
        data = ctx.graph.call("GET", "debug_token", token, params={"input_token": token}, probe=True).get("data") or {}
    except JobError as err:  # refused outright (190): Meta no longer takes it
        return {"error": err.reason, **({"valid": False, "warn": True} if err.reason == AUTH else {})}
    grants = [g for g in data.get("granular_scopes") or [] if isinstance(g, dict) and g.get("scope") == READS]
    reaches = sorted({str(t) for g in grants for t in g.get("target_ids") or []}) if grants else None
    found = {"valid": data.get("is_valid") is not False, "reaches": reaches}
    ends = [t for t in (data.get("expires_at"), data.get("data_access_expires_at")) if isinstance(t, int) and t > 0]
    if not ends:
        return {**found, "days_left": None, "warn": not found["valid"]}
    days = round((min(ends) - now) / 86400, 1)
    return {**found, "days_left": days, "warn": days <= ctx.settings.token_warn_days or not found["valid"]}


def _subscription(ctx: Context, page_id: str, token: str) -> dict:
    try:
        apps = ctx.graph.call("GET", f"{page_id}/subscribed_apps", token, probe=True).get("data") or []
    except JobError as err:
        return {"error": err.reason, "fix": "check the Page token: `leadrelay doctor`"}
    fields = {f for app in apps if isinstance(app, dict) for f in app.get("subscribed_fields") or []}
    return {"subscribed": "leadgen" in fields, "fix": f"leadrelay subscribe --page-id {page_id}"}


def run(ctx: Context, now: float | None = None) -> dict:
    """Check, keep what was found, and log each problem once a day."""
    found = check(ctx, now)
    ctx.connection.set(STATE, json.dumps(found))
    for problem in problems(found):
        if ctx.connection.set(redis_key("watch", "said", problem["what"]), 1, nx=True, ex=86400):
            log.error(problem["event"], **{k: v for k, v in problem.items() if k not in ("event", "what")})
    return {"outcome": "watched", "tokens": len(found["tokens"]), "pages": len(found["pages"])}
