"""Conversions as Google's Data Manager API takes them (`POST /v1/events:ingest`): a request
per destination (the Google Ads account that owns the stage's conversion action), at most
MAX_EVENTS events each, identifiers hashed by Google's rules (identity/googlekeys.py, never
Meta's), a `transactionId` per lead and stage so a retry or a replay restates rather than
duplicates.

Notes: docs/internals/events.md
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

from workers.identity import googlekeys

MAX_EVENTS = 2_000  # per request (the limits page and the proto)
MAX_IDENTIFIERS = 10  # per event
CONSENT = ("CONSENT_GRANTED", "CONSENT_DENIED")  # else not sent: Google reads it unspecified


@dataclass(frozen=True)
class Destination:
    operating_account: str  # the Google Ads account that owns the conversion action: 10 digits
    conversion_action: str  # its id (`productDestinationId`), type UPLOAD_CLICKS
    login_account: str | None = None  # a manager the credential reaches it through
    reference: str | None = None  # how a request's events name it, when it holds several

    def body(self) -> dict:
        out: dict = {
            "operatingAccount": {"accountType": "GOOGLE_ADS", "accountId": self.operating_account},
            "productDestinationId": self.conversion_action,
        }
        if self.reference:
            out["reference"] = self.reference
        if self.login_account:
            out["loginAccount"] = {"accountType": "GOOGLE_ADS", "accountId": self.login_account}
        return out


def transaction_id(source: str, key: str, stage: str) -> str:
    """The same lead and stage always get the same id, and it names no one (Google refuses
    an id holding personal data): 32 hex digits of a hash of the three."""
    return hashlib.sha256(f"{source}:{key}:{stage}".encode()).hexdigest()[:32]


def event(
    *,
    transaction: str,
    occurred: int,
    emails: Sequence[str] = (),
    phones: Sequence[str] = (),
    email_hashes: Sequence[str] = (),
    phone_hashes: Sequence[str] = (),
    gclid: str | None = None,
    value: float | None = None,
    currency: str | None = None,
    consent: dict | None = None,
) -> dict:
    """One conversion. `emails` and `phones` in Google's normalised form (googlekeys), or
    their hashes as kept (`email_hashes`, `phone_hashes`); at most MAX_IDENTIFIERS of them
    go, emails first. `consent`: `adUserData` and
    `adPersonalization`, each granted or denied, else left out.

    Raises:
        ValueError: neither an identifier nor a click id (Google: NO_IDENTIFIERS_PROVIDED).
    """
    mails = dict.fromkeys([*(googlekeys.hashed(e) for e in emails), *email_hashes])
    numbers = dict.fromkeys([*(googlekeys.hashed(p) for p in phones), *phone_hashes])
    identifiers = [{"emailAddress": h} for h in mails] + [{"phoneNumber": h} for h in numbers]
    if not identifiers and not gclid:
        raise ValueError("no identifier and no click id: Google would refuse it (NO_IDENTIFIERS_PROVIDED)")
    out: dict = {
        "transactionId": transaction,
        "eventTimestamp": datetime.fromtimestamp(occurred, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    if gclid:
        out["adIdentifiers"] = {"gclid": gclid}
    if identifiers:
        out["userData"] = {"userIdentifiers": identifiers[:MAX_IDENTIFIERS]}
    if value is not None and currency:
        out["conversionValue"], out["currency"] = float(value), currency.upper()
    given = {k: v for k, v in (consent or {}).items() if k in ("adUserData", "adPersonalization") and v in CONSENT}
    if given:
        out["consent"] = given
    return out


def requests(destination: Destination, events: list[dict], validate_only: bool = False) -> list[dict]:
    """The ingest requests for these events: MAX_EVENTS at most each, hex-encoded hashes."""
    return several([destination], events, validate_only)


def several(destinations: Sequence[Destination], events: list[dict], validate_only: bool = False) -> list[dict]:
    """Requests naming several destinations (each event names its own by reference)."""
    return [
        {
            "destinations": [d.body() for d in destinations],
            "encoding": "HEX",
            "validateOnly": validate_only,
            "events": events[start : start + MAX_EVENTS],
        }
        for start in range(0, len(events), MAX_EVENTS)
    ]


def transaction_of(event_id: str) -> str:
    """`transaction_id` for our event id (`source:key:event name`): the same three."""
    return hashlib.sha256(event_id.encode()).hexdigest()[:32]


def internal(
    *,
    event_name: str,
    event_id: str,
    event_time: int,
    user_data: dict,
    google: dict,
    value=None,
    currency=None,
    test=False,
) -> dict:
    """A Google event as our pipelines carry it (a plain dict, as a Meta event is): Google's
    identifiers under `google`, and Meta's hashes under `user_data` only to check a forget
    (suppression.py), never sent."""
    return {
        "event_name": event_name,
        "event_id": event_id,
        "event_time": int(event_time),
        "user_data": {k: v for k, v in user_data.items() if k in ("em", "ph", "external_id", "lead_id")},
        "google": google,
        "value": value,
        "currency": currency,
        **({"test": True} if test else {}),
    }


def of_internal(item: dict, reference: str | None = None) -> dict:
    """The Data Manager event for an internal one (and the destination it names).

    Raises:
        ValueError: no identifier and no click id.
    """
    google = item.get("google") or {}
    out = event(
        transaction=transaction_of(item["event_id"]),
        occurred=item["event_time"],
        email_hashes=google.get("em", ()),
        phone_hashes=google.get("ph", ()),
        gclid=google.get("gclid"),
        value=item.get("value"),
        currency=item.get("currency"),
        consent=google.get("consent"),
    )
    if reference:
        out["destinationReferences"] = [reference]
    return out
