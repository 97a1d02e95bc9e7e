"""One bad item never stops the line: an inbox entry that cannot be handled is set aside
as an `invalid` dead letter and the leads behind it go out; one that keeps killing its
worker is set aside after a few tries; Meta's malformed answers are retried, never a
crash; workers stay up through recovery races and a full Redis; a stage request that
fails part-way keeps none of its claims."""

import json
import os
import subprocess
import time

import pytest
from rq.registry import FailedJobRegistry

from helpers import API_TOKEN, BIN, fast_forward, inbox_entries, kill_worker_during, leadgen_body, wait_for
from webhook_app import create_app
from workers.common import counters
from workers.common.queues import queue
from workers.engine import quarantine, recovery
from workers.failures import deadletters
from workers.intake import inbox

NOW = int(time.time())
GOOD = [str(8200000000000000 + i) for i in range(3)]
POISON = "8299999999999999"


def admitted_by_an_earlier_release(redis_conn, leadgen_id: str, **argument) -> None:
    """An entry as a receiver stored it that checked less (or wrote another shape)."""
    argument = {
        "source": "meta",
        "leadgen_id": leadgen_id,
        "page_id": "111",
        "form_id": "555",
        "ad_id": None,
        "adgroup_id": None,
        "created_time": NOW,
        **argument,
    }
    job_id = f"lead-meta-{leadgen_id}"
    _, woken, _ = inbox.admit(
        redis_conn,
        [(job_id, inbox.entry(job_id, "workers.jobs.process_meta_lead", argument, via="webhook"))],
        inbox.SLOTS,
    )
    inbox.wake(queue(redis_conn, "leadrelay"), woken)


def drained(redis_conn) -> bool:
    return inbox.waiting(redis_conn) == {"inbox": 0, "taken": 0}


def test_a_time_no_datetime_holds_stalls_no_drain(graph, post_meta, work, redis_conn):
    """The entry that used to crash every drain job of its worker, for good."""
    for lead_id in GOOD + [POISON]:
        graph.add_lead(lead_id)
    admitted_by_an_earlier_release(redis_conn, POISON, created_time=10**19)
    assert post_meta(leadgen_body(*GOOD, created_time=NOW)).json["accepted"] == 3
    work()
    assert sorted(e["event_id"] for e in graph.events) == sorted(f"meta:{i}:Lead" for i in GOOD + [POISON])
    assert drained(redis_conn)


def test_an_entry_that_raises_is_set_aside_alone_and_the_rest_delivered(graph, post_meta, work, redis_conn):
    for lead_id in GOOD + [POISON]:
        graph.add_lead(lead_id)
    admitted_by_an_earlier_release(redis_conn, POISON, route={"page_id": ["a", "list"]})  # no step foresaw it
    assert post_meta(leadgen_body(*GOOD, created_time=NOW)).json["accepted"] == 3
    work()
    assert sorted(e["event_id"] for e in graph.events) == sorted(f"meta:{i}:Lead" for i in GOOD)
    dead = deadletters.get(redis_conn, f"lead-meta-{POISON}")
    assert dead["reason"] == "invalid" and dead["detail"].startswith("could not be handled: TypeError at ")
    assert f"lead-meta-{POISON}" in FailedJobRegistry("leadrelay", connection=redis_conn).get_job_ids()  # replayable
    assert drained(redis_conn)
    work()  # and the next drain job is not stuck on it either
    assert drained(redis_conn) and len(graph.events) == 3


def test_an_entry_of_no_shape_we_know_is_kept_and_listed(graph, post_meta, work, redis_conn):
    graph.add_lead(GOOD[0])
    admitted_by_an_earlier_release(redis_conn, POISON, route="not an object")
    post_meta(leadgen_body(GOOD[0], created_time=NOW))
    work()
    assert [e["event_id"] for e in graph.events] == [f"meta:{GOOD[0]}:Lead"]
    dead = deadletters.get(redis_conn, f"lead-meta-{POISON}")
    assert dead["reason"] == "invalid" and "not replayable" in dead["detail"]
    [kept] = redis_conn.lrange(quarantine.KEPT, 0, -1)
    assert json.loads(kept)["entry"]["arg"]["route"] == "not an object"
    assert drained(redis_conn)


