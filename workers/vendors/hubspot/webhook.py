"""HubSpot Webhooks API deliveries: deal stage and contact lifecycle stage changes.

Notes: docs/internals/vendors.md
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import time
from typing import Mapping, Sequence

from workers.common import jsonbody
from workers.common.refusals import BadSignature, MalformedBody
from workers.sources.ids import graph_id, plain, unsigned
from workers.sources.signing import check_header

NAME = "hubspot"
API_URL = "https://api.hubapi.com"  # HUBSPOT_API_URL names another (the sandbox's stand-in)
# HubSpot's default sales pipeline and lifecycle stage ids, as sent without a mapping
# table: the same ids in every portal (knowledge.hubspot.com, "Set up and customize pipelines").
DEFAULT_STAGES = {
    "qualifiedtobuy": "QualifiedLead",
    "appointmentscheduled": "Schedule",
    "presentationscheduled": "Schedule",
    "closedwon": "Purchase",
    "marketingqualifiedlead": "QualifiedLead",
    "salesqualifiedlead": "QualifiedLead",
    "customer": "Purchase",
}
SIGNATURE_HEADER = "X-HubSpot-Signature-v3"
TIMESTAMP_HEADER = "X-HubSpot-Request-Timestamp"
TOLERANCE_SECONDS = 300
# What a stage change is: the subscription type and the property that changed. HubSpot
# has two formats: the legacy one names the object in the type (`deal.propertyChange`);
# the generic one, for current apps, says `object.propertyChange` and names the object
# type in `objectTypeId` ("0-3" a deal, "0-1" a contact): both are read.
# https://developers.hubspot.com/changelog/public-beta-generic-webhook-subscriptions
STAGE_PROPERTIES = {
    ("deal.propertyChange", "dealstage"): "deal",
    ("contact.propertyChange", "lifecyclestage"): "contact",
}
GENERIC = "object.propertyChange"
# The Lead object (`0-136`, HubSpot's prospecting leads) moves through `hs_pipeline_stage`;
# its person is its associated contact: https://developers.hubspot.com/docs/api-reference/crm-leads-v3/guide
OBJECT_TYPES = {"0-3": "deal", "0-1": "contact", "0-136": "lead"}
STAGE_PROPERTY = {"deal": "dealstage", "contact": "lifecyclestage", "lead": "hs_pipeline_stage"}


# The escapes HubSpot decodes in the URL it signs, and no other (`%20`, `%3D`, `%2B` stay):
# https://developers.hubspot.com/docs/api/webhooks/validating-requests
_DECODED = {
    "3a": ":",
    "2f": "/",
    "3f": "?",
    "40": "@",
    "21": "!",
    "24": "$",
    "27": "'",
    "28": "(",
    "29": ")",
    "2a": "*",
    "2c": ",",
    "3b": ";",
}
_ESCAPE = re.compile(r"%(3[afAFbB]|2[fFcCaA14789]|40)")


def signature(secret: str, method: str, url: str, body: bytes, timestamp: str) -> str:
    """HubSpot's v3 signature: method, URL with its twelve listed escapes decoded, body, timestamp."""
    decoded = _ESCAPE.sub(lambda m: _DECODED.get(m.group(1).lower(), m.group(0)), url)
    message = method.upper().encode() + decoded.encode("utf-8") + body + timestamp.encode()
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
        kind, event_type = _kind(event)
        event_id, object_id, account = (graph_id(event.get(k)) for k in ("eventId", "objectId", "portalId"))
        stage = plain(event.get("propertyValue"))
        if kind is None:
            skipped.append({"reason": "not_a_stage_change", "event_type": event_type[:64]})
        elif not (event_id and object_id and account and stage and len(stage) <= 100):
            skipped.append({"reason": "malformed_event", "event_id": str(event.get("eventId"))[:32]})
        else:
            occurred = event.get("occurredAt")
            items.append(
                {
                    "crm": NAME,
                    "event_key": event_key(event, event_id, object_id, stage),
                    "object": kind,
                    "object_id": object_id,
                    "account": account,
                    "stage_id": stage,
                    "occurred_at": occurred / 1000 if isinstance(occurred, (int, float)) else None,
                }
            )
    return {"items": items, "skipped": skipped}


def _kind(event: dict) -> tuple[str | None, str]:
    """("deal" or "contact" when the event is a stage change, else None; its type as sent).
    Live deliveries name the type `subscriptionType`; HubSpot's own example payload says
    `eventType`: either is read."""
    event_type = plain(event.get("subscriptionType")) or plain(event.get("eventType")) or ""
    prop = plain(event.get("propertyName"))
    if event_type == GENERIC:
        kind = OBJECT_TYPES.get(plain(event.get("objectTypeId")) or "")
        return (kind if kind and STAGE_PROPERTY[kind] == prop else None), event_type
    return STAGE_PROPERTIES.get((event_type, prop or "")), event_type


def event_key(event: dict, event_id: str, object_id: str, stage: str) -> str:
    """The idempotency key: HubSpot says `eventId` "is not guaranteed to be unique", so it is
    joined with what a redelivery repeats and another change does not: the subscription,
    the object, and the change (the stage and when it was made). A retry keeps every part."""
    change = f"{graph_id(event.get('subscriptionId'))}|{object_id}|{stage}|{event.get('occurredAt')}".encode()
    return f"{event_id}-{hashlib.sha256(change).hexdigest()[:16]}"  # 37 characters at most: a plain job id


def lead_key(item: dict) -> str:
    """The event's idempotency key (`event_key`): the same event redelivered carries it again."""
    return item["event_key"]
