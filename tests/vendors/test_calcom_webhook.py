"""The Cal.com source on its own: hex HMAC of the raw body, the attendee as the person."""

import pytest

from helpers import fixture_bytes
from workers.common.refusals import BadSignature
from workers.vendors.calcom import webhook as calcom


def test_a_signed_booking_verifies_and_another_body_does_not():
    body = fixture_bytes("calcom", "booking_created__attendee.json")
    calcom.verify(body, calcom.sign("s", body), ["s"])
    with pytest.raises(BadSignature):
        calcom.verify(body + b" ", calcom.sign("s", body), ["s"])


def test_the_first_attendee_is_the_person_and_the_uid_the_key():
    [item] = calcom.parse(fixture_bytes("calcom", "booking_created__attendee.json"))["items"]
    assert item["person"] == {
        "email": ["joe@example.com"],
        "phone": ["+33612345678"],
        "first_name": "Joe",
        "last_name": "Sample",
    }
    assert item["event_key"] == "bFJeNb2uX8ANpT3JL5EfXw:booking_created"


def test_a_cancellation_is_skipped():
    parsed = calcom.parse(fixture_bytes("calcom", "booking_cancelled__ignored.json"))
    assert parsed["skipped"][0]["reason"] == "booking_canceled"
