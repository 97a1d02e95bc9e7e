"""The secret decides the client, never the body: every stage source × every signer (the
operator's setting, each client's own secret) × every account a body can name (each
client's, and one no table lists), with a lead of each client sharing one email. No
event ever reaches a dataset outside the signer's client; what is refused is recorded
with its reason."""

from __future__ import annotations

import json
import time

import pytest

from helpers import AGENCY_CONFIG, DATASETS, agency_lead, agency_post, fixture_bytes, leadrelay
from workers.sources.registry import SOURCES

SHARED = "shared@example.com"
LEADS = {"acme": ("8800000000000011", "101"), "brandb": ("8800000000000022", "202")}
# Each source's account ids, as its bodies name them: per client, and one listed nowhere.
ACCOUNTS = {
    "hubspot": {"acme": "4512345", "brandb": "4599999", "unlisted": "4777777"},
    "pipedrive": {"acme": "11728051", "brandb": "22000002", "unlisted": "33000003"},
    "calendly": {"acme": "ACMEUSER00000000", "brandb": "BRANDBUSER000000", "unlisted": "NOBODY0000000000"},
    "calcom": {"acme": "pro@acme.example", "brandb": "pro@brandb.example", "unlisted": "pro@nobody.example"},
    "signed": {"unlisted": "signed"},  # a Standard Webhooks body names no account: the secret alone decides
}
SECRETS = {  # the operator's (the environment's setting) and each client's own, per source
    "operator": {name: f"{name}-test-secret" for name in ACCOUNTS},
    "acme": {name: f"acme-{name}-secret" for name in ACCOUNTS},
    "brandb": {name: f"brandb-{name}-secret" for name in ACCOUNTS},
}
# Where a stage may go, by signer and account: None is nowhere, with the reason recorded.
EXPECTED = {
    ("operator", "acme"): "acme",
    ("operator", "brandb"): "brandb",
    ("operator", "unlisted"): "unknown_account",
    ("acme", "acme"): "acme",
    ("acme", "brandb"): "account_out_of_scope",
    ("acme", "unlisted"): "acme",
    ("brandb", "acme"): "account_out_of_scope",
    ("brandb", "brandb"): "brandb",
    ("brandb", "unlisted"): "brandb",
}
CASES = [(source, signer, account) for source in ACCOUNTS for signer in SECRETS for account in ACCOUNTS[source]]


def _config() -> str:
    accounts = "".join(
        f"\n[crm.{source}.accounts]\n" + "".join(f'"{ids[c]}" = "{c}"\n' for c in ("acme", "brandb"))
        for source, ids in ACCOUNTS.items()
        if "acme" in ids
    )
    secrets = "".join(
        f"\n[clients.{client}.secrets]\n" + "".join(f'{s} = "{client.upper()}_{s.upper()}_SECRET"\n' for s in ACCOUNTS)
        for client in ("acme", "brandb")
    )
    return AGENCY_CONFIG + secrets + accounts


def _body(graph, source: str, account: str) -> bytes:
    now = int(time.time())
    if source == "hubspot":
        deal = graph.add_crm_person(SHARED)["deal_id"]
        event = {"eventId": 77, "subscriptionId": 1, "portalId": int(account), "appId": 3, "occurredAt": now * 1000}
        event |= {"subscriptionType": "deal.propertyChange", "attemptNumber": 0, "objectId": int(deal)}
        return json.dumps([{**event, "propertyName": "dealstage", "propertyValue": "closedwon"}]).encode()
    if source == "pipedrive":
        person = graph.add_crm_person(SHARED)["person_id"]
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
        meta = {"action": "change", "entity": "deal", "company_id": account, "id": "9a1d3c7e-0000", "timestamp": stamp}
        data = {"id": 1187, "value": 4800, "currency": "EUR", "person_id": int(person), "status": "won"}
        return json.dumps({"data": data, "previous": {"status": "open"}, "meta": {**meta, "version": "2.0"}}).encode()
    if source == "signed":
        return json.dumps({"email": SHARED, "stage": "QualifiedLead", "occurred_at": now}).encode()
    doc = json.loads(
        fixture_bytes(
            source, f"{'invitee_created__booking' if source == 'calendly' else 'booking_created__attendee'}.json"
        )
    )
    just_now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 60))
    if source == "calendly":
        doc["created_at"] = doc["payload"]["created_at"] = just_now
        doc["created_by"] = f"https://api.calendly.com/users/{account}"
        doc["payload"]["email"] = SHARED
    else:
        doc["createdAt"] = just_now
        doc["payload"]["organizer"]["email"] = account
        doc["payload"]["responses"]["email"]["value"] = SHARED
        doc["payload"]["attendees"][0]["email"] = SHARED
    return json.dumps(doc).encode()


@pytest.mark.parametrize("source, signer, account", CASES)
def test_the_signers_client_decides_where_a_stage_goes(agency, graph, work, monkeypatch, source, signer, account):
    from webhook_app import create_app
    from workers import jobs
    from workers.config.settings import load

    for client in ("acme", "brandb"):
        for name in ACCOUNTS:
            monkeypatch.setenv(f"{client.upper()}_{name.upper()}_SECRET", SECRETS[client][name])
    agency.write_text(_config())
    jobs.install(load())
    web = create_app().test_client()
    for leadgen_id, page in LEADS.values():
        assert agency_post(web, agency_lead(graph, leadgen_id, page, email=SHARED)).get_json()["accepted"] == 1
    work()
    body = _body(graph, source, ACCOUNTS[source][account])
    headers = SOURCES[source].sign(SECRETS[signer][source], body, f"http://localhost/webhooks/{source}")
    answer = web.post(f"/webhooks/{source}", data=body, headers={"Content-Type": "application/json", **headers})
    assert answer.status_code == 200, answer.get_json()
    work()
    stages = [e for e in graph.events if e["event_name"] != "Lead"]
    expected = EXPECTED[(signer, account)]
    if expected in LEADS:
        [stage] = stages
        assert stage["dataset_id"] == DATASETS[expected][0]
        assert str(stage["user_data"]["lead_id"]) == LEADS[expected][0]
    else:
        assert stages == [] and answer.get_json()["skipped"][0]["reason"] == expected
        assert expected in leadrelay("ignored").stdout


def test_one_secret_belongs_to_one_owner(agency, monkeypatch):
    """A secret that two clients (or a client and the environment) share could not say
    whose a delivery is: the file is refused at start, naming the entry."""
    from workers.config.needed import ConfigError
    from workers.config.settings import load
    from workers.engine.context import install

    monkeypatch.setenv("ACME_PIPEDRIVE_SECRET", "pipedrive-test-secret")  # the environment's own
    agency.write_text(AGENCY_CONFIG + '\n[clients.acme.secrets]\npipedrive = "ACME_PIPEDRIVE_SECRET"\n')
    with pytest.raises(ConfigError, match=r"clients\.acme\.secrets\.pipedrive: is also the environment's secret"):
        install(load())
