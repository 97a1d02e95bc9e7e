"""The privacy API's tenant matrix: every route (export, forget) × every client's token ×
every identifier of each client's lead (one person who is a lead of both clients: the same
email and phone, two lead ids). A token reaches its own client's lead only: another
client's is never shown, erased or suppressed, and its owner can still send its stages."""

from __future__ import annotations

import time

import pytest

from helpers import API, agency_post, privacy_api
from webhook_app import create_app
from workers.events import profiles, suppression

EMAIL, PHONE = "shared.person@example.com", "+44 7911 123456"
LEADS = {"acme": ("8800000000000031", "101", "acme"), "brandb": ("8800000000000032", "202", "brandb")}


def _lead(graph, leadgen_id: str, page_id: str) -> dict:
    fields = [{"name": "email", "values": [EMAIL]}, {"name": "phone_number", "values": [PHONE]}]
    graph.add_lead(
        leadgen_id, page_id=page_id, form_id=f"{page_id}555", created_time=int(time.time()) - 60, field_data=fields
    )
    return {"field": "leadgen", "value": {"leadgen_id": leadgen_id, "page_id": page_id, "form_id": f"{page_id}555"}}


@pytest.fixture
def web(agency, graph, work):
    client = create_app().test_client()
    assert (
        agency_post(client, *(_lead(graph, lead, page) for lead, page, _ in LEADS.values())).get_json()["accepted"] == 2
    )
    work()
    return client


def _identifiers(owner: str) -> list[dict]:
    return [{"email": EMAIL}, {"phone": PHONE}, {"lead_id": LEADS[owner][0]}]


def _suppressed(redis_conn, owner: str) -> bool:
    lead, _, dataset = LEADS[owner]
    profile = profiles.load(redis_conn, "meta", lead)
    fields = suppression.fields(dataset, profile["user_data"], lead) if profile else [suppression.lead_field(lead)]
    return bool(suppression.which(redis_conn, [fields])[0])


@pytest.mark.parametrize("caller", sorted(LEADS))
@pytest.mark.parametrize("owner", sorted(LEADS))
@pytest.mark.parametrize("which", range(3), ids=["email", "phone", "lead_id"])
def test_export_shows_only_the_callers_own_lead(web, redis_conn, work, caller, owner, which):
    given = _identifiers(owner)[which]
    answer = privacy_api(web, "export", API[caller], work, **given)
    assert answer.status_code == 200, answer.get_json()
    shown = answer.get_json()
    other = next(name for name in LEADS if name != caller)
    assert LEADS[other][0] not in str(shown)  # never a record of the other client's lead
    if caller == owner or which < 2:  # an email or phone is theirs too: the caller's own lead is shown
        assert [str(p["lead_id"]) for p in shown["profiles"]] == [LEADS[caller][0]]


@pytest.mark.parametrize("caller", sorted(LEADS))
@pytest.mark.parametrize("owner", sorted(LEADS))
@pytest.mark.parametrize("which", range(3), ids=["email", "phone", "lead_id"])
def test_forget_erases_and_suppresses_only_the_callers_own_lead(web, graph, work, redis_conn, caller, owner, which):
    given = _identifiers(owner)[which]
    answer = privacy_api(web, "forget", API[caller], work, **given)
    assert answer.status_code == 200, answer.get_json()
    other = next(name for name in LEADS if name != caller)
    assert profiles.load(redis_conn, "meta", LEADS[other][0]), "another client's lead was erased"
    assert not _suppressed(redis_conn, other), "another client's lead was suppressed"
    reached = caller == owner or which < 2
    assert (profiles.load(redis_conn, "meta", LEADS[caller][0]) is None) == reached
    # The other client still sends its stage for its lead, and Meta gets it.
    stage = {"leadgen_id": LEADS[other][0], "stage": "QualifiedLead", "occurred_at": int(time.time()) - 30}
    result = web.post("/api/v1/stage-events", json=stage, headers={"Authorization": f"Bearer {API[other]}"})
    assert result.get_json()["results"][0]["status"] == "accepted"
    work()
    sent = [e for e in graph.events if e["event_name"] == "QualifiedLead"]
    assert [str(e["user_data"]["lead_id"]) for e in sent] == [LEADS[other][0]]
