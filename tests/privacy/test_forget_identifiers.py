"""Forget and export take identifiers, never search words: a lead id or person id of the
wrong shape is refused with nothing changed; a client's token erases and suppresses only
its own leads; identifiers that reach other people's leads (a shared phone) change nothing
until the operator says `all_matching`. Every check runs through the API, as a client would."""

from __future__ import annotations

import time

import pytest

from helpers import API, agency_post, privacy_api, stage_events
from webhook_app import create_app
from workers.events import profiles, suppression

OPERATOR = "operator-api-token"
PHONE = "+44 7911 123456"
ACME = {"8800000000000011": "ann@acme.example", "8800000000000012": "bob@acme.example"}  # one phone, two people
BRANDB = "8800000000000022"


def _lead(graph, leadgen_id: str, page_id: str, email: str, phone: str | None = None) -> dict:
    created = int(time.time()) - 60
    fields = [{"name": "email", "values": [email]}] + ([{"name": "phone_number", "values": [phone]}] if phone else [])
    graph.add_lead(leadgen_id, page_id=page_id, form_id=f"{page_id}555", created_time=created, field_data=fields)
    return {"field": "leadgen", "value": {"leadgen_id": leadgen_id, "page_id": page_id, "form_id": f"{page_id}555"}}


@pytest.fixture
def web(agency, graph, work, monkeypatch):
    monkeypatch.setenv("LEADRELAY_API_TOKEN", OPERATOR)
    client = create_app().test_client()
    changes = [_lead(graph, lead, "101", email, PHONE) for lead, email in ACME.items()]
    changes.append(_lead(graph, BRANDB, "202", "carol@brandb.example", PHONE))
    assert agency_post(client, *changes).get_json()["accepted"] == 3
    work()
    client.work = work  # a privacy request's walk is a worker's
    return client


def _post(web, what: str, token: str, **given):
    return privacy_api(web, what, token, web.work, **given)


def _kept(redis_conn) -> list[str]:
    return sorted(lead for lead in [*ACME, BRANDB] if profiles.load(redis_conn, "meta", lead))


@pytest.mark.parametrize(
    "given",
    [
        {"lead_id": "meta"},
        {"lead_id": "lead"},
        {"lead_id": "1"},
        {"lead_id": "101555"},  # a form id
        {"lead_id": "8800000000000011 OR 1"},
        {"lead_id": ["8800000000000011", "meta"]},  # one bad id refuses the whole request
        {"person_id": "lead"},
        {"person_id": "42"},  # a bare id names no source
        {"person_id": "nosuch:42"},
        {"person_id": "hubspot:*"},
    ],
)
@pytest.mark.parametrize("token", [API["acme"], OPERATOR])
def test_an_id_that_is_not_one_is_refused_and_nothing_is_erased(web, redis_conn, given, token):
    for what in ("forget", "export"):
        answer = _post(web, what, token, **given)
        assert answer.status_code == 400 and answer.get_json()["error"] == "no_identifier", answer.get_json()
    assert _kept(redis_conn) == sorted([*ACME, BRANDB])
    assert redis_conn.hlen(suppression.KEY) == 0


def test_a_lead_id_is_matched_whole_and_one_no_one_holds_erases_nothing(web, redis_conn):
    answer = _post(web, "forget", OPERATOR, lead_id="8800000000000001")  # a prefix of none, held by none
    assert answer.status_code == 200 and answer.get_json()["removed"] == {}
    assert _kept(redis_conn) == sorted([*ACME, BRANDB])


def test_one_clients_token_never_erases_or_silences_another_clients_lead(web, graph, redis_conn):
    answer = _post(web, "forget", API["acme"], lead_id=BRANDB)
    assert answer.status_code == 200 and answer.get_json()["removed"] == {}, answer.get_json()
    assert redis_conn.hlen(suppression.KEY) == 0  # not suppressed for Brand B either
    assert profiles.load(redis_conn, "meta", BRANDB)
    stage = {"leadgen_id": BRANDB, "stage": "QualifiedLead", "occurred_at": int(time.time()) - 30}
    result = web.post("/api/v1/stage-events", json=stage, headers={"Authorization": f"Bearer {API['brandb']}"})
    assert result.get_json()["results"][0]["status"] == "accepted"


def test_identifiers_reaching_another_persons_lead_change_nothing_until_the_operator_says_all_matching(
    web, work, redis_conn
):
    ann, bob = ACME
    refused = _post(web, "forget", API["acme"], lead_id=ann)  # Ann's lead holds the phone Bob's holds too
    assert refused.status_code == 409 and refused.get_json()["error"] == "shared_identifiers"
    assert refused.get_json()["others"] == 1
    assert _kept(redis_conn) == sorted([*ACME, BRANDB]) and redis_conn.hlen(suppression.KEY) == 0
    assert _post(web, "export", API["acme"], lead_id=ann).status_code == 409  # Bob's records are not Ann's to see
    assert _post(web, "forget", API["acme"], lead_id=ann, all_matching=True).status_code == 403
    # Naming Bob as well says both are meant: no confirmation is needed.
    both = _post(web, "forget", API["acme"], lead_id=[ann, bob])
    assert both.status_code == 200 and both.get_json()["others"] == 0
    assert _kept(redis_conn) == [BRANDB]  # Brand B's lead of the same phone is not Acme's


def test_the_operator_erases_every_lead_the_identifiers_reach_with_all_matching(web, redis_conn):
    ann, _ = ACME
    assert _post(web, "forget", OPERATOR, lead_id=ann).status_code == 409
    done = _post(web, "forget", OPERATOR, lead_id=ann, all_matching=True).get_json()
    assert done["others"] >= 1 and done["removed"]["profile"] >= 2
    assert ann not in _kept(redis_conn)


def test_the_email_of_the_person_is_enough_when_their_phone_is_shared(web, graph, work, redis_conn):
    """An email names the person: their leads of that email are theirs, a shared phone's are not."""
    answer = _post(web, "forget", API["acme"], email="carol@brandb.example")
    assert answer.status_code == 200 and answer.get_json()["removed"] == {}  # Carol is Brand B's
    assert stage_events(graph) == []
