"""Pipedrive Webhooks v2 deliveries: a deal's stage changed, or it was won.

Notes: docs/internals/vendors.md
"""

from __future__ import annotations

import base64
import binascii
from typing import Mapping, Sequence

from workers.common import jsonbody
from workers.common.refusals import BadSignature, MalformedBody
from workers.common.times import unix_time
from workers.sources.ids import graph_id, mapping, tool_id
from workers.sources.signing import matches_any

NAME = "pipedrive"
API_URL = "https://api.pipedrive.com"  # PIPEDRIVE_API_URL names another (your company domain, the stand-in)
# Pipedrive's stage ids are each account's own; only a won deal means the same everywhere.
DEFAULT_STAGES = {"won": "Purchase"}
SANDBOX_STAGES = {"2": "QualifiedLead", "3": "Schedule"}  # the stand-in's pipeline (standin.py)
SIGNATURE_HEADER = "Authorization"
SECRET_SHAPE = "user:pass"  # its secret is the webhook's Basic credentials, not one string
WON = "won"  # the stage id a win is mapped under
LOST = "lost"


def signature(credentials: str) -> str:
    """The Authorization header for `user:password`."""
    return "Basic " + base64.b64encode(credentials.encode("utf-8")).decode("ascii")


def sign(secret: str, body: bytes, url: str = "") -> dict[str, str]:
    """The header Pipedrive sends: the webhook's credentials, whatever the body."""
    return {SIGNATURE_HEADER: signature(secret)}


def verify(body: bytes, headers: Mapping[str, str], secrets: Sequence[str]) -> None:
    """Check the HTTP Basic credentials against each configured `user:password`.

    Raises:
        BadSignature: `missing_signature` or `bad_signature`.
    """
    given = (headers.get(SIGNATURE_HEADER) or "").strip()
    if not given.lower().startswith("basic "):
        raise BadSignature("HTTP Basic credentials are required", reason="missing_signature")
    try:
        base64.b64decode(given[6:].strip(), validate=True)
    except (binascii.Error, ValueError):
        raise BadSignature("the Basic credentials are not base64") from None
    if not matches_any((signature(s) for s in secrets), "Basic " + given[6:].strip()):
        raise BadSignature("the Basic credentials match no configured Pipedrive webhook credentials")


def parse(body: bytes) -> dict:
    """A deal's stage change or win as a plain dict; anything else skipped with why.

    Raises:
        MalformedBody: not JSON, or no `meta` and `data` objects.
    """
    doc = _as_v2(jsonbody.load(body))
    meta = doc.get("meta") if isinstance(doc, dict) else None
    data = doc.get("data") if isinstance(doc, dict) else None
    if isinstance(meta, dict) and meta.get("action") == "delete" and data is None:
        return {"items": [], "skipped": [{"reason": "deleted", "event_type": _kind(meta)}]}  # data null
    if not isinstance(meta, dict) or not isinstance(data, dict):
        raise MalformedBody("expected meta and data objects (Webhooks v2)", reason="unexpected_shape")
    previous = mapping(doc.get("previous"))
    key, deal, account = tool_id(meta.get("id")), graph_id(data.get("id")), graph_id(meta.get("company_id"))
    if meta.get("entity") != "deal" or meta.get("action") not in ("change", "create"):
        return {"items": [], "skipped": [{"reason": "not_a_deal_change", "event_type": _kind(meta)}]}
    if not (key and deal and account):
        raise MalformedBody("meta.id, meta.company_id and data.id are required", reason="bad_id")
    stage = graph_id(data.get("stage_id"))
    # A deal created straight into a stage (`create`, `previous` null: a form or an import
    # making deals in "Qualified") is a stage as much as a move is; so is one created won.
    created = meta.get("action") == "create"
    if data.get("status") == WON and (created or previous.get("status") != WON and "status" in previous):
        stage = WON
    elif data.get("status") == LOST and (created or previous.get("status") != LOST and "status" in previous):
        stage = LOST
    elif created and stage is not None:
        pass
    elif "stage_id" not in previous or graph_id(previous.get("stage_id")) == stage or stage is None:
        return {"items": [], "skipped": [{"reason": "no_stage_change", "event_key": key}]}
    value = data.get("value")
    return {
        "items": [
            {
                "crm": NAME,
                "event_key": key,
                "object": "deal",
                "object_id": deal,
                "account": account,
                "stage_id": stage,
                "person_id": graph_id(data.get("person_id")),
                "value": value if isinstance(value, (int, float)) and not isinstance(value, bool) else None,
                "currency": data.get("currency") if isinstance(data.get("currency"), str) else None,
                "occurred_at": unix_time(meta.get("timestamp") or data.get("update_time")),
            }
        ],
        "skipped": [],
    }


# Webhooks v1 (still sent beside v2): `current`/`previous` whole, `meta.action` added,
# updated, deleted, merged, `meta.object`; `meta.id` is the object's id, not an event's, so
# a delivery is known by the object and its timestamp (a retry carries both again).
_V1_ACTIONS = {"added": "create", "updated": "change", "deleted": "delete", "merged": "change"}


def _as_v2(doc):
    """A v1 body read as its v2 counterpart; a v2 body (or anything else) as it is."""
    meta = doc.get("meta") if isinstance(doc, dict) else None
    if not isinstance(meta, dict) or not (doc.get("v") == 1 or meta.get("v") == 1 or "current" in doc):
        return doc
    stamp = meta.get("timestamp_micro") or meta.get("timestamp")
    return {
        "meta": {
            "action": _V1_ACTIONS.get(meta.get("action"), meta.get("action")),
            "entity": meta.get("object"),
            "id": f"v1-{meta.get('id')}-{stamp}" if meta.get("id") is not None and stamp else None,
            "company_id": meta.get("company_id"),
            "timestamp": meta.get("timestamp"),
        },
        "data": doc.get("current"),
        "previous": doc.get("previous"),
    }


def _kind(meta: dict) -> str:
    return f"{str(meta.get('action'))[:16]}.{str(meta.get('entity'))[:16]}"


def lead_key(item: dict) -> str:
    """Pipedrive's event id: a retry carries it again."""
    return item["event_key"]
