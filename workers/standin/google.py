"""Google's side of the stand-in (server.py), from Google's documents: an OAuth token endpoint
for service accounts (the JWT bearer grant, RFC 7523), and the Data Manager API's
`events:ingest` and `requestStatus:retrieve`, which refuse a whole request for one invalid
event (fast-fail), as Google's does.

Notes: docs/internals/standin.md
"""

from __future__ import annotations

import base64
import json
import re
import time
import uuid

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding

TOKEN_PATH = ["google", "token"]
JWT_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
SCOPE = "https://www.googleapis.com/auth/datamanager"
MAX_EVENTS = 2_000
MAX_IDENTIFIERS = 10
_SHA256_HEX = re.compile(r"[0-9a-f]{64}")
_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")


class GoogleStandin:
    def google_init(self) -> None:
        self.google_keys: dict[str, bytes] = {}  # service account email -> its public key (PEM)
        self.google_tokens: set[str] = set()  # access tokens issued
        self.google_events: list[dict] = []  # every event accepted, with its request id and destination
        self.google_requests: dict[str, dict] = {}  # request id -> what Google would report of it
        self.google_refuse: set[str] = set()  # transactionIds Google refuses (INVALID_FORMAT)
        self.google_script: list[tuple[int, dict]] = []  # the next answers: (status, error body)
        self.google_latency = 0.0
        self.google_actions: dict[str, str] = {}  # conversion action id -> its type (empty: any id is one)
        self.google_denied: set[str] = set()  # Google Ads accounts the service account cannot reach

    def google_kind(self, method: str, parts: list[str]) -> str | None:
        if method == "POST" and parts == TOKEN_PATH:
            return "google_token"
        if method == "POST" and parts == ["v1", "events:ingest"]:
            return "google_ingest"
        if method == "GET" and parts == ["v1", "requestStatus:retrieve"]:
            return "google_status"
        return None

    def google_answer(self, kind: str, headers, query: dict, body) -> tuple[int, dict]:
        time.sleep(self.google_latency)
        if kind == "google_token":
            return self._google_token(body or {})
        if headers.get("Authorization", "").removeprefix("Bearer ") not in self.google_tokens:
            return _error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
        if self.google_script:
            return self.google_script.pop(0)
        if kind == "google_status":
            found = self.google_requests.get((query.get("requestId") or [""])[0])
            if found is None:
                return _error(400, "INVALID_ARGUMENT", "Request ID not found.", "INVALID_REQUEST_ID")
            return 200, found
        return self._google_ingest(body)

    def _google_token(self, form: dict) -> tuple[int, dict]:
        """A service account's signed assertion for an access token (Google's OAuth 2.0 for
        server to server applications): checked against the key the test registered."""
        if form.get("grant_type") != JWT_GRANT or not form.get("assertion"):
            return 400, {"error": "unsupported_grant_type"}
        try:
            head, claims, signature = form["assertion"].split(".")
            payload = json.loads(_unb64(claims))
            key = serialization.load_pem_public_key(self.google_keys[payload["iss"]])
            key.verify(_unb64(signature), f"{head}.{claims}".encode(), padding.PKCS1v15(), hashes.SHA256())  # type: ignore[union-attr, call-arg, arg-type]
        except (ValueError, KeyError, InvalidSignature):
            return 400, {"error": "invalid_grant", "error_description": "Invalid JWT Signature."}
        if SCOPE not in str(payload.get("scope", "")).split():
            return 400, {"error": "invalid_scope"}
        token = "ya29.standin-" + uuid.uuid4().hex
        self.google_tokens.add(token)
        return 200, {"access_token": token, "expires_in": 3599, "token_type": "Bearer"}

    def _google_ingest(self, body) -> tuple[int, dict]:
        problem = _invalid(body) if isinstance(body, dict) else ("INVALID_ARGUMENT", "body")
        if problem:
            return _error(400, "INVALID_ARGUMENT", f"Invalid value at '{problem[1]}'", problem[0])
        for destination in body["destinations"]:
            if destination["operatingAccount"]["accountId"] in self.google_denied:
                return _error(403, "PERMISSION_DENIED", "The caller does not have permission", "PERMISSION_DENIED")
            action = str(destination.get("productDestinationId"))
            if self.google_actions and action not in self.google_actions:
                return _error(400, "INVALID_ARGUMENT", "Invalid conversion action.", "INVALID_CONVERSION_ACTION_ID")
            if self.google_actions and self.google_actions[action] != "UPLOAD_CLICKS":
                return _error(
                    400, "INVALID_ARGUMENT", "Invalid conversion action type.", "INVALID_CONVERSION_ACTION_TYPE"
                )
        refused = [e for e in body["events"] if e.get("transactionId") in self.google_refuse]
        if refused:
            return _error(400, "INVALID_ARGUMENT", "Invalid value at 'events'", "INVALID_FORMAT")
        if body.get("validateOnly"):  # "only errors are returned"
            return 200, {}
        request_id = str(uuid.uuid4())
        by_reference = {d.get("reference"): d for d in body["destinations"]}
        for event in body["events"]:
            named = (event.get("destinationReferences") or [None])[0]
            destination = by_reference.get(named) or body["destinations"][0]
            self.google_events.append({"request_id": request_id, "destination": destination, "event": event})
        self.google_requests[request_id] = {
            "requestStatusPerDestination": [
                {"destination": d, "requestStatus": "SUCCESS", "eventsIngestionStatus": {"recordCount": "1"}}
                for d in body["destinations"]
            ]
        }
        return 200, {"requestId": request_id}


