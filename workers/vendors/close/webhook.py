"""Close webhooks: an opportunity's status changed (a stage), or it was created in one.
Protocol notes and decisions: docs/close.md.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from typing import Mapping, Sequence

from workers.common import jsonbody
from workers.common.refusals import BadSignature, MalformedBody
from workers.common.times import unix_time
from workers.sources import keys
from workers.sources.ids import mapping, tool_id, unsigned
from workers.sources.signing import matches_any

NAME = "close"
API_URL = "https://api.close.com"  # CLOSE_API_URL names another (the stand-in)
SIGNATURE_HEADER = "close-sig-hash"
TIMESTAMP_HEADER = "close-sig-timestamp"
SECRET_SHAPE = "hex"  # the subscription's signature_key: hex, decoded to the HMAC key
PAST_SECONDS, FUTURE_SECONDS = 7 * 86400, 300  # a retry keeps its first timestamp: inside dedupe's 7 days
WON, LOST = "won", "lost"
DEFAULT_STAGES = {WON: "Purchase"}  # a won opportunity means the same in every organization
# The stand-in's statuses (standin.py): status ids are each organization's own.
SANDBOX_STAGES = {"stat_sandboxQualified0000000000000000000000000": "QualifiedLead"}
_CHANGES = ("created", "updated")


def signature_key(text: str) -> bytes:
    """The HMAC key a `signature_key` stands for; a seed of our own (the sandbox's generated
    value, the tests': keys.SEED_PREFIXES) stands for its SHA-256.

    Raises:
        ValueError: not hex, or too short to be Close's key (what settings say at start).
    """
    cleaned = text.strip()
    if cleaned.startswith(keys.SEED_PREFIXES):
        return hashlib.sha256(cleaned.encode()).digest()
    try:
        key = bytes.fromhex(cleaned)
    except ValueError:
        raise ValueError("is not hex: give the webhook subscription's signature_key as Close returned it") from None
    if len(key) < 16:
        raise ValueError("is too short for a Close signature_key (32 hex digits or more)")
    return key


def signature(secret: str, body: bytes, timestamp: str) -> str:
    return hmac.new(signature_key(secret), timestamp.encode() + body, hashlib.sha256).hexdigest()


def sign(secret: str, body: bytes, url: str = "", now: float | None = None) -> dict[str, str]:
    stamp = str(int(time.time() if now is None else now))
    return {SIGNATURE_HEADER: signature(secret, body, stamp), TIMESTAMP_HEADER: stamp}


def verify(body: bytes, headers: Mapping[str, str], secrets: Sequence[str], now: float | None = None) -> None:
    """HMAC-SHA256 of timestamp and raw body with the hex-decoded key, and the timestamp's age.

    Raises:
        BadSignature: `missing_signature`, `bad_signature`, or `stale_timestamp`.
    """
    given = (headers.get(SIGNATURE_HEADER) or "").strip().lower()
    stamp = (headers.get(TIMESTAMP_HEADER) or "").strip()
    if not given or not stamp:
        raise BadSignature(f"{SIGNATURE_HEADER} and {TIMESTAMP_HEADER} are required", reason="missing_signature")
    seconds = unsigned(stamp, 12)
    if seconds is None or len(given) != 64:
        raise BadSignature(f"{TIMESTAMP_HEADER} must be Unix seconds and {SIGNATURE_HEADER} 64 hex digits")
    age = (time.time() if now is None else now) - seconds
    if age > PAST_SECONDS or -age > FUTURE_SECONDS:
        raise BadSignature("the signature's timestamp is older than 7 days or in the future", reason="stale_timestamp")
    usable = [s for s in secrets if _hex(s)]  # settings refuse the others at start
    if not matches_any((signature(s, body, stamp) for s in usable), given):
        raise BadSignature("signature does not match the body for any configured Close signature_key")


def _hex(secret: str) -> bool:
    try:
        signature_key(secret)
    except ValueError:
        return False
    return True


def parse(body: bytes) -> dict:
    """An opportunity's status change (or creation) as a stage change; anything else skipped.

    Raises:
        MalformedBody: not JSON, or no `event` object.
    """
    doc = jsonbody.load(body)
    event = doc.get("event") if isinstance(doc, dict) else None
    if not isinstance(event, dict):
        raise MalformedBody("expected an event object", reason="unexpected_shape")
    kind = f"{str(event.get('object_type'))[:32]}.{str(event.get('action'))[:16]}"
    if event.get("object_type") != "opportunity" or event.get("action") not in _CHANGES:
        reason = "deleted" if event.get("action") == "deleted" else "not_an_opportunity_change"
        return {"items": [], "skipped": [{"reason": reason, "event_type": kind}]}
    data, previous = mapping(event.get("data")), mapping(event.get("previous_data"))
    key = tool_id(event.get("id"))
    opportunity = tool_id(data.get("id") or event.get("object_id"))
    account = tool_id(event.get("organization_id") or data.get("organization_id"))
    if not (key and opportunity and account):
        raise MalformedBody("event.id, the opportunity's id and organization_id are required", reason="bad_id")
    status = tool_id(data.get("status_id"))
    moved = event.get("action") == "created" or "status_id" in previous
    if status is None or not moved or tool_id(previous.get("status_id")) == status:
        return {"items": [], "skipped": [{"reason": "no_stage_change", "event_key": key}]}
    kind_of_status = data.get("status_type")
    return {
        "items": [
            {
                "crm": NAME,
                "event_key": key,
                "object": "opportunity",
                "object_id": opportunity,
                "account": account,
                # A won or lost status is known by its type (each organization names its own).
                "stage_id": kind_of_status if kind_of_status in (WON, LOST) else status,
                "contact_id": tool_id(data.get("contact_id")),
                "close_lead_id": tool_id(data.get("lead_id") or event.get("lead_id")),
                "value": _units(data.get("value")),
                "currency": data.get("value_currency") if isinstance(data.get("value_currency"), str) else None,
                "occurred_at": unix_time(event.get("date_created") or data.get("date_updated")),
            }
        ],
        "skipped": [],
    }


def _units(cents) -> float | None:
    """Close keeps an opportunity's value in cents (`100000` is `$1,000`)."""
    if isinstance(cents, bool) or not isinstance(cents, (int, float)) or cents != cents:
        return None
    return cents / 100


def lead_key(item: dict) -> str:
    """Close's event id: a retry carries it again."""
    return item["event_key"]