def test_a_time_no_datetime_holds_is_no_time_at_the_door(graph, post_meta, work, redis_conn):
    for value in (10**19, -(2**63), 2**63):
        lead_id = str(8300000000000000 + len(graph.events))
        graph.add_lead(lead_id)
        assert post_meta(leadgen_body(lead_id, created_time=value)).json["accepted"] == 1
        assert inbox_entries(redis_conn)[-1]["arg"]["created_time"] is None
        work()
    assert len(graph.events) == 3 and drained(redis_conn)


def test_a_leadgen_id_of_zero_is_no_lead(post_meta):
    answer = post_meta(leadgen_body("0", created_time=NOW))
    assert answer.status_code == 200 and answer.json["accepted"] == 0
    assert answer.json["skipped"] == [{"reason": "leadgen_without_id", "field": "leadgen"}]


def test_an_entry_that_keeps_killing_its_worker_is_set_aside(graph, post_meta, work, redis_conn, env):
    graph.add_lead(GOOD[0])
    post_meta(leadgen_body(GOOD[0], created_time=NOW))
    for _ in range(quarantine.MAX_TRIES + 1):  # the first taking, then MAX_TRIES takings up
        kill_worker_during(graph, redis_conn, "batch")
    work()
    dead = deadletters.get(redis_conn, f"lead-meta-{GOOD[0]}")
    assert dead["reason"] == "invalid" and "taken up 4 times" in dead["detail"]
    assert drained(redis_conn) and graph.events == []
    assert counters.read(redis_conn)[("leadrelay_jobs", "drain", "crashed")] >= 1  # each death is seen


RAW = {
    "a body cut short": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    b'40\r\n[{"code": 200',
    "a body that is not the gzip it claims": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
    b"Content-Encoding: gzip\r\nContent-Length: 7\r\n\r\nnotgzip",
    "a batch item whose body is not text": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
    b'Content-Length: 29\r\n\r\n[{"code": 200, "body": 12345}]',
}


@pytest.mark.parametrize("shape", sorted(RAW))
def test_a_malformed_answer_to_a_batch_read_is_retried(shape, graph, post_meta, work, redis_conn):
    graph.add_lead(GOOD[0])
    graph.then({"raw": RAW[shape]}, on="batch")
    post_meta(leadgen_body(GOOD[0], created_time=NOW))
    work()
    assert graph.events == [] and FailedJobRegistry("leadrelay", connection=redis_conn).get_job_ids() == []
    assert fast_forward(redis_conn) == 1  # one retry scheduled, as for any transient failure
    work()
    assert [e["event_id"] for e in graph.events] == [f"meta:{GOOD[0]}:Lead"]


