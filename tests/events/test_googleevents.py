"""The Data Manager API's ingest requests (workers/events/googleevents.py), read by Google's
own generated types (google-ads-datamanager: an unknown field or enum value is refused),
beside Google's documented request; at most 2,000 events a request and 10 identifiers an
event; a transactionId that is the same on every try and names no one."""

from __future__ import annotations

import json

import pytest
from google.ads import datamanager_v1
from google.ads.datamanager_util import Encoding, Formatter
from hypothesis import given
from hypothesis import strategies as st

from workers.events import googleevents
from workers.identity import googlekeys

DESTINATION = googleevents.Destination("1234567890", "987654321")

# https://developers.google.com/data-manager/api/devguides/events/google-ads/offline/send-events
# and https://developers.google.com/data-manager/api/reference/rest/v1/events/ingest (the
# hashes written out here).
DOCUMENTED = {
    "destinations": [
        {
            "operatingAccount": {"accountType": "GOOGLE_ADS", "accountId": "1234567890"},
            "productDestinationId": "987654321",
        }
    ],
    "encoding": "HEX",
    "validateOnly": False,
    "events": [
        {
            "transactionId": "ld_3f9a_won",
            "eventTimestamp": "2026-10-02T14:03:00Z",
            "adIdentifiers": {"gclid": "Cj0KCQjw"},
            "userData": {"userIdentifiers": [{"emailAddress": "a" * 64}, {"phoneNumber": "b" * 64}]},
            "conversionValue": 1200.0,
            "currency": "EUR",
            "consent": {"adUserData": "CONSENT_GRANTED"},
        }
    ],
}


def _googles(request: dict) -> datamanager_v1.IngestEventsRequest:
    """Google's own reading of a request: raises on anything its protos do not define."""
    return datamanager_v1.IngestEventsRequest.from_json(json.dumps(request))


def test_googles_documented_request_and_ours_for_the_same_conversion_read_alike():
    ours = googleevents.requests(
        DESTINATION,
        [
            googleevents.event(
                transaction="ld_3f9a_won",
                occurred=1790949780,  # 2026-10-02T14:03:00Z
                emails=["cloudysanfrancisco@gmail.com"],
                phones=["+18005550100"],
                gclid="Cj0KCQjw",
                value=1200,
                currency="eur",
                consent={"adUserData": "CONSENT_GRANTED"},
            )
        ],
    )
    assert len(ours) == 1
    theirs, mine = _googles(DOCUMENTED), _googles(ours[0])
    assert mine.destinations == theirs.destinations and mine.encoding == theirs.encoding
    theirs_event, my_event = theirs.events[0], mine.events[0]
    for name in ("transaction_id", "event_timestamp", "ad_identifiers", "conversion_value", "currency", "consent"):
        assert getattr(my_event, name) == getattr(theirs_event, name), name
    formatter = Formatter()
    assert [i.email_address or i.phone_number for i in my_event.user_data.user_identifiers] == [
        formatter.process_email_address("Cloudy.SanFrancisco+shop@gmail.com", Encoding.HEX),
        formatter.process_phone_number("+1 800 555 0100", Encoding.HEX),
    ]


_CONSENT = st.sampled_from(["CONSENT_GRANTED", "CONSENT_DENIED", "CONSENT_STATUS_UNSPECIFIED", "yes", None])


@given(
    emails=st.lists(st.emails().map(str.lower), max_size=12),
    phones=st.lists(st.from_regex(r"\+[1-9][0-9]{7,13}", fullmatch=True), max_size=12),
    gclid=st.none() | st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", min_size=1),
    value=st.none() | st.floats(0, 1e12, allow_nan=False),
    currency=st.sampled_from([None, "EUR", "usd"]),
    consent=st.fixed_dictionaries({"adUserData": _CONSENT, "adPersonalization": _CONSENT}),
    occurred=st.integers(1_500_000_000, 2_000_000_000),
)
def test_every_event_we_build_is_one_googles_types_read(emails, phones, gclid, value, currency, consent, occurred):
    try:
        event = googleevents.event(
            transaction=googleevents.transaction_id("google", "lead", "QualifiedLead"),
            occurred=occurred,
            emails=emails,
            phones=phones,
            gclid=gclid,
            value=value,
            currency=currency,
            consent=consent,
        )
    except ValueError:
        assert not emails and not phones and not gclid
        return
    read = _googles(googleevents.requests(DESTINATION, [event])[0]).events[0]
    assert len(read.user_data.user_identifiers) <= googleevents.MAX_IDENTIFIERS
    assert read.event_timestamp.timestamp() == occurred


def test_a_batch_goes_two_thousand_events_a_request():
    event = googleevents.event(transaction="t", occurred=1791036180, gclid="g")
    sent = googleevents.requests(DESTINATION, [event] * 4001)
    assert [len(r["events"]) for r in sent] == [2000, 2000, 1]


def test_a_transaction_id_is_the_same_on_every_try_and_names_no_one():
    first = googleevents.transaction_id("google", "CjwKCAiA-lead-9f2", "QualifiedLead")
    assert first == googleevents.transaction_id("google", "CjwKCAiA-lead-9f2", "QualifiedLead")
    assert first != googleevents.transaction_id("google", "CjwKCAiA-lead-9f2", "Purchase")
    assert len(first) == 32 and "lead" not in first and int(first, 16) >= 0


def test_an_event_with_nothing_to_match_it_by_is_refused_before_google_refuses_it():
    with pytest.raises(ValueError):
        googleevents.event(transaction="t", occurred=1791036180)


def test_identifiers_are_hashed_by_googles_rules_not_metas():
    event = googleevents.event(transaction="t", occurred=1791036180, phones=["+18005550100"])
    assert event["userData"]["userIdentifiers"] == [{"phoneNumber": googlekeys.hashed("+18005550100")}]
