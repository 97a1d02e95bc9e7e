"""Replay after the cause is fixed, through the `leadrelay` command: each event is
delivered exactly once, the expired ones are refused with their reason."""

import subprocess
import time
from collections import Counter

from rq import Queue
from rq.registry import FailedJobRegistry

from helpers import BIN, CAPI_TOKEN, leadgen_body, leadrelay
from workers.common.queues import SERIALIZER
from workers.failures import deadletters, retention

FRESH = "1000000000000001"  # arrives while the token is paused: waits
EDGE = "1000000000000002"  # inside Meta's window when it failed, past it at replay
BROKEN = "1000000000000004"  # Meta refused the event (2804016) before the token expired


def queue(redis_conn):
    return Queue("leadrelay", connection=redis_conn, serializer=SERIALIZER)


def weekend(graph, post_meta, work):
    """Friday: one event is malformed; then the CAPI token expires while leads keep coming."""
    now = int(time.time())
    graph.add_lead(BROKEN, created_time=now)
    graph.then({"status": 400, "error": {"code": 100, "error_subcode": 2804016}}, on="events")
    post_meta(leadgen_body(BROKEN, created_time=now))
    work()
    graph.revoked.add(CAPI_TOKEN)
    # EDGE is 6 s inside Meta's window (less the margin) when its job runs.
    edge_created = int(time.time()) - (7 * 86400 - 3600) + 6
    for lead, created in ((EDGE, edge_created), (FRESH, now)):
        graph.add_lead(lead, created_time=created)
        post_meta(leadgen_body(lead, created_time=created))
        work()


def test_dead_letters_list_shows_reasons_and_the_paused_token(graph, post_meta, work, redis_conn):
    weekend(graph, post_meta, work)
    listing = leadrelay("dead-letters", "list")
    assert listing.returncode == 0, listing.stderr
    assert "2 dead letters: " in listing.stdout
    assert "1 auth" in listing.stdout and "1 invalid" in listing.stdout
    assert "paused: META_CAPI_ACCESS_TOKEN" in listing.stdout and "1 jobs waiting" in listing.stdout
    only_auth = leadrelay("dead-letters", "list", "--reason", "auth", "--json")
    [row] = [line for line in only_auth.stdout.splitlines() if line]
    assert f'"job_id": "lead-meta-{EDGE}"' in row and '"code": 190' in row


def test_replay_after_fixing_the_token_delivers_each_event_exactly_once(
    graph, post_meta, work, redis_conn, monkeypatch
):
    weekend(graph, post_meta, work)
    monkeypatch.setenv("META_CAPI_ACCESS_TOKEN", "a-new-token")  # Monday: the engineer fixes the token
    monday = lambda: time.time() + 7  # noqa: E731  ...and by then EDGE's event is past Meta's 7 days

    dry = leadrelay("replay", "--all", "--dry-run", clock=monday)
    assert dry.returncode == 0
    assert "2 selected: would requeue 1" in dry.stdout and "expired (past Meta's 7 days) 1" in dry.stdout
    assert len(deadletters.select(redis_conn, queue(redis_conn), deadletters.Filter())) == 2  # untouched

    auth = leadrelay("replay", "--reason", "auth", clock=monday)
    assert auth.returncode == 1  # something could not be replayed: say so
    assert f"lead-meta-{EDGE}: expired" in auth.stdout
    assert "woken now: 1" in auth.stdout
    invalid = leadrelay("replay", "--reason", "invalid", clock=monday)
    assert invalid.returncode == 0 and "requeued 1" in invalid.stdout
    work()

    sent = Counter(event["event_id"] for event in graph.events)
    assert sent == {f"meta:{FRESH}:Lead": 1, f"meta:{BROKEN}:Lead": 1}
    [left] = deadletters.select(redis_conn, queue(redis_conn), deadletters.Filter())
    assert left["job_id"] == f"lead-meta-{EDGE}" and left["reason"] == "expired"
    again = leadrelay("replay", "--all", clock=monday)
    assert again.returncode == 1 and "requeued 0" in again.stdout
    work()
    assert sum(Counter(event["event_id"] for event in graph.events).values()) == 2


