"""Meta's own word on the API version, read from every answer: the auto-upgrade header is
kept, counted and shown by doctor, readiness and /metrics; error #2635 is a configuration
mistake naming META_API_VERSION, never retried as transient."""

import time

from helpers import LEAD, leadgen_body, leadrelay
from workers.failures import deadletters
from workers.graphapi import versionsignals

WARNING = "The call has been auto-upgraded to v25.0 as v24.0 has been deprecated."


def test_the_auto_upgrade_header_is_kept_counted_and_shown(graph, post_meta, work, redis_conn, client, monkeypatch):
    monkeypatch.setenv("META_API_VERSION", "v26.0")  # our table says nothing against it
    graph.always_headers["X-Ad-Api-Version-Warning"] = WARNING
    graph.add_lead(LEAD)
    post_meta(leadgen_body(LEAD, created_time=int(time.time())))
    work()
    assert [e["event_id"] for e in graph.events] == [f"meta:{LEAD}:Lead"]  # the call itself went through
    kept = versionsignals.read(redis_conn)
    assert kept["served"] == "v25.0" and kept["warning"] == WARNING
    metrics = client.get("/metrics").get_data(as_text=True)
    assert 'leadrelay_api_version_warnings_total{served="v25.0"}' in metrics
    doctor = leadrelay("doctor")
    line = next(line for line in doctor.stdout.splitlines() if "api version" in line)
    assert "[FAIL]" in line and "Meta says: The call has been auto-upgraded" in line, doctor.stdout
    readiness = leadrelay("readiness")
    assert "Meta says: The call has been auto-upgraded to v25.0" in readiness.stdout


def test_error_2635_is_a_configuration_dead_letter_naming_the_setting(graph, post_meta, work, redis_conn):
    error = {
        "code": 2635,
        "message": "(#2635) You are calling a deprecated version of the Ads API.",
        "type": "OAuthException",
    }
    graph.then({"status": 400, "error": error}, on="events")
    graph.add_lead(LEAD)
    post_meta(leadgen_body(LEAD, created_time=int(time.time())))
    work()
    [dead] = deadletters.select(redis_conn, _queue(redis_conn), deadletters.Filter())
    assert dead["reason"] == "invalid" and dead["code"] == 2635 and dead["attempts"] == 1  # never retried
    listing = leadrelay("dead-letters", "list").stdout
    assert "META_API_VERSION" in listing and "no longer serves the API version" in listing


def _queue(connection):
    from workers.common.queues import queue

    return queue(connection, "leadrelay")
