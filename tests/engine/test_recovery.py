"""Workers killed mid-job, cut off from Redis or stopped at an awkward moment: nothing lost, nothing left behind."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import redis
from rq import Queue, Worker
from rq.registry import FailedJobRegistry

from helpers import ROOT, kill_tree, leadgen_body, wait_for
from workers.common.queues import SERIALIZER
from workers.engine import recovery
from workers.failures import deadletters
from workers.run.embedded_redis import free_port

BIN = Path(sys.executable).parent
LEAD = "1234567890123456"


def test_worker_killed_mid_job_and_the_lead_is_delivered_once(graph, post_meta, work, redis_conn):
    graph.add_lead(LEAD)
    graph.then({"delay": 0.9}, on="lead")  # keep the job in flight long enough to kill it
    post_meta(leadgen_body(LEAD, created_time=int(time.time())))
    worker = subprocess.Popen(
        [str(BIN / "leadrelay"), "worker"],
        env=dict(os.environ),
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: graph.calls("lead"))  # the job is reading the lead right now
        # The machine is lost: the worker and anything it started die, no goodbye.
        kill_tree(worker.pid)
    finally:
        worker.wait()
    assert graph.events == []
    assert redis_conn.zcard("rq:wip:leadrelay") == 1  # RQ still believes it is running

    work()  # a new worker starts: its sweep finds the orphan at once

    assert [e["event_id"] for e in graph.events] == [f"meta:{LEAD}:Lead"]
    assert len(graph.calls("lead")) == 2
    assert redis_conn.zcard("rq:wip:leadrelay") == 0


def test_job_that_keeps_killing_its_worker_is_dead_lettered_as_crashed(env, redis_conn):
    queue = Queue("leadrelay", connection=redis_conn, serializer=SERIALIZER)
    queue.enqueue("crashers.die", {"source": "meta"}, job_id="lead-meta-1")
    tests_dir = str(ROOT / "tests")
    worker_env = {**os.environ, "PYTHONPATH": tests_dir}
    for _ in range(recovery.MAX_CRASHES + 2):
        # Each worker dies under the job; the next one's start-up sweep requeues it,
        # until it has crashed too often.
        subprocess.run(
            [str(BIN / "leadrelay"), "worker", "--burst"],
            env=worker_env,
            timeout=60,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    dead = deadletters.get(redis_conn, "lead-meta-1")
    assert dead["reason"] == "crashed"
    assert "AbandonedJobError" in dead["detail"]
    assert queue.fetch_job("lead-meta-1").meta["crashes"] == recovery.MAX_CRASHES + 1
    assert FailedJobRegistry(queue=queue).get_job_ids() == ["lead-meta-1"]


def test_a_worker_outlives_a_redis_restart(graph, env, monkeypatch, tmp_path):
    from helpers import leadgen_body as body
    from helpers import sign
    from webhook_app import create_app
    from workers import jobs
    from workers.config.settings import load
    from workers.run.embedded_redis import EmbeddedRedis

    server = EmbeddedRedis(tmp_path / "redis")
    monkeypatch.setenv("REDIS_URL", server.start())
    jobs.install(load())
    client = create_app().test_client()

    def post(lead: str) -> int:
        graph.add_lead(lead)
        data = body(lead, created_time=int(time.time()))
        return client.post("/webhooks/meta", data=data, headers={"X-Hub-Signature-256": sign(data)}).status_code

    worker = subprocess.Popen(
        [str(BIN / "leadrelay"), "worker"], env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        assert post("1111111111111111") == 200
        wait_for(lambda: len(graph.events) == 1)
        server.stop()  # a restart, as a deploy or a failover does
        server.start()
        assert post("2222222222222222") == 200
        wait_for(lambda: len(graph.events) == 2, timeout=60)
        assert worker.poll() is None  # the same process, started again inside
    finally:
        worker.terminate()
        worker.wait(timeout=30)
        server.stop()
    assert [e["event_id"] for e in graph.events] == ["meta:1111111111111111:Lead", "meta:2222222222222222:Lead"]


def test_a_worker_stopped_while_it_starts_leaves_no_record(env, redis_conn):
    # The TERM lands at a fixed point of RQ's start: the worker has registered itself
    # and RQ's own signal handlers are not installed yet (RQ's subscribe runs in between).
    script = "\n".join(
        [
            "import os, signal",
            "from rq.worker.base import BaseWorker",
            "subscribe = BaseWorker.subscribe",
            "def stopped_first(self):",
            "    os.kill(os.getpid(), signal.SIGTERM)",
            "    return subscribe(self)",
            "BaseWorker.subscribe = stopped_first",
            "from workers.cli import main",
            "main(['worker'])",
        ]
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=dict(os.environ), timeout=60, capture_output=True, text=True
    )

    assert done.returncode == 0, done.stderr[-2000:]  # a warm stop, not killed by the signal
    assert Worker.all(connection=redis_conn) == []  # not counted as a live worker for its TTL
    assert '"event": "worker_started"' in done.stderr


def _worker_logging_to(path: Path) -> subprocess.Popen:
    with path.open("w") as stderr:
        return subprocess.Popen(
            [str(BIN / "leadrelay"), "worker"], env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=stderr
        )


def _stops_cleanly(worker: subprocess.Popen, log: Path) -> None:
    worker.send_signal(signal.SIGTERM)
    try:
        assert worker.wait(timeout=30) == 0
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
    assert '"worker_stopped"' in log.read_text()


def test_a_worker_waiting_for_redis_stops_when_asked(env, monkeypatch, tmp_path):
    monkeypatch.setenv("REDIS_URL", f"redis://127.0.0.1:{free_port()}/0")  # nothing listens there yet
    log = tmp_path / "worker.log"
    worker = _worker_logging_to(log)
    wait_for(lambda: '"redis_lost"' in log.read_text())  # it waits for Redis to come
    _stops_cleanly(worker, log)
    assert "Traceback" not in log.read_text()


def test_a_worker_stopped_while_redis_is_down_does_not_wait_for_it(env, monkeypatch, tmp_path):
    from workers.run.embedded_redis import EmbeddedRedis

    server = EmbeddedRedis(tmp_path / "redis")
    url = server.start()
    monkeypatch.setenv("REDIS_URL", url)
    log = tmp_path / "worker.log"
    worker = _worker_logging_to(log)
    try:
        # Idle in RQ's loop, blocked on the queue: that is where RQ retries a lost Redis.
        wait_for(lambda: redis.Redis.from_url(url).info("clients")["blocked_clients"] == 1)
        server.stop()
        wait_for(lambda: "could not connect to Redis" in log.read_text())
        _stops_cleanly(worker, log)  # (RQ's scheduler process logs a traceback of its own as Redis goes)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
        server.stop()
