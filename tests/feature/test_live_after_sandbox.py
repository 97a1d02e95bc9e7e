"""Going live in the checkout that ran the sandbox: the two never share a data folder or a
Redis. A live process refuses the sandbox's Redis in one line, the sandbox refuses a
Redis that holds someone else's data, and an older sandbox's files move out of the way."""

from __future__ import annotations

import json
import socket

import pytest

from helpers import APP_SECRET, BIN, Service, clean_env, cli, ready, wait_for
from workers.config import environment, sandbox
from workers.run import redisowner
from workers.run.embedded_redis import free_port

LIVE = {
    "META_APP_SECRET": APP_SECRET,
    "META_VERIFY_TOKEN": "vt",
    "META_PAGE_ACCESS_TOKEN": "live-page-token",
    "META_DATASET_ID": "99",
    "WEB_CONCURRENCY": "1",
}


def test_going_live_after_the_sandbox_shows_nothing_of_it(tmp_path, graph):
    data = tmp_path / "data"
    env = clean_env(LEADRELAY_DATA_DIR=str(data), WEB_CONCURRENCY="1")
    sandboxed = Service(env, tmp_path, free_port())
    try:
        sandboxed.banner()
        assert cli(env, tmp_path, "send-test", "meta").returncode == 0
        assert "dead-lettered" in cli(env, tmp_path, "send-test", "meta", "--fail", "invalid").stdout
        assert cli(env, tmp_path, "dry-run").stdout.count('"event_name": "Lead"') == 1
        sandbox_redis = (data / environment.SANDBOX_DIR / environment.REDIS_URL_FILE).read_text().strip()

        # Pointed at the sandbox's Redis, every live process stops at start, in one line.
        pointed = clean_env(
            **LIVE,
            LEADRELAY_DATA_DIR=str(data),
            META_GRAPH_URL=graph.url,
            REDIS_URL=sandbox_redis,
            LEADRELAY_BIND=f"127.0.0.1:{free_port()}",
        )
        for command in (["worker"], ["web"], ["dead-letters", "list"], ["dry-run"]):
            refused = cli(pointed, tmp_path, *command)
            assert refused.returncode == 2, (command, refused.stdout, refused.stderr)
            [line] = [line for line in refused.stderr.splitlines() if "configuration error" in line]
            assert "REDIS_URL" in line and "is the sandbox's Redis" in line and "Traceback" not in refused.stderr
    finally:
        assert sandboxed.stop() == 0

    live_env = clean_env(**LIVE, LEADRELAY_DATA_DIR=str(data), META_GRAPH_URL=graph.url)
    live = Service(live_env, tmp_path, free_port())
    try:
        wait_for(lambda: ready(live.base), timeout=60)
        live_redis = (data / environment.REDIS_URL_FILE).read_text().strip()
        assert live_redis != sandbox_redis
        assert cli(live_env, tmp_path, "dead-letters", "list").stdout.strip() == "0 dead letters"
        assert cli(live_env, tmp_path, "dry-run").stdout.strip() == ""
        assert "would requeue 0" in cli(live_env, tmp_path, "replay", "--all", "--dry-run").stdout
        assert "no Lead Ads leads" in cli(live_env, tmp_path, "accuracy").stdout
        assert not [r for r in graph.requests if sandbox.PAGE_ID in r["path"] or sandbox.FORM_ID in r["path"]]
    finally:
        assert live.stop() == 0
    assert sandbox.read(data / environment.SANDBOX_DIR)  # still there for the next sandbox run


def test_the_sandbox_refuses_a_redis_that_holds_other_data(tmp_path, redis_url, redis_conn):
    redis_conn.set("someone-elses", "data")
    out = cli(
        clean_env(REDIS_URL=redis_url, LEADRELAY_DATA_DIR=str(tmp_path)),
        tmp_path,
        "run",
        "--bind",
        f"127.0.0.1:{free_port()}",
    )
    assert out.returncode == 2 and "REDIS_URL" in out.stderr and "the sandbox did not put there" in out.stderr
    assert "Traceback" not in out.stderr and redis_conn.get(redisowner.MARK) is None


def test_an_older_sandbox_in_the_data_folder_moves_to_its_own(tmp_path):
    """Earlier releases kept the sandbox's files in data/ itself, where going live found them."""
    data = tmp_path / "data"
    data.mkdir()
    (data / sandbox.FILE).write_text("LEADRELAY_SANDBOX=1\n")
    (data / environment.REDIS_URL_FILE).write_text("redis://127.0.0.1:1/0\n")
    (data / "appendonly.aof").write_text("")
    environ = {environment.DATA_DIR: str(data), environment.ENV_FILE: "", **LIVE}
    environment.apply(environ, start_sandbox=True)
    assert sorted(p.name for p in data.iterdir()) == [environment.SANDBOX_DIR]
    assert sorted(p.name for p in (data / environment.SANDBOX_DIR).iterdir()) == [
        "appendonly.aof",
        environment.REDIS_URL_FILE,
        sandbox.FILE,
    ]
    assert "REDIS_URL" not in environ  # live: nothing of the sandbox's is picked up


