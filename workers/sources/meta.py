"""Meta Lead Ads webhooks (object `page`, field `leadgen`), per Meta's Lead Ads webhooks guide
(developers.facebook.com/docs/marketing-api/guides/lead-ads/retrieving).

Notes: docs/internals/sources.md
"""

from __future__ import annotations

from typing import Mapping, Sequence

from workers.common import jsonbody
from workers.common.refusals import BadSignature, MalformedBody
from workers.common.times import unix_time
from workers.sources.ids import graph_id
from workers.sources.signing import hmac_hex, matches_any

SIGNATURE_HEADER = "X-Hub-Signature-256"
NAME = "meta"


def signature(secret: str, body: bytes) -> str:
    """The header value Meta sends for `body` (and `leadrelay send-test` signs with)."""
    return "sha256=" + hmac_hex(secret, body)


def sign(secret: str, body: bytes, url: str = "") -> dict[str, str]:
    """The headers a sender signing `body` with `secret` sends."""
    return {SIGNATURE_HEADER: signature(secret, body)}


def verify(body: bytes, headers: Mapping[str, str], secrets: Sequence[str]) -> None:
    """Check `X-Hub-Signature-256` over the exact bytes received.

    Raises:
        BadSignature: reason `missing_signature` when the header is absent (a
            sha1-only `X-Hub-Signature` counts as absent), `bad_signature` when it
            matches none of the secrets.
    """
    header = headers.get(SIGNATURE_HEADER)
    if not header:
        raise BadSignature(f"{SIGNATURE_HEADER} header is required", reason="missing_signature")
    scheme, _, digest = header.strip().partition("=")
    if scheme != "sha256" or not digest:
        raise BadSignature(f"{SIGNATURE_HEADER} must be sha256=<hex>")
    if not matches_any((hmac_hex(s, body) for s in secrets), digest.lower()):
        raise BadSignature("signature does not match the body for any configured app secret")


def handshake(args: Mapping[str, str], verify_token: str) -> str | None:
    """The subscription challenge to echo back, or None when the request is not Meta's."""
    return None if refusal(args, verify_token) else args["hub.challenge"]


def refusal(args: Mapping[str, str], verify_token: str) -> tuple[str, str] | None:
    """Why a subscription check is refused, one cause and its fix: (reason, detail); None
    when it is Meta's, with our verify token."""
    if args.get("hub.mode") != "subscribe":
        return "not_subscribe", "hub.mode must be subscribe: this address answers Meta's subscription check only"
    if not verify_token:
        return "verify_token_unset", "META_VERIFY_TOKEN is not set: set it to the app's Webhooks Verify Token"
    if not matches_any([verify_token], args.get("hub.verify_token", "")):
        return "wrong_verify_token", (
            "hub.verify_token is not META_VERIFY_TOKEN: make the Verify Token in the app's Webhooks "
            "settings and META_VERIFY_TOKEN the same text"
        )
    if not args.get("hub.challenge"):
        return "no_challenge", "hub.challenge is missing: Meta always sends one"
    return None


def parse(body: bytes) -> dict:
    """Every leadgen change in a notification, as plain dicts.

    Returns `{"object": ..., "leads": [...], "skipped": [{"field"|"reason": ...}]}`.
    Meta batches up to 1000 changes over several entries; each is walked.

    Raises:
        MalformedBody: not JSON (`malformed_json`), or not an object with an
            `entry` list (`unexpected_shape`).
    """
    doc = jsonbody.load(body)
    if not isinstance(doc, dict) or not isinstance(doc.get("entry"), list):
        raise MalformedBody("expected an object with an `entry` list", reason="unexpected_shape")

    leads, skipped = [], []
    for entry in doc["entry"]:
        changes = entry.get("changes") if isinstance(entry, dict) else None
        if not isinstance(changes, list):
            skipped.append({"reason": "entry_without_changes"})
            continue
        for change in changes:
            field = change.get("field") if isinstance(change, dict) else None
            if field != "leadgen":
                skipped.append({"reason": "not_leadgen", "field": str(field)})
                continue
            lead = _lead(change.get("value"))
            if lead is None:
                skipped.append({"reason": "leadgen_without_id", "field": field})
            else:
                leads.append(lead)
    return {"object": doc.get("object"), "leads": leads, "skipped": skipped}


def _lead(value) -> dict | None:
    if not isinstance(value, dict):
        return None
    leadgen_id = graph_id(value.get("leadgen_id"))
    if leadgen_id is None:
        return None
    return {
        "source": NAME,
        "leadgen_id": leadgen_id,
        "page_id": graph_id(value.get("page_id")),
        "form_id": graph_id(value.get("form_id")),
        # ad_id is 0 or absent for organic and ad-preview leads.
        "ad_id": graph_id(value.get("ad_id")) if graph_id(value.get("ad_id")) not in (None, "0") else None,
        "adgroup_id": graph_id(value.get("adgroup_id")),
        # Unix seconds only; one out of range counts as none (the lead read gives Meta's).
        "created_time": unix_time(value.get("created_time")) if isinstance(value.get("created_time"), int) else None,
    }


def lead_key(lead: dict) -> str:
    """Meta redelivers the same leadgen_id for up to 36 hours: it dedupes them."""
    return lead["leadgen_id"]
