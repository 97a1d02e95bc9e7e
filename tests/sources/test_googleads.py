"""Google Ads lead form webhooks (workers/sources/googleads.py) as Google documents them:
the key in the body compared against every configured key, the lead's answers by
column_id, int64 ids kept whole, test leads marked, unknown fields ignored."""

from __future__ import annotations

import json

import pytest

from workers.common.refusals import BadSignature, MalformedBody
from workers.sources import googleads

# https://developers.google.com/google-ads/webhook/docs/samples (Google's sample, its
# trailing comma removed; the ids Google elides written out).
SAMPLE = {
    "lead_id": "TeSter-123-ABCDEFGHIJKLMNOPQRSTUVWXYZ-abcdefghijklmnopqrstuvwxyz-0123456789-AaBbCcDdEeFfGgHhIiJjKkLl",
    "campaign_id": 123456,
    "adgroup_id": 0,
    "creative_id": 0,
    "gcl_id": "TeSter-123-ABCDEFGHIJKLMNOPQRSTUVWXYZ-abcdefghijklmnopqrstuvwxyz-0123456789-AaBbCcDdEeFfGgHhIiJjKkLl",
    "api_version": "1.0",
    "form_id": 123456789,
    "google_key": "testkey",
    "is_test": True,
    "user_column_data": [
        {"column_name": "Full Name", "string_value": "FirstName LastName", "column_id": "FULL_NAME"},
        {"column_name": "User Phone", "string_value": "1-650-555-0123", "column_id": "PHONE_NUMBER"},
        {"column_name": "User Email", "string_value": "test@example.com", "column_id": "EMAIL"},
    ],
}


def _body(**changes) -> bytes:
    return json.dumps({**SAMPLE, **changes}).encode()


def test_the_key_in_the_body_is_checked_against_every_configured_key():
    googleads.verify(_body(), {}, ["new-key", "testkey"])  # the old key, still being rotated out
    with pytest.raises(BadSignature) as refused:
        googleads.verify(_body(google_key="guess"), {}, ["testkey"])
    assert refused.value.reason == "bad_signature"


@pytest.mark.parametrize(
    "body, said",
    [
        (json.dumps({k: v for k, v in SAMPLE.items() if k != "google_key"}).encode(), "no google_key"),
        (
            json.dumps({**{k: v for k, v in SAMPLE.items() if k != "google_key"}, "Google_key": "testkey"}).encode(),
            "Google_key, not google_key",
        ),  # fmt: skip
        (b"not json", "not JSON"),
    ],
)
def test_a_body_without_the_key_is_refused_and_says_why(body, said):
    with pytest.raises(BadSignature) as refused:
        googleads.verify(body, {}, ["testkey"])
    assert refused.value.reason == "missing_signature" and said in str(refused.value)


def test_the_documented_sample_reads_as_one_test_lead_with_its_answers_by_column_id():
    lead = googleads.parse(_body())["leads"][0]
    assert lead["test"] is True and lead["submission_id"] == SAMPLE["lead_id"]
    assert {a["id"]: a["value"] for a in lead["answers"]} == {
        "FULL_NAME": "FirstName LastName",
        "PHONE_NUMBER": "1-650-555-0123",
        "EMAIL": "test@example.com",
    }
    assert (lead["form_id"], lead["campaign_id"], lead["adgroup_id"]) == ("123456789", "123456", "0")
    assert lead["gclid"] == SAMPLE["gcl_id"] and googleads.lead_key(lead) == SAMPLE["lead_id"]


def test_a_production_lead_is_no_test_and_its_int64_ids_stay_whole():
    body = _body(form_id=9223372036854775807, lead_submit_time="2024-09-26T12:30:00Z", new_field={"x": 1})
    body = body.replace(b'"is_test": true, ', b"")
    lead = googleads.parse(body)["leads"][0]
    assert lead["test"] is False and lead["form_id"] == "9223372036854775807"
    assert lead["submitted_at"] == "2024-09-26T12:30:00Z"  # Google's own example of the field


@pytest.mark.parametrize("body", [_body(lead_id=None), _body(user_column_data={"a": 1}), b"[1]"])
def test_a_body_that_is_no_lead_is_malformed(body):
    with pytest.raises(MalformedBody):
        googleads.parse(body)
