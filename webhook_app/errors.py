"""The one place that maps errors to HTTP answers (the tree is in workers/common/refusals.py).

Notes: docs/internals/webhook_app.md
"""

from __future__ import annotations

import redis
from flask import Flask, jsonify, request
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from workers.common import logs
from workers.common.refusals import BodyTooLarge, QueueUnavailable, ReceiverError

log = logs.get(__name__)


def answer(reason: str, detail: str, status: int):
    return jsonify(error=reason, detail=detail), status


def init_app(app: Flask) -> None:
    @app.errorhandler(ReceiverError)
    def _receiver_error(err: ReceiverError):
        return answer(err.reason, err.detail, err.status)

    @app.errorhandler(RequestEntityTooLarge)
    def _too_large(err):
        limit = app.config.get("MAX_CONTENT_LENGTH")
        return answer(BodyTooLarge.reason, f"body over the {limit}-byte limit", 413)

    @app.errorhandler(HTTPException)
    def _http(err: HTTPException):
        reason = (err.name or "error").lower().replace(" ", "_")
        return answer(reason, err.description or "", err.code or 500)

    @app.errorhandler(Exception)
    def _unexpected(err: Exception):
        if isinstance(err, redis.RedisError):
            return answer(QueueUnavailable.reason, "queue unavailable; retry later", QueueUnavailable.status)
        # The route, not the path: a sender's secret path segment (Salesforce's token) is never logged.
        route = request.url_rule.rule if request.url_rule else "unrouted"
        log.error("request_failed", route=route, error=type(err).__name__, where=logs.where(err))
        return answer("unusable_request", "the request could not be used", 400)
