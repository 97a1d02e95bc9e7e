"""Slow clients cannot stop the shipped web server (`leadrelay web`): while many
connections trickle their headers, others are answered, and the stalled ones are dropped.
bench/slowclients.py measures the same with hundreds of clients against a thread server."""

from __future__ import annotations

import signal
import socket
import subprocess
import time

import requests

from helpers import BIN, ROOT, clean_env, leadgen_body, post_signed_meta, ready, wait_for
from workers.run.embedded_redis import free_port

STALLED = 60  # more than a thread server's 2 processes x 4 threads would ever hold


def test_stalled_connections_block_no_one_and_are_dropped(env):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    web = subprocess.Popen(
        [str(BIN / "leadrelay"), "web"],
        env=clean_env(**env, WEB_CONCURRENCY="2", LEADRELAY_BIND=f"127.0.0.1:{port}"),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
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
            answer = post_signed_meta(base, body)
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


def _web(env, port: int, **settings) -> subprocess.Popen:
    return subprocess.Popen(
        [str(BIN / "leadrelay"), "web"],
        env=clean_env(**env, WEB_CONCURRENCY="1", LEADRELAY_BIND=f"127.0.0.1:{port}", **settings),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_body_sent_too_slowly_is_cut_with_408_and_blocks_no_one(env):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    web = _web(env, port, LEADRELAY_BODY_TIMEOUT_SECONDS="1")
    slow = []
    try:
        wait_for(lambda: ready(base))
        for _ in range(STALLED):
            sock = socket.create_connection(("127.0.0.1", port), timeout=60)
            sock.sendall(
                b"POST /webhooks/meta HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: 100\r\n\r\n{"
            )  # one byte of a hundred, and then nothing
            slow.append(sock)
        body = leadgen_body("5551000000000001", created_time=int(time.time()))
        answer = post_signed_meta(base, body)
        assert answer.status_code == 200 and answer.json()["accepted"] == 1
        for sock in slow:
            answered = b""
            while chunk := sock.recv(4096):  # until the server closes: after the 408, not at the 60 s timeout
                answered += chunk
            assert answered.startswith(b"HTTP/1.1 408") and b'"error": "body_timeout"' in answered
    finally:
        for sock in slow:
            sock.close()
        web.send_signal(signal.SIGTERM)
        _, errors = web.communicate(timeout=30)
    assert "Traceback" not in errors, errors


def test_a_chunked_body_over_the_limit_is_413_not_a_bad_signature(env):
    port = free_port()
    web = _web(env, port, LEADRELAY_MAX_BODY_BYTES="2000")
    try:
        wait_for(lambda: ready(f"http://127.0.0.1:{port}"))
        body = leadgen_body(*[f"55520000000{n:05d}" for n in range(40)], created_time=int(time.time()))
        assert len(body) > 2000

        def chunks():
            for start in range(0, len(body), 500):
                yield body[start : start + 500]

        answer = post_signed_meta(f"http://127.0.0.1:{port}", body, data=chunks())
        assert answer.status_code == 413 and answer.json()["error"] == "body_too_large"
        small = leadgen_body("5552000000000099", created_time=int(time.time()))
        answer = post_signed_meta(f"http://127.0.0.1:{port}", small, data=iter([small]))
        assert answer.status_code == 200 and answer.json()["accepted"] == 1  # chunked within the limit is fine
    finally:
        web.send_signal(signal.SIGTERM)
        _, errors = web.communicate(timeout=30)
    assert "Traceback" not in errors, errors
