"""One person's data through the stage API's tokens: export what is held about them, and forget
them.

Notes: docs/internals/webhook_app.md
"""

from __future__ import annotations

from flask import abort, current_app, g, jsonify, request

from workers.common import jsonbody
from workers.common.refusals import MalformedBody
from workers.privacy import forget as privacy
from workers.privacy.forget import SharedIdentifiers
from workers.privacy.person import NoIdentifier

from . import audittrail
from .api import bp


def _given() -> dict:
    body = jsonbody.load(request.get_data(cache=False))
    if not isinstance(body, dict):
        raise MalformedBody("expected a JSON object naming the person", reason="unexpected_shape")
    return body


def _run(action, **extra):
    ext = current_app.extensions["leadrelay"]
    given = _given()
    all_matching = given.pop("all_matching", False) is True
    if all_matching and g.scope.client:
        abort(_refusal(403, "not_allowed", "only LEADRELAY_API_TOKEN may erase or show several people at once"))
    try:
        return action(
            ext["redis"], ext["routes"], given, ext["settings"].default_region, g.scope.datasets,
            all_matching=all_matching, **extra,
        )  # fmt: skip
    except NoIdentifier as err:
        raise MalformedBody(str(err), reason="no_identifier") from None
    except SharedIdentifiers as err:
        abort(_refusal(409, "shared_identifiers", str(err), others=err.others))


def _refusal(status: int, error: str, detail: str, **more):
    answer = jsonify({"error": error, "detail": detail, **more})
    answer.status_code = status
    return answer


@bp.post("/people/export")
def export():
    """What is held about one person, as hashes and ids: {"email"|"phone"|"external_id"|"lead_id"|"person_id": ...}
    (and "all_matching": true, the operator's, when the identifiers reach other people's leads too)."""
    found = _run(privacy.export)
    audittrail.note("export", datasets=found["datasets"], found=found["counts"])
    return jsonify(found), 200


@bp.post("/people/forget")
def forget():
    """Remove every record of one person in the caller's datasets and keep them suppressed."""
    ext = current_app.extensions["leadrelay"]
    where = request.remote_addr or "unknown"
    return jsonify(
        _run(privacy.forget, who=audittrail.actor(), where=where, audit_days=ext["settings"].audit_retention_days)
    ), 200
