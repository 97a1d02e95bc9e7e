"""The worker's maintenance pass: its tasks run on a healthy Redis without a failure, and a
stop asked for meanwhile (SIGTERM while idle) is never swallowed."""

import pytest
import redis
from redis.connection import Connection
from rq.exceptions import StopRequested

from workers.common.queues import queue
from workers.config.settings import load
from workers.run.worker import LeadrelayWorker


class StopsAtTime(Connection):
    """Redis as a SIGTERM finds it: RQ's handler raises StopRequested in whatever runs, here
    the first command of the pass (the clock check's TIME)."""

    def send_packed_command(self, command, check_health=True):
        if b"TIME" in (command if isinstance(command, bytes) else b"".join(command)):
            raise StopRequested()
        return super().send_packed_command(command, check_health)


def test_a_stop_asked_for_during_maintenance_stops_the_worker(env, redis_url):
    pool = redis.ConnectionPool.from_url(redis_url, connection_class=StopsAtTime)
    connection = redis.Redis(connection_pool=pool)
    worker = LeadrelayWorker([queue(connection, "leadrelay")], connection=connection)
    worker.settings = load()
    with pytest.raises(StopRequested):
        worker.run_maintenance_tasks()


def test_a_pass_on_a_healthy_redis_runs_every_task_without_a_failure(env, redis_url, capfd):
    from workers.common import logs

    logs.configure("INFO")
    connection = redis.Redis.from_url(redis_url)
    worker = LeadrelayWorker([queue(connection, "leadrelay")], connection=connection)
    worker.settings = load()
    worker.run_maintenance_tasks()
    assert '"maintenance_failed"' not in capfd.readouterr().err


def test_waiting_for_redis_rides_out_a_host_that_does_not_answer(redis_url):
    """A cut-off link makes connecting time out rather than be refused: the worker waited
    through refusals only and exited on the first timeout (found by bench/netsoak.py)."""
    import socket
    import threading
    from urllib.parse import urlsplit

    from workers.run import worker

    target = urlsplit(redis_url)
    listener = socket.create_server(("127.0.0.1", 0))
    held = []

    def serve():
        silent, _ = listener.accept()  # the first connection: never answered, as over a dead link
        held.append(silent)
        client, _ = listener.accept()  # then the link is back: Redis answers again
        upstream = socket.create_connection((target.hostname, target.port))
        for source, sink in ((client, upstream), (upstream, client)):
            threading.Thread(target=_pipe, args=(source, sink), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    worker._wait_for_redis(f"redis://127.0.0.1:{listener.getsockname()[1]}/0", "redis://127.0.0.1:…/0", every=0)
    assert held  # it met the silent host first, and waited on
    listener.close()


def _pipe(source, sink):
    while data := source.recv(65536):
        sink.sendall(data)


def test_a_worker_whose_rq_loop_quits_on_a_redis_error_starts_again(env, graph, post_meta, redis_url):
    """RQ's loop ends on an error it does not expect (a Redis still loading its file after a
    restart answers `-LOADING`) and returns as if asked to stop: the process exited, and
    one host fewer worked (found by bench/netsoak.py's Redis restart)."""
    import os
    import subprocess
    import time
    from urllib.parse import urlsplit

    from redisproxy import RedisProxy

    from helpers import BIN, LEAD, leadgen_body, wait_for

    # RQ checks whether workers are suspended at the top of its loop, outside the dequeue's
    # own retries: a Redis loading there ends the loop (redis-py's three retries first).
    loading = b"-LOADING Redis is loading the dataset in memory\r\n"
    proxy = RedisProxy(urlsplit(redis_url).port, b"rq:suspended", loading, times=4)
    worker = subprocess.Popen(
        [str(BIN / "leadrelay"), "worker"],
        env={**os.environ, "REDIS_URL": proxy.url},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for(lambda: proxy.answered.is_set() or worker.poll() is not None, timeout=60)
        graph.add_lead(LEAD)
        post_meta(leadgen_body(LEAD, created_time=int(time.time())))
        wait_for(lambda: graph.events or worker.poll() is not None, timeout=60)
        assert worker.poll() is None and [e["event_id"] for e in graph.events] == [f"meta:{LEAD}:Lead"]
    finally:
        worker.terminate()
        worker.wait(timeout=60)
        proxy.close()


def test_a_pass_indexes_what_was_kept_before_the_person_index(env, redis_url, redis_conn):
    from workers.events import personindex

    redis_conn.set("leadrelay:stage:meta:7700000000000001:QualifiedLead", 1)  # a claim from before the index
    worker = LeadrelayWorker([queue(redis_conn, "leadrelay")], connection=redis_conn)
    worker.settings = load()
    assert not personindex.complete(redis_conn)
    worker.run_maintenance_tasks()
    assert personindex.progress(redis_conn)["done"]
    found = personindex.entries(redis_conn, ["meta:7700000000000001"])["e"]
    assert found == ["meta:7700000000000001:QualifiedLead"]
