"""Google lead form leads hashed on arrival (workers/intake/googleleads.py): the unseen cases
written from Google's documents and the countries' numbering plans (none may be sent wrong),
the typed columns read and nothing else, custom questions only where the mapping file names
them, consent from the form's question else the destination's default, and a value Google's
rules refuse dropped and counted."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from helpers import judge_google_case
from workers.config.googledest import GoogleDestination
from workers.intake import googleleads
from workers.sources import googleads

CASES = [
    json.loads(line)
    for line in (Path(__file__).parents[1] / "fixtures" / "unseen" / "google-r1.jsonl").read_text().splitlines()
    if line.strip()
]
DESTINATION = GoogleDestination(
    "acme", "default", "1234567890", {"Lead": "1"}, consent={"adUserData": "CONSENT_GRANTED"}, region="GB"
)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _lead(*columns: tuple[str | None, str | None, str]) -> dict:
    body = {"lead_id": "L1", "form_id": 42, "gcl_id": "Cj0K", "user_column_data": []}
    for column_id, name, value in columns:
        body["user_column_data"].append({"column_id": column_id, "column_name": name, "string_value": value})
    [item] = googleads.parse(json.dumps(body).encode())["leads"]
    return item


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
def test_an_unseen_case_is_sent_as_googles_documents_say(case):
    assert judge_google_case(case) == []


def test_only_googles_typed_columns_are_read_and_a_custom_question_only_when_mapped():
    item = _lead(
        (None, "Your mobile number", "07400 123456"),
        ("COMPANY_NAME", "Company", "Example Ltd"),
        ("EMAIL", "User Email", "Ana@Example.com"),
    )
    unmapped = googleleads.prepare(item, None, DESTINATION, "US", "L1")["google"]
    assert unmapped["em"] == [_sha("ana@example.com")] and unmapped["ph"] == []
    mapped = googleleads.prepare(item, {"phone": "Your mobile number"}, DESTINATION, "US", "L1")["google"]
    assert mapped["ph"] == [_sha("+447400123456")]  # read in the destination's region, GB


def test_consent_comes_from_the_forms_question_else_the_destinations_default():
    item = _lead(("EMAIL", None, "ana@example.com"), (None, "May we use your data for ads?", "No"))
    assert googleleads.prepare(item, None, DESTINATION, "US", "L1")["google"]["consent"] == {
        "adUserData": "CONSENT_GRANTED"
    }
    said = googleleads.prepare(item, {"consent": "May we use your data for ads?"}, DESTINATION, "US", "L1")
    assert said["google"]["consent"] == {"adUserData": "CONSENT_DENIED", "adPersonalization": "CONSENT_DENIED"}


def test_a_value_googles_rules_refuse_is_dropped_and_counted_never_guessed():
    item = _lead(("EMAIL", None, "not an address"), ("PHONE_NUMBER", None, "12"))
    payload = googleleads.prepare(item, None, DESTINATION, "US", "L1")
    assert payload["google"]["em"] == [] and payload["google"]["ph"] == []
    assert {"key": "google_email", "reason": "invalid_email"} in payload["dropped"]
    assert {"key": "google_phone", "reason": "invalid_phone"} in payload["dropped"]
    assert payload["google"]["gclid"] == "Cj0K"  # the click id still goes
