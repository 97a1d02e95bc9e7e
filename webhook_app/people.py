"""One person's data through the stage API's tokens: export what is held about them, and forget
them.

Notes: docs/internals/webhook_app.md
"""

from __future__ import annotations

from flask import abort, current_app, g, jsonify, request, url_for

from workers.common import jsonbody
from workers.common.refusals import MalformedBody
from workers.privacy import forget as privacy
from workers.privacy import requests
from workers.privacy.person import NoIdentifier

from . import audittrail
from .api import bp


def _given() -> dict:
    body = jsonbody.load(request.get_data(cache=False))
    if not isinstance(body, dict):
        raise MalformedBody("expected a JSON object naming the person", reason="unexpected_shape")
    return body


def _accepted(action: str):
    """Take a forget or an export (privacy/requests.py): its state and where to read it
    next; the walk is a worker's, never this request's."""
    ext = current_app.extensions["leadrelay"]
    given = _given()
    all_matching = given.pop("all_matching", False) is True
    if all_matching and g.scope.client:
        abort(_refusal(403, "not_allowed", "only LEADRELAY_API_TOKEN may erase or show several people at once"))
    try:
        taken = requests.accept(
            ext["redis"], ext["queue"], ext["routes"], given, ext["settings"].default_region, g.scope.datasets,
            action, audittrail.actor(), request.remote_addr or "unknown", ext["settings"].audit_retention_days,
            all_matching=all_matching,
        )  # fmt: skip
    except NoIdentifier as err:
        raise MalformedBody(str(err), reason="no_identifier") from None
    return {**taken, "status_url": url_for("api.privacy_request", ref=taken["ref"])}


def _answer(taken: dict):
    return jsonify(taken), 202, {"Location": taken["status_url"]}


def _refusal(status: int, error: str, detail: str, **more):
    answer = jsonify({"error": error, "detail": detail, **more})
    answer.status_code = status
    return answer


@bp.post("/people/export")
def export():
    """What is held about one person, as hashes and ids: {"email"|"phone"|"external_id"|"lead_id"|"person_id": ...}
    (and "all_matching": true, the operator's, when the identifiers reach other people's leads too).
    Answered 202: the result is at `status_url` once a worker has read it (kept an hour)."""
    taken = _accepted("export")
    audittrail.note("export", ref=taken["ref"], datasets=g.scope.datasets)
    return _answer(taken)


@bp.post("/people/forget")
def forget():
    """Forget one person in the caller's datasets: suppressed from this request on, every
    record of theirs removed by a worker. Answered 202 with `status_url`."""
    return _answer({**_accepted("forget"), "sent_already": privacy.SENT_ALREADY})


@bp.get("/people/requests/<ref>")
def privacy_request(ref: str):
    """A forget's or an export's state: queued, running, done (what was removed, or the
    export's result) or refused (why); 404 for a reference this token's datasets do not cover."""
    found = requests.status(current_app.extensions["leadrelay"]["redis"], ref, g.scope.datasets)
    if found is None:
        return _refusal(404, "not_found", "no privacy request of yours has this reference (kept 7 days)")
    return jsonify(found), 200
