"""Webhook endpoints. Every receiver is the same four steps: verify the raw body,
parse, enqueue one job per new item, answer."""

from __future__ import annotations

import time

from flask import Blueprint, Response, current_app, jsonify, request

from . import intake, logs
from .errors import ReceiverError
from .sources import SOURCES, meta

bp = Blueprint("webhooks", __name__, url_prefix="/webhooks")
log = logs.get(__name__)


def _ext() -> dict:
    return current_app.extensions["leadrelay"]


@bp.get("/meta")
def meta_handshake():
    """Meta's subscription check: echo hub.challenge as plain text, or 403."""
    challenge = meta.handshake(request.args, _ext()["settings"].verify_token)
    if challenge is None:
        log.warning("handshake_refused", source="meta")
        return Response("forbidden", status=403, mimetype="text/plain")
    return Response(challenge, status=200, mimetype="text/plain")


@bp.post("/meta")
def meta_notification():
    return _receive(SOURCES["meta"], _ext()["settings"].app_secrets)


def _receive(source, secrets) -> tuple:
    started = time.perf_counter()
    ext = _ext()
    body = request.get_data(cache=False)
    try:
        source.verify(body, request.headers, secrets)
        parsed = source.parse(body)
        counts = intake.enqueue_new(ext["queue"], source.NAME, parsed["leads"], source.dedupe_key)
    except ReceiverError as err:
        log.warning("webhook", source=source.NAME, outcome=err.reason, status=err.status,
                    bytes=len(body), elapsed_ms=_ms(started))
        raise
    skipped = parsed["skipped"]
    log.info("webhook", source=source.NAME, outcome="accepted", accepted=counts["accepted"],
             duplicates=counts["duplicates"], skipped=len(skipped), job_ids=counts["job_ids"],
             skip_reasons=sorted({s["reason"] for s in skipped}), elapsed_ms=_ms(started))
    return jsonify(accepted=counts["accepted"], duplicates=counts["duplicates"], skipped=skipped), 200


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)
