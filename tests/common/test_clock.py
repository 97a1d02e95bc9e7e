"""A worker whose clock is days off decides by Redis's time: a 6-day-old lead is still
sent, and a retry is due when the other workers' clocks say, not days later. The worker
runs under libfaketime (Debian's faketime, which `make test` installs)."""

import os
import shutil
import subprocess
import time

import pytest
from rq.registry import ScheduledJobRegistry

from helpers import BIN, leadgen_body

SIX_DAYS = 6 * 86400


def skewed_worker(offset: str) -> subprocess.CompletedProcess:
    if not shutil.which("faketime"):
        pytest.fail("no faketime: `make test` installs Debian's (tests/install-tools)")
    return subprocess.run(
        ["faketime", "-f", offset, str(BIN / "leadrelay"), "worker", "--burst"],
        # Only the wall clock is off, as on a host whose clock is wrong: its monotonic clock
        # still counts real seconds. Faked too, a timed wait (RQ's pub/sub thread, joined as
        # a burst worker stops) sleeps until the faked deadline: two days, not a second.
        env={**os.environ, "FAKETIME_DONT_FAKE_MONOTONIC": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("offset", ["+2d", "-2d"])
def test_a_worker_days_off_still_sends_a_six_day_old_lead(offset, graph, post_meta, redis_conn):
    created = int(time.time()) - SIX_DAYS
    graph.add_lead("8600000000000001", created_time=created)
    assert post_meta(leadgen_body("8600000000000001", created_time=created)).json["accepted"] == 1
    ran = skewed_worker(offset)
    assert '"clock_skew"' in ran.stderr and "Traceback" not in ran.stderr, ran.stderr[-2000:]
    assert [e["event_id"] for e in graph.events] == ["meta:8600000000000001:Lead"]
    assert [e["event_time"] for e in graph.events] == [created]


def test_a_worker_days_ahead_schedules_a_retry_when_redis_says(graph, post_meta, redis_conn):
    graph.add_lead("8600000000000002")
    graph.then({"status": 503, "error": {"code": 2, "is_transient": True}}, on="batch")
    post_meta(leadgen_body("8600000000000002", created_time=int(time.time())))
    ran = skewed_worker("+2d")
    assert "Traceback" not in ran.stderr, ran.stderr[-2000:]
    registry = ScheduledJobRegistry("leadrelay", connection=redis_conn)
    [(job_id, due)] = redis_conn.zrange(registry.key, 0, -1, withscores=True)
    assert time.time() < due < time.time() + 3600  # the retry's delay from now, not two days out


def test_a_worker_days_ahead_schedules_the_sweep_and_watch_where_the_others_do(env, redis_conn, monkeypatch):
    """The routine jobs' ids name their time slot: a slot from a clock two days ahead would
    park a second sweep and watch two days out, beside the others' (one each, at Redis's time)."""
    monkeypatch.setenv("LEADRELAY_SWEEP_SECONDS", "600")
    monkeypatch.setenv("LEADRELAY_WATCH_SECONDS", "3600")
    ran = skewed_worker("+2d")
    assert "Traceback" not in ran.stderr, ran.stderr[-2000:]
    registry = ScheduledJobRegistry("leadrelay", connection=redis_conn)
    due = {
        job_id.decode().split("-")[0]: score
        for job_id, score in redis_conn.zrange(registry.key, 0, -1, withscores=True)
    }
    assert set(due) == {"sweep", "watch"}
    assert due["sweep"] <= time.time() + 600 + 5 and due["watch"] <= time.time() + 3600 + 5