def test_replay_never_resends_an_event_meta_confirmed(graph, post_meta, work, redis_conn):
    graph.add_lead(BROKEN)
    graph.then({"status": 400, "error": {"code": 100, "error_subcode": 2804016}}, on="events")
    post_meta(leadgen_body(BROKEN, created_time=int(time.time())))
    work()
    # A dead letter whose event Meta did receive after all (a send that timed out on our
    # side, say): the ledger says confirmed, so replay must not send it again.
    redis_conn.set(f"leadrelay:confirmed:meta:{BROKEN}:Lead", "trace")
    job = queue(redis_conn).fetch_job(f"lead-meta-{BROKEN}")
    assert deadletters.get(redis_conn, job.id)["reason"] == "invalid"
    result = leadrelay("replay", job.id)
    assert result.returncode == 0 and "already delivered 1" in result.stdout
    work()
    assert len(graph.calls("events")) == 1  # the refused send; the replay sent nothing


def test_replay_needs_a_selection():
    result = leadrelay("replay")
    assert result.returncode == 2 and "say which" in result.stderr


def test_replay_rejects_a_malformed_since():
    result = leadrelay("replay", "--since", "last tuesday")
    assert result.returncode == 2 and "since must be like" in result.stderr


def test_dead_letters_lose_ip_and_user_agent_after_the_retention(env, redis_conn):
    from rq.job import Job

    args = {
        "source": "typeform",
        "key": "F:T",
        "user_data": {"em": ["ab" * 32], "client_ip_address": "203.0.113.9", "client_user_agent": "Mozilla/5.0"},
    }
    job = queue(redis_conn).enqueue("workers.jobs.send_form_lead", args, job_id="lead-typeform-F-T")
    FailedJobRegistry(queue=queue(redis_conn)).add(job, exc_string="invalid")
    old = time.time() - 8 * 86400
    deadletters.record(redis_conn, {"job_id": job.id, "args": args, "reason": "invalid", "last_attempt_at": old})
    assert retention.scrub(redis_conn, queue(redis_conn), retention_days=30) == 0
    assert retention.scrub(redis_conn, queue(redis_conn), retention_days=7) == 1
    kept = deadletters.get(redis_conn, job.id)
    assert kept["args"]["user_data"] == {"em": ["ab" * 32]} and kept["scrubbed"] is True
    assert Job.fetch(job.id, connection=redis_conn, serializer=SERIALIZER).args[0]["user_data"] == {"em": ["ab" * 32]}
    assert b"203.0.113.9" not in b" ".join(redis_conn.dump(k) or b"" for k in redis_conn.keys("*"))


def test_rq_info_sees_our_queue_and_its_failed_jobs(graph, post_meta, work, redis_conn, env):
    graph.add_lead(BROKEN)
    graph.then({"status": 400, "error": {"code": 100, "error_subcode": 2804016}}, on="events")
    post_meta(leadgen_body(BROKEN, created_time=int(time.time())))
    from rq import SimpleWorker

    SimpleWorker([queue(redis_conn)], connection=redis_conn, serializer=SERIALIZER).work(burst=True, max_jobs=1)
    post_meta(leadgen_body(FRESH, created_time=int(time.time())))  # a drain job is queued for it
    out = subprocess.run(
        [str(BIN / "rq"), "info", "--url", env["REDIS_URL"], "-Q", "-r"], capture_output=True, text=True, timeout=30
    )
    assert out.returncode == 0
    assert "leadrelay 1, 0 executing, 0 finished, 1 failed" in out.stdout, (
        out.stdout
    )  # FRESH's drain job, BROKEN failed


def test_dead_letters_whose_job_left_rqs_registry_are_forgotten(graph, post_meta, work, redis_conn):
    now = int(time.time())
    graph.add_lead(BROKEN, created_time=now)
    graph.then({"status": 400, "error": {"code": 100, "error_subcode": 2804016}}, on="events")
    post_meta(leadgen_body(BROKEN, created_time=now))
    work()
    job_id = f"lead-meta-{BROKEN}"
    assert retention.prune(redis_conn, queue(redis_conn), now=time.time() + 3600) == 0  # still failed: kept
    FailedJobRegistry(queue=queue(redis_conn)).remove(job_id)  # as `rq` tools or its 30-day expiry would
    assert retention.prune(redis_conn, queue(redis_conn)) == 0  # too fresh to judge
    assert deadletters.by_reason(redis_conn) == {("invalid", "default"): 1}
    assert retention.prune(redis_conn, queue(redis_conn), now=time.time() + 3600) == 1
    assert deadletters.by_reason(redis_conn) == {} and deadletters.get(redis_conn, job_id) is None
