"""HighLevel end to end: the opportunity's contact read back from HighLevel's API (the
stand-in, over loopback, with the Version header HighLevel requires), the stage and the
win sent once each for the Lead Ads lead, with its lead_id and the opportunity's value."""

from __future__ import annotations

import json
import time
import uuid

from helpers import LEAD, app_with_lead, delivered_lead, leadrelay, post_signed, stage_events

QUALIFIED = "7915dedc-8f18-44d5-8bc3-77c04e994a10"


def _event(contact_id: str, kind: str, **fields) -> bytes:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    doc = {"type": kind, "locationId": "ve9EPM428h8vShlRW1KT", "id": "bCdKGtr9cPO6Ohxzthbl"}
    doc |= {"contactId": contact_id, "monetaryValue": 4800, "pipelineStageId": QUALIFIED, "status": "open"}
    return json.dumps(doc | {"timestamp": stamp, "webhookId": str(uuid.uuid4()), **fields}).encode()


def test_an_opportunity_qualified_then_won_becomes_the_leads_stage_events_once(env, graph, work, monkeypatch, tmp_path):
    # HighLevel's payload names no currency: the location's, from its table ([crm.highlevel] currency).
    client = app_with_lead(graph, work, monkeypatch, tmp_path, '\n[crm.highlevel]\ncurrency = "USD"\n')
    contact = graph.add_crm_person("joe@example.com", amount=4800)["highlevel_contact_id"]
    stage = _event(contact, "OpportunityStageUpdate")
    won = _event(contact, "OpportunityStatusUpdate", status="won")
    for body in (stage, stage, won):  # a redelivery: the same webhookId
        assert post_signed(client, "highlevel", body, env).status_code == 200
    work()
    sent = stage_events(graph)
    assert [e["event_name"] for e in sent] == ["QualifiedLead", "Purchase"]
    assert {str(e["user_data"]["lead_id"]) for e in sent} == {LEAD}
    assert (sent[1]["custom_data"]["value"], sent[1]["custom_data"]["currency"]) == (4800, "USD")
    assert sent[1]["custom_data"]["lead_event_source"] == "HighLevel"
    [read, *_] = graph.calls("highlevel_contact")
    assert read["headers"]["Version"] == "2021-07-28"
    assert read["headers"]["Authorization"] == "Bearer highlevel-api-token"


def test_a_contact_highlevel_does_not_have_is_a_dead_letter_with_the_fix(client, env, graph, post_meta, work):
    delivered_lead(graph, post_meta, work, 3600)
    post_signed(client, "highlevel", _event("nosuchcontact", "OpportunityStatusUpdate", status="won"), env)
    work()
    assert stage_events(graph) == []
    [entry] = [json.loads(line) for line in leadrelay("dead-letters", "list", "--json").stdout.splitlines()]
    assert (entry["reason"], entry["source"]) == ("invalid", "highlevel")
    assert "HighLevel" in entry["fix"] and "replay" in entry["fix"]  # HighLevel answers 400 for no such contact
