"""Who did it and from where, for the audit trail (workers/privacy/audit.py).

Notes: docs/internals/webhook_app.md
"""

from __future__ import annotations

from flask import current_app, g, request, session

from workers.common import logs
from workers.privacy import audit

log = logs.get(__name__)


def actor() -> str:
    if getattr(g, "audit_actor", None):  # the stage API's caller, named by _authorise
        return g.audit_actor
    if session.get("sid"):
        return "admin-session:" + audit.fingerprint(session["sid"])
    _, _, token = request.headers.get("Authorization", "").partition(" ")
    return "admin-token:" + audit.fingerprint(token.strip())


def note(action: str, changed: bool = True, **detail) -> None:
    """Append to the audit trail (count it, when it `changed` nothing); a failure to do so
    is logged, never hides the action's answer."""
    ext = current_app.extensions["leadrelay"]
    days = ext["settings"].audit_retention_days
    try:
        if not changed:
            audit.count_unchanged(ext["redis"], actor(), action, days)
            return
        audit.record(ext["redis"], actor(), request.remote_addr or "unknown", action, days, **detail)
    except Exception as err:  # noqa: BLE001 (Redis down after the action itself succeeded)
        log.error("audit_not_recorded", action=action, error=type(err).__name__)