def test_a_taken_port_stops_run_before_anything_starts_and_says_how_to_move(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        bind = f"127.0.0.1:{busy.getsockname()[1]}"
        out = cli(clean_env(LEADRELAY_DATA_DIR=str(tmp_path / "data")), tmp_path, "run", "--bind", bind)
    assert out.returncode == 1
    assert f"{bind} is in use" in out.stderr and "--bind" in out.stderr and "LEADRELAY_BIND" in out.stderr
    assert "Connection in use" not in out.stderr + out.stdout and "worker_started" not in out.stdout + out.stderr
    assert not (tmp_path / "data" / environment.SANDBOX_DIR / environment.REDIS_URL_FILE).exists()


def test_a_taken_port_stops_web_at_once_and_says_how_to_move(tmp_path):
    """`leadrelay web` alone: gunicorn would retry five times and end with "Can't connect"."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        bind = f"127.0.0.1:{busy.getsockname()[1]}"
        out = cli(clean_env(**LIVE, LEADRELAY_BIND=bind), tmp_path, "web")
    assert out.returncode == 1 and f"{bind} is in use" in out.stderr and "LEADRELAY_BIND" in out.stderr
    assert "Can't connect" not in out.stderr + out.stdout


def test_send_test_on_a_real_app_needs_no_data_folder_and_prints_the_test_lead_first(tmp_path, graph):
    env = clean_env(**LIVE, META_GRAPH_URL=graph.url, LEADRELAY_DATA_DIR=str(tmp_path / "nowhere-yet"))
    out = cli(env, tmp_path, "send-test", "meta", "--form-id", "777")
    assert out.returncode == 0, out.stderr
    first = json.loads(out.stdout.splitlines()[0])
    assert first["leadgen_id"] and first["leadgen_id"] == graph.test_leads["777"]
    assert "Traceback" not in out.stderr


def test_the_web_command_runs_from_any_folder(tmp_path, live_env):
    """The gunicorn settings ship in the package: no file needed beside the working folder."""
    import subprocess

    port = free_port()
    web = subprocess.Popen(
        [str(BIN / "leadrelay"), "web"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=clean_env(**live_env, LEADRELAY_BIND=f"127.0.0.1:{port}"),
    )
    try:
        assert wait_for(lambda: ready(f"http://127.0.0.1:{port}"), timeout=60)
    finally:
        web.terminate()
        web.wait(timeout=30)


@pytest.fixture
def live_env(redis_url, redis_conn):
    return {**LIVE, "REDIS_URL": redis_url, "META_GRAPH_URL": "http://127.0.0.1:9"}


def test_going_live_on_your_own_redis_needs_no_data_folder_and_a_second_run_keeps_the_firsts_address(
    tmp_path, graph, redis_url, redis_conn
):
    """The README's going-live step with REDIS_URL set, in a checkout (or an empty folder)
    that has no data folder yet: the lead is delivered; a second run on another port
    never points the first one's commands at itself, nor leaves its address behind."""
    from helpers import LEAD, leadgen_body, post_signed_meta

    data = tmp_path / "never-made"
    live_env = clean_env(
        **LIVE, LEADRELAY_DATA_DIR=str(data), META_GRAPH_URL=graph.url, REDIS_URL=redis_url, META_CAPI_ACCESS_TOKEN="t"
    )
    first = Service(live_env, tmp_path, free_port())
    try:
        wait_for(lambda: ready(first.base), timeout=60)
        graph.add_lead(LEAD)
        assert post_signed_meta(first.base, leadgen_body(LEAD)).json()["accepted"] == 1
        wait_for(lambda: [e for e in graph.events if e["event_name"] == "Lead"], timeout=60)
        assert (data / "web.url").read_text().split()[0] == first.base
        second = Service(live_env, tmp_path, free_port())
        try:
            wait_for(lambda: ready(second.base), timeout=60)
            assert (data / "web.url").read_text().split()[0] == first.base
        finally:
            assert second.stop() == 0
        assert (data / "web.url").read_text().split()[0] == first.base
    finally:
        assert first.stop() == 0
    assert not (data / "web.url").exists()
    assert "Traceback" not in "".join(first.lines)
