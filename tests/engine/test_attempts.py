"""Delivery under failure: the stand-in answers each error class in turn, and each job
ends in the right state, with the number of Graph calls asserted."""

import json
import time

import pytest
from rq.registry import FailedJobRegistry, ScheduledJobRegistry

from helpers import CAPI_TOKEN, PAGE_TOKEN, fast_forward, leadgen_body, scheduled_in
from workers.common.queues import SERIALIZER
from workers.events import ledger
from workers.failures import deadletters
from workers.graphapi.pauses import Pauses, fingerprint
from workers.run.embedded_redis import free_port

LEAD = "1234567890123456"
JOB = f"lead-meta-{LEAD}"
EVENT_ID = f"meta:{LEAD}:Lead"


def error(code, subcode=None, status=400, **extra):
    body = {"message": "localised text", "type": "OAuthException", "code": code, "fbtrace_id": "TRACE1", **extra}
    if subcode:
        body["error_subcode"] = subcode
    return {"status": status, "error": body}


def failed_ids(redis_conn):
    return FailedJobRegistry("leadrelay", connection=redis_conn, serializer=SERIALIZER).get_job_ids()


def scheduled_ids(redis_conn):
    return ScheduledJobRegistry("leadrelay", connection=redis_conn).get_job_ids()


@pytest.fixture
def one_lead(graph, post_meta):
    graph.add_lead(LEAD)
    assert post_meta(leadgen_body(LEAD, created_time=int(time.time()))).json["accepted"] == 1


def delivered_once(graph) -> bool:
    return [e["event_id"] for e in graph.events] == [EVENT_ID]


@pytest.mark.parametrize(
    "on, action, shortest",
    [
        ("events", {"status": 500}, 15),  # bare 5xx, no error envelope
        ("events", error(2, status=503), 15),
        ("lead", {"delay": 1.5}, 15),  # longer than LEADRELAY_GRAPH_TIMEOUT_SECONDS
        ("lead", {"drop": True}, 15),  # connection closed without an answer
        ("events", error(613), 150),
    ],
)
def test_transient_and_throttled_are_delivered_after_a_retry(one_lead, graph, work, redis_conn, on, action, shortest):
    graph.then(action, on=on)
    work()
    assert scheduled_ids(redis_conn) == [JOB] and failed_ids(redis_conn) == []
    assert shortest - 5 <= scheduled_in(redis_conn, JOB) <= shortest * 2 + 1  # the schedule itself: test_policy
    assert graph.events == [] or on == "events"
    fast_forward(redis_conn)
    work()
    assert len(graph.calls("lead")) == 2
    assert len(graph.calls("events")) == (2 if on == "events" else 1)
    assert ledger.confirmed(redis_conn, EVENT_ID)
    assert scheduled_ids(redis_conn) == [] and failed_ids(redis_conn) == []


def test_connection_refused_is_retried(graph, post_meta, work, redis_conn, monkeypatch):
    graph.add_lead(LEAD)
    post_meta(leadgen_body(LEAD, created_time=int(time.time())))
    real_graph = graph.url
    monkeypatch.setenv("META_GRAPH_URL", f"http://127.0.0.1:{free_port()}")  # nothing listens there
    work()
    assert scheduled_ids(redis_conn) == [JOB] and graph.requests == []
    monkeypatch.setenv("META_GRAPH_URL", real_graph)
    fast_forward(redis_conn)
    work()
    assert delivered_once(graph)


def test_lead_read_throttle_waits_for_metas_regain_access_estimate(one_lead, graph, work, redis_conn):
    usage = json.dumps({"123": [{"type": "ads_management", "estimated_time_to_regain_access": 20}]})
    graph.then({**error(80005), "headers": {"X-Business-Use-Case-Usage": usage}}, on="lead")
    work()
    assert 20 * 60 - 2 <= scheduled_in(redis_conn, JOB) <= 20 * 60 + 1
    fast_forward(redis_conn)
    work()
    assert len(graph.calls("lead")) == 2 and delivered_once(graph)


