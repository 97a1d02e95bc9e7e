"""Beyond one box: web and worker on a Sentinel REDIS_URL, real Redis servers and real
Sentinels on loopback, the primary killed with SIGKILL.

Each test makes the race that loses data happen every time instead of hoping for it:
the link to the replica is cut (tests/redistopology.py), a lead is posted, and only then
is the primary killed. With the replica wait (LEADRELAY_REPLICA_ACKS=1) that lead is
answered 503, Meta retries it after the failover, and it goes out; without it, it is
answered 200 and is gone after the failover: the loss docs/deploying.md warns about.
bench/failover.py measures both under steady posting, with the workers running."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest
import requests
from redistopology import Topology

from helpers import BIN, ROOT, delivered, leadgen_body, post_signed_meta, ready, wait_for
from workers.common import redisurl
from workers.common.queues import job_id
from workers.intake import inbox
from workers.run.embedded_redis import free_port

FIRST, SECOND = "8300000000000001", "8300000000000002"


def _start(command: str, env: dict, **settings) -> subprocess.Popen:
    return subprocess.Popen(
        [str(BIN / "leadrelay"), command],
        env={**env, **settings},
        cwd=ROOT,
        stdout=open(os.environ.get("FAILOVER_LOG", os.devnull), "a"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _post(base: str, leadgen_id: str) -> requests.Response:
    return post_signed_meta(base, leadgen_body(leadgen_id, created_time=int(time.time())))


def _stop(*processes: subprocess.Popen) -> None:
    for process in processes:
        process.send_signal(signal.SIGTERM)
    for process in processes:
        process.wait(timeout=60)


@pytest.mark.parametrize("acks", ["1", "0"])
def test_a_lead_acknowledged_before_a_failover_is_delivered_only_with_the_replica_wait(env, graph, tmp_path, acks):
    topology = Topology(tmp_path / "redis").start()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    settings = {
        **os.environ,
        "REDIS_URL": topology.url,
        "LEADRELAY_REPLICA_ACKS": acks,
        "LEADRELAY_REPLICA_ACK_TIMEOUT_MS": "300",
        "LEADRELAY_BIND": f"127.0.0.1:{port}",
        "WEB_CONCURRENCY": "1",
    }
    graph.add_lead(FIRST)
    graph.add_lead(SECOND)
    web = _start("web", settings)
    workers = []
    try:
        wait_for(lambda: ready(base), timeout=60)
        first = _post(base, FIRST)
        assert first.status_code == 200, first.text
        topology.wait(topology.in_sync)

        topology.cut_replica()
        answer = _post(base, SECOND)
        if acks == "1":  # the replica never had it: not acknowledged, and Meta will retry
            assert answer.status_code == 503 and answer.json()["error"] == "not_replicated"
        else:  # acknowledged with no replica holding it
            assert answer.status_code == 200 and answer.json()["accepted"] == 1

        topology.kill("primary")
        topology.resume("replica")
        topology.wait(topology.failed_over)
        # The dead box comes back and Sentinel makes it the new primary's replica: until
        # then a lone primary cannot acknowledge with a replica wait.
        topology.restart("primary")
        topology.wait(topology.rejoined)

        if answer.status_code != 200:  # Meta retries until it gets a 2xx
            wait_for(lambda: _post(base, SECOND).status_code == 200, timeout=30)
        workers = [_start("worker", settings)]
        connection = redisurl.client(topology.url, socket_timeout=5)
        wait_for(lambda: FIRST in delivered(graph).get(graph.dataset_id, []), timeout=60)
        wait_for(lambda: inbox.waiting(connection) == {"inbox": 0, "taken": 0}, timeout=60)
        leads = delivered(graph)[graph.dataset_id]
        if acks == "1":
            wait_for(lambda: SECOND in delivered(graph)[graph.dataset_id], timeout=60)
            assert sorted(delivered(graph)[graph.dataset_id]) == [FIRST, SECOND]
        else:  # the new primary never heard of the lead it acknowledged: lost for good
            assert leads == [FIRST]
            assert not connection.exists(inbox.SEEN + job_id("lead", "meta", SECOND))
    finally:
        _stop(web, *workers)
        topology.stop()


def test_doctor_shows_the_sentinel_topology_a_fresh_install_points_at(env, graph, tmp_path):
    """What a user sees after setting REDIS_URL to their Sentinels, as the docs say."""
    topology = Topology(tmp_path / "redis").start()
    try:
        out = subprocess.run(
            [str(BIN / "leadrelay"), "doctor"],
            env={**os.environ, "REDIS_URL": topology.url},
            capture_output=True,
            text=True,
            timeout=60,
        )
        primary = topology.ports["primary"]
        assert (
            f"[ok] redis: reachable: Sentinel primary 'leadrelay' at 127.0.0.1:{primary}, "
            "1 connected replica, 3 of 3 Sentinels answering"
        ) in out.stdout, out.stdout
        assert "[ok] redis persistence: appendonly yes" in out.stdout
    finally:
        topology.stop()
