"""The HubSpot source on its own: the v3 signature (method, URL as called, body, timestamp),
its 5-minute window, rotation, and the stage changes a batch carries."""

import json
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers import fixture_bytes
from workers.common.refusals import BadSignature, MalformedBody
from workers.sources.ids import tool_id
from workers.vendors.hubspot import webhook as hubspot

SECRET = "a1b2c3d4-client-secret"
URL = "https://leads.example.com/webhooks/hubspot"


def test_a_signed_batch_verifies():
    body = fixture_bytes("hubspot", "batch__mixed.json")
    hubspot.verify(body, hubspot.sign(SECRET, body, URL), [SECRET], url=URL)


def test_the_signature_is_hubspots_recipe():
    """base64(HMAC-SHA256(secret, "POST" + URL + body + timestamp)), per HubSpot's guide."""
    import base64
    import hashlib
    import hmac

    body, stamp = b'[{"eventId":1}]', "1795000000000"
    expected = base64.b64encode(
        hmac.new(SECRET.encode(), b"POST" + URL.encode() + body + stamp.encode(), hashlib.sha256).digest()
    ).decode()
    assert hubspot.signature(SECRET, "POST", URL, body, stamp) == expected


def test_the_url_is_signed_with_its_listed_escapes_decoded_and_the_rest_kept():
    body = b"[]"
    headers = hubspot.sign(SECRET, body, "https://leads.example.com/webhooks/hubspot?a=b:c&d=e%20f%2Bg")
    hubspot.verify(body, headers, [SECRET], url="https://leads.example.com/webhooks/hubspot?a=b%3Ac&d=e%20f%2Bg")


@pytest.mark.parametrize(
    "url", [URL.replace("https", "http"), URL + "?x=1", "https://other.example.com/webhooks/hubspot"]
)
def test_a_signature_for_another_url_is_refused(url):
    body = fixture_bytes("hubspot", "batch__mixed.json")
    with pytest.raises(BadSignature):
        hubspot.verify(body, hubspot.sign(SECRET, body, URL), [SECRET], url=url)


@pytest.mark.parametrize("age", [-301, 301, 3600])
def test_a_timestamp_more_than_five_minutes_off_is_refused(age):
    body = fixture_bytes("hubspot", "batch__mixed.json")
    headers = hubspot.sign(SECRET, body, URL, now=time.time() - age)
    with pytest.raises(BadSignature) as refused:
        hubspot.verify(body, headers, [SECRET], url=URL)
    assert refused.value.reason == "stale_timestamp"


def test_a_rotated_out_secret_still_verifies_during_rotation():
    body = fixture_bytes("hubspot", "batch__mixed.json")
    hubspot.verify(body, hubspot.sign("old-secret", body, URL), [SECRET, "old-secret"], url=URL)


def test_missing_timestamp_is_a_missing_signature():
    body = b"[]"
    headers = {hubspot.SIGNATURE_HEADER: hubspot.sign(SECRET, body, URL)[hubspot.SIGNATURE_HEADER]}
    with pytest.raises(BadSignature) as refused:
        hubspot.verify(body, headers, [SECRET], url=URL)
    assert refused.value.reason == "missing_signature"


def test_batch__mixed_carries_each_stage_change_and_skips_the_rest():
    parsed = hubspot.parse(fixture_bytes("hubspot", "batch__mixed.json"))
    assert [(i["event_key"].split("-")[0], i["object"], i["stage_id"]) for i in parsed["items"]] == [
        ("1964117801", "deal", "qualifiedtobuy"),
        ("1964117802", "deal", "appointmentscheduled"),
        ("1964117804", "deal", "1289471"),
    ]
    assert parsed["skipped"] == [{"reason": "not_a_stage_change", "event_type": "deal.creation"}]
    assert parsed["items"][0]["account"] == "4512345" and parsed["items"][0]["occurred_at"] == 1795000000


def test_contact_propertychange__lifecyclestage_is_a_contact_stage():
    [item] = hubspot.parse(fixture_bytes("hubspot", "contact_propertychange__lifecyclestage.json"))["items"]
    assert (item["object"], item["object_id"], item["stage_id"]) == ("contact", "1246965", "marketingqualifiedlead")
    assert hubspot.lead_key(item).startswith("3816279340-")  # eventId, then subscription, object and change


@pytest.mark.parametrize("body", [b"{}", b"[]", b'"x"', b"not json"])
def test_what_is_not_a_batch_is_malformed(body):
    with pytest.raises(MalformedBody):
        hubspot.parse(body)


@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(
                ["eventId", "objectId", "portalId", "propertyValue", "subscriptionType", "propertyName", "occurredAt"]
            ),
            st.one_of(st.none(), st.integers(), st.text(max_size=30), st.lists(st.integers())),
        )
    )
)
def test_any_list_of_events_parses_to_items_or_skips_never_raises(events):
    body = json.dumps(events or [{}]).encode()
    parsed = hubspot.parse(body)
    assert len(parsed["items"]) + len(parsed["skipped"]) == len(events or [{}])
    assert all(tool_id(i["event_key"]) and i["object_id"].isdigit() for i in parsed["items"])  # a plain job id


def test_the_idempotency_key_keeps_a_retry_and_parts_changes_that_share_an_event_id():
    """HubSpot: `eventId` "is not guaranteed to be unique"; a retry repeats everything but
    attemptNumber."""
    [event] = json.loads(fixture_bytes("hubspot", "deal_propertychange__dealstage.json"))
    key = lambda e: hubspot.parse(json.dumps([e]).encode())["items"][0]["event_key"]  # noqa: E731
    assert key({**event, "attemptNumber": 3}) == key(event)
    for change in ({"objectId": 1}, {"subscriptionId": 1}, {"propertyValue": "qualifiedtobuy"}, {"occurredAt": 1}):
        assert key({**event, **change}) != key(event), change
    assert len(key({**event, "eventId": 10**19, "objectId": 10**19})) <= 64


@pytest.mark.parametrize(
    "case", json.loads(fixture_bytes("hubspot", "signing/v3_signatures.json")), ids=lambda c: c["uri"][-24:]
)
def test_the_v3_signature_decodes_only_the_twelve_escapes_hubspot_lists(case):
    """`%3A %2F %3F %40 %21 %24 %27 %28 %29 %2A %2C %3B` are decoded; `%20`, `%3D`, `%26` stay."""
    got = hubspot.signature(case["secret"], case["method"], case["uri"], case["body"].encode(), case["timestamp"])
    assert got == case["expected_signature"]
