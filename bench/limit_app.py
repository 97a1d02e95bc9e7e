"""bench/ingest.py's second reference: the issue's limit for a receiver, a bare Flask
endpoint plus a signature check, a JSON parse and one Redis round trip (a SET NX with a
TTL for the lead, through redis-py's client), served by the same gunicorn config."""

import hashlib
import hmac
import json
import os

import redis
from flask import Flask, abort, jsonify, request


def create_app() -> Flask:
    app = Flask(__name__)
    secret = os.environ["META_APP_SECRET"].encode()
    connection = redis.Redis.from_url(os.environ["REDIS_URL"])

    @app.post("/webhooks/meta")
    def receive():
        body = request.get_data(cache=False)
        given = request.headers.get("X-Hub-Signature-256", "").partition("=")[2]
        if not hmac.compare_digest(hmac.new(secret, body, hashlib.sha256).hexdigest(), given):
            abort(401)
        lead = json.loads(body)["entry"][0]["changes"][0]["value"]["leadgen_id"]
        new = connection.set(f"limit:{lead}", body, nx=True, ex=604800)
        return jsonify(accepted=int(bool(new))), 200

    @app.get("/readyz")
    def ready():
        return jsonify(status="ok")

    return app
