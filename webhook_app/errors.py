"""The one place that maps errors to HTTP answers (the tree is in workers/errors.py).

Every error answers JSON `{"error": <reason>, "detail": <text>}`; the reason is
machine-readable and is what gets logged and counted.
"""

from __future__ import annotations

from flask import Flask, jsonify
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from workers.errors import BodyTooLarge, ReceiverError


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
