"""What a dead letter means and what to do, in plain language: the one place the admin
page, `leadrelay dead-letters list` and its --json take it from.

Notes: docs/internals/failures.md
"""

from __future__ import annotations

from workers.common.policy import AUTH, CRASHED, EXPIRED, INVALID, THROTTLED, TRANSIENT, explain

# What each reason means for the person looking at it, and what to do.
REASONS = {
    AUTH: "Meta refused the token. Put a working token in place, then replay: jobs waiting on it run too.",
    INVALID: "Meta refused a call for good: the lead read or the event (see which, and the code). Fix the cause, "
    "then replay.",
    EXPIRED: "Older than Meta's 7-day window: these can no longer be sent, and replay refuses them. Purge them; "
    "if leads keep expiring, find what held them (a paused token, no worker, a CRM posting late).",
    TRANSIENT: "Meta or the network kept failing until the retries ran out. Replay once Meta answers again.",
    THROTTLED: "Meta kept rate-limiting until the retries ran out. Replay once the limit has passed.",
    CRASHED: "The job kept killing its worker. Check the worker logs for the job id before replaying.",
}
NOT_REPLAYABLE = frozenset({EXPIRED})
EXPIRED_FIX = "it can never be sent: purge it (`leadrelay dead-letters purge --reason expired`)"
CALLS = {"lead_read": "lead read", "events": "event send", "form_leads": "lead list", "probe": "token check"}


def advice(entry: dict) -> dict:
    """The call that failed, Meta's code as a person reads it, what it means and the fix."""
    code, subcode = entry.get("code"), entry.get("subcode")
    meaning, fix = explain(code, subcode) or ("", entry.get("fix") or "")
    if not fix and entry.get("reason") == EXPIRED:
        fix = EXPIRED_FIX
    call = CALLS.get(entry.get("call"), entry.get("call")) or (
        "before sending" if entry.get("reason") in (INVALID, EXPIRED) and not code else ""
    )
    return {
        "call": call,
        "said": (f"code {code}" + (f"/{subcode}" if subcode else "")) if code else "",
        "meaning": meaning,
        "fix": fix or REASONS.get(entry.get("reason"), ""),
    }
