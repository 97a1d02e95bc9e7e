"""Liveness and readiness for load balancers and orchestrators."""

from __future__ import annotations

import time

import redis
from flask import Blueprint, current_app, jsonify

from workers.config import redissafety

bp = Blueprint("health", __name__)
SAFETY_EVERY = 5.0  # seconds between two looks at Redis's persistence settings, per process: one CONFIG GET


@bp.get("/healthz")
def healthz():
    """The process is up; says nothing about Redis."""
    return jsonify(status="ok")


@bp.get("/readyz")
def readyz():
    """Ready only while Redis answers (without it no lead can be stored) and keeps what it
    is given (workers/config/redissafety.py), unless LEADRELAY_ALLOW_UNSAFE_REDIS says otherwise."""
    state = current_app.extensions["leadrelay"]
    try:
        state["redis"].ping()
        unsafe = _unsafe(state)
    except redis.RedisError:
        return jsonify(status="unavailable", reason="redis_unreachable"), 503
    if unsafe and not state["settings"].allow_unsafe_redis:
        return jsonify(status="unavailable", reason="redis_unsafe", problems=unsafe), 503
    return jsonify(status="ok", **({"warnings": unsafe} if unsafe else {}))


def _unsafe(state: dict) -> list[str]:
    """The problems, read again at most every SAFETY_EVERY seconds (health checks come
    every few seconds from every balancer)."""
    looked, found = state.get("redis_safety", (float("-inf"), []))
    if time.monotonic() - looked >= SAFETY_EVERY:
        found = redissafety.problems(state["redis"])
        state["redis_safety"] = (time.monotonic(), found)
    return found
