"""Routine deliveries logged and counted once a second under gunicorn's gevent workers
(webhook_app/deliveries.py), against the real server: `leadrelay web`, real HTTP."""

import json
import signal
import subprocess

import requests

from helpers import BIN, ROOT, clean_env, leadgen_body, ready, sign, wait_for
from workers.run.embedded_redis import free_port


def _lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.startswith("{")]


def _post(base: str, lead: str, request_id: str, signature: str | None = None):
    body = leadgen_body(lead)
    headers = {"X-Hub-Signature-256": signature or sign(body), "X-Request-Id": request_id, "Connection": "close"}
    return requests.post(f"{base}/webhooks/meta", data=body, headers=headers, timeout=10)


def _accepted(base: str) -> float:
    text = requests.get(f"{base}/metrics", headers={"Connection": "close"}, timeout=10).text
    prefix = 'leadrelay_webhooks_received_total{outcome="accepted",source="meta"}'
    return float(next(line for line in text.splitlines() if line.startswith(prefix)).split()[-1])


def test_deliveries_are_logged_together_counted_before_a_scrape_and_handed_on_at_exit(env, tmp_path):
    port = free_port()
    base, log_file = f"http://127.0.0.1:{port}", tmp_path / "web.log"
    with open(log_file, "w") as log:
        web = subprocess.Popen(
            [str(BIN / "leadrelay"), "web"],
            env=clean_env(
                **env,
                WEB_CONCURRENCY="1",
                LEADRELAY_BIND=f"127.0.0.1:{port}",
                PROMETHEUS_MULTIPROC_DIR=str(tmp_path / "prom"),
            ),
            cwd=ROOT,
            stdout=log,
            stderr=log,
        )
        try:
            wait_for(lambda: ready(base))
            assert {_post(base, f"10000000000000{n:02d}", f"req-{n}").status_code for n in range(3)} == {200}
            # The scrape's own process hands on its tally first: counted at once, whenever
            # the once-a-second hand-on comes.
            assert _accepted(base) == 3
            wait_for(lambda: any(line.get("event") == "webhooks" for line in _lines(log_file)), 10)
            assert _post(base, "1000000000000099", "req-refused", signature="sha256=" + "0" * 64).status_code == 401
            wait_for(lambda: any(line.get("request_id") == "req-refused" for line in _lines(log_file)), 10)
            assert _post(base, "1000000000000042", "req-last").status_code == 200
        finally:
            web.send_signal(signal.SIGTERM)  # at once: the last delivery is handed on as the process stops
            web.wait(timeout=30)
    lines = _lines(log_file)
    together = [d for line in lines if line.get("event") == "webhooks" for d in line["deliveries"]]
    assert sorted(d["request_id"] for d in together) == ["req-0", "req-1", "req-2", "req-last"]
    first = next(d for d in together if d["request_id"] == "req-0")
    assert first["source"] == "meta" and first["accepted"] == 1 and first["job_ids"] == ["lead-meta-1000000000000000"]
    assert {"duplicates", "skipped", "skip_reasons", "elapsed_ms"} <= first.keys()
    [refused] = [line for line in lines if line.get("request_id") == "req-refused"]
    assert refused["event"] == "webhook" and refused["outcome"] == "bad_signature" and refused["level"] == "warning"
    assert not [line for line in lines if line.get("event") == "webhook" and line.get("outcome") == "accepted"]


def test_a_busy_second_is_written_in_lines_of_at_most_fifty_deliveries(capfd):
    from webhook_app import deliveries
    from workers.common import logs

    logs.configure("INFO")
    held = [
        {"source": "meta", "request_id": f"req-{n}", "accepted": 1, "duplicates": 0, "skipped": 0}
        | {"job_ids": [f"lead-meta-{n}"], "skip_reasons": [], "elapsed_ms": 1.0}
        for n in range(120)
    ]
    deliveries._own_tally().deliveries.extend(held)
    deliveries.flush()
    lines = [json.loads(line) for line in capfd.readouterr().err.splitlines() if '"webhooks"' in line]
    assert [len(line["deliveries"]) for line in lines] == [50, 50, 20]
    assert [d["request_id"] for line in lines for d in line["deliveries"]] == [f"req-{n}" for n in range(120)]
    assert deliveries._own_tally().deliveries == []