def test_capi_answering_an_empty_list_is_retried(graph, post_meta, work, redis_conn):
    graph.add_lead(GOOD[0])
    graph.then(
        {"raw": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n[]"}, on="events"
    )
    post_meta(leadgen_body(GOOD[0], created_time=NOW))
    work()
    assert graph.events == [] and fast_forward(redis_conn) == 1
    work()
    assert [e["event_id"] for e in graph.events] == [f"meta:{GOOD[0]}:Lead"]


def crashed_job(redis_conn, job_id: str):
    q = queue(redis_conn, "leadrelay")
    job = q.enqueue("workers.jobs.process_meta_lead", {"source": "meta", "leadgen_id": job_id[10:]}, job_id=job_id)
    q.remove(job)
    FailedJobRegistry(queue=q).add(job, exc_string="the worker died")
    return job


def test_a_failed_job_another_worker_is_settling_is_left_to_it(redis_conn, env):
    crashed_job(redis_conn, "lead-meta-8400000000000001")
    redis_conn.set(recovery.CLAIM + "lead-meta-8400000000000001", 1)
    q = queue(redis_conn, "leadrelay")
    assert recovery.requeue_crashed(redis_conn, q) == {"requeued": 0, "crashed": 0}
    redis_conn.delete(recovery.CLAIM + "lead-meta-8400000000000001")
    assert recovery.requeue_crashed(redis_conn, q) == {"requeued": 1, "crashed": 0}
    assert q.fetch_job("lead-meta-8400000000000001").meta["crashes"] == 1


def test_workers_started_together_settle_each_crashed_job_once_and_stay_up(redis_conn, env, tmp_path):
    ids = [f"lead-meta-84000000000001{i:02d}" for i in range(30)]
    for job_id in ids:
        crashed_job(redis_conn, job_id)
    logs = [(tmp_path / f"worker{n}.log").open("w+") for n in range(2)]  # files: a full pipe would block them
    workers = [
        subprocess.Popen(
            [str(BIN / "leadrelay"), "worker"], env=dict(os.environ), stdout=log, stderr=subprocess.STDOUT, text=True
        )
        for log in logs
    ]
    try:
        q = queue(redis_conn, "leadrelay")
        wait_for(
            lambda: (
                not FailedJobRegistry(queue=q).get_job_ids() and all(q.fetch_job(i).meta.get("crashes") for i in ids)
            ),
            timeout=60,
        )
        assert all(w.poll() is None for w in workers)
        assert {q.fetch_job(i).meta["crashes"] for i in ids} == {1}  # each requeued by one worker, once
    finally:
        for w in workers:
            w.terminate()
        stopped = []
        for w in workers:
            try:
                stopped.append(w.wait(timeout=60))
            except subprocess.TimeoutExpired:
                w.kill()
        assert len(stopped) == len(workers), "a worker did not stop within 60 s of SIGTERM"
    outputs = [log.seek(0) or log.read() for log in logs]
    assert "Traceback" not in "".join(outputs), outputs


def test_a_worker_waits_out_a_full_redis_and_delivers_after(graph, post_meta, redis_conn, env):
    graph.add_lead(GOOD[0])
    used = redis_conn.info("memory")["used_memory"]
    redis_conn.config_set("maxmemory", used)  # every write refused now: OutOfMemoryError
    worker = subprocess.Popen(
        [str(BIN / "leadrelay"), "worker"],
        env=dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    try:
        import threading

        threading.Thread(target=lambda: lines.extend(worker.stdout), daemon=True).start()
        wait_for(lambda: any('"redis_refused"' in line for line in list(lines)), timeout=60)
        assert worker.poll() is None
        redis_conn.config_set("maxmemory", 0)
        post_meta(leadgen_body(GOOD[0], created_time=NOW))
        wait_for(lambda: graph.events, timeout=90)
        assert worker.poll() is None
    finally:
        redis_conn.config_set("maxmemory", 0)
        worker.terminate()
        worker.wait(timeout=60)
    assert "OutOfMemoryError" in "".join(lines) and "Traceback" not in "".join(lines)


@pytest.fixture
def api(env, monkeypatch):
    monkeypatch.setenv("LEADRELAY_API_TOKEN", API_TOKEN)
    client = create_app().test_client()

    def post(raw: bytes):
        return client.post(
            "/api/v1/stage-events",
            data=raw,
            headers={"Authorization": f"Bearer {API_TOKEN}", "Content-Type": "application/json"},
        )

    return post


def stage_items(*emails: str) -> list[dict]:
    return [{"email": email, "stage": "QualifiedLead", "occurred_at": NOW - 60} for email in emails]


def test_a_raw_surrogate_in_one_stage_item_costs_no_other_item(api, redis_conn):
    body = json.dumps(
        stage_items("a@example.com", "b@example.com")
        + [{"leadgen_id": "SURR", "stage": "QualifiedLead", "occurred_at": NOW - 60}]
    ).encode()
    body = body.replace(b"SURR", b"\xed\xbf\xbf")
    answer = api(body)
    assert answer.status_code == 202
    assert [r["status"] for r in answer.json["results"]] == ["accepted", "accepted", "rejected"]
    again = api(body)  # the CRM's retry: the first two were queued, the third is still refused
    assert [r["status"] for r in again.json["results"]] == ["duplicate", "duplicate", "rejected"]


def test_a_stage_request_that_fails_part_way_keeps_no_claim(api, redis_conn):
    redis_conn.set("rq:queue:leadrelay", "not a list")  # RQ's enqueue now fails, after the claims
    try:
        answer = api(json.dumps(stage_items("a@example.com", "b@example.com")).encode())
        assert answer.status_code == 503
        assert redis_conn.keys("leadrelay:stage:*") == []
    finally:
        redis_conn.delete("rq:queue:leadrelay")
    answer = api(json.dumps(stage_items("a@example.com", "b@example.com")).encode())
    assert [r["status"] for r in answer.json["results"]] == ["accepted", "accepted"]
