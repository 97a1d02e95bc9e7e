"""The Calendly source on its own: `t=...,v1=...` over timestamp and raw body, its window,
a booking with its person, a cancel recorded."""

import time

import pytest

from helpers import fixture_bytes
from workers.common.refusals import BadSignature
from workers.vendors.calendly import webhook as calendly

KEY = "calendly-signing-key"


def test_a_signed_booking_verifies():
    body = fixture_bytes("calendly", "invitee_created__booking.json")
    calendly.verify(body, calendly.sign(KEY, body), [KEY])


@pytest.mark.parametrize("age", [181, -181])
def test_a_timestamp_more_than_three_minutes_off_is_refused(age):
    body = b"{}"
    with pytest.raises(BadSignature) as refused:
        calendly.verify(body, calendly.sign(KEY, body, now=time.time() - age), [KEY])
    assert refused.value.reason == "stale_timestamp"


def test_the_booking_carries_its_person_with_the_phone_question():
    [item] = calendly.parse(fixture_bytes("calendly", "invitee_created__booking.json"))["items"]
    assert item["person"]["email"] == ["joe@example.com"] and item["person"]["phone"] == ["+33 6 12 34 56 78"]
    assert (item["stage_id"], item["event_key"]) == ("invitee.created", "AAAAAAAAAAAAAAAA:created")


def test_a_rescheduling_cancel_is_skipped_as_such():
    parsed = calendly.parse(fixture_bytes("calendly", "invitee_canceled_rescheduled__ignored.json"))
    assert parsed["items"] == [] and parsed["recorded"][0]["reason"] == "booking_rescheduled"


@pytest.mark.parametrize(
    "tracking, fbclid",
    [
        ({"utm_source": "facebook", "utm_content": "IwAR2Fclick"}, "IwAR2Fclick"),
        ({"utm_source": "newsletter", "utm_content": "IwAR2Fclick"}, None),
        ({"fbclid": "IwAR3other"}, "IwAR3other"),
        ({}, None),
    ],
)
def test_a_meta_click_id_in_the_links_tracking_is_kept(tracking, fbclid):
    import json

    doc = json.loads(fixture_bytes("calendly", "invitee_created__booking.json"))
    doc["payload"]["tracking"] = tracking
    [item] = calendly.parse(json.dumps(doc).encode())["items"]
    assert item["person"]["fbclid"] == fbclid
