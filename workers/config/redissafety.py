"""Whether a Redis keeps what leadrelay acknowledged: the one rule, for every process.

Notes: docs/internals/config.md
"""

from __future__ import annotations

import redis

from workers.common import logs
from workers.config.needed import ConfigError

log = logs.get(__name__)
ALLOW = "LEADRELAY_ALLOW_UNSAFE_REDIS"


def state(connection: redis.Redis) -> tuple[bool, str]:
    """(appendonly on, maxmemory-policy), as INFO says.

    Raises:
        redis.RedisError: Redis did not answer.
    """
    appendonly = str(connection.info("persistence").get("aof_enabled", "0")) == "1"
    return appendonly, str(connection.info("memory").get("maxmemory_policy", "noeviction"))


def problems(connection: redis.Redis) -> list[str]:
    """What makes this Redis lose acknowledged writes; empty when it keeps them.

    Raises:
        redis.RedisError: Redis did not answer.
    """
    appendonly, policy = state(connection)
    found = [] if appendonly else ["appendonly is off: a restart loses the queue (set `appendonly yes`)"]
    if policy != "noeviction":
        found.append(f"maxmemory-policy is {policy}: a full Redis evicts jobs (set `maxmemory-policy noeviction`)")
    return found


def check(connection: redis.Redis, allowed: bool, role: str) -> list[str]:
    """At a process's start: the problems, logged loudly when allowed.

    Raises:
        ConfigError: naming REDIS_URL, when the Redis can lose what it acknowledged and
            LEADRELAY_ALLOW_UNSAFE_REDIS is not set. An unreachable Redis is not judged
            here (the web answers 503 and the worker waits, as for any outage).
    """
    try:
        found = problems(connection)
    except redis.RedisError:
        return []
    if found and not allowed:
        raise ConfigError(
            "REDIS_URL",
            "this Redis can lose leads leadrelay acknowledged: "
            + "; ".join(found)
            + f". Fix it, or set {ALLOW}=1 to run anyway",
        )
    if found:
        log.warning("redis_unsafe", process=role, problems=found, allowed_by=ALLOW)
    return found
