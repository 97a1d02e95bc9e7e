"""Whose Redis this is: the sandbox's or a live service's, never both.

Notes: docs/internals/run.md
"""

from __future__ import annotations

import redis

from workers.common import logs
from workers.common.queues import redis_key
from workers.config import redissafety
from workers.config.needed import ConfigError
from workers.config.settings import Settings

MARK = redis_key("sandbox")
log = logs.get(__name__)


def check(connection: redis.Redis, settings: Settings, data_dir: str = "data") -> None:
    """Raises ConfigError naming REDIS_URL when this process may not use this Redis; the
    sandbox marks a Redis it may use. An unreachable Redis is not judged here: the web
    answers 503 and the worker waits, as for any outage.

    Raises:
        ConfigError: REDIS_URL is the sandbox's Redis and this process is live, or this
            is the sandbox and the Redis holds someone else's data.
    """
    where = settings.masked()["redis_url"]
    try:
        marked = connection.exists(MARK)
        if settings.sandbox:
            if not marked and connection.dbsize():
                raise ConfigError(
                    "REDIS_URL",
                    f"{where} holds data the sandbox did not put there; the sandbox "
                    "writes only to its own Redis: unset REDIS_URL, or give it an empty database",
                )
            connection.set(MARK, "1")
        elif marked:
            raise ConfigError(
                "REDIS_URL",
                f"{where} is the sandbox's Redis (it holds {MARK}); a live leadrelay "
                "never shares the sandbox's queue, events or dead letters: point REDIS_URL at your "
                f"own Redis, or unset it to run the embedded one, which keeps live state in {data_dir}",
            )
    except (redis.ConnectionError, redis.TimeoutError) as err:
        unreachable(where, err)


def unreachable(where: str, err: Exception) -> None:
    """One line that says which Redis did not answer and what to check: a wrong REDIS_URL
    must not look like a running service (the web answers 503, the worker waits)."""
    log.error(
        "redis_unreachable",
        redis_url=where,
        error=type(err).__name__,
        fix="check REDIS_URL (host, port, password; rediss:// for TLS) and that Redis runs; "
        "until it answers, webhooks get 503 (senders retry) and workers wait",
    )


def usable(connection: redis.Redis, settings: Settings, data_dir: str, role: str | None) -> None:
    """What a process checks of its Redis at start: whose it is, and (for a process that
    acknowledges or works leads, `role`) that it keeps what it is given.

    Raises:
        ConfigError: naming REDIS_URL (see `check` and redissafety.check).
    """
    check(connection, settings, data_dir)
    if role:
        redissafety.check(connection, settings.allow_unsafe_redis, role)
