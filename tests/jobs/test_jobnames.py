"""Job names are a wire format: every name resolves to a job, and so does every path an
earlier release stored in Redis (queued jobs, scheduled retries and sweeps, dead letters,
inbox entries)."""

import subprocess
import sys

import pytest
from rq.utils import import_attribute

from helpers import ROOT
from workers import jobnames
from workers.sources.registry import SOURCES


@pytest.mark.parametrize("path", [*jobnames.NAMES, *jobnames.FORMER])
def test_every_job_name_and_every_former_path_resolves_to_a_job(path):
    assert callable(import_attribute(path))


def test_a_former_path_stands_for_a_current_name():
    assert all(name in jobnames.NAMES for name in jobnames.FORMER.values())
    assert jobnames.current("workers.batches.drain") == jobnames.DRAIN == jobnames.current(jobnames.DRAIN)


def test_every_source_names_a_job_from_the_table():
    """A chat is kept in the request and runs no job of its own: it names none."""
    from workers.sources.registry import CHAT

    assert {source.job for source in SOURCES.values() if source.kind != CHAT} <= set(jobnames.NAMES)
    assert {source.job for source in SOURCES.values() if source.kind == CHAT} == {""}


def test_importing_a_source_loads_no_queue_http_or_redis_client():
    code = (
        "import sys, workers.sources.meta\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'rq', 'requests', 'redis'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


def test_jobs_queued_under_former_paths_still_run(graph, post_meta, work, redis_conn):
    """What a Redis filled by an earlier release holds: a drain job and a batch retry under
    their former paths. Both run, and recovery still knows a drain job by its former path."""
    import time

    from helpers import leadgen_body
    from workers.common.queues import queue
    from workers.intake import inbox

    q = queue(redis_conn, "leadrelay")
    graph.add_lead("8700000000000001")
    post_meta(leadgen_body("8700000000000001", created_time=int(time.time())))
    for job in q.get_jobs():  # the drain job the receiver woke, as an earlier release queued it
        q.remove(job)
    q.enqueue("workers.batches.drain", 0, job_id="drain-0-former")
    entry = {
        "id": "lead-meta-8700000000000002",
        "fn": jobnames.PROCESS_META_LEAD,
        "n": 1,
        "arg": {"source": "meta", "leadgen_id": "8700000000000002", "created_time": int(time.time())},
    }
    graph.add_lead("8700000000000002")
    q.enqueue("workers.batches.retry_batch", {"entries": [entry]}, job_id="batch-former")
    work()
    assert sorted(e["event_id"] for e in graph.events) == ["meta:8700000000000001:Lead", "meta:8700000000000002:Lead"]
    assert inbox.waiting(redis_conn) == {"inbox": 0, "taken": 0}


def test_a_sweep_scheduled_under_its_former_path_runs(env, graph, work, redis_conn):
    """A sweep an earlier release scheduled at workers.sweep.run_sweep runs when due."""
    from datetime import datetime, timedelta, timezone

    from rq.job import Job

    from helpers import fast_forward
    from workers.common.queues import SERIALIZER, queue

    q = queue(redis_conn, "leadrelay")
    job = q.create_job("workers.sweep.run_sweep", args=({},), job_id="sweep-former")
    q.schedule_job(job, datetime.now(timezone.utc) + timedelta(minutes=5))
    assert fast_forward(redis_conn) == 1
    work()
    ran = Job.fetch("sweep-former", connection=redis_conn, serializer=SERIALIZER)
    assert ran.get_status() == "finished" and ran.return_value()["outcome"] == "swept"


def test_a_dead_letter_20_days_old_is_listed_and_refused_at_replay_as_expired(client, graph, work, redis_conn):
    """Dead letters are kept 30 days: one from 20 days ago is still listed, and its replay
    resolves its job and refuses it for Meta's 7-day window, naming the reason."""
    import time

    from helpers import invalid_dead_letter, leadrelay

    invalid_dead_letter(client, graph, work, leadgen_id="8700000000000020")
    later = lambda: time.time() + 20 * 86400  # noqa: E731
    listing = leadrelay("dead-letters", "list", clock=later)
    assert listing.returncode == 0 and "lead-meta-8700000000000020" in listing.stdout
    replay = leadrelay("replay", "--all", clock=later)
    assert replay.returncode == 1 and "expired (past Meta's 7 days) 1" in replay.stdout
    assert "lead-meta-8700000000000020: expired" in replay.stdout
