"""The Lead job end to end: webhook in, real Redis, our RQ worker (a SimpleWorker, as in production), Graph
over HTTP."""

import hashlib
import hmac
import time
from importlib.metadata import version

from rq.job import Job
from rq.registry import FailedJobRegistry, ScheduledJobRegistry

from helpers import APP_SECRET, CAPI_TOKEN, DATASET_ID, PAGE_TOKEN, leadgen_body
from workers.common.queues import SERIALIZER
from workers.events import ledger, profiles
from workers.graphapi import capi
from workers.graphapi.graph import LEAD_FIELDS

LEAD_ID = "1234567890123456"
# Hashes of the stand-in lead's answers, computed independently of our normaliser.
EM = hashlib.sha256(b"joe@example.com").hexdigest()
PH = hashlib.sha256(b"16505551212").hexdigest()
FN = hashlib.sha256(b"joe").hexdigest()
LN = hashlib.sha256(b"example").hexdigest()


def failed(redis_conn):
    return FailedJobRegistry("leadrelay", connection=redis_conn, serializer=SERIALIZER)


def test_job_reads_the_lead_and_sends_exactly_the_expected_event(graph, post_meta, work, redis_conn):
    created = int(time.time()) - 3600
    graph.add_lead(
        LEAD_ID,
        created_time=created,
        field_data=[
            {"name": "full_name", "values": ["Joe Example"]},
            {"name": "email", "values": [" Joe@Example.com "]},
            {"name": "phone_number", "values": ["+1 (650) 555-1212"]},
            {"name": "city", "values": ["New York"]},
            {"name": "state", "values": ["New York"]},
            {"name": "zip_code", "values": ["10001-1234"]},
            {"name": "country", "values": ["United States"]},
            {"name": "date_of_birth", "values": ["April 19, 1987"]},
            {"name": "gender", "values": ["male"]},
            {"name": "car_make", "values": ["Honda"]},
        ],
    )
    assert post_meta(leadgen_body(LEAD_ID, created_time=created)).status_code == 200
    work()

    [read] = graph.calls("lead")
    assert read["path"] == f"/v26.0/{LEAD_ID}"
    assert read["query"]["fields"] == [LEAD_FIELDS]
    assert read["headers"]["Authorization"] == f"Bearer {PAGE_TOKEN}"
    # The lead was read in a Graph batch: the proof and the token go on the batch request.
    [batch] = graph.calls("batch")
    assert batch["body"]["batch"] == [{"method": "GET", "relative_url": f"{LEAD_ID}?fields={LEAD_FIELDS}"}]
    assert batch["headers"]["Authorization"] == f"Bearer {PAGE_TOKEN}"
    assert batch["query"]["appsecret_proof"] == [
        hmac.new(APP_SECRET.encode(), PAGE_TOKEN.encode(), hashlib.sha256).hexdigest()
    ]
    assert "access_token" not in batch["query"] and "access_token" not in read["query"]  # tokens never in URLs

    [send] = graph.calls("events")
    assert send["path"] == f"/v26.0/{DATASET_ID}/events"
    assert send["headers"]["Authorization"] == f"Bearer {CAPI_TOKEN}"
    assert send["body"] == {
        "data": [
            {
                "event_name": "Lead",
                "event_time": created,
                "action_source": "system_generated",
                "event_id": f"meta:{LEAD_ID}:Lead",
                "user_data": {
                    "lead_id": int(LEAD_ID),
                    "em": [EM],
                    "ph": [PH],
                    "fn": [FN],
                    "ln": [LN],
                    "ct": [hashlib.sha256(b"newyork").hexdigest()],
                    "st": [hashlib.sha256(b"ny").hexdigest()],
                    "zp": [hashlib.sha256(b"10001").hexdigest()],
                    "country": [hashlib.sha256(b"us").hexdigest()],
                    "db": [hashlib.sha256(b"19870419").hexdigest()],
                    "ge": [hashlib.sha256(b"m").hexdigest()],
                },
                "custom_data": {"event_source": "crm", "lead_event_source": "leadrelay"},
            }
        ],
        "partner_agent": f"leadrelay-{version('leadrelay')}",  # who sends, on every request
    }
    assert ledger.confirmed(redis_conn, f"meta:{LEAD_ID}:Lead")


def test_test_event_code_and_lead_event_source_are_sent_when_set(graph, post_meta, work, monkeypatch):
    monkeypatch.setenv("META_TEST_EVENT_CODE", "TEST123")
    monkeypatch.setenv("LEADRELAY_LEAD_EVENT_SOURCE", "HubSpot")
    graph.add_lead(LEAD_ID)
    post_meta(leadgen_body(LEAD_ID))
    work()
    [send] = graph.calls("events")
    assert send["body"]["test_event_code"] == "TEST123"
    assert send["body"]["data"][0]["custom_data"]["lead_event_source"] == "HubSpot"


def test_confirmed_event_is_never_sent_twice(graph, post_meta, work, redis_conn):
    graph.add_lead(LEAD_ID)
    post_meta(leadgen_body(LEAD_ID))
    work()
    # The dedupe record expired (or an engineer replays): the lead is taken again.
    redis_conn.delete(f"leadrelay:seen:lead-meta-{LEAD_ID}")
    assert post_meta(leadgen_body(LEAD_ID)).json["accepted"] == 1
    work()
    assert len(graph.calls("events")) == 1
    assert len(graph.events) == 1


