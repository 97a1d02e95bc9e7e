"""Who may try how often, and admin sessions that end when they end.

Wrong tokens (admin login, the admin and stage APIs, /metrics) are counted per client
address in Redis, so every web process sees the same count: past
policy.AUTH_FAILURES_ALLOWED within policy.AUTH_FAILURE_WINDOW, that address is answered
429 until the window closes, even with the right token. Behind a proxy the client address
is the proxy's unless the deployment passes the real one on (README, Deploying).

An admin session is a random id kept in Redis as well as in the signed cookie: logging
out deletes it, so a copied cookie stops working at once.
"""

from __future__ import annotations

import secrets

import redis
from flask import current_app, request

from workers import policy
from workers.errors import ReceiverError
from workers.queues import redis_key

from . import prometheus


class Throttled(ReceiverError):
    status = 429
    reason = "too_many_attempts"
    outcome = "throttled"


def _connection() -> redis.Redis:
    return current_app.extensions["leadrelay"]["redis"]


def _attempts_key(surface: str) -> str:
    return redis_key("auth-failures", surface, request.remote_addr or "unknown")


def refuse_if_throttled(surface: str) -> None:
    """Raises Throttled while this address has used up its wrong tries on `surface`."""
    failures = _connection().get(_attempts_key(surface))
    if failures and int(failures) >= policy.AUTH_FAILURES_ALLOWED:
        prometheus.AUTH_REFUSED.labels(surface, "throttled").inc()
        wait = max(_connection().ttl(_attempts_key(surface)), 1)
        raise Throttled(f"too many wrong tokens from this address; try again in {wait} s")


def failed(surface: str) -> None:
    """Count one wrong token from this address; the window starts at the first."""
    with _connection().pipeline() as pipe:  # one transaction: the count never outlives its window
        pipe.set(_attempts_key(surface), 0, ex=policy.AUTH_FAILURE_WINDOW, nx=True)
        pipe.incr(_attempts_key(surface))
        pipe.execute()
    prometheus.AUTH_REFUSED.labels(surface, "wrong_token").inc()


def start_session() -> str:
    session_id = secrets.token_urlsafe(32)
    _connection().set(redis_key("admin-session", session_id), 1, ex=policy.ADMIN_SESSION_TTL)
    return session_id


def session_alive(session_id: str | None) -> bool:
    return bool(session_id) and bool(_connection().exists(redis_key("admin-session", session_id)))


def end_session(session_id: str | None) -> None:
    if session_id:
        _connection().delete(redis_key("admin-session", session_id))
