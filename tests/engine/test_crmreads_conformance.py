"""What the CRMs and booking tools really send, end to end (signed webhook, read-back from
the stand-in, Conversions API event): a deal with several contacts, HubSpot's generic
format and its two type keys, HubSpot's non-unique eventId, a Pipedrive deal created
straight into a stage, a phone-only contact in national form, paid bookings."""

from __future__ import annotations

import json
import time

import pytest

from helpers import LEAD, booking, hubspot_deal_event, leadgen_body, leadrelay, stage_events


def test_a_deal_with_three_contacts_sends_one_event_for_the_one_who_is_a_lead(graph, lead, post_crm, work):
    """A buyer and two decision makers; the lead is listed last: one event, for the lead,
    with the deal's value."""
    deal = graph.add_crm_person("joe@example.com", amount=9000, others=["cfo@example.com", "cto@example.com"])
    assert post_crm("hubspot", json.dumps([hubspot_deal_event(deal["deal_id"])]).encode()).get_json()["accepted"] == 1
    work()
    [purchase] = stage_events(graph)
    assert str(purchase["user_data"]["lead_id"]) == LEAD
    assert (purchase["custom_data"]["value"], purchase["custom_data"]["currency"]) == (9000.0, "EUR")


def test_the_same_deal_with_no_lead_among_its_contacts_sends_nothing_and_says_why(graph, lead, post_crm, work):
    deal = graph.add_crm_person("cfo@example.com", amount=9000, others=["cto@example.com", "buyer@example.com"])
    assert post_crm("hubspot", json.dumps([hubspot_deal_event(deal["deal_id"])]).encode()).get_json()["accepted"] == 1
    work()
    assert stage_events(graph) == []
    ignored = leadrelay("ignored").stdout
    assert "no_lead_among_contacts" in ignored and '"candidates": 3' in ignored


def test_a_deal_whose_contacts_are_two_different_leads_is_recorded_never_guessed(
    graph, post_meta, lead, post_crm, work
):
    graph.add_lead("1234567890123499", field_data=[{"name": "email", "values": ["ann@example.com"]}])
    post_meta(leadgen_body("1234567890123499", created_time=int(time.time()) - 3600))
    work()
    deal = graph.add_crm_person("joe@example.com", others=["ann@example.com"])
    post_crm("hubspot", json.dumps([hubspot_deal_event(deal["deal_id"])]).encode())
    work()
    assert stage_events(graph) == [] and "several_leads_among_contacts" in leadrelay("ignored").stdout


@pytest.mark.parametrize("type_key", ["subscriptionType", "eventType"])
def test_hubspots_generic_format_is_a_stage_change_under_either_type_key(graph, lead, post_crm, work, type_key):
    """`object.propertyChange` with objectTypeId 0-3 (a deal), as current apps receive it."""
    deal = graph.add_crm_person("joe@example.com")
    event = hubspot_deal_event(deal["deal_id"], stage="qualifiedtobuy", objectTypeId="0-3")
    del event["subscriptionType"]
    event[type_key] = "object.propertyChange"
    assert post_crm("hubspot", json.dumps([event]).encode()).get_json()["accepted"] == 1
    work()
    [qualified] = stage_events(graph)
    assert qualified["event_name"] == "QualifiedLead" and str(qualified["user_data"]["lead_id"]) == LEAD


def test_two_changes_sharing_an_event_id_are_both_kept_and_a_retry_is_still_one(graph, post_meta, post_crm, work):
    """HubSpot: eventId "is not guaranteed to be unique"."""
    for n, email in enumerate(("joe@example.com", "ann@example.com")):
        lead_id = f"12345678901235{n:02d}"
        graph.add_lead(lead_id, field_data=[{"name": "email", "values": [email]}])
        post_meta(leadgen_body(lead_id, created_time=int(time.time()) - 3600))
    work()
    deals = [graph.add_crm_person(email)["deal_id"] for email in ("joe@example.com", "ann@example.com")]
    body = json.dumps([hubspot_deal_event(d, event_id=777) for d in deals]).encode()
    assert post_crm("hubspot", body).get_json()["accepted"] == 2
    retried = json.loads(body)
    for event in retried:
        event["attemptNumber"] = 1  # HubSpot's retry: the same event, one more attempt
    assert post_crm("hubspot", json.dumps(retried).encode()).get_json()["duplicates"] == 2
    work()
    assert sorted(str(e["user_data"]["lead_id"]) for e in stage_events(graph)) == [
        "1234567890123500",
        "1234567890123501",
    ]


