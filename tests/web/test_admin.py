"""The admin API: off without a token, bearer-protected, lists and replays dead letters."""

import time

import pytest

from helpers import leadgen_body
from webhook_app import create_app

LEAD = "1234567890123456"
TOKEN = "admin-secret-token"


@pytest.fixture
def admin(env, monkeypatch):
    monkeypatch.setenv("LEADRELAY_ADMIN_TOKEN", TOKEN)
    client = create_app().test_client()

    def call(method, path, **kw):
        return client.open(path, method=method, headers={"Authorization": f"Bearer {TOKEN}"}, **kw)

    return call


@pytest.fixture
def dead_letter(graph, post_meta, work):
    graph.add_lead(LEAD)
    graph.then(
        {
            "status": 400,
            "error": {
                "code": 100,
                "error_subcode": 2804016,
                "fbtrace_id": "T1",
                "error_user_title": "Unhashed user data",
            },
        },
        on="events",
    )
    post_meta(leadgen_body(LEAD, created_time=int(time.time())))
    work()


def test_admin_is_off_without_a_token(client):
    answer = client.get("/admin/dead-letters")
    assert answer.status_code == 404 and answer.json["error"] == "admin_disabled"


@pytest.mark.parametrize("header", [None, "Bearer wrong", f"Basic {TOKEN}", TOKEN])
def test_admin_refuses_a_missing_or_wrong_token(env, monkeypatch, header):
    monkeypatch.setenv("LEADRELAY_ADMIN_TOKEN", TOKEN)
    client = create_app().test_client()
    answer = client.get("/admin/dead-letters", headers={"Authorization": header} if header else {})
    assert answer.status_code == 401 and answer.json["error"] == "bad_admin_token"


def test_dead_letters_lists_reason_and_metas_details(admin, dead_letter):
    answer = admin("GET", "/admin/dead-letters?reason=invalid")
    assert answer.status_code == 200
    assert answer.json["count"] == 1 and answer.json["by_reason"] == {"invalid": 1}
    [row] = answer.json["dead_letters"]
    assert row["job_id"] == f"lead-meta-{LEAD}"
    assert (row["code"], row["subcode"], row["fbtrace_id"], row["user_title"]) == (
        100,
        2804016,
        "T1",
        "Unhashed user data",
    )
    assert admin("GET", "/admin/dead-letters?reason=auth").json["count"] == 0


def test_replay_by_job_id_delivers_once(admin, dead_letter, graph, work):
    answer = admin("POST", "/admin/replay", json={"job_ids": [f"lead-meta-{LEAD}"]})
    assert answer.status_code == 200
    assert answer.json["counts"] == {"requeued": 1, "already_delivered": 0, "expired": 0, "failed": 0, "not_found": 0}
    work()
    assert [e["event_id"] for e in graph.events] == [f"meta:{LEAD}:Lead"]
    assert admin("GET", "/admin/dead-letters").json["count"] == 0


def test_replay_dry_run_changes_nothing(admin, dead_letter):
    answer = admin("POST", "/admin/replay", json={"all": True, "dry_run": True})
    assert answer.json["counts"]["requeued"] == 1 and answer.json["dry_run"] is True
    assert admin("GET", "/admin/dead-letters").json["count"] == 1


@pytest.mark.parametrize(
    "body, reason",
    [
        ({}, "no_selection"),
        ({"since": "whenever"}, "bad_filter"),
        ({"job_ids": f"lead-meta-{LEAD}"}, "malformed_job_ids"),
        ({"job_ids": [7]}, "malformed_job_ids"),
    ],
)
def test_replay_with_no_or_bad_selection_is_400(admin, body, reason):
    answer = admin("POST", "/admin/replay", json=body)
    assert answer.status_code == 400 and answer.json["error"] == reason
