"""The receiver end to end through Flask, against a real Redis."""

import json
import os

import pytest
from rq import Queue

from helpers import VERIFY_TOKEN, fixture_bytes, inbox_entries, leadgen_body, sign
from webhook_app import create_app
from workers.common.queues import SERIALIZER


def queued(redis_conn) -> list:
    return inbox_entries(redis_conn)


def test_handshake_echoes_challenge_as_plain_text(client):
    answer = client.get(f"/webhooks/meta?hub.mode=subscribe&hub.verify_token={VERIFY_TOKEN}&hub.challenge=1158201444")
    assert answer.status_code == 200
    assert answer.data == b"1158201444"
    assert answer.mimetype == "text/plain"


def test_handshake_with_wrong_token_is_403(client):
    answer = client.get("/webhooks/meta?hub.mode=subscribe&hub.verify_token=nope&hub.challenge=1")
    assert answer.status_code == 403 and answer.get_json()["error"] == "wrong_verify_token"


@pytest.mark.parametrize(
    "query, reason",
    [
        ("hub.mode=unsubscribe&hub.verify_token={token}&hub.challenge=1", "not_subscribe"),
        ("hub.mode=subscribe&hub.verify_token=nope&hub.challenge=1", "wrong_verify_token"),
        ("hub.mode=subscribe&hub.verify_token={token}", "no_challenge"),
    ],
)
def test_a_refused_handshake_names_its_one_cause_in_the_answer_and_the_log(client, capfd, query, reason):
    answer = client.get("/webhooks/meta?" + query.format(token=VERIFY_TOKEN))
    assert answer.status_code == 403 and answer.get_json()["error"] == reason
    [line] = [json.loads(x) for x in capfd.readouterr().err.splitlines() if "handshake_refused" in x]
    assert line["reason"] == reason and line["fix"] == answer.get_json()["detail"]
    assert VERIFY_TOKEN not in json.dumps(line)


def test_leadgen__batch_enqueues_each_lead(post_meta, redis_conn):
    answer = post_meta(fixture_bytes("meta", "leadgen__batch.json"))
    assert answer.status_code == 200
    assert answer.json["accepted"] == 3
    jobs = queued(redis_conn)
    assert sorted(job["arg"]["leadgen_id"] for job in jobs) == [
        "1000000000000001",
        "1000000000000002",
        "1000000000000003",
    ]
    assert all(job["fn"] == "workers.jobs.process_meta_lead" for job in jobs)
    # One drain job woken for the three: not one RQ job per lead.
    assert [job.func_name for job in Queue("leadrelay", connection=redis_conn, serializer=SERIALIZER).get_jobs()] == [
        "workers.jobs.drain"
    ]


def test_leadgen__batch_redelivered_enqueues_nothing(post_meta, redis_conn):
    body = fixture_bytes("meta", "leadgen__batch.json")
    post_meta(body)
    again = post_meta(body)
    assert again.status_code == 200
    assert again.json == {"accepted": 0, "duplicates": 3, "skipped": [{"field": "feed", "reason": "not_leadgen"}]}
    assert len(queued(redis_conn)) == 3


def test_same_lead_twice_in_one_post_enqueues_once(post_meta, redis_conn):
    answer = post_meta(leadgen_body("42", "42"))
    assert answer.json["accepted"] == 1 and answer.json["duplicates"] == 1
    assert len(queued(redis_conn)) == 1


def test_jobs_are_plain_json(post_meta, redis_conn):
    post_meta(fixture_bytes("meta", "leadgen__single.json"))
    [(_, fields)] = redis_conn.xrange("leadrelay:inbox")
    # The inbox entry is JSON, not a pickle: readable by an engineer and loadable after a
    # deploy that changed our classes (the lead's own job, if it needs one, is JSON too).
    entry = json.loads(fields[b"e"])
    assert entry["id"] == "lead-meta-123123123123" and entry["fn"] == "workers.jobs.process_meta_lead"
    assert entry["arg"]["leadgen_id"] == "123123123123"


def test_leadgen__non_ascii_signed_over_raw_bytes_is_accepted(post_meta, redis_conn):
    answer = post_meta(fixture_bytes("meta", "leadgen__non_ascii.json"))
    assert answer.status_code == 200
    assert answer.json["accepted"] == 1


