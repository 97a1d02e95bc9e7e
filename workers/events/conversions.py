"""Conversions API events: names, deterministic ids, the 7-day window, custom_data."""

from __future__ import annotations

from workers.common import clock
from workers.common.policy import EXPIRED, INVALID, JobError

LEAD = "Lead"
# Meta refuses events older than 7 days when it receives them (code 100/2804003).
# Keep an hour in hand so an event checked here is still inside the window when sent.
MAX_AGE_SECONDS = 7 * 24 * 3600
SAFETY_MARGIN_SECONDS = 3600


def deadline(event_time: float) -> float:
    """The last moment an event about `event_time` can be sent, margin included."""
    return event_time + MAX_AGE_SECONDS - SAFETY_MARGIN_SECONDS


def oldest_acceptable(now: float | None = None) -> float:
    """Events older than this are not sent: Meta would refuse them as too old."""
    return (clock.now() if now is None else now) - (MAX_AGE_SECONDS - SAFETY_MARGIN_SECONDS)


def event_id(source: str, key: str, event_name: str) -> str:
    """The same (lead, event name) always gets the same id, on every retry and replay,
    so Meta's dedupe (same event_id + event_name within 48 h) catches any repeat."""
    return f"{source}:{key}:{event_name}"


def event_time(created: int, now: float | None = None) -> int:
    """The lead's creation time, clamped to now: Meta's handling of future times is unconfirmed.

    Raises:
        JobError: reason `expired` when Meta would refuse it as too old.
    """
    now = int(clock.now() if now is None else now)
    if created < oldest_acceptable(now):
        age_days = (now - created) / 86400
        raise JobError(EXPIRED, f"event_time is {age_days:.1f} days old; Meta accepts at most 7")
    return min(created, now)


def build(
    *,
    name: str,
    time: int,
    event_id: str,
    user_data: dict,
    lead_event_source: str | None,
    action_source: str = "system_generated",
    value: float | None = None,
    currency: str | None = None,
    event_source_url: str | None = None,
    processing: dict | None = None,
) -> dict:
    """One event. System-generated events carry the Conversion Leads markers (Meta's Conversion Leads guide);
    website events carry the page instead (Meta requires it with the user agent).
    `processing` is the Limited Data Use fields (ldu.fields), when set."""
    custom: dict = {}
    if action_source == "system_generated" and lead_event_source:
        custom = {"event_source": "crm", "lead_event_source": lead_event_source}
    if value is not None:
        custom.update(value=value, currency=currency)
    event = {
        "event_name": name,
        "event_time": time,
        "action_source": action_source,
        "event_id": event_id,
        "user_data": user_data,
    }
    if event_source_url:
        event["event_source_url"] = event_source_url
    if custom:
        event["custom_data"] = custom
    if processing:
        event.update(processing)
    return event


# Meta counts an event carrying only one of these combinations (or a subset) as invalid
# (Meta's customer information parameters): nothing in it identifies a person.
_TOO_WEAK = (
    frozenset({"ct", "country", "st", "zp", "ge", "client_user_agent"}),
    frozenset({"db", "client_user_agent"}),
    frozenset({"fn", "ge"}),
    frozenset({"ln", "ge"}),
)


def validate(event: dict) -> None:
    """Refuse, before Meta does, an event it would reject or could not match.

    Raises:
        JobError: reason `invalid`, with what is missing.
    """
    keys = frozenset(k for k, v in event.get("user_data", {}).items() if v not in (None, "", []))
    if not keys or any(keys <= weak for weak in _TOO_WEAK):
        raise JobError(
            INVALID,
            f"user_data carries only {', '.join(sorted(keys)) or 'nothing'}: "
            "Meta counts such an event as invalid; it needs an email, phone, "
            "external id, lead_id, click or browser id",
        )
    if event.get("action_source") == "website" and not (
        event.get("event_source_url") and event["user_data"].get("client_user_agent")
    ):
        raise JobError(INVALID, "a website event needs event_source_url and client_user_agent")
