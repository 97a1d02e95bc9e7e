"""The baseline for bench/ingest.py: a bare Flask endpoint that reads the body and
answers 200, served by the same gunicorn config as leadrelay."""

from flask import Flask, jsonify, request


def create_app() -> Flask:
    app = Flask(__name__)

    @app.post("/webhooks/meta")
    def receive():
        request.get_data(cache=False)
        return jsonify(accepted=1), 200

    @app.get("/readyz")
    def ready():
        return jsonify(status="ok")

    return app