def test_signature_from_second_configured_secret_is_accepted(post_meta):
    from helpers import OLD_APP_SECRET

    assert post_meta(leadgen_body("43"), secret=OLD_APP_SECRET).status_code == 200


def test_bad_signature_returns_401_and_enqueues_nothing(post_meta, redis_conn):
    answer = post_meta(leadgen_body("44"), secret="somebody-else")
    assert answer.status_code == 401
    assert answer.json["error"] == "bad_signature"
    assert queued(redis_conn) == []


def test_missing_signature_returns_401(client):
    answer = client.post("/webhooks/meta", data=leadgen_body("45"), content_type="application/json")
    assert answer.status_code == 401
    assert answer.json["error"] == "missing_signature"


def test_sha1_only_signature_returns_401(client):
    body = leadgen_body("46")
    import hashlib
    import hmac

    from helpers import APP_SECRET

    sha1 = "sha1=" + hmac.new(APP_SECRET.encode(), body, hashlib.sha1).hexdigest()
    answer = client.post("/webhooks/meta", data=body, headers={"X-Hub-Signature": sha1})
    assert answer.status_code == 401
    assert answer.json["error"] == "missing_signature"


def test_signed_malformed_json_is_acknowledged_and_recorded(post_meta):
    answer = post_meta(b'{"object": "page", "entry": [')
    assert answer.status_code == 200  # authenticated: never refused (Meta disables failing webhooks)
    assert answer.json["accepted"] == 0 and answer.json["skipped"][0]["reason"] == "malformed_json"


def test_oversized_body_returns_413(env, monkeypatch, redis_conn):
    monkeypatch.setenv("LEADRELAY_MAX_BODY_BYTES", "1024")
    client = create_app().test_client()
    body = leadgen_body(*[str(10**15 + i) for i in range(50)])
    answer = client.post("/webhooks/meta", data=body, headers={"X-Hub-Signature-256": sign(body)})
    assert answer.status_code == 413
    assert answer.json["error"] == "body_too_large"
    assert queued(redis_conn) == []


def test_redis_unreachable_returns_503_so_meta_retries(env, monkeypatch):
    from workers.run.embedded_redis import free_port

    monkeypatch.setenv("REDIS_URL", f"redis://127.0.0.1:{free_port()}/0")
    client = create_app().test_client()
    body = leadgen_body("47")
    answer = client.post("/webhooks/meta", data=body, headers={"X-Hub-Signature-256": sign(body)})
    assert answer.status_code == 503
    assert answer.json["error"] == "queue_unavailable"
    assert client.get("/readyz").status_code == 503
    assert client.get("/healthz").status_code == 200


def test_redelivery_after_the_job_ran_is_still_a_duplicate(post_meta, graph, work, redis_conn):
    graph.add_lead("48")
    post_meta(leadgen_body("48"))
    work()
    again = post_meta(leadgen_body("48"))
    assert again.json["accepted"] == 0 and again.json["duplicates"] == 1
    assert len(graph.calls("lead")) == 1
    # The dedupe record outlives Meta's 36-hour redelivery window, and the sweep's 7 days;
    # the inbox entry is gone once done.
    assert redis_conn.ttl("leadrelay:seen:lead-meta-48") > 7 * 86400 - 60
    assert redis_conn.xlen("leadrelay:inbox") == 0


def test_readyz_ok_with_redis(client):
    assert client.get("/readyz").json == {"status": "ok"}


def test_a_hubspot_delivery_to_a_url_with_escapes_in_its_query_verifies(client):
    """HubSpot signs the URL it called with twelve escapes decoded and the rest as sent:
    `%20` and `%2B` in the query reach the check as HubSpot wrote them."""
    from workers.vendors.hubspot import webhook as hubspot

    secret = os.environ["HUBSPOT_CLIENT_SECRET"].split(",")[0]
    signed_as = "http://localhost/webhooks/hubspot?label=Q3%20(EMEA)&k=a%2Bb"
    headers = hubspot.sign(secret, b"[]", signed_as)
    answer = client.post("/webhooks/hubspot?label=Q3%20%28EMEA%29&k=a%2Bb", data=b"[]", headers=headers)
    assert answer.status_code == 200, answer.get_data(as_text=True)
