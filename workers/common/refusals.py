"""What a delivery to the receiver can be refused for: the exception tree every source,
the intake and the stage API raise, each error with a machine-readable reason.

Notes: docs/internals/common.md
"""

from __future__ import annotations


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
