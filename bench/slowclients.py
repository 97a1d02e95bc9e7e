"""Slow clients against the shipped web server: can anyone else still get an answer?

Starts an embedded Redis and gunicorn with the shipped settings (its worker class, or the one
given with --reference for comparison), opens N connections that send a request's
headers one byte a second, and meanwhile probes /healthz and a signed Meta webhook.
Prints, for each server, the share of probes answered within --deadline seconds and
their median latency, then the ratio of the two.

    .venv/bin/python bench/slowclients.py --clients 200 --seconds 20 --reference gthread
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from workers.embedded_redis import EmbeddedRedis, free_port  # noqa: E402

SECRET = "bench-secret"


def _slow_client(port: int, stop: threading.Event) -> None:
    request = b"POST /webhooks/meta HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            for byte in request:
                if stop.is_set():
                    return
                sock.sendall(bytes([byte]))
                stop.wait(1.0)
    except OSError:
        pass  # the server dropped us: what it should do


def _probe(base: str, deadline: float) -> float | None:
    body = b'{"object":"page","entry":[]}'
    signature = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    started = time.monotonic()
    try:
        requests.get(f"{base}/healthz", timeout=deadline).raise_for_status()
        requests.post(f"{base}/webhooks/meta", data=body, timeout=deadline,
                      headers={"X-Hub-Signature-256": signature, "Content-Type": "application/json"})
    except requests.RequestException:
        return None
    return time.monotonic() - started


def run(worker_class: str | None, clients: int, seconds: float, deadline: float, redis_url: str) -> dict:
    port = free_port()
    env = {**os.environ, "REDIS_URL": redis_url, "META_APP_SECRET": SECRET, "META_VERIFY_TOKEN": "v",
           "LEADRELAY_ENV_FILE": "", "LEADRELAY_BIND": f"127.0.0.1:{port}", "WEB_CONCURRENCY": "2",
           "LEADRELAY_LOG_LEVEL": "ERROR"}
    command = [str(Path(sys.executable).parent / "gunicorn"), "-c", "python:webhook_app.gunicorn_conf", "webhook_app:create_app()"]
    if worker_class:
        command[1:1] = ["-k", worker_class]
    server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            if _probe(base, 1.0) is not None:
                break
            time.sleep(0.2)
        stop = threading.Event()
        slow = [threading.Thread(target=_slow_client, args=(port, stop), daemon=True) for _ in range(clients)]
        for thread in slow:
            thread.start()
        time.sleep(2)  # let them all connect
        latencies, end = [], time.monotonic() + seconds
        while time.monotonic() < end:
            latencies.append(_probe(base, deadline))
            time.sleep(0.5)
        stop.set()
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    answered = [x for x in latencies if x is not None]
    return {"probes": len(latencies), "answered": len(answered) / len(latencies),
            "median_s": statistics.median(answered) if answered else float("inf")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--deadline", type=float, default=5.0, help="a probe slower than this counts as unanswered")
    parser.add_argument("--reference", default="gthread", help="the worker class to compare with")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data, EmbeddedRedis(Path(data)) as redis_server:
        shipped = run(None, args.clients, args.seconds, args.deadline, redis_server.url)
        reference = run(args.reference, args.clients, args.seconds, args.deadline, redis_server.url)
    print(f"{args.clients} clients sending headers at 1 byte/s; probes answered within {args.deadline} s:")
    print(f"  shipped (leadrelay web): {shipped['answered']:.0%} of {shipped['probes']}, "
          f"median {shipped['median_s'] * 1000:.1f} ms")
    print(f"  reference ({args.reference}):       {reference['answered']:.0%} of {reference['probes']}, "
          f"median {reference['median_s'] * 1000:.1f} ms")
    if reference["answered"]:
        print(f"  answered ratio shipped/reference: {shipped['answered'] / reference['answered']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
