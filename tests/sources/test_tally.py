"""The Tally source on its own: signature over raw bytes, option ids resolved, hidden fields."""

import base64
import hashlib
import hmac
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers import fixture_bytes
from workers.common.refusals import BadSignature, MalformedBody
from workers.sources import tally

SECRET = "3f6c2f4e-8a61-4c2b-9d7e-0b1a2c3d4e5f"


def sign(body: bytes, secret: str = SECRET) -> str:
    return base64.b64encode(hmac.new(secret.encode(), body, hashlib.sha256).digest()).decode()


def test_signature_over_the_raw_bytes_verifies():
    body = fixture_bytes("tally", "form_response__hidden_fields.json")
    tally.verify(body, {"Tally-Signature": sign(body)}, [SECRET])


def test_signature_over_a_reserialised_body_fails():
    body = fixture_bytes("tally", "form_response__hidden_fields.json")
    reserialised = json.dumps(json.loads(body)).encode()  # what Tally's own Node sample signs
    with pytest.raises(BadSignature):
        tally.verify(body, {"Tally-Signature": sign(reserialised)}, [SECRET])


@pytest.mark.parametrize("headers, reason", [({}, "missing_signature"), ({"Tally-Signature": "AAAA"}, "bad_signature")])
def test_bad_or_missing_signature(headers, reason):
    with pytest.raises(BadSignature) as err:
        tally.verify(b"{}", headers, [SECRET])
    assert err.value.reason == reason


def test_form_response__hidden_fields_resolves_option_ids_and_reads_hidden_fields():
    [lead] = tally.parse(fixture_bytes("tally", "form_response__hidden_fields.json"))["leads"]
    answers = {a["ref"]: a["value"] for a in lead["answers"]}
    assert answers["Country"] == "Germany"
    assert answers["Consent"] == "I agree to be contacted"
    assert lead["hidden"] == {"fbclid": "IwAR2xYzAbC", "fbp": "fb.1.1731575555123.1098115397"}
    assert lead["submitted_at"] == 1795252443
    assert tally.lead_key(lead) == "mO4xQe"


def test_form_response__unanswered_keeps_nulls_out_of_the_way():
    [lead] = tally.parse(fixture_bytes("tally", "form_response__unanswered.json"))["leads"]
    assert {a["ref"]: a["value"] for a in lead["answers"]} == {
        "Work email": "sam@example.org",
        "Phone number": None,
        "Country": None,
    }


@given(st.binary(max_size=300))
def test_parse_never_raises_anything_but_malformed_body(body):
    try:
        tally.parse(body)
    except MalformedBody:
        pass
