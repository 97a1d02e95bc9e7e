"""The admin page under /admin: queue status, dead letters grouped by reason with replay,
the match keys of recent events, and the configuration with secrets masked.

Server-rendered, no scripts. Logging in with LEADRELAY_ADMIN_TOKEN sets a session
cookie signed with a key derived from that token, so changing the token logs everyone
out. Forms carry a per-session CSRF token and the cookie is SameSite=Strict. The page
is off (404) while the token is unset, like the admin API.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections import defaultdict
from datetime import datetime, timedelta, timezone

from flask import Blueprint, Flask, abort, current_app, flash, redirect, render_template, request, session, url_for
from rq import Worker

from workers.common import counters, logs
from workers.common.policy import ADMIN_SESSION_TTL
from workers.common.queues import queue_status
from workers.config.routing import DEFAULT, dataset_of
from workers.events import accuracy, conversions
from workers.failures import advice, deadletters
from workers.failures.replay import run_replay
from workers.graphapi.pauses import Pauses
from workers.identity import matchkeys
from workers.intake import receiver
from workers.sources.signing import matches_any
from workers.sweep import readiness, watch

from . import charts, guard, tokenauth

bp = Blueprint("admin_page", __name__, url_prefix="/admin", template_folder="templates")
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
    app.jinja_env.filters["utc"] = utc
    app.jinja_env.filters["left"] = left
    app.register_blueprint(bp)


def _ext() -> dict:
    return current_app.extensions["leadrelay"]


@bp.before_request
def _enabled():
    if not _ext()["settings"].admin_token:
        raise tokenauth.Disabled("set LEADRELAY_ADMIN_TOKEN to enable the admin page", reason="admin_disabled")


@bp.after_request
def _headers(response):
    # Nothing here is for other sites: no framing, no caching, no outside resources.
    response.headers["Content-Security-Policy"] = (
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'"
    )
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Cache-Control"] = "no-store"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


def _logged_in() -> bool:
    return session.get("admin") is True and guard.session_alive(session.get("sid"))


@bp.get("")
def page():
    if not _logged_in():
        return render_template("admin/login.html", error=None)
    return render_template("admin/page.html", csrf=session["csrf"], **overview())


@bp.post("/login")
def login():
    if not matches_any([_ext()["settings"].admin_token], request.form.get("token", "")):
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
    _check_form()
    guard.end_session(session.get("sid"))  # a saved copy of the cookie stops working too
    session.clear()
    return redirect(url_for("admin_page.page"), code=303)


@bp.post("/dead-letters/replay")
def replay():
    """Replay one dead letter (job_id) or a reason group (reason), then back to the page."""
    _check_form()
    job_id, reason = request.form.get("job_id"), request.form.get("reason")
    dataset = request.form.get("dataset") or None  # the page's dataset filter: its group only
    if bool(job_id) == bool(reason):
        abort(400, "give a job_id or a reason")
    where = deadletters.Filter(job_ids=(job_id,)) if job_id else deadletters.Filter(reason=reason, dataset=dataset)
    result = run_replay(_ext()["redis"], _ext()["queue"], where)
    log.info("admin_replay", job_id=job_id, reason=reason, dataset=dataset, **result["counts"], woken=result["woken"])
    flash(_replay_message(result), "error" if result["counts"]["failed"] else "ok")
    return redirect(url_for("admin_page.page", **({"dataset": dataset} if dataset else {})) + "#dead-letters", code=303)


def _check_form() -> None:
    """Only a logged-in session's own forms may change anything."""
    if not _logged_in():
        abort(401)
    if not matches_any([session.get("csrf", "")], request.form.get("csrf", "")):
        abort(400, "the form is stale; reload the page")


def _replay_message(result: dict) -> str:
    counts = result["counts"]
    parts = [f"{counts['requeued']} requeued"]
    for outcome, text in (
        ("already_delivered", "already delivered (dropped)"),
        ("expired", "past the 7-day window (kept as expired)"),
        ("failed", "failed"),
    ):
        if counts[outcome]:
            parts.append(f"{counts[outcome]} {text}")
    if result.get("woken"):
        parts.append(f"{result['woken']} waiting on the token woken")
    return "Replay: " + ", ".join(parts) + "."


def overview() -> dict:
    """Everything the page shows; identifiers and key names only, never personal data."""
    ext = _ext()
    connection, queue, settings, routes = ext["redis"], ext["queue"], ext["settings"], ext["routes"]
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
    return {
        "readiness": ready,
        "funnel_charts": charts.funnel_charts(ready["datasets"]),
        "accuracy": figures,
        "charts": charts.page_charts(figures),
        "silent": accuracy.silent(connection),
        "datasets": _datasets(routes, entries, pauses, counters.read(connection)),
        "chosen": chosen,
        "held": receiver.held(connection),
        "queue": queue_status(queue),
        "waiting_on_token": sum(p["waiting"] for p in pauses),
        "workers": Worker.count(connection=connection, queue=queue),
        "pauses": pauses,
        "watched": watch.problems(watch.read(connection) or {}),  # tokens ending, Pages unsubscribed
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
    }


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


def left(seconds: float | None) -> str:
    """Time left in Meta's 7-day window, as a person reads it."""
    if seconds is None:
        return "unknown"
    if seconds <= 0:
        return "closed"
    days, rest = divmod(int(seconds), 86400)
    return f"{days} d {rest // 3600} h" if days else f"{rest // 3600} h {rest % 3600 // 60} min"


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
