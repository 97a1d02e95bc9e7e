"""A Redis that can lose what leadrelay acknowledged is refused: web and worker stop at
start naming REDIS_URL and what is off, /readyz says why, /metrics shows it; an explicit
setting runs anyway, loudly."""

import os
import subprocess

import pytest

from helpers import BIN
from webhook_app import create_app
from workers.run.embedded_redis import free_port


@pytest.fixture(
    params=[
        ("appendonly", "no", "appendonly is off"),
        ("maxmemory-policy", "allkeys-random", "maxmemory-policy is allkeys-random"),
    ],
    ids=["no-appendonly", "evicting"],
)
def unsafe(request, redis_conn):
    name, value, said = request.param
    before = redis_conn.config_get(name)[name]
    redis_conn.config_set(name, value)
    yield said
    redis_conn.config_set(name, before)


def run(*args, **env):
    return subprocess.run(
        [str(BIN / "leadrelay"), *args], env={**os.environ, **env}, capture_output=True, text=True, timeout=60
    )


def test_worker_and_web_refuse_a_redis_that_can_lose_leads(env, unsafe):
    for command in (["worker"], ["web"]):
        out = run(*command, LEADRELAY_BIND=f"127.0.0.1:{free_port()}")
        assert out.returncode == 2, (command, out.stderr[-500:])
        [line] = [line for line in out.stderr.splitlines() if "configuration error" in line]
        assert "REDIS_URL" in line and unsafe in line and "LEADRELAY_ALLOW_UNSAFE_REDIS=1" in line
        assert "Traceback" not in out.stderr


def test_readyz_and_metrics_say_why(env, unsafe):
    client = create_app().test_client()
    ready = client.get("/readyz")
    assert ready.status_code == 503 and ready.json["reason"] == "redis_unsafe"
    assert any(unsafe in problem for problem in ready.json["problems"])
    assert "leadrelay_redis_unsafe 1.0" in client.get("/metrics").get_data(as_text=True)


def test_allowed_explicitly_it_runs_and_says_so(env, unsafe, monkeypatch):
    monkeypatch.setenv("LEADRELAY_ALLOW_UNSAFE_REDIS", "1")
    client = create_app().test_client()
    ready = client.get("/readyz")
    assert ready.status_code == 200 and any(unsafe in w for w in ready.json["warnings"])
    worker = subprocess.Popen(
        [str(BIN / "leadrelay"), "worker"],
        env=dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        lines = []
        for line in worker.stdout:
            lines.append(line)
            if '"worker_started"' in line:
                break
        assert any('"redis_unsafe"' in line and unsafe in line for line in lines), lines
    finally:
        worker.terminate()
        worker.wait(timeout=60)


def test_a_safe_redis_is_ready(env, redis_conn):
    client = create_app().test_client()
    assert client.get("/readyz").json == {"status": "ok"}
    assert "leadrelay_redis_unsafe 0.0" in client.get("/metrics").get_data(as_text=True)