def test_expired_token_dead_letters_at_once_and_pauses_the_token(graph, post_meta, work, redis_conn):
    graph.add_lead(LEAD)
    graph.add_lead("1234567890123457")
    graph.revoked.add(CAPI_TOKEN)  # the CAPI token expired on Friday night
    post_meta(leadgen_body(LEAD, created_time=int(time.time())))
    work()
    post_meta(leadgen_body("1234567890123457", created_time=int(time.time())))
    work()
    assert len(graph.calls("events")) == 1  # the second job never reached Meta with the paused token
    assert failed_ids(redis_conn) == [JOB]
    [dead] = deadletters.select(redis_conn, _queue(redis_conn), deadletters.Filter())
    assert dead["reason"] == "auth" and dead["code"] == 190 and dead["subcode"] == 463
    assert dead["fbtrace_id"] == "revoked" and dead["attempts"] == 1
    assert scheduled_ids(redis_conn) == ["lead-meta-1234567890123457"]  # waiting, not failed
    assert len(graph.calls("probe")) == 1  # one cheap check of the token, which still fails
    [pause] = Pauses(redis_conn).all()
    assert pause["token"] == "META_CAPI_ACCESS_TOKEN" and pause["waiting"] == 1
    assert CAPI_TOKEN not in json.dumps(pause)


def test_pause_lifts_when_the_probe_succeeds(graph, post_meta, work, redis_conn):
    graph.add_lead(LEAD)
    graph.add_lead("1234567890123457")
    graph.revoked.add(CAPI_TOKEN)
    post_meta(leadgen_body(LEAD, created_time=int(time.time())))
    work()
    graph.revoked.clear()  # Meta takes the token again (the owner re-authorised the app)
    redis_conn.delete("leadrelay:pause:" + fingerprint(CAPI_TOKEN) + ":probe")  # five minutes later
    post_meta(leadgen_body("1234567890123457", created_time=int(time.time())))
    work()
    assert [e["event_id"] for e in graph.events] == ["meta:1234567890123457:Lead"]
    assert Pauses(redis_conn).all() == []


@pytest.mark.parametrize("paused", [CAPI_TOKEN, PAGE_TOKEN])
def test_a_lead_past_the_7_days_is_dead_lettered_expired_at_once_even_while_its_token_is_paused(
    graph, post_meta, work, redis_conn, paused
):
    """Waiting for the token could never send it: Meta's window has closed."""
    late = "1234567890123457"
    graph.add_lead(LEAD)
    graph.add_lead(late, created_time=int(time.time()) - 8 * 86400)
    graph.revoked.add(paused)
    post_meta(leadgen_body(LEAD, created_time=int(time.time())))
    work()  # the token is refused and paused
    assert Pauses(redis_conn).all()
    post_meta(leadgen_body(late, created_time=int(time.time()) - 8 * 86400))
    work()
    assert deadletters.get(redis_conn, f"lead-meta-{late}")["reason"] == "expired"
    assert f"lead-meta-{late}" not in scheduled_ids(redis_conn)


@pytest.mark.parametrize(
    "action, reason, calls",
    [
        (error(100, 2804003), "expired", 1),
        (error(100, 2804016), "invalid", 1),
    ],
)
def test_permanent_event_errors_dead_letter_without_retry(one_lead, graph, work, redis_conn, action, reason, calls):
    graph.then(action, on="events")
    work()
    assert len(graph.calls("events")) == calls
    assert scheduled_ids(redis_conn) == [] and failed_ids(redis_conn) == [JOB]
    assert deadletters.get(redis_conn, JOB)["reason"] == reason


