"""One place decides what a Graph answer means for a job, and when to try again.

    DeliveryError (reason, code, subcode, fbtrace_id, user_title)
      reason is one of TRANSIENT, THROTTLED, AUTH, INVALID, EXPIRED

Classes come from `error.code` / `error_subcode` (spec/meta.md §3), never from the
message, which Meta localises to the token owner's language.
"""

from __future__ import annotations

TRANSIENT = "transient"
THROTTLED = "throttled"
AUTH = "auth"
INVALID = "invalid"
EXPIRED = "expired"

RETRYABLE = frozenset({TRANSIENT, THROTTLED})

# One interval per retry, in seconds (RQ reads a short list two different ways).
RETRY_INTERVALS = (30, 120, 600, 1800, 3600, 3 * 3600)
MAX_RETRIES = len(RETRY_INTERVALS)
RESULT_TTL = 7 * 24 * 3600
FAILURE_TTL = 30 * 24 * 3600

_THROTTLE_CODES = {4, 17, 32, 613, 341, 368} | set(range(80000, 80015))
_AUTH_CODES = {190, 102, 10, 3} | set(range(200, 300))
_TOO_OLD = 2804003


class DeliveryError(Exception):
    """A Graph call that did not succeed, classified."""

    def __init__(self, reason: str, detail: str, *, code: int | None = None, subcode: int | None = None,
                 fbtrace_id: str | None = None, user_title: str | None = None, http_status: int | None = None):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail
        self.code = code
        self.subcode = subcode
        self.fbtrace_id = fbtrace_id
        self.user_title = user_title
        self.http_status = http_status

    @property
    def retryable(self) -> bool:
        return self.reason in RETRYABLE

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in ("reason", "detail", "code", "subcode", "fbtrace_id",
                                              "user_title", "http_status")}


def classify(http_status: int, error: dict | None) -> str:
    """The class of a failed Graph answer, from its status and error envelope."""
    error = error or {}
    code, subcode = error.get("code"), error.get("error_subcode")
    if subcode == _TOO_OLD:
        return EXPIRED
    if code in (1, 2):
        return TRANSIENT
    if code in _THROTTLE_CODES:
        return THROTTLED
    if code in _AUTH_CODES:
        return AUTH
    if code == 100:
        return INVALID
    if error.get("is_transient") is True or http_status >= 500 or not error:
        return TRANSIENT
    return INVALID
