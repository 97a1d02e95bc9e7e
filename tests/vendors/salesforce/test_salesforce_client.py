"""Salesforce end to end: an Opportunity's stages, each message delivered twice, its primary
contact read back with one SOQL query (the stand-in, over loopback), QualifiedLead and
Purchase sent once each for the Lead Ads lead with its lead_id and the Amount; a Lead whose
message carries its email is matched with no read at all."""

from __future__ import annotations

import json
import time

from helpers import LEAD, app_with_lead, leadrelay, stage_events

TOKEN = "k3Xq9vR2pL7tYw"


def _replace_id(text: str, notification: str) -> bytes:
    start = text.index("<Notification><Id>") + len("<Notification><Id>")
    end = text.index("</Id>", start)
    return (text[:start] + notification + text[end:]).encode()


def _post(client, body: bytes):
    return client.post(f"/webhooks/salesforce/{TOKEN}", data=body, headers={"Content-Type": "text/xml"})


def test_an_opportunitys_stages_delivered_twice_go_once_for_the_lead(env, graph, work, monkeypatch, tmp_path):
    # An org with one currency sends no CurrencyIsoCode: the table's ([crm.salesforce] currency).
    client = app_with_lead(graph, work, monkeypatch, tmp_path, '\n[crm.salesforce]\ncurrency = "EUR"\n', **SECRET)
    opportunity = graph.add_crm_person("joe@example.com")["opportunity_id"]
    qualified = _replace_id(_text(opportunity, "Working - Contacted"), "04l5g00000000A1")
    won = _replace_id(_text(opportunity, "Closed Won"), "04l5g00000000A2")
    for body in (qualified, qualified, won, won):
        assert _post(client, body).status_code == 200
    work()
    sent = stage_events(graph)
    assert [e["event_name"] for e in sent] == ["QualifiedLead", "Purchase"]
    assert {str(e["user_data"]["lead_id"]) for e in sent} == {LEAD}
    assert (sent[1]["custom_data"]["value"], sent[1]["custom_data"]["currency"]) == (1200.0, "EUR")
    assert sent[1]["custom_data"]["lead_event_source"] == "Salesforce"
    [query] = graph.calls("soql_query")  # one query for the two changes of one batch
    assert "FROM OpportunityContactRole WHERE IsPrimary = true" in query["query"]["q"][0]


def test_a_lead_whose_message_carries_its_email_is_matched_without_a_read(env, graph, work, monkeypatch, tmp_path):
    from helpers import fixture_bytes

    client = app_with_lead(graph, work, monkeypatch, tmp_path, **SECRET)
    body = fixture_bytes("salesforce", "lead__working_contacted.xml")
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() - 30))
    assert _post(client, body.replace(b"2026-11-21T09:14:03.000Z", now.encode())).status_code == 200
    work()
    [stage] = stage_events(graph)
    assert stage["event_name"] == "QualifiedLead" and str(stage["user_data"]["lead_id"]) == LEAD
    assert graph.calls("soql_query") == []


SECRET = {"SALESFORCE_OUTBOUND_SECRET": f"00Dx0000000BV7zEAG:{TOKEN}"}


def _credentials(secret: str) -> dict:
    """A connected app's client credentials in place of a pasted token."""
    return {
        "SALESFORCE_ACCESS_TOKEN": None,
        "SALESFORCE_OAUTH_CLIENT_ID": "3MVG9connectedapp",
        "SALESFORCE_OAUTH_CLIENT_SECRET": secret,
    }


def _text(opportunity: str, stage: str) -> str:
    from workers.vendors.salesforce import samples

    return samples.message("00Dx0000000BV7zEAG", opportunity, stage, int(time.time()) - 30)


def test_with_client_credentials_the_token_is_issued_and_no_token_is_pasted(env, graph, work, monkeypatch, tmp_path):
    client = app_with_lead(graph, work, monkeypatch, tmp_path, **SECRET, **_credentials("connected-app-secret"))
    opportunity = graph.add_crm_person("joe@example.com")["opportunity_id"]
    assert _post(client, _replace_id(_text(opportunity, "Working - Contacted"), "04l5g00000000B1")).status_code == 200
    work()
    [stage] = stage_events(graph)
    assert str(stage["user_data"]["lead_id"]) == LEAD
    [issued] = graph.calls("oauth_token")
    assert issued["body"] == {
        "grant_type": "client_credentials",
        "client_id": "3MVG9connectedapp",
        "client_secret": "connected-app-secret",
    }
    [query] = graph.calls("soql_query")
    assert query["headers"]["Authorization"] == "Bearer 00D!standin1"


def test_refused_client_credentials_are_an_auth_dead_letter_naming_them(env, graph, work, monkeypatch, tmp_path):
    client = app_with_lead(graph, work, monkeypatch, tmp_path, **SECRET, **_credentials("wrong"))
    opportunity = graph.add_crm_person("joe@example.com")["opportunity_id"]
    _post(client, _replace_id(_text(opportunity, "Working - Contacted"), "04l5g00000000B2"))
    work()
    assert stage_events(graph) == [] and graph.calls("soql_query") == []
    [entry] = [json.loads(line) for line in leadrelay("dead-letters", "list", "--json").stdout.splitlines()]
    assert entry["reason"] == "auth" and "SALESFORCE_OAUTH_CLIENT_ID" in entry["fix"]
