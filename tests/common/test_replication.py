"""Acknowledged means replicated: with a replica wait set and no replica to answer it,
nothing is acknowledged (503 `not_replicated`, and the retry is accepted once replicas
answer); `auto` on a Redis without replicas never waits. tests/feature/test_failover.py
runs the same against a real primary, replica and Sentinels."""

import time

import pytest

from helpers import LEAD, leadgen_body, sign
from webhook_app import create_app
from workers.common import replication
from workers.failures import deadletters


@pytest.fixture
def replica_wait(env, monkeypatch):
    """The web app with LEADRELAY_REPLICA_ACKS=1 on the test's Redis, which has no replica."""
    monkeypatch.setenv("LEADRELAY_REPLICA_ACKS", "1")
    monkeypatch.setenv("LEADRELAY_REPLICA_ACK_TIMEOUT_MS", "20")
    monkeypatch.setenv("LEADRELAY_API_TOKEN", "crm-token")
    yield create_app().test_client()
    replication.configure(replication.AUTO, 1000)


def _post_lead(client):
    body = leadgen_body(LEAD, created_time=int(time.time()))
    return client.post("/webhooks/meta", data=body, headers={"X-Hub-Signature-256": sign(body)})


def _post_stage(client):
    return client.post(
        "/api/v1/stage-events",
        headers={"Authorization": "Bearer crm-token"},
        json=[{"email": "ana@example.com", "stage": "QualifiedLead", "occurred_at": int(time.time()) - 60}],
    )


def test_a_lead_no_replica_acknowledged_is_refused_and_its_retry_accepted_once_one_does(replica_wait, monkeypatch):
    answer = _post_lead(replica_wait)
    assert answer.status_code == 503 and answer.json["error"] == "not_replicated"
    monkeypatch.setenv("LEADRELAY_REPLICA_ACKS", "0")  # as a replica answering again would
    retry = _post_lead(create_app().test_client())
    # Stored the first time (on the primary only): known now, and acknowledged.
    assert retry.status_code == 200 and retry.json["duplicates"] == 1


def test_a_stage_change_no_replica_acknowledged_keeps_no_claim(replica_wait, monkeypatch):
    answer = _post_stage(replica_wait)
    assert answer.status_code == 503 and answer.json["error"] == "not_replicated"
    monkeypatch.setenv("LEADRELAY_REPLICA_ACKS", "0")
    retry = _post_stage(create_app().test_client())
    assert retry.status_code == 202 and retry.json["results"][0]["status"] == "accepted"


def test_auto_on_a_redis_without_replicas_never_waits(env, redis_conn):
    replication.configure(replication.AUTO, 1000)
    assert replication.needed(redis_conn) == 0
    assert replication.confirm(redis_conn) == 0


def test_a_dead_letter_no_replica_acknowledged_is_kept_and_the_worker_goes_on(env, redis_conn):
    replication.configure(1, 20)
    try:
        deadletters.record(
            redis_conn, {"job_id": "lead-meta-1", "reason": "invalid", "last_attempt_at": time.time(), "source": "meta"}
        )
    finally:
        replication.configure(replication.AUTO, 1000)
    assert deadletters.get(redis_conn, "lead-meta-1")["reason"] == "invalid"


def test_auto_does_not_wait_on_a_redis_with_replicas_that_refuses_wait(tmp_path):
    """Some managed services refuse WAIT: every lead would be refused; `auto` says so and
    does not wait instead."""
    from redistopology import Topology

    topology = Topology(tmp_path, extra=("--rename-command", "WAIT", "")).start()
    try:
        replication.configure(replication.AUTO, 1000)
        primary = topology.node("primary")
        assert primary.info("replication")["connected_slaves"] == 1
        assert replication.needed(primary) == 0
    finally:
        topology.stop()
        replication.configure(replication.AUTO, 1000)


def test_auto_waits_for_one_when_the_primary_has_a_replica(tmp_path):
    from redistopology import Topology

    topology = Topology(tmp_path).start()
    try:
        replication.configure(replication.AUTO, 1000)
        primary = topology.node("primary")
        assert replication.needed(primary) == 1
        assert replication.confirm(primary) == 1
    finally:
        topology.stop()
        replication.configure(replication.AUTO, 1000)
