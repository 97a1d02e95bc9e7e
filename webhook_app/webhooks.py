"""Webhook endpoints: one POST route for every registered source (workers/sources), plus Meta's
subscription check.

Notes: docs/internals/webhook_app.md
"""

from __future__ import annotations

import json
import os
import re
import time

from flask import Blueprint, Response, abort, current_app, request
from werkzeug.exceptions import RequestEntityTooLarge

from workers.common import logs
from workers.common.refusals import BodyTooLarge, QueueUnavailable, ReceiverError
from workers.intake import receiver
from workers.sources import meta
from workers.sources.registry import CHAT, SOURCES

from . import bodies, deliveries, errors, webmetrics

bp = Blueprint("webhooks", __name__, url_prefix="/webhooks")
log = logs.get(__name__)
_NOSNIFF = {"X-Content-Type-Options": "nosniff"}
_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")


class UnknownSource(ReceiverError):
    status = 404
    reason = "unknown_source"


def _ext() -> dict:
    return current_app.extensions["leadrelay"]


@bp.get("/<name>")
def meta_handshake(name: str):
    """Meta's subscription check, for Lead Ads and the messaging channels (the same app,
    the same verify token): echo hub.challenge as plain text (what Meta reads), or 403
    with a JSON reason, as every other refusal. Other sources take POSTs only."""
    source = SOURCES.get(name)
    if source is None or not (name == meta.NAME or source.kind == CHAT):
        abort(405)
    refused = meta.refusal(request.args, _ext()["settings"].verify_token)
    if refused:
        reason, detail = refused
        log.warning("handshake_refused", source=name, reason=reason, fix=detail)
        return errors.answer(reason, detail, 403)
    # The challenge is the caller's text echoed back: never let a browser read it as HTML.
    return Response(request.args["hub.challenge"], status=200, mimetype="text/plain", headers=_NOSNIFF)


PATH_TOKEN = "X-Leadrelay-Path-Token"  # a sender that cannot sign puts a secret in its endpoint's path


@bp.post("/<name>/<token>")
def receive_with_path_token(name: str, token: str):
    """`/webhooks/<name>/<token>`: a sender that cannot sign or set a header (Salesforce's
    Outbound Messages) names the secret in the endpoint's path; its verify reads it."""
    return receive(name, {PATH_TOKEN: token})


@bp.post("/<name>")
def receive(name: str, path_token: dict | None = None):
    source = SOURCES.get(name)
    if source is None:
        raise UnknownSource(f"no source {name!r}; known: {', '.join(SOURCES)}")
    started = time.perf_counter()
    ext = _ext()
    # Carried into the jobs (their meta) so one id follows a webhook through its attempts.
    request_id = _request_id()
    body = b""
    try:
        body = _body()
        mapping = {key: ext[key] for key in ("forms", "processing", "routes", "crm")}
        counts = receiver.receive(
            source,
            body,
            {**request.headers, **path_token} if path_token else request.headers,
            ext["settings"],
            mapping,
            ext["queue"],
            request_id,
            ext["request_redis"],
            _called_url(ext["settings"].public_url) if source.reads_url else "",
            request.remote_addr or "",
        )
    except ReceiverError as err:
        if isinstance(err, QueueUnavailable) and source.traits.unavailable_status:
            err.status = source.traits.unavailable_status  # a sender that retries only this (HighLevel: 429)
        webmetrics.webhooks(name, err.outcome).inc()
        webmetrics.webhook_seconds(name).observe(time.perf_counter() - started)
        log.warning(
            "webhook",
            source=name,
            request_id=request_id,
            outcome=err.reason,
            status=err.status,
            bytes=len(body),
            elapsed_ms=_ms(started),
        )
        raise
    skipped = counts["skipped"]
    deliveries.note(name, request_id, counts, skipped, time.perf_counter() - started)
    if source.traits.acknowledge:  # a sender that waits for its own answer (Salesforce's SOAP Ack)
        answer, mimetype = source.traits.acknowledge(counts)
        said = {"X-Leadrelay-Accepted": str(counts["accepted"]), "X-Leadrelay-Duplicates": str(counts["duplicates"])}
        return Response(answer, status=200, mimetype=mimetype, headers=said)  # the counts, for people and tests
    answer = {"accepted": counts["accepted"], "duplicates": counts["duplicates"], "skipped": skipped}
    return Response(_json(answer) + "\n", status=200, mimetype="application/json")  # as jsonify writes it, cheaper


_json = json.JSONEncoder(separators=(",", ":"), sort_keys=True).encode


def _called_url(public: str) -> str:
    """The URL the sender called, as it wrote it: behind a proxy, LEADRELAY_PUBLIC_URL's
    scheme and host with this request's path and query (HubSpot signs the whole URL)."""
    if not public:
        return request.url
    query = request.query_string.decode("latin-1")
    return public + request.path + (f"?{query}" if query else "")


def _request_id() -> str:
    """The caller's X-Request-Id when it is a plain id of at most 64 characters (it is
    logged and kept with the jobs), otherwise one of ours."""
    given = request.environ.get("HTTP_X_REQUEST_ID", "")
    return given if _REQUEST_ID.fullmatch(given) else os.urandom(16).hex()  # uuid4's 32 hex digits, cheaper


def _body() -> bytes:
    """The raw body, which signatures are computed over: as the body middleware read it.

    Raises:
        BodyTooLarge: over LEADRELAY_MAX_BODY_BYTES.
    """
    read = request.environ.get(bodies.BODY)
    if read is not None:
        return read
    try:
        return request.get_data(cache=False)
    except RequestEntityTooLarge:
        raise BodyTooLarge(f"body over the {current_app.config['MAX_CONTENT_LENGTH']}-byte limit") from None


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)
