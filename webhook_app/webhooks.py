"""Webhook endpoints. Every receiver is the same steps: verify the raw body, parse,
(for forms) map and hash, enqueue one job per new item, answer."""

from __future__ import annotations

import time
import uuid

from flask import Blueprint, Response, current_app, jsonify, request
from werkzeug.exceptions import RequestEntityTooLarge

from workers import forms, intake, logs
from workers.errors import BadSignature, BodyTooLarge, ReceiverError
from workers.sources import FORM_SOURCES, SOURCES, meta

from . import prometheus

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
    return _receive("meta", _ext()["settings"].app_secrets)


@bp.post("/typeform")
def typeform_submission():
    return _receive("typeform", _ext()["settings"].typeform_secrets)


@bp.post("/tally")
def tally_submission():
    return _receive("tally", _ext()["settings"].tally_secrets)


def _verify(source, body: bytes, secrets) -> None:
    """Fail closed: a form source without a secret refuses deliveries, unless the
    operator allowed unsigned delivery for it (LEADRELAY_ALLOW_UNSIGNED).

    Raises:
        BadSignature: see the source's verify; `source_disabled` without a secret.
    """
    if secrets:
        source.verify(body, request.headers, secrets)
    elif source.NAME not in _ext()["settings"].allow_unsigned:
        raise BadSignature(f"no secret is configured for {source.NAME} and unsigned delivery is not allowed",
                           reason="source_disabled")


def _prepare(name: str, items: list[dict]) -> tuple[list[dict], list[dict]]:
    """Form submissions to hashed job payloads; what is not sent is listed with its reason."""
    configured = _ext()["forms"][name]
    region = _ext()["settings"].default_region
    source = SOURCES[name]
    payloads, skipped = [], []
    for item in items:
        if item["test"]:
            reason = "test_delivery"  # never to a production dataset
        elif configured and item["form_id"] not in configured:
            reason = "unknown_form"
        else:
            payload, reason = forms.prepare(item, configured.get(item["form_id"]), region, source.dedupe_key(item),
                                            _ext()["processing"].get(name))
            if payload:
                payloads.append(payload)
                continue
        skipped.append({"reason": reason, "form_id": item["form_id"], "submission_id": item["submission_id"]})
    return payloads, skipped


def _receive(name: str, secrets) -> tuple:
    started = time.perf_counter()
    ext = _ext()
    # Carried into the jobs (their meta) so one id follows a webhook through its attempts.
    request_id = request.headers.get("X-Request-Id") or uuid.uuid4().hex
    source = SOURCES[name]
    body = b""
    try:
        body = _body()
        _verify(source, body, secrets)
        parsed = source.parse(body)
        items, skipped = parsed["leads"], parsed["skipped"]
        if name in FORM_SOURCES:
            items, not_sent = _prepare(name, items)
            skipped = skipped + not_sent
            intake.record_ignored(ext["redis"], name, not_sent)
        elif ext["processing"].get(name):
            # Decided when the lead arrives, so a later change of the file never reaches it.
            items = [{**item, "processing": ext["processing"][name]} for item in items]
        counts = intake.enqueue_new(ext["queue"], name, items, _dedupe_key(name), request_id)
    except ReceiverError as err:
        prometheus.WEBHOOKS.labels(name, err.outcome).inc()
        prometheus.WEBHOOK_SECONDS.labels(name).observe(time.perf_counter() - started)
        log.warning("webhook", source=name, request_id=request_id, outcome=err.reason, status=err.status,
                    bytes=len(body), elapsed_ms=_ms(started))
        raise
    _count(name, counts["accepted"], counts["duplicates"], len(skipped), started)
    log.info("webhook", source=name, request_id=request_id, outcome="accepted", accepted=counts["accepted"],
             duplicates=counts["duplicates"], skipped=len(skipped), job_ids=counts["job_ids"],
             skip_reasons=sorted({s["reason"] for s in skipped}), elapsed_ms=_ms(started))
    return jsonify(accepted=counts["accepted"], duplicates=counts["duplicates"], skipped=skipped), 200


def _body() -> bytes:
    """The raw body, which signatures are computed over.

    Raises:
        BodyTooLarge: over LEADRELAY_MAX_BODY_BYTES.
    """
    try:
        return request.get_data(cache=False)
    except RequestEntityTooLarge:
        raise BodyTooLarge(f"body over the {current_app.config['MAX_CONTENT_LENGTH']}-byte limit") from None


def _count(name: str, accepted: int, duplicates: int, ignored: int, started: float) -> None:
    for outcome, number in (("accepted", accepted), ("duplicate", duplicates), ("ignored", ignored)):
        if number:
            prometheus.WEBHOOKS.labels(name, outcome).inc(number)
    prometheus.WEBHOOK_SECONDS.labels(name).observe(time.perf_counter() - started)


def _dedupe_key(name: str):
    if name in FORM_SOURCES:
        return lambda payload: f"{name}:{payload['key']}"  # prepared payloads carry their key
    return SOURCES[name].dedupe_key


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)
