"""Calendly webhooks (API v2): a booked meeting is a stage change that carries its person.

Notes: docs/internals/vendors.md
"""

from __future__ import annotations

import hashlib
import hmac
import re
import time
from typing import Mapping, Sequence

from workers.common import jsonbody
from workers.common.refusals import BadSignature, MalformedBody
from workers.common.times import unix_time
from workers.sources.ids import mapping, plain, tool_id, unsigned
from workers.sources.signing import matches_any

NAME = "calendly"
API_URL = ""  # nothing is read back: the person is in the push
DEFAULT_STAGES = {"invitee.created": "Schedule"}  # a booked meeting
SIGNATURE_HEADER = "Calendly-Webhook-Signature"
TOLERANCE_SECONDS = 180
BOOKED, CANCELED = "invitee.created", "invitee.canceled"
_SHAPE = re.compile(r"t=(\d{1,12}),v1=([0-9a-f]{64})")


def signature(secret: str, body: bytes, timestamp: str) -> str:
    return hmac.new(secret.encode("utf-8"), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()


def sign(secret: str, body: bytes, url: str = "", now: float | None = None) -> dict[str, str]:
    stamp = str(int(time.time() if now is None else now))
    return {SIGNATURE_HEADER: f"t={stamp},v1={signature(secret, body, stamp)}"}


def verify(body: bytes, headers: Mapping[str, str], secrets: Sequence[str], now: float | None = None) -> None:
    """Check `t=...,v1=...` over timestamp and raw body, and the timestamp's age.

    Raises:
        BadSignature: `missing_signature`, `bad_signature`, or `stale_timestamp`.
    """
    header = (headers.get(SIGNATURE_HEADER) or "").strip()
    if not header:
        raise BadSignature(f"{SIGNATURE_HEADER} header is required", reason="missing_signature")
    shape = _SHAPE.fullmatch(header)  # exactly t=<digits>,v1=<hex>: nothing doubled, nothing after
    if shape is None:
        raise BadSignature(f"{SIGNATURE_HEADER} must be t=<unix>,v1=<hex>")
    stamp, given = shape.group(1), shape.group(2)
    seconds = unsigned(stamp, 12)
    if seconds is None:
        raise BadSignature(f"{SIGNATURE_HEADER} must be t=<unix seconds>,v1=<hex>")
    if abs((time.time() if now is None else now) - seconds) > TOLERANCE_SECONDS:
        raise BadSignature("the signature's timestamp is more than 3 minutes from now", reason="stale_timestamp")
    if not matches_any((signature(s, body, stamp) for s in secrets), given):
        raise BadSignature("signature does not match the body for any configured Calendly signing key")


def _phone(payload: dict) -> list[str]:
    phones = [payload.get("text_reminder_number")]
    answers = payload.get("questions_and_answers")
    for qa in answers if isinstance(answers, list) else []:
        if isinstance(qa, dict) and "phone" in str(qa.get("question", "")).lower():
            phones.append(qa.get("answer"))
    return [p for p in phones if isinstance(p, str) and p.strip()]


META_SOURCES = {"facebook", "fb", "instagram", "ig", "meta"}


def _fbclid(payload: dict) -> str | None:
    """A Meta click id the booking link carried: `tracking.fbclid` (embed scripts that pass
    it), or `utm_content` when utm_source names Meta (links built as utm_content={{fbclid}})."""
    tracking = mapping(payload.get("tracking"))
    if plain(tracking.get("fbclid")):
        return plain(tracking.get("fbclid"))
    source = str(plain(tracking.get("utm_source")) or "").lower()
    return plain(tracking.get("utm_content")) if source in META_SOURCES else None


def _paid(payload: dict) -> dict:
    """A paid booking's amount as the Schedule's value: the invitee's `payment` (amount in
    the currency's units, and its currency), when Calendly says it succeeded.
    https://developer.calendly.com/api-docs/decca36cf717f-get-event-invitee (Invitee.payment)"""
    payment = mapping(payload.get("payment"))
    amount, currency = payment.get("amount"), plain(payment.get("currency"))
    if payment.get("successful") is not True or isinstance(amount, bool) or not isinstance(amount, (int, float)):
        return {}
    return {"value": amount, "currency": currency.upper()} if amount > 0 and currency else {}


def parse(body: bytes) -> dict:
    """A booking as a stage change with its person; a cancel as recorded.

    Raises:
        MalformedBody: not JSON, or no `event` and `payload`.
    """
    doc = jsonbody.load(body)
    payload = doc.get("payload") if isinstance(doc, dict) else None
    if not isinstance(payload, dict) or not isinstance(doc.get("event"), str):
        raise MalformedBody("expected event and payload", reason="unexpected_shape")
    invitee = tool_id(str(payload.get("uri") or "").rstrip("/").rsplit("/", 1)[-1])
    if doc["event"] == CANCELED:
        reason = "booking_rescheduled" if payload.get("rescheduled") else "booking_canceled"
        return {"items": [], "skipped": [], "recorded": [{"reason": reason, "event_key": str(invitee)}]}
    if doc["event"] != BOOKED:
        return {"items": [], "skipped": [{"reason": "not_a_booking", "event_type": doc["event"][:64]}]}
    email = plain(payload.get("email"))
    if invitee is None or not email:
        raise MalformedBody("payload.uri and payload.email are required", reason="bad_id")
    return {
        "items": [
            {
                "crm": NAME,
                "event_key": f"{invitee}:created",
                "object": "invitee",
                "object_id": invitee,
                # The Calendly user who made the subscription: [crm.calendly.accounts] routes it.
                "account": str(doc.get("created_by") or "").rstrip("/").rsplit("/", 1)[-1][:64] or "calendly",
                "stage_id": BOOKED,
                "occurred_at": unix_time(payload.get("created_at") or doc.get("created_at")),
                "person": {
                    "email": [email],
                    "phone": _phone(payload),
                    "first_name": plain(payload.get("first_name")),
                    "last_name": plain(payload.get("last_name")),
                    "fbclid": _fbclid(payload),
                    **_paid(payload),
                },
            }
        ],
        "skipped": [],
    }


def lead_key(item: dict) -> str:
    return item["event_key"]
