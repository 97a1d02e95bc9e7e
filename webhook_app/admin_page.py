"""The admin page under /admin: queue status, dead letters grouped by reason with replay,
the match keys of recent events, and the configuration with secrets masked.

Notes: docs/internals/webhook_app.md
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import time
from collections import defaultdict
from datetime import datetime, timedelta, timezone

from flask import Flask, redirect, render_template, request, session, url_for
from markupsafe import Markup, escape
from rq import Worker

from workers.common import counters, logs
from workers.common.policy import ADMIN_SESSION_TTL
from workers.common.queues import queue_status, routine_scheduled
from workers.config.routing import DEFAULT, dataset_of
from workers.events import accuracy, conversions, personindex
from workers.failures import advice, deadletters
from workers.graphapi.pauses import Pauses
from workers.identity import matchkeys
from workers.intake import admission
from workers.intake.unusable import UNUSABLE_REASONS
from workers.privacy import audit
from workers.privacy import requests as privacy_requests
from workers.privacy.records import counted
from workers.reports import readiness, watched
from workers.sources.signing import matches_any

from . import charts, guard
from .adminsession import bp, check_form, ext, logged_in

log = logs.get(__name__)


def init_app(app: Flask, admin_token: str, secure_cookie: bool = True) -> None:
    if admin_token:
        app.secret_key = hmac.new(admin_token.encode(), b"leadrelay admin session", hashlib.sha256).hexdigest()
        app.config.update(
            SESSION_COOKIE_NAME="leadrelay_admin",
            SESSION_COOKIE_PATH="/admin",
            SESSION_COOKIE_SAMESITE="Strict",
            SESSION_COOKIE_HTTPONLY=True,
            SESSION_COOKIE_SECURE=secure_cookie,
            PERMANENT_SESSION_LIFETIME=timedelta(seconds=ADMIN_SESSION_TTL),
        )
    app.jinja_env.filters["ago"] = ago
    app.jinja_env.filters["code"] = code
    app.jinja_env.filters["utc"] = utc
    app.jinja_env.filters["left"] = left
    app.jinja_env.filters["due"] = due
    app.jinja_env.filters["counted"] = counted
    app.register_blueprint(bp)


@bp.get("")
def page():
    if not logged_in():
        return render_template("admin/login.html", error=None)
    return render_template("admin/page.html", csrf=session["csrf"], **overview())


@bp.post("/login")
def login():
    if not matches_any([ext()["settings"].admin_token], request.form.get("token", "")):
        log.warning("admin_login_refused", remote_addr=request.remote_addr)
        try:
            guard.wrong_token("admin_login")
        except guard.Throttled as err:
            return render_template("admin/login.html", error=err.detail), 429
        return render_template("admin/login.html", error="That is not the admin token."), 401
    session.clear()
    session.permanent = True
    session["admin"] = True
    session["sid"] = guard.start_session()
    session["csrf"] = secrets.token_urlsafe(32)
    log.info("admin_login", remote_addr=request.remote_addr)
    return redirect(url_for("admin_page.page"), code=303)


@bp.post("/logout")
def logout():
    check_form()
    guard.end_session(session.get("sid"))  # a saved copy of the cookie stops working too
    session.clear()
    return redirect(url_for("admin_page.page"), code=303)


def overview() -> dict:
    """Everything the page shows; identifiers and key names only, never personal data."""
    found = ext()
    connection, queue, settings, routes = found["redis"], found["queue"], found["settings"], found["routes"]
    chosen = request.args.get("dataset")
    chosen = chosen if chosen in routes.datasets else None
    groups: dict[str, list] = defaultdict(list)
    now = time.time()
    entries = deadletters.select(connection, queue, deadletters.Filter())
    for entry in entries:
        if chosen in (None, dataset_of(entry)):
            groups[entry["reason"]].append(_row(entry, now))
    pauses = Pauses(connection).all()
    last = connection.hget(counters.HASH, counters.LAST_DELIVERED)
    recent = [e for e in counters.recent(connection) if chosen in (None, e.get("dataset", DEFAULT))]
    figures = accuracy.report(connection)
    ready = readiness.report(connection, routes, settings, now)
    watch_problems = watched.problems(watched.read(connection) or {})  # tokens ending or refused, Pages unreachable
    silent, held = accuracy.silent(connection), admission.held(connection)
    unreadable = _unreadable(connection)
    # The gates are the readiness section's; what stops work on its own is listed first.
    quiet = [
        f"Stage source {s['source']} has been silent for {s['quiet_hours']} h while leads keep coming: {s['fix']}"
        for s in ready["sources"]
        if s["silent"]
    ]
    version = [f"Graph API version {ready['api_version']['said']}: set META_API_VERSION to a current version"]
    stops = quiet + (version if ready["api_version"]["warn"] else [])
    counts = counters.read(connection)
    return {
        "readiness": ready,
        "readiness_problems": stops,
        "nothing_needs_you": not (groups or pauses or watch_problems or silent or held or stops or unreadable),
        "unreadable": unreadable,
        "funnel_charts": charts.funnel_charts(ready["datasets"]),
        "accuracy": figures,
        "charts": charts.page_charts(figures),
        "silent": silent,
        "datasets": _datasets(routes, entries, pauses, counts),
        "chosen": chosen,
        "held": held,
        "queue": queue_status(queue),
        "routine": routine_scheduled(queue),
        "sent": sum(v for k, v in counts.items() if k[:3] == (counters.EVENTS.name, "Lead", "delivered")),
        "waiting_on_token": sum(p["waiting"] for p in pauses),
        "workers": Worker.count(connection=connection, queue=queue),
        "pauses": pauses,
        "watched": watch_problems,
        "groups": sorted(groups.items(), key=lambda item: (-len(item[1]), item[0])),
        "reason_help": advice.REASONS,
        "not_replayable": advice.NOT_REPLAYABLE,
        "recent": recent[:25],
        "coverage": counters.recent_coverage(recent),
        "match_keys": matchkeys.ALL,
        "last_delivered": float(last) if last else None,
        "config": settings.masked(),
        "dry_run": all(d.dry_run for d in routes.datasets.values()),
        "test_event_code": bool(settings.test_event_code),
        "sandbox": settings.sandbox,
        "audit": [{**entry, "line": audit.line(entry)} for entry in audit.entries(connection, 50)],
        "privacy_requests": privacy_requests.recent(connection, 10),
        "person_index": personindex.progress(connection),
    }


def _unreadable(connection) -> dict[str, dict]:
    """Per source, the signed deliveries acknowledged but not readable among the last kept
    (`leadrelay ignored`): how many, and the latest one's reason and shape."""
    out: dict[str, dict] = {}
    for raw in connection.lrange(admission.IGNORED, 0, admission.IGNORED_KEEP - 1):
        item = json.loads(raw)
        if item.get("reason") in UNUSABLE_REASONS:
            found = out.setdefault(item.get("source", "?"), {"count": 0, **item})
            found["count"] += 1
    return out


