"""Signed-webhook ingest: leadrelay's receiver next to a bare Flask endpoint.

Both run under the same gunicorn config (gunicorn.conf.py) in the same run, against
the same embedded Redis, with the same closed-loop load: every request is a new,
correctly signed leadgen notification. Prints requests/s, p50/p99 and the ratio.
Product goal: leadrelay at >= 85% of the bare figure, p99 under 20 ms.

    .venv/bin/python bench/ingest.py [--seconds 10] [--connections 8] [--rounds 2]
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import loadgen  # noqa: E402

from workers.embedded_redis import EmbeddedRedis, free_port  # noqa: E402

SECRET = "bench-app-secret"


def signed_lead(worker: int, i: int) -> tuple[bytes, dict]:
    leadgen_id = str(10**15 + (os.getpid() % 10**6) * 10**8 + i)  # unique across processes and rounds
    body = json.dumps({"object": "page", "entry": [{"id": "1", "time": int(time.time()), "changes": [
        {"field": "leadgen", "value": {"leadgen_id": leadgen_id, "page_id": "1", "form_id": "2", "ad_id": "3",
                                       "created_time": int(time.time())}}]}]}).encode()
    digest = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    return body, {"Content-Type": "application/json", "X-Hub-Signature-256": f"sha256={digest}"}


def serve(app_spec: str, env: dict, cwd: Path) -> tuple[subprocess.Popen, int]:
    port = free_port()
    proc = subprocess.Popen([str(Path(sys.executable).parent / "gunicorn"), "-c", str(ROOT / "gunicorn.conf.py"),
                             app_spec], env={**env, "LEADRELAY_BIND": f"127.0.0.1:{port}"}, cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            if requests.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                return proc, port
        except requests.ConnectionError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"{app_spec} did not start")


def measure(app_spec: str, env: dict, cwd: Path, args) -> dict:
    proc, port = serve(app_spec, env, cwd)
    try:
        loadgen.run(port, signed_lead, args.connections, 1.0)  # warm up connections and imports
        return loadgen.run(port, signed_lead, args.connections, args.seconds)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp, EmbeddedRedis(Path(tmp) / "redis") as redis_server:
        env = {**os.environ, "REDIS_URL": redis_server.url, "META_APP_SECRET": SECRET, "META_VERIFY_TOKEN": "v",
               "LEADRELAY_LOG_LEVEL": "WARNING"}
        results: dict[str, list[dict]] = {"bare": [], "leadrelay": []}
        for _ in range(args.rounds):  # alternate, so drift on the machine hits both alike
            results["bare"].append(measure("bare_app:create_app()", env, ROOT / "bench", args))
            results["leadrelay"].append(measure("webhook_app:create_app()", env, ROOT, args))

    print(f"gunicorn.conf.py, {os.cpu_count()} cores, {args.connections} keep-alive connections, "
          f"{args.seconds:g}s x {args.rounds} rounds, each request a new signed lead")
    print(f"{'endpoint':<10} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8}  statuses")
    summary = {}
    for name, runs in results.items():
        rps = statistics.median(r["rps"] for r in runs)
        p50 = statistics.median(r["p50_ms"] for r in runs)
        p99 = statistics.median(r["p99_ms"] for r in runs)
        statuses: dict = {}
        for r in runs:
            for code, n in r["statuses"].items():
                statuses[code] = statuses.get(code, 0) + n
        summary[name] = rps, p99
        print(f"{name:<10} {rps:>8.0f} {p50:>8.2f} {p99:>8.2f}  {statuses}")
    ratio = summary["leadrelay"][0] / summary["bare"][0]
    print(f"ratio leadrelay/bare: {ratio:.0%} (goal >= 85%); leadrelay p99 {summary['leadrelay'][1]:.2f} ms "
          f"(goal < 20 ms)")


if __name__ == "__main__":
    main()
