"""One place decides what a Graph answer means for a job, and when to try again.

Notes: docs/internals/common.md
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable

TRANSIENT = "transient"
THROTTLED = "throttled"
AUTH = "auth"
INVALID = "invalid"
EXPIRED = "expired"
CRASHED = "crashed"  # the worker died under the job too often (see recovery)

RETRYABLE = frozenset({TRANSIENT, THROTTLED})

# Every queue name and time-to-live in Redis, in one place.
QUEUE_NAME = "leadrelay"  # the default; LEADRELAY_QUEUE names another
DAY = 24 * 3600
SEEN_TTL = 7 * DAY  # a lead's dedupe record (inbox.SEEN): Meta redelivers for 36 h, a sweep looks back 7 days
RESULT_TTL = DAY  # a finished lead job (a lead a batch handed to a job of its own, or a replay)
DRAIN_JOB_TIMEOUT = 600  # a drain job hands over to a fresh one after batches.DRAIN_SECONDS
FAILURE_TTL = 30 * DAY  # a failed job, so a dead letter can be replayed for a month
# What Meta confirmed: a resend is refused once the event is past 7 days, and an event is
# confirmed after its event_time.
CONFIRMED_TTL = 8 * DAY
STAGE_RESULT_TTL = DAY  # a finished stage batch: stages dedupe on their own claims, below
STAGE_SEEN_TTL = 90 * DAY  # each stage is sent once per lead
PROBE_EVERY_SECONDS = 300  # a paused token is tested by one waiting job at most this often
ADMIN_SESSION_TTL = 8 * 3600  # an admin page login lasts a working day, unless it logs out
AUTH_FAILURES_ALLOWED = 10  # wrong tokens from one address before it must wait...
AUTH_FAILURE_WINDOW = 300  # ...this long since its first wrong try

# Backoff: step n waits base * 2**(n-1), capped; throttling starts ten times slower.
# Equal jitter: between half and all of the step, so workers retrying together spread
# out but none comes back sooner than half the step.
DEFAULT_BASE_SECONDS = 30
THROTTLE_FACTOR = 10
CAP_SECONDS = 3600
MAX_ATTEMPTS = 48  # with the one-hour cap: about two days of trying, inside Meta's 7
NOT_FOUND_ATTEMPTS = 3  # 100/33 "does not exist": permanent after a few spaced tries
PAUSE_RECHECK_SECONDS = 60

_THROTTLE_CODES = {4, 17, 32, 613, 341, 368} | set(range(80000, 80015))
_AUTH_CODES = {190, 102, 10, 3} | set(range(200, 300))
_TOO_OLD = 2804003
# "(#2635) You are calling a deprecated version of the Ads API. Please update to the latest
# version" (https://developers.facebook.com/blog/post/2024/04/16/upcoming-change-in-marketing-api-version-deprecation)
_VERSION_ENDED = 2635
_NOT_FOUND = 33


class JobError(Exception):
    """Why a job's work failed this time, classified: the reason is what the policy acts on."""

    def __init__(
        self,
        reason: str,
        detail: str,
        *,
        code: int | None = None,
        subcode: int | None = None,
        fbtrace_id: str | None = None,
        user_title: str | None = None,
        http_status: int | None = None,
        retry_after: int | None = None,
        call: str | None = None,
        fix: str | None = None,
    ):
        super().__init__(f"{reason}: {detail}")
        self.fix = fix  # what a person does about it, when no code of Meta's says (a CRM's refusal)
        self.call = call  # which Graph call failed: lead_read, events, ... (None: before any call)
        self.reason = reason
        self.detail = detail
        self.code = code
        self.subcode = subcode
        self.fbtrace_id = fbtrace_id
        self.user_title = user_title
        self.http_status = http_status
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        return self.reason in RETRYABLE

    @property
    def not_found(self) -> bool:
        return self.code == 100 and self.subcode == _NOT_FOUND

    def as_dict(self) -> dict:
        return {
            k: getattr(self, k)
            for k in ("reason", "detail", "code", "subcode", "fbtrace_id", "user_title", "http_status", "call")
        }


class Paused(Exception):
    """The token this call needs is paused after an auth failure."""

    def __init__(self, fingerprint: str):
        super().__init__(f"token {fingerprint} is paused after an auth failure")
        self.fingerprint = fingerprint


def classify(http_status: int, error: dict | None) -> str:
    """The class of a failed Graph answer, from its status and error envelope."""
    error = error or {}
    # Codes are numbers; anything else (a list, an object) is a shape Meta does not send, and no code.
    code, subcode = (
        value if isinstance(value, int) else None for value in (error.get("code"), error.get("error_subcode"))
    )
    if subcode == _TOO_OLD:
        return EXPIRED
    if code == _VERSION_ENDED:  # a configuration error, never transient: retrying cannot mend it
        return INVALID
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


