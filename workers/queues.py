"""Redis connections, queue names and Redis key names: one place for both processes."""

from __future__ import annotations

import redis
from rq import Queue
from rq.serializers import JSONSerializer

# Jobs take plain JSON dicts, never pickles: a job must survive a deploy that changes
# our classes, and an engineer must be able to read it in the dead-letter list.
SERIALIZER = JSONSerializer

PREFIX = "leadrelay:"


def key(*parts: str) -> str:
    return PREFIX + ":".join(parts)


def connect(url: str) -> redis.Redis:
    # Short timeouts so a lost Redis turns into a 503 (Meta retries) instead of a hung request.
    return redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=5, health_check_interval=30)


def queue(connection: redis.Redis, name: str) -> Queue:
    return Queue(name, connection=connection, serializer=SERIALIZER)
