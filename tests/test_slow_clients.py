"""Slow clients cannot stop the shipped web server (`leadrelay web`): while many
connections trickle their headers, others are answered, and the stalled ones are dropped.
bench/slowclients.py measures the same with hundreds of clients against a thread server."""

from __future__ import annotations

import signal
import socket
import subprocess
import time

import requests

from helpers import BIN, ROOT, clean_env, leadgen_body, ready, sign, wait_for
from workers.embedded_redis import free_port

STALLED = 60  # more than a thread server's 2 processes x 4 threads would ever hold


def test_stalled_connections_block_no_one_and_are_dropped(env):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    web = subprocess.Popen([str(BIN / "leadrelay"), "web"],
                           env=clean_env(**env, WEB_CONCURRENCY="2", LEADRELAY_BIND=f"127.0.0.1:{port}"),
                           cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stalled = []
    try:
        wait_for(lambda: ready(base))
        for _ in range(STALLED):
            sock = socket.create_connection(("127.0.0.1", port), timeout=60)
            sock.sendall(b"POST /webhooks/meta HTTP/1.1\r\nHost: x\r\nContent-Ty")  # and then nothing more
            stalled.append(sock)
        for n in range(4):
            assert requests.get(f"{base}/healthz", timeout=10).status_code == 200
            body = leadgen_body(f"555000000000000{n}", created_time=int(time.time()))
            answer = requests.post(f"{base}/webhooks/meta", data=body, timeout=10,
                                   headers={"X-Hub-Signature-256": sign(body), "Content-Type": "application/json"})
            assert answer.status_code == 200 and answer.json()["accepted"] == 1
        # Headers get `keepalive` seconds to arrive; then the server closes the connection.
        for sock in stalled:
            assert sock.recv(1024) == b""  # blocks until the server closes it (the 60 s socket timeout is far off)
    finally:
        for sock in stalled:
            sock.close()
        web.send_signal(signal.SIGTERM)
        _, errors = web.communicate(timeout=30)
    assert "Traceback" not in errors, errors
