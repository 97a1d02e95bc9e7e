"""Typeform `form_response` webhooks, per Typeform's webhooks docs
(www.typeform.com/developers/webhooks/).

Notes: docs/internals/sources.md
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import Mapping, Sequence

from workers.common import jsonbody
from workers.common.refusals import MalformedBody
from workers.common.times import unix_time
from workers.sources.ids import mapping, plain, tool_id
from workers.sources.signing import check_header

NAME = "typeform"
SIGNATURE_HEADER = "Typeform-Signature"


def signature(secret: str, body: bytes) -> str:
    digest = hmac.new(secret.encode("utf-8"), body, hashlib.sha256).digest()
    return "sha256=" + base64.b64encode(digest).decode("ascii")


def sign(secret: str, body: bytes, url: str = "") -> dict[str, str]:
    """The headers a sender signing `body` with `secret` sends."""
    return {SIGNATURE_HEADER: signature(secret, body)}


def verify(body: bytes, headers: Mapping[str, str], secrets: Sequence[str]) -> None:
    """Check `Typeform-Signature: sha256=<base64 HMAC-SHA256>` over the exact bytes.

    Raises:
        BadSignature: `missing_signature` or `bad_signature`.
    """
    check_header(headers, SIGNATURE_HEADER, (signature(s, body) for s in secrets), "Typeform")


def _value(answer: dict):
    """The answer's value sits under the key its `type` names; choices give their labels."""
    kind = answer.get("type")
    if not isinstance(kind, str):
        return None
    value = answer.get(kind)
    if kind == "choice" and isinstance(value, dict):
        return value.get("label") or value.get("other")
    if kind == "choices" and isinstance(value, dict):
        return value.get("labels") or []
    return value


def parse(body: bytes) -> dict:
    """The submission as a plain dict, or a skip reason for anything but a completed response.

    Raises:
        MalformedBody: not JSON, or a `form_response` without form id, token or answers list.
    """
    doc = jsonbody.load(body)
    if not isinstance(doc, dict):
        raise MalformedBody("expected a JSON object", reason="unexpected_shape")
    if doc.get("event_type") != "form_response":
        return {"leads": [], "skipped": [{"reason": "not_form_response", "event_type": str(doc.get("event_type"))}]}
    response = doc.get("form_response")
    if (
        not isinstance(response, dict)
        or not response.get("form_id")
        or not response.get("token")
        or not isinstance(response.get("answers") or [], list)
    ):
        raise MalformedBody("form_response needs form_id, token and an answers list", reason="unexpected_shape")
    form_id, token = tool_id(response["form_id"]), tool_id(response["token"])
    if form_id is None or token is None:
        raise MalformedBody("form_id and token must be letters, digits, _ or -", reason="bad_id")
    submitted = unix_time(response.get("submitted_at"))
    # "Send test request" in Typeform's UI: dummy answers, event_id equal to the token.
    test = doc.get("event_id") == token or (
        response.get("landed_at") is not None and response.get("landed_at") == response.get("submitted_at")
    )
    answers = []
    for answer in response.get("answers") or []:
        field = answer.get("field") if isinstance(answer, dict) else None
        if isinstance(field, dict):
            answers.append(
                {
                    "id": plain(field.get("id")),
                    "ref": plain(field.get("ref")),
                    "type": plain(answer.get("type")),
                    "value": _value(answer),
                }
            )
    hidden = mapping(response.get("hidden"))
    hidden = {k: v for k, v in hidden.items() if isinstance(v, str)}
    return {
        "leads": [
            {
                "source": NAME,
                "form_id": form_id,
                "submission_id": token,
                "submitted_at": submitted,
                "answers": answers,
                "hidden": hidden,
                "test": test,
            }
        ],
        "skipped": [],
    }


def lead_key(item: dict) -> str:
    """The token is unique only within a form."""
    return f"{item['form_id']}:{item['submission_id']}"
