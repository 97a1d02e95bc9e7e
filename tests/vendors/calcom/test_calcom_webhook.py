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
    assert parsed["recorded"][0]["reason"] == "booking_canceled"


def test_a_new_seat_is_a_booking_of_its_own_person():
    """Every seat of a seated event shares the booking's uid; `attendeeSeatId` names the new
    one, and the attendee holding it is its person (earlier seats are listed too)."""
    [item] = calcom.parse(fixture_bytes("calcom", "booking_created__seat.json"))["items"]
    assert item["object_id"] == "3be561a9-31f1-4b8e-aefc-9d9a085f0dd1"
    assert item["person"]["email"] == ["Nadia.Rahman@Example.com"]
    assert calcom.lead_key(item) == "Se1At2Ed3Bo4Ok5In6Gg7A:3be561a9-31f1-4b8e-aefc-9d9a085f0dd1:booking_created"
    assert (item["person"]["value"], item["person"]["currency"]) == (25, "EUR")


@pytest.mark.parametrize(
    "name, value, currency",
    [("booking_created__paid_isk.json", 15000, "ISK"), ("booking_created__paid_jpy.json", 5000, "JPY")],
)
def test_a_price_is_read_in_stripes_units(name, value, currency):
    """Stripe keeps ISK in hundredths (two-decimal to Stripe, not to ISO 4217) and JPY as it is."""
    [item] = calcom.parse(fixture_bytes("calcom", name))["items"]
    assert (item["person"]["value"], item["person"]["currency"]) == (value, currency)
