"""The stage-events API for CRMs and sheets, behind LEADRELAY_API_TOKEN (the operator's:
every dataset) or an API client's token from the mapping file (its datasets only); off
when no token is set."""

from __future__ import annotations

from pathlib import Path

import redis
from flask import Blueprint, current_app, g, jsonify, request

from workers.common import jsonbody, logs
from workers.common.refusals import BodyTooLarge, MalformedBody, QueueUnavailable
from workers.intake import stageitems
from workers.privacy import audit

from . import audittrail, prometheus, tokenauth

bp = Blueprint("api", __name__, url_prefix="/api/v1")
log = logs.get(__name__)


OPERATOR = ""  # LEADRELAY_API_TOKEN's holder; client names are never empty
_OPENAPI = (Path(__file__).parent / "openapi.json").read_bytes()  # read once: every process serves the same


@bp.get("/openapi.json")
def openapi():
    """The OpenAPI 3.1 description of this API (no token needed: it holds no data)."""
    return current_app.response_class(_OPENAPI, mimetype="application/json")


@bp.before_request
def _authorise():
    if request.endpoint == "api.openapi":
        return
    ext = current_app.extensions["leadrelay"]
    routes = ext["routes"]
    tokens = {OPERATOR: ext["settings"].api_token} | {name: c.token for name, c in routes.clients.items()}
    who = tokenauth.identify(tokens, "LEADRELAY_API_TOKEN or a client's token_env", "api")
    g.scope = stageitems.Scope(routes, routes.clients.get(who))
    g.audit_actor = f"api:{who or 'operator'}:{audit.fingerprint(tokens[who])}"


@bp.post("/stage-events")
def stage_events():
    """One stage change or a list (up to 1000); 202 with a result per item.

    Identifiers (email, phone, external_id) are hashed before anything is stored or logged.
    """
    ext = current_app.extensions["leadrelay"]
    body = jsonbody.load(request.get_data(cache=False))
    if not isinstance(body, (dict, list)):
        raise MalformedBody("expected a JSON object or list", reason="unexpected_shape")
    items = body if isinstance(body, list) else [body]
    if len(items) > stageitems.MAX_ITEMS:
        raise BodyTooLarge(f"at most {stageitems.MAX_ITEMS} stage changes per request", reason="too_many_items")
    try:
        results = stageitems.accept(
            ext["redis"],
            ext["queue"],
            items,
            ext["stages"],
            ext["settings"].default_region,
            g.scope,
            f"api:{g.scope.client.name}" if g.scope.client else "api",
        )
    except redis.RedisError:
        raise QueueUnavailable("queue unavailable; retry later") from None
    every = [*results, *(also for r in results for also in r.get("also", ()))]  # a chat's event beside its lead's
    counts = {s: sum(1 for r in every if r["status"] == s) for s in ("accepted", "duplicate", "recorded", "rejected")}
    for outcome, number in counts.items():
        if number:
            prometheus.STAGE_EVENTS.labels(outcome).inc(number)
    changed = bool(counts["accepted"] or counts["recorded"])  # duplicates and refusals change nothing
    audittrail.note("stage_events", changed, **{k: v for k, v in counts.items() if v})
    log.info(
        "stage_events",
        outcome="accepted",
        client=g.scope.client.name if g.scope.client else None,
        **counts,
        reasons=sorted({r["reason"] for r in results if r["status"] == "rejected"}),
    )
    return jsonify(results=results, **counts), 202
