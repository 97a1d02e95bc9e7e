"""Close end to end: the opportunity's contact read back from Close's API (the stand-in,
over loopback, with the API key as HTTP Basic), the status and the win sent once each for
the Lead Ads lead, with its lead_id and the opportunity's value in units (Close keeps cents)."""

from __future__ import annotations

import base64
import json
import time
import uuid

from helpers import LEAD, app_with_lead, delivered_lead, leadrelay, post_signed, stage_events

QUALIFIED = "stat_1CgBdsQ6zyzR1YiCjAoXxBLnBc2J1RUJ3Tu0Pmr6nQK"  # mapped in tests/helpers.py's tables


def _event(contact_id: str, status: str, kind: str, before: str = "stat_active") -> bytes:
    doc = {
        "subscription_id": "whsub_test",
        "event": {
            "id": f"ev_{uuid.uuid4().hex}",
            "object_type": "opportunity",
            "action": "updated",
            "organization_id": "orga_test",
            "date_created": time.strftime("%Y-%m-%dT%H:%M:%S.000000", time.gmtime()),
            "previous_data": {"status_id": before},
            "data": {
                "id": "oppo_test",
                "contact_id": contact_id,
                "status_id": status,
                "status_type": kind,
                "value": 480000,
                "value_currency": "USD",
            },
        },
    }
    return json.dumps(doc).encode()


def test_an_opportunity_qualified_then_won_becomes_the_leads_stage_events_once(env, graph, work, monkeypatch, tmp_path):
    client = app_with_lead(graph, work, monkeypatch, tmp_path)
    contact = graph.add_crm_person("joe@example.com")["close_contact_id"]
    qualified = _event(contact, QUALIFIED, "active")
    won = _event(contact, "stat_won", "won", before=QUALIFIED)
    for body in (qualified, qualified, won):  # a redelivery: the same event id
        assert post_signed(client, "close", body, env).status_code == 200
    work()
    sent = stage_events(graph)
    assert [e["event_name"] for e in sent] == ["QualifiedLead", "Purchase"]
    assert {str(e["user_data"]["lead_id"]) for e in sent} == {LEAD}
    assert (sent[1]["custom_data"]["value"], sent[1]["custom_data"]["currency"]) == (4800, "USD")
    assert sent[1]["custom_data"]["lead_event_source"] == "Close"
    [read, *_] = graph.calls("close_contact")
    key = base64.b64decode(read["headers"]["Authorization"].removeprefix("Basic ")).decode()
    assert key == "close-api-token:"  # the API key as the user name, no password, as Close asks


def test_a_contact_close_does_not_have_is_a_dead_letter_with_the_fix(client, env, graph, post_meta, work):
    delivered_lead(graph, post_meta, work, 3600)
    post_signed(client, "close", _event("cont_nosuchcontact", "stat_won", "won"), env)
    work()
    assert stage_events(graph) == []
    [entry] = [json.loads(line) for line in leadrelay("dead-letters", "list", "--json").stdout.splitlines()]
    assert (entry["reason"], entry["source"]) == ("invalid", "close")
    assert "Close" in entry["fix"] and "replay" in entry["fix"]


def test_crm_stages_lists_closes_statuses_for_the_mapping_file(env):
    out = leadrelay("crm-stages", "close").stdout
    assert "stat_sandboxQualified" in out and "won" in out