def _invalid(body: dict) -> tuple[str, str] | None:
    """The first rule of Google's the request breaks (reason, field), else None."""
    destinations, events = body.get("destinations"), body.get("events")
    if not isinstance(destinations, list) or not 1 <= len(destinations) <= 10:
        return "REQUIRED_FIELD_MISSING", "destinations"
    for d in destinations:
        account = (d.get("operatingAccount") or {}) if isinstance(d, dict) else {}
        if account.get("accountType") != "GOOGLE_ADS" or not re.fullmatch(r"\d{10}", str(account.get("accountId"))):
            return "INVALID_DESTINATION", "destinations.operating_account"
        if not str(d.get("productDestinationId", "")).isdigit():
            return "INVALID_CONVERSION_ACTION_ID", "destinations.product_destination_id"
    if not isinstance(events, list) or not events:
        return "REQUIRED_FIELD_MISSING", "events"
    if len(events) > MAX_EVENTS:
        return "TOO_MANY_EVENTS", "events"
    for i, event in enumerate(events):
        where = f"events[{i}]"
        if not _TIMESTAMP.fullmatch(str(event.get("eventTimestamp"))):
            return "INVALID_FORMAT", f"{where}.event_timestamp"
        identifiers = (event.get("userData") or {}).get("userIdentifiers") or []
        if not identifiers and not (event.get("adIdentifiers") or {}).get("gclid"):
            return "NO_IDENTIFIERS_PROVIDED", where
        if len(identifiers) > MAX_IDENTIFIERS:
            return "INVALID_FORMAT", f"{where}.user_data"
        if identifiers and body.get("encoding") != "HEX":
            return "INVALID_HEX_ENCODING", "encoding"
        for identifier in identifiers:
            value = identifier.get("emailAddress") or identifier.get("phoneNumber")
            if not _SHA256_HEX.fullmatch(str(value)):
                return "INVALID_SHA256_FORMAT", f"{where}.user_data.user_identifiers"
        if "conversionValue" in event and not re.fullmatch(r"[A-Z]{3}", str(event.get("currency"))):
            return "INVALID_CURRENCY_CODE", f"{where}.currency"
    return None


def _error(status: int, state: str, message: str, reason: str | None = None) -> tuple[int, dict]:
    """Google's error envelope (google.rpc.Status, with its ErrorInfo)."""
    details = [
        {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": "datamanager.googleapis.com"}
    ]
    return status, {
        "error": {"code": status, "message": message, "status": state, "details": details if reason else []}
    }


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
