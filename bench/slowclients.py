"""Slow clients against the shipped web server: can anyone else still get an answer?

Starts an embedded Redis and gunicorn with the shipped settings (its worker class, or the one
given with --reference for comparison), opens N connections that send a request's
headers one byte a second, and meanwhile probes /healthz and a signed Meta webhook.
Prints, for each server, the share of probes answered within --deadline seconds and
their median latency, then the ratio of the two.

    .venv/bin/python bench/slowclients.py --clients 200 --seconds 20 --reference gthread

With --bodies, the N connections (from this one client) send whole headers, then a body a
byte a second, and open a new connection whenever the server cuts one (as an attacker
would keep them open); the shipped server runs with its default process count, and the
figures are the probes answered within --deadline and the bodies cut (408):

    .venv/bin/python bench/slowclients.py --bodies --clients 4200 --seconds 30 --deadline 1
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

from workers.run.embedded_redis import EmbeddedRedis, free_port  # noqa: E402

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


def _slow_bodies(port: int, clients: int, stop: threading.Event, cut: list) -> None:
    """`clients` connections sending a body a byte a second, one thread for all; each one
    the server answers (408) or closes is counted in `cut` and replaced."""
    head = b"POST /webhooks/meta HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"

    def opened():
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        sock.sendall(head)
        sock.setblocking(False)
        return sock

    socks = []
    while len(socks) < clients and not stop.is_set():
        try:
            socks.append(opened())
        except OSError:
            time.sleep(0.05)
    while not stop.is_set():
        for i, sock in enumerate(socks):
            try:
                sock.send(b" ")
                answered = sock.recv(4096)
            except BlockingIOError:
                continue  # nothing from the server yet: still holding its connection
            except OSError:
                answered = b"closed"
            cut.append(answered[:12])
            sock.close()
            try:
                socks[i] = opened()
            except OSError:
                pass
        stop.wait(1.0)
    for sock in socks:
        sock.close()


def _probe(base: str, deadline: float) -> float | None:
    body = b'{"object":"page","entry":[]}'
    signature = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    started = time.monotonic()
    try:
        requests.get(f"{base}/healthz", timeout=deadline).raise_for_status()
        requests.post(
            f"{base}/webhooks/meta",
            data=body,
            timeout=deadline,
            headers={"X-Hub-Signature-256": signature, "Content-Type": "application/json"},
        )
    except requests.RequestException:
        return None
    return time.monotonic() - started


def run(
    worker_class: str | None, clients: int, seconds: float, deadline: float, redis_url: str, bodies: bool = False
) -> dict:
    port = free_port()
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "META_APP_SECRET": SECRET,
        "META_VERIFY_TOKEN": "v",
        "LEADRELAY_ENV_FILE": "",
        "LEADRELAY_BIND": f"127.0.0.1:{port}",
        "LEADRELAY_LOG_LEVEL": "ERROR",
        **({} if bodies else {"WEB_CONCURRENCY": "2"}),
    }
    command = [
        str(Path(sys.executable).parent / "gunicorn"),
        "-c",
        "python:webhook_app.gunicorn_conf",
        "webhook_app:create_app()",
    ]
    if worker_class:
        command[1:1] = ["-k", worker_class]
    server = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            if _probe(base, 1.0) is not None:
                break
            time.sleep(0.2)
        stop = threading.Event()
        cut: list = []
        if bodies:
            slow = [threading.Thread(target=_slow_bodies, args=(port, clients, stop, cut), daemon=True)]
        else:
            slow = [threading.Thread(target=_slow_client, args=(port, stop), daemon=True) for _ in range(clients)]
        for thread in slow:
            thread.start()
        time.sleep(2 if not bodies else 5)  # let them all connect
        latencies, end = [], time.monotonic() + seconds
        while time.monotonic() < end:
            latencies.append(_probe(base, deadline))
            time.sleep(0.5)
        stop.set()
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    answered = [x for x in latencies if x is not None]
    return {
        "probes": len(latencies),
        "answered": len(answered) / len(latencies),
        "median_s": statistics.median(answered) if answered else float("inf"),
        "max_s": max(answered) if answered else float("inf"),
        "cut_408": sum(1 for c in cut if c.startswith(b"HTTP/1.1 408")),
        "closed": len(cut),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--deadline", type=float, default=5.0, help="a probe slower than this counts as unanswered")
    parser.add_argument("--reference", default="gthread", help="the worker class to compare with")
    parser.add_argument("--bodies", action="store_true", help="slow bodies from one client, the shipped server only")
    args = parser.parse_args()
    if args.bodies:
        with tempfile.TemporaryDirectory() as data, EmbeddedRedis(Path(data)) as redis_server:
            shipped = run(None, args.clients, args.seconds, args.deadline, redis_server.url, bodies=True)
        print(
            f"{args.clients} connections from one client sending bodies at 1 byte/s for {args.seconds:g} s; "
            f"shipped (leadrelay web, default processes):"
        )
        print(
            f"  probes answered within {args.deadline} s: {shipped['answered']:.0%} of {shipped['probes']}, "
            f"median {shipped['median_s'] * 1000:.1f} ms, slowest {shipped['max_s'] * 1000:.1f} ms"
        )
        print(f"  slow bodies cut: {shipped['cut_408']} answered 408, {shipped['closed']} closed in all")
        return 0
    with tempfile.TemporaryDirectory() as data, EmbeddedRedis(Path(data)) as redis_server:
        shipped = run(None, args.clients, args.seconds, args.deadline, redis_server.url)
        reference = run(args.reference, args.clients, args.seconds, args.deadline, redis_server.url)
    print(f"{args.clients} clients sending headers at 1 byte/s; probes answered within {args.deadline} s:")
    print(
        f"  shipped (leadrelay web): {shipped['answered']:.0%} of {shipped['probes']}, "
        f"median {shipped['median_s'] * 1000:.1f} ms"
    )
    print(
        f"  reference ({args.reference}):       {reference['answered']:.0%} of {reference['probes']}, "
        f"median {reference['median_s'] * 1000:.1f} ms"
    )
    if reference["answered"]:
        print(f"  answered ratio shipped/reference: {shipped['answered'] / reference['answered']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
