"""The stage-events API for CRMs and sheets, behind LEADRELAY_API_TOKEN (off when unset)."""

from __future__ import annotations

import redis
from flask import Blueprint, current_app, jsonify, request

from workers import jsonbody, logs, stages
from workers.errors import BodyTooLarge, MalformedBody, QueueUnavailable

from . import prometheus, tokenauth

bp = Blueprint("api", __name__, url_prefix="/api/v1")
log = logs.get(__name__)


@bp.before_request
def _authorise():
    tokenauth.check(current_app.extensions["leadrelay"]["settings"].api_token, "LEADRELAY_API_TOKEN", "api")


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
    if len(items) > stages.MAX_ITEMS:
        raise BodyTooLarge(f"at most {stages.MAX_ITEMS} stage changes per request", reason="too_many_items")
    try:
        results = stages.accept(ext["redis"], ext["queue"], items, ext["stages"], ext["settings"].default_region,
                                ext["settings"].lead_event_source)
    except redis.RedisError:
        raise QueueUnavailable("queue unavailable; retry later") from None
    counts = {s: sum(1 for r in results if r["status"] == s) for s in ("accepted", "duplicate", "recorded", "rejected")}
    for outcome, number in counts.items():
        if number:
            prometheus.STAGE_EVENTS.labels(outcome).inc(number)
    log.info("stage_events", outcome="accepted", **counts,
             reasons=sorted({r["reason"] for r in results if r["status"] == "rejected"}))
    return jsonify(results=results, **counts), 202
