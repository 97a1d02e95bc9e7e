"""The service as a user runs it: `leadrelay run` (what `make run` calls), real HTTP,
real processes, Ctrl-C. And the Procfile's web command failing on bad settings."""

import json
import os
import signal
import socket
import subprocess
import threading
import time

import pytest
import requests

from helpers import APP_SECRET, BIN, ROOT, clean_env, leadgen_body, post_signed_meta, ready, sign, wait_for
from workers.run.embedded_redis import free_port


def port_open(url: str) -> bool:
    host, port = url.split("//")[1].split("/")[0].split(":")
    with socket.socket() as sock:
        return sock.connect_ex((host, int(port))) == 0


def test_run_serves_web_and_worker_on_embedded_redis_and_stops_cleanly(graph, tmp_path):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = clean_env(
        META_APP_SECRET=APP_SECRET,
        META_VERIFY_TOKEN="vt",
        META_PAGE_ACCESS_TOKEN="pt",
        META_DATASET_ID="99",
        META_GRAPH_URL=graph.url,
        WEB_CONCURRENCY="1",
    )
    graph.add_lead("1234567890123456")
    service = subprocess.Popen(
        [str(BIN / "leadrelay"), "run", "--bind", f"127.0.0.1:{port}", "--data-dir", str(tmp_path / "data")],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        wait_for(lambda: ready(base))
        redis_url = (tmp_path / "data" / "redis.url").read_text().strip()
        body = leadgen_body("1234567890123456", created_time=int(time.time()))
        answer = post_signed_meta(base, body)
        assert answer.status_code == 200 and answer.json()["accepted"] == 1

        def shown():
            out = subprocess.run(
                [str(BIN / "leadrelay"), "dry-run"], env=clean_env(REDIS_URL=redis_url), capture_output=True, text=True
            )
            return out.stdout.strip()

        event = json.loads(wait_for(shown).splitlines()[0])["event"]
        assert event["event_name"] == "Lead" and event["user_data"]["lead_id"] == 1234567890123456
        assert graph.calls("events") == []  # no CAPI token: dry-run, nothing sent
    finally:
        os.killpg(service.pid, signal.SIGINT)  # Ctrl-C in a terminal reaches the whole group
        output, _ = service.communicate(timeout=60)
    assert service.returncode == 0, output
    assert "Traceback" not in output and "could not connect to Redis" not in output, output
    assert "NOT sent to Meta" in output  # dry-run said loudly
    assert f'"metrics": "{base}/metrics"' in output and "off (set LEADRELAY_ADMIN_TOKEN)" in output
    assert not port_open(redis_url)  # the embedded Redis stopped with it
    assert (tmp_path / "data" / "appendonly.aof").exists()


def test_run_with_a_missing_setting_fails_naming_it(tmp_path):
    out = subprocess.run(
        [str(BIN / "leadrelay"), "run", "--data-dir", str(tmp_path)],
        env=clean_env(META_APP_SECRET="s"),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode != 0
    assert "META_VERIFY_TOKEN" in out.stderr


def test_procfile_web_command_fails_at_start_naming_the_setting():
    out = subprocess.run(
        [str(BIN / "leadrelay"), "web"],
        env=clean_env(
            REDIS_URL="redis://127.0.0.1:1/0", META_VERIFY_TOKEN="v", LEADRELAY_BIND=f"127.0.0.1:{free_port()}"
        ),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode != 0
    assert "META_APP_SECRET: must be set" in out.stderr


def test_worker_command_fails_at_start_naming_the_setting():
    out = subprocess.run(
        [str(BIN / "leadrelay"), "worker", "--burst"],
        env=clean_env(REDIS_URL="redis://127.0.0.1:1/0"),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode != 0
    assert "META_PAGE_ACCESS_TOKEN: must be set" in out.stderr


@pytest.mark.parametrize("command", [["check-config", "--json"]])
def test_check_config_masks_secrets(command):
    out = subprocess.run(
        [str(BIN / "leadrelay"), *command],
        env=clean_env(
            META_APP_SECRET="very-secret", META_VERIFY_TOKEN="v", META_PAGE_ACCESS_TOKEN="EAAtoken", META_DATASET_ID="9"
        ),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["page_access_token"] == "set"
    assert "very-secret" not in out.stdout and "EAAtoken" not in out.stdout


def test_metrics_add_up_across_gunicorn_processes(env, tmp_path):
    """Each web process counts what it receives; a scrape, whichever process answers it,
    reports the sum over every process that ever counted (prometheus-client's
    multiprocess mode). Two processes in turn, not at once: which process the kernel
    hands a connection to is its choice, so the test replaces the first process
    instead of hoping connections spread."""
    import psutil

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    metrics_dir = tmp_path / "prom"
    web = subprocess.Popen(
        [str(BIN / "leadrelay"), "web"],
        env=clean_env(
            **env, WEB_CONCURRENCY="1", LEADRELAY_BIND=f"127.0.0.1:{port}", PROMETHEUS_MULTIPROC_DIR=str(metrics_dir)
        ),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )

    def post(n):
        body = leadgen_body(f"12345678901{n:05d}", created_time=int(time.time()))
        return requests.post(
            f"{base}/webhooks/meta",
            data=body,
            headers={"X-Hub-Signature-256": sign(body), "Content-Type": "application/json", "Connection": "close"},
        )

    def counted() -> float:
        text = requests.get(f"{base}/metrics", headers={"Connection": "close"}).text
        line = next(
            x
            for x in text.splitlines()
            if x.startswith('leadrelay_webhooks_received_total{outcome="accepted",source="meta"}')
        )
        return float(line.split()[-1])

    def web_processes():
        return psutil.Process(web.pid).children()

    try:
        wait_for(lambda: ready(base))
        first = web_processes()[0]
        assert {post(n).status_code for n in range(25)} == {200}
        first.terminate()  # gunicorn replaces a web process that exits
        first.wait(timeout=30)
        wait_for(lambda: [c for c in web_processes() if c.pid != first.pid] and ready(base))
        second = web_processes()[0]
        assert {post(n).status_code for n in range(25, 60)} == {200}
        seen = counted()
        writers = {int(p.stem.rsplit("_", 1)[-1]) for p in metrics_dir.glob("counter_*.db")}
    finally:
        web.send_signal(signal.SIGTERM)
        _, errors = web.communicate(timeout=30)
    assert second.pid != first.pid
    assert writers == {first.pid, second.pid}  # each process counted into its own file
    assert seen == 60.0  # 25 counted by a process that is gone, 35 by the one answering
    assert "Traceback" not in errors, errors


def test_a_web_process_keeps_what_it_loaded_out_of_the_garbage_collectors_walks(env, monkeypatch, tmp_path):
    """the shipped gunicorn settings' post_worker_init, once the app is loaded: a full collection
    then walks only what requests allocate, not the ~60,000 objects loaded at start."""
    import gc
    import runpy

    from webhook_app import create_app

    create_app()
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))  # else the config file makes one, for good
    hooks = runpy.run_module("webhook_app.gunicorn_conf")
    gc.unfreeze()
    try:
        hooks["post_worker_init"](None)
        assert gc.get_freeze_count() > 10_000
    finally:
        gc.unfreeze()


@pytest.mark.parametrize("role", ["web", "worker"])
def test_a_redis_that_does_not_answer_is_said_at_start_with_the_masked_url_and_the_fix(role, tmp_path):
    """A wrong REDIS_URL must not look like a running service: one error line names the
    (masked) URL and what to check, and the process keeps trying."""
    closed = free_port()
    env = clean_env(
        REDIS_URL=f"redis://:hunter2secret@127.0.0.1:{closed}/0",
        META_APP_SECRET=APP_SECRET,
        META_VERIFY_TOKEN="vt",
        META_PAGE_ACCESS_TOKEN="pt",
        META_DATASET_ID="1",
        LEADRELAY_BIND=f"127.0.0.1:{free_port()}",
        WEB_CONCURRENCY="1",
    )
    process = subprocess.Popen(
        [str(BIN / "leadrelay"), role], env=env, cwd=tmp_path, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    lines: list[str] = []
    watchdog = threading.Timer(60, os.killpg, (process.pid, signal.SIGKILL))  # the read below never hangs
    watchdog.start()
    try:
        for line in process.stderr:
            lines.append(line)
            if "redis_unreachable" in line:
                break
        [said] = [json.loads(line) for line in lines if "redis_unreachable" in line]
        assert said["redis_url"] != env["REDIS_URL"] and str(closed) in said["redis_url"]
        assert "REDIS_URL" in said["fix"] and process.poll() is None  # it keeps trying
        assert "hunter2secret" not in "".join(lines)
    finally:
        watchdog.cancel()
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
