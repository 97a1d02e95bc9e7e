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

    def body(self) -> dict:
        out: dict = {
            "operatingAccount": {"accountType": "GOOGLE_ADS", "accountId": self.operating_account},
            "productDestinationId": self.conversion_action,
        }
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
    gclid: str | None = None,
    value: float | None = None,
    currency: str | None = None,
    consent: dict | None = None,
) -> dict:
    """One conversion. `emails` and `phones` in Google's normalised form (googlekeys); at most
    MAX_IDENTIFIERS of them go, emails first. `consent`: `adUserData` and
    `adPersonalization`, each granted or denied, else left out.

    Raises:
        ValueError: neither an identifier nor a click id (Google: NO_IDENTIFIERS_PROVIDED).
    """
    identifiers = [{"emailAddress": googlekeys.hashed(e)} for e in dict.fromkeys(emails)]
    identifiers += [{"phoneNumber": googlekeys.hashed(p)} for p in dict.fromkeys(phones)]
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
    return [
        {
            "destinations": [destination.body()],
            "encoding": "HEX",
            "validateOnly": validate_only,
            "events": events[start : start + MAX_EVENTS],
        }
        for start in range(0, len(events), MAX_EVENTS)
    ]