# What Meta's codes mean and what a person does about them (Meta's error handling guide), most
# specific first: (code, subcode) then (code, None). Shown beside each dead letter.
MEANINGS = {
    (190, 463): (
        "The access token expired.",
        "Issue a new token (a system-user token does not expire), set it, then replay the auth group.",
    ),
    (190, 460): ("The token was invalidated: its user changed their password.", "Issue a new token, then replay."),
    (190, None): ("The access token is invalid or was revoked.", "Issue a new token, set it, then replay."),
    (102, None): ("The session is invalid.", "Issue a new token, set it, then replay."),
    (10, None): (
        "The app lacks a permission for this call.",
        "Grant leads_retrieval (lead reads) or ads_management (events) and issue a new token.",
    ),
    (200, None): (
        "The token lacks a permission for this object.",
        "Give the token's user a role on the Page or dataset, then replay.",
    ),
    (100, 33): (
        "The lead does not exist, or this token cannot see it (wrong Page, or no leads_retrieval).",
        "Check the Page's token and its leads_retrieval access; replay once it reads the lead.",
    ),
    (100, 2804003): ("The event is older than Meta's 7 days.", "Nothing: it can no longer be sent."),
    (100, 2804016): ("user_data was not hashed as Meta expects.", "A bug in leadrelay's hashing: report it."),
    (100, 2804066): (
        "Meta takes no business-messaging event of this name (Messaging Event Invalid Event Type).",
        "Nothing: this stage cannot go back for a chat; leadrelay sends only the names Meta lists.",
    ),
    (100, None): (
        "Meta refused a parameter of the call.",
        "Read Meta's title and fbtrace_id; fix the cause, then replay.",
    ),
    (2635, None): (
        "Meta no longer serves the API version in META_API_VERSION.",
        "Set META_API_VERSION to a current version (`leadrelay doctor` says which), restart, then replay.",
    ),
    (2, None): ("Meta's service was temporarily unavailable.", "Nothing: replay once Meta answers again."),
    (1, None): ("An unknown error at Meta, usually temporary.", "Replay later."),
    (4, None): ("The app's rate limit was reached.", "Wait for the limit to pass, then replay."),
    (17, None): ("The user's rate limit was reached.", "Wait for the limit to pass, then replay."),
    (32, None): ("The Page's rate limit was reached.", "Wait for the limit to pass, then replay."),
    (613, None): ("Too many calls in a short time.", "Wait, then replay."),
}


def explain(code: int | None, subcode: int | None) -> tuple[str, str] | None:
    """(meaning, fix) for a Meta error code, or None when we have nothing useful to add."""
    return MEANINGS.get((code, subcode)) or MEANINGS.get((code, None))


def backoff(
    reason: str,
    attempt: int,
    base: float = DEFAULT_BASE_SECONDS,
    retry_after: int | None = None,
    rand: Callable[[], float] = random.random,
) -> int:
    """Seconds to wait before attempt `attempt + 1`; Meta's regain-access hint wins if longer."""
    step = base * (THROTTLE_FACTOR if reason == THROTTLED else 1) * 2 ** (attempt - 1)
    step = min(step, CAP_SECONDS * (2 if reason == THROTTLED else 1))
    delay = step / 2 + rand() * step / 2
    return int(max(delay, retry_after or 0))


@dataclass(frozen=True)
class Decision:
    retry_in: int | None  # seconds, or None: no retry
    reason: str | None  # dead-letter reason when not retrying


def decide(
    err: JobError,
    attempt: int,
    deadline: float,
    now: float,
    base: float = DEFAULT_BASE_SECONDS,
    rand: Callable[[], float] = random.random,
) -> Decision:
    """Retry (same job, later) or dead-letter, for a failed attempt number `attempt`.

    A retry that would run past `deadline` (the last moment Meta still accepts the
    event, margin included) is not scheduled: the job is dead-lettered `expired`.
    """
    if err.not_found and attempt < NOT_FOUND_ATTEMPTS:
        reason = TRANSIENT  # spaced like a transient error, then given up as invalid
    elif err.retryable and attempt < MAX_ATTEMPTS:
        reason = err.reason
    else:
        return Decision(None, err.reason)
    delay = backoff(reason, attempt, base, err.retry_after, rand)
    if now + delay >= deadline:
        return Decision(None, EXPIRED)
    return Decision(delay, None)
