"""Tally `FORM_RESPONSE` webhooks, per Tally's webhooks docs (tally.so/help/webhooks)."""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import Mapping, Sequence

from workers.common import jsonbody
from workers.common.refusals import MalformedBody
from workers.common.times import unix_time
from workers.sources.ids import plain, tool_id
from workers.sources.signing import check_header

NAME = "tally"
SIGNATURE_HEADER = "Tally-Signature"
CHOICE_TYPES = {"MULTIPLE_CHOICE", "DROPDOWN", "MULTI_SELECT", "RANKING", "CHECKBOXES"}


def signature(secret: str, body: bytes) -> str:
    return base64.b64encode(hmac.new(secret.encode("utf-8"), body, hashlib.sha256).digest()).decode("ascii")


def sign(secret: str, body: bytes, url: str = "") -> dict[str, str]:
    """The headers a sender signing `body` with `secret` sends."""
    return {SIGNATURE_HEADER: signature(secret, body)}


def verify(body: bytes, headers: Mapping[str, str], secrets: Sequence[str]) -> None:
    """Check `Tally-Signature: <base64 HMAC-SHA256>` over the exact bytes (not over a
    re-serialised body, as Tally's own sample does).

    Raises:
        BadSignature: `missing_signature` or `bad_signature`.
    """
    check_header(headers, SIGNATURE_HEADER, (signature(s, body) for s in secrets), "Tally")


def _value(field: dict):
    """Choice types carry option ids; answer with the options' text."""
    value = field.get("value")
    if field.get("type") in CHOICE_TYPES and isinstance(value, list):
        listed = field.get("options")
        options = listed if isinstance(listed, list) else []
        text = {o.get("id"): o.get("text") for o in options if isinstance(o, dict) and isinstance(o.get("id"), str)}
        resolved = [text.get(v, v) if isinstance(v, str) else v for v in value]
        return resolved[0] if len(resolved) == 1 else resolved
    return value


def parse(body: bytes) -> dict:
    """The submission as a plain dict.

    Raises:
        MalformedBody: not JSON, or no `data` with a responseId and a fields list.
    """
    doc = jsonbody.load(body)
    data = doc.get("data") if isinstance(doc, dict) else None
    if not isinstance(data, dict) or not data.get("responseId") or not isinstance(data.get("fields"), list):
        raise MalformedBody("expected data with a responseId and a fields list", reason="unexpected_shape")
    if doc.get("eventType") not in (None, "FORM_RESPONSE"):
        return {"leads": [], "skipped": [{"reason": "not_form_response", "event_type": str(doc.get("eventType"))}]}
    response_id = tool_id(data["responseId"])
    form_id = tool_id(data["formId"]) if data.get("formId") else ""  # absent in some test payloads
    if response_id is None or form_id is None:
        raise MalformedBody("responseId and formId must be letters, digits, _ or -", reason="bad_id")
    submitted = unix_time(data.get("createdAt"))
    answers, hidden = [], {}
    for field in data["fields"]:
        if not isinstance(field, dict):
            continue
        kind = plain(field.get("type"))
        if kind == "HIDDEN_FIELDS":
            if isinstance(field.get("value"), str):
                hidden[str(field.get("label"))] = field["value"]  # the label is the field's name
            continue
        answers.append(
            {
                "id": plain(field.get("key")),
                "ref": plain(field.get("label")),
                "type": kind,
                "value": _value({**field, "type": kind}),
            }
        )
    return {
        "leads": [
            {
                "source": NAME,
                "form_id": form_id,
                "submission_id": response_id,
                "submitted_at": submitted,
                "answers": answers,
                "hidden": hidden,
                "test": False,
            }
        ],
        "skipped": [],
    }


def lead_key(item: dict) -> str:
    """Response ids are unique across forms."""
    return item["submission_id"]
