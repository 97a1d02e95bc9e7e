"""New leads in batches: the inbox, drain jobs, Graph batch reads, many events per
request, each lead with its own outcome; and every crash point of the new path."""

import json
import os
import subprocess
import threading
import time

from hypothesis import given
from hypothesis import strategies as st
from rq.registry import FailedJobRegistry, ScheduledJobRegistry

from helpers import BIN, PAGE_TOKEN, fast_forward, inbox_entries, kill_worker_during, leadgen_body, leadrelay, wait_for
from workers import jobs
from workers.common.queues import queue
from workers.config.settings import load
from workers.engine import inboxdrain, recovery
from workers.failures import deadletters
from workers.graphapi.graph import BATCH_LIMIT
from workers.graphapi.pauses import Pauses
from workers.intake import inbox
from workers.run import worker

NOW = int(time.time())
IDS = [str(8100000000000000 + i) for i in range(5)]
MISSING, REFUSED = IDS[1], IDS[3]


def failed_ids(redis_conn):
    return sorted(FailedJobRegistry(queue=queue(redis_conn, "leadrelay")).get_job_ids())


def test_one_failed_read_and_one_refused_event_cost_no_other_lead(graph, post_meta, work, redis_conn):
    for lead_id in IDS:
        if lead_id != MISSING:  # Meta answers 100/33 for it: "does not exist"
            graph.add_lead(lead_id)
    graph.refuse_event_ids.add(f"meta:{REFUSED}:Lead")  # Meta refuses any request carrying it
    assert post_meta(leadgen_body(*IDS, created_time=NOW)).json["accepted"] == 5
    work()

    [batch] = graph.calls("batch")  # five reads in one Graph call
    assert len(batch["body"]["batch"]) == 5
    delivered = [e["event_id"] for e in graph.events]
    assert sorted(delivered) == sorted(f"meta:{i}:Lead" for i in IDS if i not in (MISSING, REFUSED))
    # The refused event was isolated by halving: 4 events, then 2 + 2, then 1 + 1.
    assert [len(c["body"]["data"]) for c in graph.calls("events")] == [4, 2, 2, 1, 1]
    assert failed_ids(redis_conn) == [f"lead-meta-{REFUSED}"]
    refused = deadletters.get(redis_conn, f"lead-meta-{REFUSED}")
    assert refused["reason"] == "invalid" and refused["subcode"] == 2804016 and refused["call"] == "events"

    # 100/33 gets a few spaced tries (policy.NOT_FOUND_ATTEMPTS), on its own job, then is given up.
    for _ in range(2):
        assert fast_forward(redis_conn) == 1
        work()
    assert failed_ids(redis_conn) == [f"lead-meta-{MISSING}", f"lead-meta-{REFUSED}"]
    missing = deadletters.get(redis_conn, f"lead-meta-{MISSING}")
    assert missing["reason"] == "invalid" and (missing["code"], missing["subcode"]) == (100, 33)
    assert missing["call"] == "lead_read" and missing["attempts"] == 3

    # Each is replayable alone: Meta takes the event now; the missing lead still fails.
    graph.refuse_event_ids.clear()
    assert leadrelay("replay", f"lead-meta-{REFUSED}").returncode == 0
    work()
    assert [e["event_id"] for e in graph.events].count(f"meta:{REFUSED}:Lead") == 1
    assert failed_ids(redis_conn) == [f"lead-meta-{MISSING}"]
    assert len(graph.events) == 4


