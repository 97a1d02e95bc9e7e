"""Cal.com webhooks: a booking is a stage change that carries its person.

Notes: docs/internals/vendors.md
"""

from __future__ import annotations

from typing import Mapping, Sequence

from workers.common import jsonbody
from workers.common.refusals import MalformedBody
from workers.common.times import unix_time
from workers.sources.ids import mapping, plain, tool_id
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
    organizer = mapping(payload.get("organizer"))
    return (plain(organizer.get("email")) or plain(organizer.get("id")) or "calcom")[:100]


# Cal.com takes payments through Stripe and keeps `price` in Stripe's units: the smallest
# unit, except Stripe's zero-decimal currencies (as they are) and its three-decimal ones
# (thousandths). ISK, HUF, TWD are two-decimal to Stripe whatever ISO 4217 says.
# https://docs.stripe.com/currencies#zero-decimal, https://docs.stripe.com/currencies#three-decimal
STRIPE_ZERO_DECIMAL = frozenset("BIF CLP DJF GNF JPY KMF KRW MGA PYG RWF UGX VND VUV XAF XOF XPF".split())
STRIPE_THREE_DECIMAL = frozenset("BHD JOD KWD OMR TND".split())


def _price(payload: dict) -> dict:
    """A paid event type's price (spread into the payload by Cal.com's sender) as the
    Schedule's value, in the currency's major unit. No price, or 0: no value."""
    price, currency = payload.get("price"), plain(payload.get("currency"))
    if isinstance(price, bool) or not isinstance(price, (int, float)) or price <= 0 or not currency:
        return {}
    code = currency.upper()
    if len(code) != 3 or not code.isalpha():
        return {}
    digits = 0 if code in STRIPE_ZERO_DECIMAL else 3 if code in STRIPE_THREE_DECIMAL else 2
    return {"value": round(price / 10**digits, digits), "currency": code}


def _booker(payload: dict, responses: dict) -> tuple[dict, str | None]:
    """Who booked: on a seated event, the attendee holding the new seat (`attendeeSeatId`:
    every seat shares the booking's uid, and the list holds earlier seats too); else the
    booking form's answers, then the first attendee. Returns (attendee, seat id)."""
    listed = payload.get("attendees")
    attendees = [a for a in listed if isinstance(a, dict)] if isinstance(listed, list) else []
    seat = tool_id(payload.get("attendeeSeatId"))
    if seat:
        for attendee in attendees:
            held = mapping(attendee.get("bookingSeat"))
            if held.get("referenceUid") == payload.get("attendeeSeatId"):
                return attendee, seat
        return {}, seat  # the form's answers are the new seat's person
    email = _answer(responses, "email")
    for attendee in attendees:
        if email and (plain(attendee.get("email")) or "").lower() == email.lower():
            return attendee, None
    return (attendees[0] if attendees and not email else {}), None


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
        return {"items": [], "skipped": [], "recorded": [{"reason": "booking_canceled", "event_key": str(uid)}]}
    if trigger not in BOOKED:
        return {"items": [], "skipped": [{"reason": "not_a_booking", "event_type": trigger[:64]}]}
    responses = mapping(payload.get("responses"))
    booker, seat = _booker(payload, responses)
    email = plain(booker.get("email")) or _answer(responses, "email")
    if uid is None or not email:
        raise MalformedBody("payload.uid and an attendee's email are required", reason="bad_id")
    name = plain(booker.get("name")) or _answer(responses, "name") or ""
    first, _, last = name.partition(" ")
    phone = _answer(responses, "attendeePhoneNumber", "phone", "location_phone")
    return {
        "items": [
            {
                "crm": NAME,
                "event_key": f"{uid}:{seat}:{trigger.lower()}" if seat else f"{uid}:{trigger.lower()}",
                "object": "seat" if seat else "booking",
                "object_id": seat or uid,
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