def test_future_creation_time_is_clamped_to_now(graph, post_meta, work):
    graph.add_lead(LEAD_ID, created_time=int(time.time()) + 86400)
    post_meta(leadgen_body(LEAD_ID))
    before = time.time()
    work()
    [event] = graph.events
    assert before - 1 <= event["event_time"] <= time.time()


def test_lead_older_than_7_days_is_not_sent_and_recorded_expired(graph, post_meta, work, redis_conn):
    graph.add_lead(LEAD_ID, created_time=int(time.time()) - 8 * 86400)
    post_meta(leadgen_body(LEAD_ID))
    work()
    assert graph.calls("events") == []
    [job_id] = failed(redis_conn).get_job_ids()
    job = Job.fetch(job_id, connection=redis_conn, serializer=SERIALIZER)
    assert "expired" in job.latest_result().exc_string
    assert "8.0 days old" in job.latest_result().exc_string
    # The profile is kept all the same: a stage change today is still sendable.
    assert profiles.load(redis_conn, "meta", LEAD_ID)["lead_id"] == int(LEAD_ID)


def test_profile_keeps_hashes_and_ids_never_raw_pii(graph, post_meta, work, redis_conn):
    graph.add_lead(LEAD_ID)
    post_meta(leadgen_body(LEAD_ID))
    work()
    profile = profiles.load(redis_conn, "meta", LEAD_ID)
    assert profile["user_data"] == {"em": [EM], "ph": [PH]}  # what stage events find and send, nothing more
    assert sorted(profile) == [
        "created_time",
        "dataset",
        "dataset_id",
        "fbc",
        "form_id",
        "key",
        "lead_id",
        "page_id",
        "source",
        "user_data",
    ]
    assert profile["lead_id"] == int(LEAD_ID) and profile["page_id"] == "111" and profile["form_id"] == "555"
    assert profiles.find(redis_conn, "em", EM)["key"] == LEAD_ID
    assert profiles.find(redis_conn, "ph", PH)["key"] == LEAD_ID
    everything = b" ".join(redis_conn.dump(k) or b"" for k in redis_conn.keys("*"))
    for raw in (b"Joe@Example.com", b"joe@example.com", b"6505551212", b"Joe Example"):
        assert raw not in everything
    assert 0 < redis_conn.ttl(f"leadrelay:profile:meta:{LEAD_ID}") <= 90 * 86400


def test_dry_run_keeps_the_event_and_sends_nothing(graph, post_meta, work, redis_conn, monkeypatch):
    monkeypatch.delenv("META_CAPI_ACCESS_TOKEN")
    graph.add_lead(LEAD_ID)
    post_meta(leadgen_body(LEAD_ID))
    work()
    assert graph.calls("events") == []
    [kept] = capi.last_dry_run(redis_conn, 10)
    assert kept["dataset_id"] == DATASET_ID
    assert kept["event"]["event_id"] == f"meta:{LEAD_ID}:Lead"
    assert kept["event"]["user_data"]["lead_id"] == int(LEAD_ID)
    assert not ledger.confirmed(redis_conn, f"meta:{LEAD_ID}:Lead")


def test_transient_error_schedules_a_retry_with_the_same_job(graph, post_meta, work, redis_conn):
    graph.add_lead(LEAD_ID)
    graph.then({"status": 500, "error": {"code": 2, "message": "Service temporarily unavailable"}}, on="events")
    post_meta(leadgen_body(LEAD_ID))
    work()
    assert ScheduledJobRegistry("leadrelay", connection=redis_conn).get_job_ids() == [f"lead-meta-{LEAD_ID}"]
    assert failed(redis_conn).get_job_ids() == []


def test_unknown_lead_fails_without_retry(graph, post_meta, work, redis_conn):
    post_meta(leadgen_body(LEAD_ID))  # the stand-in answers 100/33 for an unknown id
    work()
    assert len(graph.calls("lead")) == 1
    assert failed(redis_conn).get_job_ids() == [f"lead-meta-{LEAD_ID}"]
    assert ScheduledJobRegistry("leadrelay", connection=redis_conn).get_job_ids() == []


def test_short_events_received_is_not_delivered(graph, post_meta, work, redis_conn):
    graph.add_lead(LEAD_ID)
    graph.then({"status": 200, "error": None}, on="events")  # 200 but no events_received
    post_meta(leadgen_body(LEAD_ID))
    work()
    assert not ledger.confirmed(redis_conn, f"meta:{LEAD_ID}:Lead")
    assert ScheduledJobRegistry("leadrelay", connection=redis_conn).get_job_ids() == [f"lead-meta-{LEAD_ID}"]


def test_unmappable_identifier_is_dropped_not_fatal(graph, post_meta, work):
    graph.add_lead(
        LEAD_ID,
        field_data=[
            {"name": "email", "values": ["joe@example.com"]},
            {"name": "phone_number", "values": ["12"]},
            {"name": "date_of_birth", "values": ["sometime"]},
        ],
    )
    post_meta(leadgen_body(LEAD_ID))
    work()
    [event] = graph.events
    assert set(event["user_data"]) == {"lead_id", "em"}