def test_a_lone_lead_is_sent_without_waiting_for_others(graph, post_meta, env, redis_conn):
    graph.add_lead(IDS[0])
    worker = subprocess.Popen(
        [str(BIN / "leadrelay"), "worker"], env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_for(lambda: redis_conn.scard("rq:workers") == 1)
        post_meta(leadgen_body(IDS[0], created_time=NOW))
        wait_for(lambda: graph.events)  # no second lead ever comes: the batch of one went alone
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    [batch] = graph.calls("batch")
    assert len(batch["body"]["batch"]) == 1
    assert [e["event_id"] for e in graph.events] == [f"meta:{IDS[0]}:Lead"]
    assert inbox_entries(redis_conn) == []


def test_a_webhook_redelivered_while_its_batch_runs_sends_no_second_event(graph, post_meta, work, redis_conn):
    graph.add_lead(IDS[0])
    held = threading.Event()
    graph.then({"hold": held}, on="batch")
    post_meta(leadgen_body(IDS[0], created_time=NOW))
    draining = threading.Thread(target=jobs.drain, args=(0,))  # the drain job's function, run here
    draining.start()
    try:
        wait_for(lambda: graph.calls("batch"))  # the drain job is reading the lead right now
        again = post_meta(leadgen_body(IDS[0], created_time=NOW))
        assert again.json["accepted"] == 0 and again.json["duplicates"] == 1
    finally:
        held.set()
        draining.join(timeout=30)
    work()
    assert [e["event_id"] for e in graph.events] == [f"meta:{IDS[0]}:Lead"]


def test_a_worker_killed_after_taking_entries_loses_none(graph, post_meta, work, redis_conn):
    for lead_id in IDS:
        graph.add_lead(lead_id)
    post_meta(leadgen_body(*IDS, created_time=NOW))
    kill_worker_during(graph, redis_conn, "batch")
    assert graph.events == []
    assert inbox.waiting(redis_conn) == {"inbox": 5, "taken": 5}  # taken by a consumer that is gone

    work()  # a new worker: recovery requeues the dead drain job, which takes the entries back

    assert sorted(e["event_id"] for e in graph.events) == sorted(f"meta:{i}:Lead" for i in IDS)
    assert inbox.waiting(redis_conn) == {"inbox": 0, "taken": 0}


def test_a_worker_killed_while_sending_resends_with_the_same_event_ids_only(graph, post_meta, work, redis_conn):
    for lead_id in IDS:
        graph.add_lead(lead_id)
    post_meta(leadgen_body(*IDS, created_time=NOW))
    kill_worker_during(graph, redis_conn, "events")
    wait_for(lambda: len(graph.events) == 5)  # Meta got the held request after the worker died

    work()

    # Nothing confirmed them to us: they go again, under the same event_ids, which Meta dedupes.
    assert sorted(e["event_id"] for e in graph.events) == sorted(2 * [f"meta:{i}:Lead" for i in IDS])
    assert inbox.waiting(redis_conn) == {"inbox": 0, "taken": 0}
    work()
    assert len(graph.events) == 10  # and never a third time: the ledger has them now


def test_a_worker_killed_after_handing_a_lead_off_does_not_hand_it_twice(graph, post_meta, work, redis_conn):
    graph.add_lead(IDS[0])
    post_meta(leadgen_body(IDS[0], created_time=NOW))
    redis_conn.delete(inbox.SLOT + "0")
    # The lead already has its own job (a drain job died after the handoff, before the ack).
    queue(redis_conn, "leadrelay").enqueue(
        "workers.jobs.process_meta_lead", inbox_entries(redis_conn)[0]["arg"], job_id=f"lead-meta-{IDS[0]}"
    )
    work()
    assert [e["event_id"] for e in graph.events] == [f"meta:{IDS[0]}:Lead"]
    assert inbox.waiting(redis_conn) == {"inbox": 0, "taken": 0}


def test_a_lost_wake_is_made_good_by_the_next_worker(graph, post_meta, redis_conn, env):
    graph.add_lead(IDS[0])
    post_meta(leadgen_body(IDS[0], created_time=NOW))
    q = queue(redis_conn, "leadrelay")
    q.empty()  # the receiver died after storing the lead, before its drain job was queued
    redis_conn.delete(inbox.SLOT + "0")  # ...and the slot it claimed has expired
    worker.work(load(), burst=True)
    assert [e["event_id"] for e in graph.events] == [f"meta:{IDS[0]}:Lead"]


def test_the_receivers_one_write_is_all_or_nothing_and_wakes_one_job_per_backlog(redis_conn, post_meta):
    leads = [str(8200000000000000 + i) for i in range(120)]
    assert post_meta(leadgen_body(*leads, created_time=NOW)).json["accepted"] == 120
    assert len(inbox_entries(redis_conn)) == 120
    assert all(redis_conn.ttl(inbox.SEEN + f"lead-meta-{i}") > 0 for i in leads)
    drains = queue(redis_conn, "leadrelay").get_job_ids()
    assert len(drains) == 3 and all(j.startswith("drain-") for j in drains)  # one per 50 waiting, at most 4
    post_meta(leadgen_body("8300000000000000", created_time=NOW))
    assert len(queue(redis_conn, "leadrelay").get_job_ids()) == 3  # its drain jobs are awake already


def test_metas_usage_headers_shrink_the_next_batch(graph, post_meta, work, redis_conn):
    leads = [str(8400000000000000 + i) for i in range(BATCH_LIMIT + 20)]
    graph.any_lead = True
    graph.usage_headers = {"X-App-Usage": '{"call_count": 80, "total_cputime": 10, "total_time": 12}'}
    post_meta(leadgen_body(*leads[:BATCH_LIMIT], created_time=NOW))
    post_meta(leadgen_body(*leads[BATCH_LIMIT:], created_time=NOW))
    q = queue(redis_conn, "leadrelay")
    for job_id in q.get_job_ids()[1:]:
        q.remove(job_id)  # one drain job: its batches come one after another
    work()
    sizes = [len(call["body"]["batch"]) for call in graph.calls("batch")]
    assert sizes == [BATCH_LIMIT, 10, 10] and len(graph.events) == len(leads)


@given(st.floats(min_value=0, max_value=1000, allow_nan=False))
def test_pacing_never_grows_as_meta_reports_more_usage(usage):
    size, rest = inboxdrain.pacing(usage)
    more_size, more_rest = inboxdrain.pacing(usage + 5)
    assert 1 <= more_size <= size <= BATCH_LIMIT and rest <= more_rest
    assert (size, rest) == ((BATCH_LIMIT, 0.0) if usage < 75 else (size, rest))


def test_a_batch_meta_fails_as_a_whole_is_retried_together_not_lead_by_lead(graph, post_meta, work, redis_conn, capsys):
    for lead_id in IDS:
        graph.add_lead(lead_id)
    graph.then({"status": 503, "error": {"code": 2, "is_transient": True}}, on="batch")
    post_meta(leadgen_body(*IDS, created_time=NOW))
    work()
    scheduled = ScheduledJobRegistry("leadrelay", connection=redis_conn).get_job_ids()
    assert len(scheduled) == 1 and scheduled[0].startswith("batch-")  # one job for the five, not five
    logged = [json.loads(line) for line in capsys.readouterr().err.splitlines() if '"batch_retry"' in line]
    assert [(line["job_id"], sorted(line["job_ids"])) for line in logged] == [
        (scheduled[0], sorted(f"lead-meta-{i}" for i in IDS))
    ]  # which leads the batch job holds
    assert graph.events == [] and failed_ids(redis_conn) == []
    assert fast_forward(redis_conn) == 1
    work()
    assert [len(call["body"]["batch"]) for call in graph.calls("batch")] == [5, 5]  # read again as one batch
    assert sorted(e["event_id"] for e in graph.events) == sorted(f"meta:{i}:Lead" for i in IDS)


def test_after_a_refused_token_the_batch_waits_for_it_together(graph, post_meta, work, redis_conn):
    for lead_id in IDS:
        graph.add_lead(lead_id)
    graph.revoked.add(PAGE_TOKEN)
    post_meta(leadgen_body(*IDS, created_time=NOW))
    work()
    # The first lead carries Meta's refusal (its dead letter says what to fix); the other
    # four wait for the token in one job.
    assert failed_ids(redis_conn) == [f"lead-meta-{IDS[0]}"]
    [pause] = Pauses(redis_conn).all()
    assert pause["waiting"] == 1
    graph.revoked.clear()
    assert leadrelay("resume", "--all").returncode == 0
    work()
    assert sorted(e["event_id"] for e in graph.events) == sorted(f"meta:{i}:Lead" for i in IDS[1:])
    assert [len(call["body"]["batch"]) for call in graph.calls("batch")] == [5, 4]


def test_a_drain_job_killed_again_and_again_is_replaced_and_never_a_dead_letter(redis_conn, env):
    q = queue(redis_conn, "leadrelay")
    job = q.enqueue(inbox.DRAIN, 2, job_id="drain-2-killed")
    job.meta["crashes"] = recovery.MAX_CRASHES  # a lead's job would be given up on now
    job.save_meta()
    q.remove(job)
    FailedJobRegistry(queue=q).add(job, exc_string="the worker died")
    assert recovery.requeue_crashed(redis_conn, q) == {"requeued": 1, "crashed": 0}
    assert deadletters.get(redis_conn, "drain-2-killed") is None and failed_ids(redis_conn) == []
    [fresh] = q.get_job_ids()
    assert fresh.startswith("drain-2-") and fresh != "drain-2-killed"


def test_a_lead_meta_already_confirmed_is_skipped_and_counted_so(graph, post_meta, work, redis_conn):
    from workers.common import counters

    graph.add_lead(IDS[0])
    redis_conn.set(f"leadrelay:confirmed:meta:{IDS[0]}:Lead", "trace")  # sent by a drain job killed before its ack
    post_meta(leadgen_body(IDS[0], created_time=NOW))
    work()
    assert graph.calls("batch") == [] and graph.events == []
    assert counters.read(redis_conn)[("leadrelay_jobs", "meta", "already_confirmed")] == 1


def test_a_live_drain_job_keeps_its_entries_and_a_failed_one_leaves_none_behind(graph, post_meta, redis_conn, capsys):
    from workers.engine.recovery import pid_alive

    graph.add_lead(IDS[0])
    post_meta(leadgen_body(IDS[0], created_time=NOW))
    inbox.ensure_group(redis_conn)
    me = inbox.consumer_name()
    inbox.beat(redis_conn, me)
    [(_, entry)] = inbox.take(redis_conn, me, 50)  # a drain job of this process holds it...
    assert redis_conn.keys("rq:worker:*") == []  # ...with no RQ worker record (one lapses in a long job)
    assert inbox.reclaim(redis_conn, "another-host:1", lambda c: inbox.gone(redis_conn, c, pid_alive)) == []
    # That drain job failed half-way (an exception, not a kill): the next one here takes it up.
    jobs.drain(0)
    assert [e["event_id"] for e in graph.events] == [f"meta:{IDS[0]}:Lead"]
    resumed = [json.loads(line) for line in capsys.readouterr().err.splitlines() if '"inbox_resumed"' in line]
    assert [line["job_ids"] for line in resumed] == [[entry["id"]]]  # said, for whoever counts resends
    assert inbox.waiting(redis_conn) == {"inbox": 0, "taken": 0}
