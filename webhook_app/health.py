"""Liveness and readiness for load balancers and orchestrators."""

from __future__ import annotations

import redis
from flask import Blueprint, current_app, jsonify

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz():
    """The process is up; says nothing about Redis."""
    return jsonify(status="ok")


@bp.get("/readyz")
def readyz():
    """Ready only while Redis answers: without it no lead can be stored."""
    try:
        current_app.extensions["leadrelay"]["redis"].ping()
    except redis.RedisError:
        return jsonify(status="unavailable", reason="redis_unreachable"), 503
    return jsonify(status="ok")
