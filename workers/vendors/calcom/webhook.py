"""Cal.com webhooks: a booking is a stage change that carries its person.

`BOOKING_CREATED` (and `BOOKING_RESCHEDULED`, the same person's booking moved) become the
mapped stage; `BOOKING_CANCELLED` is recorded, never sent. The first attendee is the
person (email, name, a phone answer in `responses`). The booking's `uid` is the
idempotency key: Cal.com signs no timestamp, so a replayed delivery is a duplicate.

`X-Cal-Signature-256` is the hex HMAC-SHA256 of the raw body with the webhook's secret.
Cal.com lets a webhook have no secret: such deliveries are refused unless the operator
lists `calcom` in LEADRELAY_ALLOW_UNSIGNED (then anyone who finds the URL can post
bookings: docs/calcom.md says why that is risky).
"""

from __future__ import annotations

from typing import Mapping, Sequence

from babel import numbers

from workers.common import jsonbody
from workers.common.refusals import MalformedBody
from workers.common.times import unix_time
from workers.sources.ids import plain, tool_id
from workers.sources.signing import check_header, hmac_hex

NAME = "calcom"
API_URL = ""  # nothing is read back: the person is in the push
DEFAULT_STAGES = {"BOOKING_CREATED": "Schedule", "BOOKING_RESCHEDULED": "Schedule"}  # a booked meeting
SIGNATURE_HEADER = "X-Cal-Signature-256"
BOOKED = ("BOOKING_CREATED", "BOOKING_RESCHEDULED")
CANCELLED = "BOOKING_CANCELLED"


def sign(secret: str, body: bytes, url: str = "") -> dict[str, str]:
    return {SIGNATURE_HEADER: hmac_hex(secret, body)}


def verify(body: bytes, headers: Mapping[str, str], secrets: Sequence[str]) -> None:
    """Check the hex HMAC of the raw body.

    Raises:
        BadSignature: `missing_signature` or `bad_signature`.
    """
    check_header(headers, SIGNATURE_HEADER, (hmac_hex(s, body) for s in secrets), "Cal.com")


def _answer(responses: dict, *names: str):
    for name in names:
        value = responses.get(name)
        value = value.get("value") if isinstance(value, dict) else value
        if isinstance(value, str) and value.strip():
            return value
    return None


def _organizer(payload: dict) -> str:
    organizer = payload.get("organizer") if isinstance(payload.get("organizer"), dict) else {}
    return (plain(organizer.get("email")) or plain(organizer.get("id")) or "calcom")[:100]


def _price(payload: dict) -> dict:
    """A paid event type's price as the Schedule's value. Cal.com sends `price` in the
    currency's minor unit, as its payments provider takes it (1000 is 10.00 USD; yen have
    none): divided by the currency's precision from CLDR. No price, or 0: no value.
    Cal.com's sender spreads the event type's `price` and `currency` into the payload."""
    price, currency = payload.get("price"), plain(payload.get("currency"))
    if isinstance(price, bool) or not isinstance(price, (int, float)) or price <= 0 or not currency:
        return {}
    try:
        digits = numbers.get_currency_precision(currency.upper())
    except (KeyError, ValueError):
        return {}
    return {"value": round(price / 10**digits, digits), "currency": currency.upper()}


def parse(body: bytes) -> dict:
    """A booking as a stage change with its person; a cancellation as recorded.

    Raises:
        MalformedBody: not JSON, or no `triggerEvent` and `payload`.
    """
    doc = jsonbody.load(body)
    payload = doc.get("payload") if isinstance(doc, dict) else None
    trigger = doc.get("triggerEvent") if isinstance(doc, dict) else None
    if not isinstance(payload, dict) or not isinstance(trigger, str):
        raise MalformedBody("expected triggerEvent and payload", reason="unexpected_shape")
    uid = tool_id(payload.get("uid"))
    if trigger == CANCELLED:
        return {"items": [], "skipped": [{"reason": "booking_canceled", "event_key": str(uid)}]}
    if trigger not in BOOKED:
        return {"items": [], "skipped": [{"reason": "not_a_booking", "event_type": trigger[:64]}]}
    listed = payload.get("attendees")
    attendees = [a for a in listed if isinstance(a, dict)] if isinstance(listed, list) else []
    responses = payload.get("responses") if isinstance(payload.get("responses"), dict) else {}
    email = plain(attendees[0].get("email")) if attendees else None
    email = email or _answer(responses, "email")
    if uid is None or not email:
        raise MalformedBody("payload.uid and an attendee's email are required", reason="bad_id")
    name = (plain(attendees[0].get("name")) if attendees else None) or _answer(responses, "name") or ""
    first, _, last = name.partition(" ")
    phone = _answer(responses, "attendeePhoneNumber", "phone", "location_phone")
    return {
        "items": [
            {
                "crm": NAME,
                "event_key": f"{uid}:{trigger.lower()}",
                "object": "booking",
                "object_id": uid,
                "account": _organizer(payload),  # [crm.calcom.accounts] routes an organizer's bookings
                "stage_id": trigger,
                "occurred_at": unix_time(doc.get("createdAt")),
                "person": {
                    "email": [email],
                    "phone": [phone] if phone else [],
                    "first_name": first,
                    "last_name": last,
                    **_price(payload),
                },
            }
        ],
        "skipped": [],
    }


def lead_key(item: dict) -> str:
    return item["event_key"]
