"""The admin page's blueprint and session.

Notes: docs/internals/webhook_app.md
"""

from __future__ import annotations

from flask import Blueprint, abort, current_app, request, session

from workers.sources.signing import matches_any

from . import guard, tokenauth

bp = Blueprint("admin_page", __name__, url_prefix="/admin", template_folder="templates")


def ext() -> dict:
    return current_app.extensions["leadrelay"]


@bp.before_request
def _enabled():
    if not ext()["settings"].admin_token:
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


def logged_in() -> bool:
    return session.get("admin") is True and guard.session_alive(session.get("sid"))


def check_form() -> None:
    """Only a logged-in session's own forms may change anything."""
    if not logged_in():
        abort(401)
    if not matches_any([session.get("csrf", "")], request.form.get("csrf", "")):
        abort(400, "the form is stale; reload the page")
