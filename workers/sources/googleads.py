"""Google Ads lead form webhooks, per Google's implementation page
(developers.google.com/google-ads/webhook/docs/implementation): one lead per POST, its
answers as `user_column_data`, authenticated by the advertiser's key in the body
(`google_key`), never by a signature.

Notes: docs/internals/sources.md
"""

from __future__ import annotations

import json
from typing import Mapping, Sequence

from workers.common import jsonbody
from workers.common.refusals import BadSignature, MalformedBody
from workers.sources.ids import plain
from workers.sources.signing import matches_any

NAME = "googleads"
KEY_FIELD = "google_key"
_IDS = ("form_id", "campaign_id", "adgroup_id", "creative_id", "asset_group_id")  # int64: kept as text


def sign(secret: str, body: bytes, url: str = "") -> dict[str, str]:
    """Google signs nothing: its key travels in the body (sign_body)."""
    return {"Content-Type": "application/json"}


def sign_body(secret: str, body: bytes, url: str = "") -> tuple[bytes, dict[str, str]]:
    """The body Google posts for a lead whose form holds the key `secret` (a body that is no
    JSON object cannot carry it: left as it is)."""
    try:
        doc = jsonbody.load(body)
    except MalformedBody:
        return body, sign(secret, body, url)
    if not isinstance(doc, dict):
        return body, sign(secret, body, url)
    return json.dumps({**doc, KEY_FIELD: secret}).encode(), sign(secret, body, url)


def verify(body: bytes, headers: Mapping[str, str], secrets: Sequence[str]) -> None:
    """The body's `google_key` equals one of the configured keys (each compared, in
    constant time: a key being rotated out still verifies).

    Raises:
        BadSignature: `missing_signature` (no key, or Google's test sample's `Google_key`
            spelling) or `bad_signature`.
    """
    try:
        doc = jsonbody.load(body)
    except MalformedBody:
        raise BadSignature("the body is not JSON, so it carries no google_key", reason="missing_signature") from None
    given = doc.get(KEY_FIELD) if isinstance(doc, dict) else None
    if not isinstance(given, str) or not given:
        spelled = isinstance(doc, dict) and "Google_key" in doc
        detail = "the body has Google_key, not google_key" if spelled else "the body has no google_key"
        raise BadSignature(detail, reason="missing_signature")
    if not matches_any(secrets, given):
        raise BadSignature("google_key matches no configured key", reason="bad_signature")


def parse(body: bytes) -> dict:
    """The lead as a plain dict: its answers by `column_id` (and `column_name`, which custom
    questions are known by), its ids as text, whether Google marked it a test.

    Raises:
        MalformedBody: not a JSON object, no `lead_id`, or `user_column_data` not a list.
    """
    doc = jsonbody.load(body)
    if not isinstance(doc, dict):
        raise MalformedBody("expected a JSON object", reason="unexpected_shape")
    lead_id = plain(doc.get("lead_id"))
    columns = doc.get("user_column_data") or []
    if not lead_id or not isinstance(columns, list):
        raise MalformedBody("a lead needs lead_id and a user_column_data list", reason="unexpected_shape")
    answers = [
        {"id": plain(c.get("column_id")), "ref": plain(c.get("column_name")), "value": plain(c.get("string_value"))}
        for c in columns
        if isinstance(c, dict)
    ]
    lead = {
        "source": NAME,
        "submission_id": lead_id,
        "answers": answers,
        "gclid": plain(doc.get("gcl_id")),
        "submitted_at": plain(doc.get("lead_submit_time")),
        "test": doc.get("is_test") is True,
        **{name: _id(doc.get(name)) for name in _IDS},
    }
    return {"leads": [lead], "skipped": []}


def lead_key(item: dict) -> str:
    """Google's lead id is unique across every form."""
    return item["submission_id"]


def _id(value) -> str | None:
    """An int64 id as its digits (JSON numbers past 2^53 lose nothing as text)."""
    if isinstance(value, bool) or value is None:
        return None
    text = str(value)
    return text if text.isdigit() else None
