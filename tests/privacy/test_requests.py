"""Forget and export through the API are jobs: the request is answered 202 without reading
Redis's keys, the person is suppressed from that moment, the walk is a worker's, and the
request's record keeps no raw identifier and, once done, no hash of the person."""

from __future__ import annotations

import json
import time

import pytest

from helpers import API, agency_post
from workers.events import suppression
from workers.privacy import requests

OPERATOR = "operator-api-token"
EMAIL = "ann@acme.example"
PHONE = "+44 7911 123456"


@pytest.fixture
def web(agency, graph, work, monkeypatch):
    from webhook_app import create_app

    monkeypatch.setenv("LEADRELAY_API_TOKEN", OPERATOR)
    client = create_app().test_client()
    people = [
        ("8800000000000011", EMAIL, "+44 7911 654321"),
        ("8800000000000012", "bob@acme.example", PHONE),
        ("8800000000000013", "cleo@acme.example", PHONE),  # Bob's phone too
    ]
    for lead, email, phone in people:
        fields = [{"name": "email", "values": [email]}, {"name": "phone_number", "values": [phone]}]
        graph.add_lead(lead, page_id="101", form_id="101555", created_time=int(time.time()) - 60, field_data=fields)
        change = {"field": "leadgen", "value": {"leadgen_id": lead, "page_id": "101", "form_id": "101555"}}
        assert agency_post(client, change).get_json()["accepted"] == 1
    work()
    return client


def _scans(redis_conn) -> int:
    return int(redis_conn.info("commandstats").get("cmdstat_scan", {}).get("calls", 0))


def test_a_forget_is_answered_202_without_a_walk_and_suppresses_at_once(web, graph, work, redis_conn):
    auth = {"Authorization": f"Bearer {OPERATOR}"}
    before = _scans(redis_conn)
    taken = web.post("/api/v1/people/forget", json={"email": EMAIL}, headers=auth)
    assert taken.status_code == 202, taken.get_json()
    assert _scans(redis_conn) == before  # not one SCAN inside the request: the walk is the worker's
    state = taken.get_json()
    assert state["state"] == "queued" and state["suppressed"] >= 1 and state["ref"].startswith("forget-")
    # Before any worker runs, a stage for the person is already kept out.
    stage = {"email": EMAIL, "stage": "QualifiedLead", "occurred_at": int(time.time()) - 30}
    result = web.post("/api/v1/stage-events", json=stage, headers=auth).get_json()
    assert result["results"][0] == {"index": 0, "status": "recorded", "reason": "suppressed"}
    record = redis_conn.hgetall(f"{requests.KEY}:{state['ref']}")
    assert EMAIL not in json.dumps({k.decode(): v.decode() for k, v in record.items()})  # hashed in the request
    work()
    done = web.get(state["status_url"], headers=auth).get_json()
    assert done["state"] == "done" and done["removed"]["profile"] == 1, done
    assert redis_conn.hkeys(f"{requests.KEY}:{state['ref']}") == [b"state"]  # the person's hashes are gone
    assert 0 < redis_conn.ttl(f"{requests.KEY}:{state['ref']}") <= requests.KEEP_SECONDS


def test_a_status_is_read_only_by_a_token_that_reaches_its_datasets(web, work):
    taken = web.post("/api/v1/people/forget", json={"email": EMAIL}, headers={"Authorization": f"Bearer {API['acme']}"})
    url = taken.get_json()["status_url"]
    assert web.get(url, headers={"Authorization": f"Bearer {API['brandb']}"}).status_code == 404
    assert web.get(url, headers={"Authorization": f"Bearer {API['acme']}"}).status_code == 200
    assert web.get(url, headers={"Authorization": f"Bearer {OPERATOR}"}).status_code == 200
    assert (
        web.get(url.replace("forget-", "export-"), headers={"Authorization": f"Bearer {OPERATOR}"}).status_code == 404
    )


def test_an_export_result_is_kept_an_hour_at_most(web, work, redis_conn):
    auth = {"Authorization": f"Bearer {OPERATOR}"}
    taken = web.post("/api/v1/people/export", json={"email": EMAIL}, headers=auth).get_json()
    work()
    done = web.get(taken["status_url"], headers=auth).get_json()
    assert done["state"] == "done" and [p["lead_id"] for p in done["result"]["profiles"]] == [8800000000000011]
    assert 0 < redis_conn.ttl(f"{requests.KEY}:{taken['ref']}") <= requests.EXPORT_SECONDS


def test_a_refused_forget_lifts_the_suppression_its_request_added(web, work, redis_conn):
    auth = {"Authorization": f"Bearer {OPERATOR}"}
    # Bob's lead holds the phone Cleo's holds too: Cleo's records are not Bob's to erase.
    taken = web.post("/api/v1/people/forget", json={"lead_id": "8800000000000012"}, headers=auth).get_json()
    assert taken["suppressed"] >= 1 and redis_conn.hlen(suppression.KEY) == taken["suppressed"]
    work()
    state = web.get(taken["status_url"], headers=auth).get_json()
    assert (state["state"], state["error"], state["others"]) == ("refused", "shared_identifiers", 1), state
    assert redis_conn.hlen(suppression.KEY) == 0  # nothing of theirs is kept out any more


def test_the_admin_page_lists_the_newest_requests_without_their_people(web, work, redis_conn):
    auth = {"Authorization": f"Bearer {OPERATOR}"}
    web.post("/api/v1/people/forget", json={"email": EMAIL}, headers=auth)
    work()
    [latest] = requests.recent(redis_conn, 5)
    assert latest["state"] == "done" and EMAIL not in json.dumps(latest)
