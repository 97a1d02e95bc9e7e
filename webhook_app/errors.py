"""The receiver's exception tree, and the one place that maps it to HTTP answers.

    ReceiverError (reason, status)
    ├── BadSignature      401  missing_signature | bad_signature
    ├── MalformedBody     400  malformed_json | unexpected_shape
    ├── BodyTooLarge      413  body_too_large
    └── QueueUnavailable  503  queue_unavailable (Meta retries on any non-2xx)

Every error answers JSON `{"error": <reason>, "detail": <text>}`; the reason is
machine-readable and is what gets logged and counted.
"""

from __future__ import annotations

from flask import Flask, jsonify
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge


class ReceiverError(Exception):
    status = 400
    reason = "bad_request"
    outcome = "malformed"  # the coarser class counted in leadrelay_webhooks_received_total

    def __init__(self, detail: str, reason: str | None = None):
        super().__init__(detail)
        self.detail = detail
        if reason:
            self.reason = reason


class BadSignature(ReceiverError):
    status = 401
    reason = "bad_signature"
    outcome = "bad_signature"


class MalformedBody(ReceiverError):
    status = 400
    reason = "malformed_json"


class BodyTooLarge(ReceiverError):
    status = 413
    reason = "body_too_large"
    outcome = "too_large"


class QueueUnavailable(ReceiverError):
    status = 503
    reason = "queue_unavailable"
    outcome = "unavailable"


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
