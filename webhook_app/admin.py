"""Admin API: dead letters and replay, behind LEADRELAY_ADMIN_TOKEN (off when unset).

Notes: docs/internals/webhook_app.md
"""

from __future__ import annotations

from collections import Counter

from flask import Blueprint, current_app, jsonify, request

from workers.common.refusals import ReceiverError
from workers.failures import deadletters
from workers.failures.replay import run_replay
from workers.privacy import audit

from . import audittrail, tokenauth

bp = Blueprint("admin", __name__, url_prefix="/admin")


@bp.before_request
def _authorise():
    tokenauth.check(current_app.extensions["leadrelay"]["settings"].admin_token, "LEADRELAY_ADMIN_TOKEN", "admin")


def _filter(values, job_ids=()) -> deadletters.Filter:
    try:
        return deadletters.Filter.from_mapping(values, job_ids)
    except ValueError as err:
        raise ReceiverError(str(err), reason="bad_filter") from None


@bp.get("/dead-letters")
def dead_letters():
    """Dead letters, PII redacted; filters: reason, source, event, since, dataset."""
    ext = current_app.extensions["leadrelay"]
    entries = deadletters.select(ext["redis"], ext["queue"], _filter(request.args))
    return jsonify(
        count=len(entries),
        by_reason=Counter(e["reason"] for e in entries),
        dead_letters=[deadletters.summary(e) for e in entries],
    )


@bp.post("/replay")
def replay():
    """Requeue dead letters: {"job_ids": [...]} or filters, or {"all": true}; "dry_run" to count only."""
    ext = current_app.extensions["leadrelay"]
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        raise ReceiverError("expected a JSON object", reason="malformed_json")
    job_ids = body.get("job_ids") or []
    # A string is a list of its characters to Python: one id sent bare would replay none.
    if not isinstance(job_ids, list) or not all(isinstance(job_id, str) for job_id in job_ids):
        raise ReceiverError("job_ids must be a list of job ids", reason="malformed_job_ids")
    where = _filter(body, job_ids)
    if where.empty and body.get("all") is not True:
        raise ReceiverError(
            "say which: job_ids, reason, source, event_name, since, dataset, or all: true", reason="no_selection"
        )
    result = run_replay(
        ext["redis"], ext["queue"], where, everything=body.get("all") is True, dry_run=bool(body.get("dry_run"))
    )
    if not body.get("dry_run"):
        audittrail.note("replay", **audit.selection(where), **result["counts"])
    return jsonify(result), 200


@bp.get("/audit")
def audit_trail():
    """The audit trail, newest first (?count=, up to 1000)."""
    count = min(max(request.args.get("count", 100, type=int) or 100, 1), 1000)
    return jsonify(entries=audit.entries(current_app.extensions["leadrelay"]["redis"], count)), 200
