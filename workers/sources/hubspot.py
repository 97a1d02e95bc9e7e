"""HubSpot Webhooks API deliveries: deal stage and contact lifecycle stage changes.

HubSpot batches up to 100 events per POST (a JSON list) and retries a failed delivery
up to 10 times over about a day. An event names the object by id only: the deal's
amount and its contact (email, phone, name) are read back with a private-app token
(workers/crmapi/hubspot.py). Each event's `eventId` is its idempotency key.

The v3 signature (`X-HubSpot-Signature-v3`) is a base64 HMAC-SHA256, keyed with the
app's client secret, over method + the URL as HubSpot called it + body + the
`X-HubSpot-Request-Timestamp` (milliseconds); a timestamp more than 5 minutes off is
refused, so a captured delivery cannot be played again later.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from typing import Mapping, Sequence
from urllib.parse import unquote

from workers.common import jsonbody
from workers.common.refusals import BadSignature, MalformedBody
from workers.sources.ids import graph_id, plain, unsigned
from workers.sources.signing import check_header

NAME = "hubspot"
API_URL = "https://api.hubapi.com"  # HUBSPOT_API_URL names another (the sandbox's stand-in)
SIGNATURE_HEADER = "X-HubSpot-Signature-v3"
TIMESTAMP_HEADER = "X-HubSpot-Request-Timestamp"
SIGNS_URL = True  # the signature covers the method and the URL: verify is given them
TOLERANCE_SECONDS = 300
# What a stage change is: the subscription type and the property that changed.
STAGE_PROPERTIES = {
    ("deal.propertyChange", "dealstage"): "deal",
    ("contact.propertyChange", "lifecyclestage"): "contact",
}


def signature(secret: str, method: str, url: str, body: bytes, timestamp: str) -> str:
    # HubSpot signs the URL with its percent-escapes decoded (its own validation guide).
    message = method.upper().encode() + unquote(url).encode("utf-8") + body + timestamp.encode()
    return base64.b64encode(hmac.new(secret.encode("utf-8"), message, hashlib.sha256).digest()).decode("ascii")


def sign(secret: str, body: bytes, url: str = "", now: float | None = None) -> dict[str, str]:
    """The headers HubSpot sends with `body` posted to `url` now."""
    stamp = str(int((time.time() if now is None else now) * 1000))
    return {SIGNATURE_HEADER: signature(secret, "POST", url, body, stamp), TIMESTAMP_HEADER: stamp}


def verify(
    body: bytes,
    headers: Mapping[str, str],
    secrets: Sequence[str],
    *,
    url: str,
    method: str = "POST",
    now: float | None = None,
) -> None:
    """Check the v3 signature over method, URL, body and timestamp, and the timestamp's age.

    Raises:
        BadSignature: `missing_signature`, `bad_signature`, or `stale_timestamp` (more than
            5 minutes from now, either way).
    """
    stamp = (headers.get(TIMESTAMP_HEADER) or "").strip()
    millis = unsigned(stamp, 15)
    if millis is None:
        raise BadSignature(f"{TIMESTAMP_HEADER} header (unix milliseconds) is required", reason="missing_signature")
    now = time.time() if now is None else now
    if abs(now - millis / 1000) > TOLERANCE_SECONDS:
        raise BadSignature("the request timestamp is more than 5 minutes from now", reason="stale_timestamp")
    check_header(headers, SIGNATURE_HEADER, (signature(s, method, url, body, stamp) for s in secrets), "HubSpot")


# "Webhook notifications are batched: a single request can contain up to 100 events"
# (https://developers.hubspot.com/docs/api/webhooks, "Webhooks API: batching").
MAX_EVENTS = 100


def parse(body: bytes) -> dict:
    """Stage changes as plain dicts; every other event is skipped with its type.

    Raises:
        MalformedBody: not JSON, or not a (non-empty) list of events.
    """
    doc = jsonbody.load(body)
    if not isinstance(doc, list) or not doc:  # HubSpot never posts an empty batch
        raise MalformedBody("expected a JSON list of events", reason="unexpected_shape")
    if len(doc) > MAX_EVENTS:  # more than HubSpot ever sends: no reason to spend seconds on it
        raise MalformedBody(f"HubSpot sends at most {MAX_EVENTS} events per request", reason="too_many_events")
    items, skipped = [], []
    for event in doc:
        if not isinstance(event, dict):
            skipped.append({"reason": "malformed_event"})
            continue
        kind = STAGE_PROPERTIES.get((plain(event.get("subscriptionType")), plain(event.get("propertyName"))))
        event_id, object_id, account = (graph_id(event.get(k)) for k in ("eventId", "objectId", "portalId"))
        stage = plain(event.get("propertyValue"))
        if kind is None:
            skipped.append({"reason": "not_a_stage_change", "event_type": str(event.get("subscriptionType"))[:64]})
        elif not (event_id and object_id and account and stage and len(stage) <= 100):
            skipped.append({"reason": "malformed_event", "event_id": str(event.get("eventId"))[:32]})
        else:
            occurred = event.get("occurredAt")
            items.append(
                {
                    "crm": NAME,
                    "event_key": event_id,
                    "object": kind,
                    "object_id": object_id,
                    "account": account,
                    "stage_id": stage,
                    "occurred_at": occurred / 1000 if isinstance(occurred, (int, float)) else None,
                }
            )
    return {"items": items, "skipped": skipped}


def lead_key(item: dict) -> str:
    """HubSpot's event id: the same event redelivered carries it again."""
    return item["event_key"]
