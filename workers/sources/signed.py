"""Any tool that can sign: Standard Webhooks (standardwebhooks.com), one generic stage source.

Notes: docs/internals/sources.md
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time
from typing import Mapping, Sequence

from workers.common import jsonbody
from workers.common.refusals import BadSignature, MalformedBody
from workers.sources.ids import tool_id, unsigned
from workers.sources.signing import matches_any

NAME = "signed"
API_URL = ""  # nothing is read back: the person is in the body
SIGNATURE_HEADER = "webhook-signature"
PARSES_HEADERS = True  # the idempotency key is a header: parse is given them
TOLERANCE_SECONDS = 300


def _key(secret: str) -> bytes:
    try:
        return base64.b64decode(secret.removeprefix("whsec_"), validate=True)
    except (binascii.Error, ValueError):
        return secret.encode("utf-8")  # not base64: used as it is, as some senders do


def signature(secret: str, msg_id: str, timestamp: str, body: bytes) -> str:
    digest = hmac.new(_key(secret), f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def sign(secret: str, body: bytes, url: str = "", now: float | None = None, msg_id: str | None = None) -> dict:
    # One message, one id: a sender's retry of the same body carries the same id.
    msg_id = msg_id or f"msg_{hashlib.sha256(body).hexdigest()[:24]}"
    stamp = str(int(time.time() if now is None else now))
    return {"webhook-id": msg_id, "webhook-timestamp": stamp, SIGNATURE_HEADER: signature(secret, msg_id, stamp, body)}


def verify(body: bytes, headers: Mapping[str, str], secrets: Sequence[str], now: float | None = None) -> None:
    """Check one of the `v1,` signatures against each secret, and the timestamp's age.

    Raises:
        BadSignature: `missing_signature`, `bad_signature`, or `stale_timestamp`.
    """
    msg_id, stamp = headers.get("webhook-id") or "", (headers.get("webhook-timestamp") or "").strip()
    given = [s for s in (headers.get(SIGNATURE_HEADER) or "").split() if s.startswith("v1,")]
    seconds = unsigned(stamp, 12)
    if not msg_id or seconds is None or not given:
        raise BadSignature(
            "webhook-id, webhook-timestamp (unix seconds) and webhook-signature are required",
            reason="missing_signature",
        )
    if abs((time.time() if now is None else now) - seconds) > TOLERANCE_SECONDS:
        raise BadSignature("webhook-timestamp is more than 5 minutes from now", reason="stale_timestamp")
    expected = [signature(s, msg_id, stamp, body) for s in secrets]
    if not any(matches_any(expected, one) for one in given):
        raise BadSignature("no webhook-signature matches the body for any configured secret")


def parse(body: bytes, headers: Mapping[str, str]) -> dict:
    """The body, kept whole for the mapping file's fields to read (crmmap.extract).

    Raises:
        MalformedBody: not a JSON object, or a webhook-id that cannot be a job id.
    """
    doc = jsonbody.load(body)
    if not isinstance(doc, dict):
        raise MalformedBody("expected a JSON object", reason="unexpected_shape")
    msg_id = tool_id(headers.get("webhook-id"))
    if msg_id is None:
        raise MalformedBody("webhook-id must be letters, digits, _ or - (64 at most)", reason="bad_id")
    stamp = headers.get("webhook-timestamp") or ""
    item = {"crm": NAME, "event_key": msg_id, "object": "message", "object_id": msg_id, "account": NAME}
    return {"items": [{**item, "doc": doc, "sent_at": unsigned(stamp, 12)}], "skipped": []}


def lead_key(item: dict) -> str:
    return item["event_key"]


def sample_body(email: str, when: str, key: str) -> dict:
    """A signing tool's next stage for the sample lead, in the stage API's own shape."""
    return {"email": email, "stage": "StartTrial", "occurred_at": when}