def test_a_pipedrive_deal_created_straight_into_a_mapped_stage_is_a_stage(graph, lead, post_crm, work):
    """`create`, `previous` null: docs/pipedrive.md asks users to subscribe to it for this."""
    person = graph.add_crm_person("joe@example.com")["person_id"]
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    data = {"id": 1201, "stage_id": 2, "status": "open", "person_id": int(person), "value": 0, "currency": "EUR"}
    meta = {"action": "create", "entity": "deal", "company_id": "11728051", "id": "c0ffee00-0001", "timestamp": now}
    body = json.dumps({"data": data, "previous": None, "meta": {**meta, "version": "2.0"}}).encode()
    assert post_crm("pipedrive", body).get_json()["accepted"] == 1
    work()
    [qualified] = stage_events(graph)
    assert qualified["event_name"] == "QualifiedLead" and str(qualified["user_data"]["lead_id"]) == LEAD


def test_a_phone_only_contact_in_national_form_is_placed_by_its_country(graph, post_meta, post_crm, work):
    """HubSpot `phone: "030 12345678"`, `country: "Germany"`, no email: the country places
    the number, and the stage reaches the lead who gave +49 30 12345678."""
    graph.add_lead(LEAD, field_data=[{"name": "phone_number", "values": ["+49 30 12345678"]}])
    post_meta(leadgen_body(LEAD, created_time=int(time.time()) - 3600))
    work()
    deal = graph.add_crm_person("", phone="030 12345678", country="Germany")
    assert post_crm("hubspot", json.dumps([hubspot_deal_event(deal["deal_id"])]).encode()).get_json()["accepted"] == 1
    work()
    [purchase] = stage_events(graph)
    assert str(purchase["user_data"]["lead_id"]) == LEAD


@pytest.mark.parametrize(
    "name, fixture_name, payment, expected",
    [
        # Calendly's Invitee.payment: the amount in the currency's units, sent only once paid.
        (
            "calendly",
            "invitee_created__booking.json",
            {
                "payment": {
                    "amount": 150.0,
                    "currency": "USD",
                    "successful": True,
                    "provider": "stripe",
                    "external_id": "ch_1",
                    "terms": "",
                }
            },
            (150.0, "USD"),
        ),  # noqa: E501
        (
            "calendly",
            "invitee_created__booking.json",
            {"payment": {"amount": 150.0, "currency": "USD", "successful": False}},
            None,
        ),  # noqa: E501
        # Cal.com: the event type's price in the minor unit (cents), its currency lowercase.
        ("calcom", "booking_created__attendee.json", {"price": 5000, "currency": "usd"}, (50.0, "USD")),
        ("calcom", "booking_created__attendee.json", {"price": 5000, "currency": "jpy"}, (5000.0, "JPY")),
        ("calcom", "booking_created__attendee.json", {"price": 0, "currency": "usd"}, None),
    ],
)
def test_a_paid_booking_sends_its_amount_as_the_schedules_value(
    graph, lead, post_crm, work, name, fixture_name, payment, expected
):
    assert post_crm(name, booking(name, fixture_name, **payment)).get_json()["accepted"] == 1
    work()
    [schedule] = stage_events(graph)
    assert schedule["event_name"] == "Schedule" and str(schedule["user_data"]["lead_id"]) == LEAD
    custom = schedule.get("custom_data") or {}
    assert ((custom["value"], custom["currency"]) if "value" in custom else None) == expected