def _datasets(routes, entries: list[dict], pauses: list[dict], figures: dict) -> list[dict]:
    """A row per dataset: where it sends, its token's state, its Pages, what waits and what went."""
    paused = {p["token"] for p in pauses}
    rows = []
    for dataset in routes.datasets.values():
        delivered = sum(
            v
            for k, v in figures.items()
            if k[0] == counters.EVENTS.name and k[2] == "delivered" and k[3] == dataset.name
        )
        rows.append(
            {
                "name": dataset.name,
                "id": dataset.id,
                "dry_run": dataset.dry_run,
                "test_event_code": bool(dataset.test_event_code),
                "paused": dataset.token_env in paused and not dataset.dry_run,
                "pages": sorted(p.id for p in routes.pages.values() if p.dataset == dataset.name),
                "dead": sum(1 for e in entries if dataset_of(e) == dataset.name),
                "delivered": int(delivered),
            }
        )
    return rows


def _row(entry: dict, now: float) -> dict:
    """A dead letter as the page shows it: ids, which call failed, what Meta's code means
    and the fix (advice.py), the time left in Meta's 7-day window; never its payload."""
    row = {
        key: entry.get(key)
        for key in (
            "job_id",
            "source",
            "event_name",
            "event_id",
            "detail",
            "code",
            "subcode",
            "user_title",
            "fbtrace_id",
            "attempts",
            "last_attempt_at",
        )
    }
    row.update(advice.advice(entry))
    row["window_left"] = conversions.deadline(entry["event_time"]) - now if entry.get("event_time") else None
    return row


_BACKTICKED = re.compile(r"`([^`]+)`")


def code(text) -> Markup:
    """Advice written for the terminal, for the page: `leadrelay doctor` as code, the rest escaped."""
    return Markup(_BACKTICKED.sub(lambda m: f"<code>{m.group(1)}</code>", str(escape(text or ""))))


def left(seconds: float | None) -> str:
    """Time left in Meta's 7-day window, as a person reads it."""
    if seconds is None:
        return "unknown"
    if seconds <= 0:
        return "closed"
    days, rest = divmod(int(seconds), 86400)
    return f"{days} d {rest // 3600} h" if days else f"{rest // 3600} h {rest % 3600 // 60} min"


def due(unix: float | None) -> str:
    """When something scheduled happens next, as a person reads it."""
    seconds = (float(unix) - time.time()) if unix else 0
    if seconds <= 1:
        return "now"
    minutes, rest = divmod(int(seconds), 60)
    return f"in {minutes} min {rest} s" if minutes else f"in {rest} s"


def ago(unix: float | None) -> str:
    if not unix:
        return "never"
    seconds = max(time.time() - float(unix), 0)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{int(seconds // size)} {unit} ago"
    return f"{int(seconds)} s ago"


def utc(unix: float | None) -> str:
    if not unix:
        return ""
    return datetime.fromtimestamp(float(unix), timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
