"""Meta's Lead Ads Testing Tool answers each question with a placeholder
(https://developers.facebook.com/tools/lead-ads-testing: "<test lead: dummy data for
full_name>"): no one's data, so no key is hashed from it; the test lead itself still flows
and keeps its lead_id. An unfilled template answer (`{{email}}`) is treated the same."""

from __future__ import annotations

import time

from helpers import LEAD, leadgen_body, sign
from workers.identity import matchkeys, userdata

PLACEHOLDERS = [
    {"name": name, "values": [f"<test lead: dummy data for {name}>"]}
    for name in ("full_name", "phone_number", "city", "zip_code", "state", "country", "date_of_birth")
]


def test_placeholders_are_dropped_and_counted_never_hashed():
    fields = [*PLACEHOLDERS, {"name": "email", "values": ["{{email}}"]}]
    user_data, dropped = userdata.build(matchkeys.from_lead_ads(fields), "US")
    assert user_data == {}
    assert {d["reason"] for d in dropped} == {"test_placeholder"} and len(dropped) == len(fields)


def test_real_answers_beside_placeholders_are_kept():
    fields = [*PLACEHOLDERS, {"name": "email", "values": ["Ann@Example.com"]}]
    user_data, _ = userdata.build(matchkeys.from_lead_ads(fields), "US")
    assert user_data == {"em": [userdata.sha256("ann@example.com")]}


def test_a_test_lead_flows_end_to_end_with_its_lead_id_and_no_placeholder_key(client, graph, work):
    graph.add_lead(LEAD, created_time=int(time.time()) - 60, field_data=PLACEHOLDERS)
    body = leadgen_body(LEAD, created_time=int(time.time()) - 60)
    assert client.post("/webhooks/meta", data=body, headers={"X-Hub-Signature-256": sign(body)}).status_code == 200
    work()
    [event] = graph.events
    assert event["user_data"]["lead_id"] == int(LEAD)
    assert not {"fn", "ln", "ph", "ct", "zp", "st", "country", "db"} & set(event["user_data"])