def test_unknown_lead_is_tried_three_times_then_dead_lettered_invalid(graph, post_meta, work, redis_conn):
    post_meta(leadgen_body(LEAD, created_time=int(time.time())))  # the stand-in has no such lead: 100/33
    for _ in range(3):
        work()
        fast_forward(redis_conn)
    assert len(graph.calls("lead")) == 3
    dead = deadletters.get(redis_conn, JOB)
    assert dead["reason"] == "invalid" and (dead["code"], dead["subcode"]) == (100, 33)
    assert dead["attempts"] == 3 and dead["first_attempt_at"] < dead["last_attempt_at"]
    assert dead["args"]["leadgen_id"] == LEAD


def test_no_retry_is_scheduled_past_metas_7_day_window(graph, post_meta, work, redis_conn):
    almost_too_old = int(time.time()) - (7 * 86400 - 3600) + 10  # 10 s left before the margin
    graph.add_lead(LEAD, created_time=almost_too_old)
    graph.then({"status": 500}, on="events")
    post_meta(leadgen_body(LEAD, created_time=almost_too_old))
    work()
    assert scheduled_ids(redis_conn) == []
    dead = deadletters.get(redis_conn, JOB)
    assert dead["reason"] == "expired" and "7-day window" in dead["detail"]


def _queue(redis_conn):
    from rq import Queue

    return Queue("leadrelay", connection=redis_conn, serializer=SERIALIZER)


def _stream(graph, post_meta, first: int, count: int) -> list[str]:
    """`count` leads in one webhook (Meta batches changes), each known to the stand-in."""
    ids = [str(1234567890200000 + first + n) for n in range(count)]
    for lead_id in ids:
        graph.add_lead(lead_id)
    assert post_meta(leadgen_body(*ids, created_time=int(time.time()))).json["accepted"] == count
    return ids


def _retest_due(token: str, redis_conn) -> None:
    """PROBE_EVERY_SECONDS later: the next retest of the token is due."""
    [pause] = Pauses(redis_conn).all()
    assert pause["next_retest_at"] > time.time() + 200  # tested once on meeting it; the next is minutes away
    redis_conn.delete("leadrelay:pause:" + fingerprint(token) + ":probe")
    [pause] = Pauses(redis_conn).all()
    assert pause["next_retest_at"] <= time.time() + 1


def test_a_paused_page_token_comes_back_while_leads_keep_coming_in_batches(graph, post_meta, work, redis_conn):
    """A steady stream (several leads per webhook, so never a lone job) while Meta refuses
    the Page token: once the retest is due, the next batch retests it, and every lead
    waiting on it is delivered (the one that met the refusal is an `auth` dead letter,
    for `replay --reason auth`)."""
    graph.revoked.add(PAGE_TOKEN)
    waiting = _stream(graph, post_meta, 0, 3)
    work()
    waiting += _stream(graph, post_meta, 3, 3)  # still refused: the retest is minutes away
    work()
    assert graph.events == [] and len(graph.calls("probe")) <= 1
    graph.revoked.clear()  # a minute later the owner re-authorises the app
    _retest_due(PAGE_TOKEN, redis_conn)
    later = _stream(graph, post_meta, 6, 3)
    work()
    [refused] = failed_ids(redis_conn)
    assert sorted(e["event_id"] for e in graph.events) == sorted(
        f"meta:{i}:Lead" for i in waiting + later if f"lead-meta-{i}" != refused
    )
    assert len(graph.events) == 8 and Pauses(redis_conn).all() == []


def test_a_paused_token_is_retested_by_the_worker_when_no_lead_comes(graph, post_meta, work, redis_conn):
    """No new lead meets the pause: the worker's maintenance pass retests it when due."""
    graph.revoked.add(PAGE_TOKEN)
    waiting = _stream(graph, post_meta, 0, 3)
    work()
    assert graph.events == []
    graph.revoked.clear()
    _retest_due(PAGE_TOKEN, redis_conn)
    work()  # a worker starting its loop runs its maintenance pass first
    [refused] = failed_ids(redis_conn)
    assert sorted(e["event_id"] for e in graph.events) == sorted(
        f"meta:{i}:Lead" for i in waiting if f"lead-meta-{i}" != refused
    )
    assert Pauses(redis_conn).all() == []
