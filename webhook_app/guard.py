"""Who may try how often, and admin sessions that end when they end.

Notes: docs/internals/webhook_app.md
"""

from __future__ import annotations

import secrets

import redis
from flask import current_app, request

from workers.common import logs, policy
from workers.common.queues import redis_key
from workers.common.refusals import ReceiverError

from .webmetrics import AUTH_REFUSED

log = logs.get(__name__)


class Throttled(ReceiverError):
    status = 429
    reason = "too_many_attempts"
    outcome = "throttled"


def _connection() -> redis.Redis:
    return current_app.extensions["leadrelay"]["redis"]


def _attempts_key(surface: str) -> str:
    return redis_key("auth-failures", surface, request.remote_addr or "unknown")


def wrong_token(surface: str) -> None:
    """A wrong token from this address: counted (the window starts at the first).

    Raises:
        Throttled: this address has used up its wrong tries on `surface`.
    """
    key = _attempts_key(surface)
    with _connection().pipeline() as pipe:  # one transaction: the count never outlives its window
        pipe.set(key, 0, ex=policy.AUTH_FAILURE_WINDOW, nx=True)
        pipe.incr(key)
        pipe.ttl(key)
        _, failures, wait = pipe.execute()
    _say_if_only_a_proxy_is_seen()
    if failures > policy.AUTH_FAILURES_ALLOWED:
        AUTH_REFUSED.labels(surface, "throttled").inc()
        raise Throttled(f"too many wrong tokens from this address; try again in {max(wait, 1)} s")
    AUTH_REFUSED.labels(surface, "wrong_token").inc()


_proxy_said = False


def _say_if_only_a_proxy_is_seen() -> None:
    """Once per process: requests carry X-Forwarded-For that nobody reads, so throttling
    counts the proxy's address for every client (set LEADRELAY_TRUSTED_PROXIES)."""
    global _proxy_said
    if _proxy_said or not request.headers.get("X-Forwarded-For"):
        return
    if not current_app.extensions["leadrelay"]["settings"].trusted_proxies:
        _proxy_said = True
        log.warning(
            "client_address_is_a_proxy",
            remote_addr=request.remote_addr,
            fix="set LEADRELAY_TRUSTED_PROXIES to the number of proxies in front (docs/deploying.md)",
        )


def start_session() -> str:
    session_id = secrets.token_urlsafe(32)
    _connection().set(redis_key("admin-session", session_id), 1, ex=policy.ADMIN_SESSION_TTL)
    return session_id


def session_alive(session_id: str | None) -> bool:
    return bool(session_id) and bool(_connection().exists(redis_key("admin-session", session_id)))


def end_session(session_id: str | None) -> None:
    if session_id:
        _connection().delete(redis_key("admin-session", session_id))
