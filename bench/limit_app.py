"""bench/ingest.py's references besides bare Flask, served by the same gunicorn config:
the limit for a receiver (a bare Flask endpoint plus a signature check, a JSON
parse and one Redis round trip: a SET NX with a TTL for the lead), through redis-py's
pooled client or, fairer to compare with leadrelay's receiver (which holds a connection
per request in flight, workers/intake/requestredis.py), on a held plain socket; and the
floor under them (bare Flask plus one round trip on a plain socket)."""

import hashlib
import hmac
import json
import os
import socket

import redis
from flask import Flask, abort, jsonify, request


def _signed_lead(secret: bytes) -> tuple[bytes, str]:
    """The body and its lead's id, once its signature is checked (401 otherwise)."""
    body = request.get_data(cache=False)
    given = request.headers.get("X-Hub-Signature-256", "").partition("=")[2]
    if not hmac.compare_digest(hmac.new(secret, body, hashlib.sha256).hexdigest(), given):
        abort(401)
    return body, json.loads(body)["entry"][0]["changes"][0]["value"]["leadgen_id"]


def create_app() -> Flask:
    app = Flask(__name__)
    secret = os.environ["META_APP_SECRET"].encode()
    connection = redis.Redis.from_url(os.environ["REDIS_URL"])

    @app.post("/webhooks/meta")
    def receive():
        body, lead = _signed_lead(secret)
        new = connection.set(f"limit:{lead}", body, nx=True, ex=604800)
        return jsonify(accepted=int(bool(new))), 200

    @app.get("/readyz")
    def ready():
        return jsonify(status="ok")

    return app


def create_roundtrip_app() -> Flask:
    """The floor under any receiver that writes to Redis: bare Flask plus one Redis round
    trip (a PING) on a plain socket held per request in flight, and nothing else: no
    signature, no parse, no redis-py."""
    app = Flask(__name__)
    address = redis.connection.parse_url(os.environ["REDIS_URL"])
    idle: list[socket.socket] = []

    @app.post("/webhooks/meta")
    def receive():
        request.get_data(cache=False)
        held = idle.pop() if idle else socket.create_connection((address["host"], address.get("port", 6379)))
        held.sendall(b"*1\r\n$4\r\nPING\r\n")
        if held.recv(64) != b"+PONG\r\n":
            abort(503)
        idle.append(held)
        return jsonify(accepted=1), 200

    @app.get("/readyz")
    def ready():
        return jsonify(status="ok")

    return app


def create_held_app() -> Flask:
    """The limit with its round trip on a held plain socket, as leadrelay's receiver
    holds one per request in flight: the signature, the parse, one SET NX EX."""
    app = Flask(__name__)
    secret = os.environ["META_APP_SECRET"].encode()
    address = redis.connection.parse_url(os.environ["REDIS_URL"])
    idle: list[socket.socket] = []

    @app.post("/webhooks/meta")
    def receive():
        body, lead = _signed_lead(secret)
        parts = [b"SET", f"limit:{lead}".encode(), body, b"NX", b"EX", b"604800"]
        command = b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)
        held = idle.pop() if idle else socket.create_connection((address["host"], address.get("port", 6379)))
        held.sendall(command)
        answer = held.recv(64)
        idle.append(held)
        return jsonify(accepted=int(answer.startswith(b"+OK"))), 200

    @app.get("/readyz")
    def ready():
        return jsonify(status="ok")

    return app
