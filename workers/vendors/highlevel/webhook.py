"""HighLevel marketplace-app webhooks: an opportunity moved to a pipeline stage
(`OpportunityStageUpdate`) or was won or lost (`OpportunityStatusUpdate`).

Notes: docs/internals/vendors.md
"""

from __future__ import annotations

import base64
import binascii
import time
from typing import Mapping, Sequence

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ed25519, padding, rsa

from workers.common import jsonbody
from workers.common.refusals import BadSignature, MalformedBody
from workers.common.times import unix_time
from workers.sources import keys
from workers.sources.ids import tool_id

NAME = "highlevel"
API_URL = "https://services.leadconnectorhq.com"  # HIGHLEVEL_API_URL names another (the stand-in)
SIGNATURE_HEADER = "x-ghl-signature"
LEGACY_HEADER = "x-wh-signature"
SECRET_SHAPE = "public key"
NAMES_NO_CURRENCY = True  # its pushes carry a value, never a currency: `[crm.highlevel] currency`
UNAVAILABLE_STATUS = 429  # HighLevel retries a 429 only: a 503 would lose the change
WINDOW_SECONDS = 300
WON, LOST = "won", "lost"
DEFAULT_STAGES = {WON: "Purchase"}  # a won opportunity means the same in every location
# The stand-in's pipeline (standin.py): stage ids are each location's own.
SANDBOX_STAGES = {
    "7915dedc-8f18-44d5-8bc3-77c04e994a10": "QualifiedLead",
    "339a8fa4-8e24-4e7b-a7e8-1e1d2b0e5b55": "Schedule",
}
_EVENTS = ("OpportunityStageUpdate", "OpportunityStatusUpdate")


def _keys(secrets: Sequence[str]) -> list:
    """The configured public keys; one that does not parse verifies nothing (settings
    refuse it at start: keys.parse)."""
    found = []
    for text in secrets:
        try:
            found.append(keys.parse(text))
        except ValueError:
            continue
    return found


def sign(secret: str, body: bytes, url: str = "") -> dict[str, str]:
    """The header a seed's private key signs `body` with (the sandbox's and the tests')."""
    return {SIGNATURE_HEADER: base64.b64encode(keys.seed(secret).sign(body)).decode("ascii")}


def verify(body: bytes, headers: Mapping[str, str], secrets: Sequence[str], now: float | None = None) -> None:
    """Check HighLevel's signature over the raw body, then the payload's timestamp.

    Raises:
        BadSignature: `missing_signature`, `bad_signature`, or `stale_timestamp` (outside
            five minutes: a captured delivery replayed).
    """
    header, kind = SIGNATURE_HEADER, ed25519.Ed25519PublicKey
    if not headers.get(SIGNATURE_HEADER):
        header, kind = LEGACY_HEADER, rsa.RSAPublicKey  # type: ignore[assignment]  # the legacy RSA key
    given = (headers.get(header) or "").strip()
    if not given:
        raise BadSignature(
            f"{SIGNATURE_HEADER} (or the legacy {LEGACY_HEADER}) is required", reason="missing_signature"
        )
    try:
        signature = base64.b64decode(given, validate=True)
    except (binascii.Error, ValueError):
        raise BadSignature(f"{header} is not base64") from None
    if not any(_checks(key, signature, body) for key in _keys(secrets) if isinstance(key, kind)):
        raise BadSignature(f"{header} matches no configured HighLevel public key")
    try:
        doc = jsonbody.load(body)
    except MalformedBody:
        return  # signed, but not JSON: acknowledged and recorded as unusable
    stamp = unix_time(doc.get("timestamp")) if isinstance(doc, dict) else None
    now = time.time() if now is None else now
    if isinstance(doc, dict) and (stamp is None or abs(now - stamp) > WINDOW_SECONDS):
        raise BadSignature("the payload's timestamp is missing or not within five minutes", reason="stale_timestamp")


def _checks(key, signature: bytes, body: bytes) -> bool:
    try:
        if isinstance(key, ed25519.Ed25519PublicKey):
            key.verify(signature, body)
        else:
            key.verify(signature, body, padding.PKCS1v15(), hashes.SHA256())
    except InvalidSignature:
        return False
    return True


def parse(body: bytes) -> dict:
    """An opportunity's stage change, win or loss as a plain dict; anything else skipped.

    Raises:
        MalformedBody: not a JSON object, or an opportunity event without its ids.
    """
    doc = jsonbody.load(body)
    if not isinstance(doc, dict):
        raise MalformedBody("expected a JSON object", reason="unexpected_shape")
    kind = doc.get("type")
    if kind not in _EVENTS:
        return {"items": [], "skipped": [{"reason": "not_an_opportunity_change", "event_type": str(kind)[:40]}]}
    key, opportunity, account = tool_id(doc.get("webhookId")), tool_id(doc.get("id")), tool_id(doc.get("locationId"))
    if not (key and opportunity and account):
        raise MalformedBody("webhookId, id and locationId are required", reason="bad_id")
    if kind == "OpportunityStatusUpdate":
        stage = doc.get("status") if doc.get("status") in (WON, LOST) else None
        if stage is None:
            return {"items": [], "skipped": [{"reason": "no_stage_change", "event_key": key}]}
    else:
        stage = tool_id(doc.get("pipelineStageId"))
        if stage is None:
            raise MalformedBody("pipelineStageId is required", reason="bad_id")
    value = doc.get("monetaryValue")
    value = value if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None
    return {
        "items": [
            {
                "crm": NAME,
                "event_key": key,
                "object": "opportunity",
                "object_id": opportunity,
                "account": account,
                "stage_id": stage,
                "contact_id": tool_id(doc.get("contactId")),
                "value": value
                if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0
                else None,
                "currency": None,  # not in HighLevel's payload: the stage table's currency
                "occurred_at": unix_time(doc.get("timestamp")),
            }
        ],
        "skipped": [],
    }


def lead_key(item: dict) -> str:
    """HighLevel's webhookId: a redelivery carries it again."""
    return item["event_key"]
