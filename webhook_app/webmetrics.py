"""The web process's own counters (prometheus-client): webhooks, stage events, refused
tokens. /metrics (prometheus.py) serves them beside the figures workers keep in Redis."""

from __future__ import annotations

from functools import lru_cache

from prometheus_client import CollectorRegistry, Counter, Histogram

_LOCAL = CollectorRegistry()
WEBHOOKS = Counter(
    "leadrelay_webhooks_received",
    "Webhook items received, by source and outcome (accepted, "
    "duplicate, ignored, bad_signature, malformed, too_large, unavailable).",
    ["source", "outcome"],
    registry=_LOCAL,
)
WEBHOOK_SECONDS = Histogram(
    "leadrelay_webhook_duration_seconds",
    "Time to verify, enqueue and answer a webhook.",
    ["source"],
    buckets=(0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0),
    registry=_LOCAL,
)
STAGE_EVENTS = Counter(
    "leadrelay_stage_events_received",
    "Stage changes received by the API, by outcome (accepted, duplicate, rejected).",
    ["outcome"],
    registry=_LOCAL,
)
AUTH_REFUSED = Counter(
    "leadrelay_auth_refused",
    "Requests refused for a wrong token, or throttled after too many, "
    "by surface (admin_login, admin, api, metrics) and outcome (wrong_token, throttled).",
    ["surface", "outcome"],
    registry=_LOCAL,
)


@lru_cache(maxsize=512)
def webhooks(source: str, outcome: str):
    """WEBHOOKS' child for (source, outcome), looked up once per process: `labels()` takes
    a lock and checks the values on every call, a third of what a count cost per request."""
    return WEBHOOKS.labels(source, outcome)


@lru_cache(maxsize=128)
def webhook_seconds(source: str):
    """WEBHOOK_SECONDS' child for a source, looked up once per process (see `webhooks`)."""
    return WEBHOOK_SECONDS.labels(source)
