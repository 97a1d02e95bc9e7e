"""Acknowledged means replicated: what is answered 200 is on a replica too.

Notes: docs/internals/common.md
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import redis
from redis.sentinel import SentinelConnectionPool

from workers.common import logs
from workers.common.queues import redis_key
from workers.common.refusals import QueueUnavailable

AUTO = -1
MARK = redis_key("replicated")  # the one-key write WAIT is measured from
log = logs.get(__name__)


@dataclass(frozen=True)
class Policy:
    acks: int = AUTO
    timeout_ms: int = 1000


_policy = Policy()
_resolved: "weakref.WeakKeyDictionary[object, int]" = weakref.WeakKeyDictionary()


def configure(acks: int, timeout_ms: int) -> None:
    """The process's policy, from its settings (web, worker and CLI call it at start)."""
    global _policy
    _policy = Policy(acks, timeout_ms)
    _resolved.clear()


def needed(connection: redis.Redis) -> int:
    """How many replicas a write must reach before it is acknowledged.

    Raises:
        redis.RedisError: `auto` had to ask Redis and it did not answer.
    """
    if _policy.acks != AUTO:
        return _policy.acks
    pool = connection.connection_pool
    if pool not in _resolved:
        replicas = isinstance(pool, SentinelConnectionPool) or int(
            connection.info("replication").get("connected_slaves", 0)
        )
        _resolved[pool] = 1 if replicas and _waits(connection) else 0
        log.info("replica_acks", acks=_resolved[pool], how="auto")
    return _resolved[pool]


def _waits(connection: redis.Redis) -> bool:
    """Whether this Redis takes WAIT: some managed services refuse it and replicate on
    their own terms; `auto` then does not wait (and says so) rather than refuse every lead."""
    try:
        connection.execute_command("WAIT", 0, 0)
    except redis.ResponseError as err:
        log.warning("replica_wait_unsupported", error=str(err)[:120], acks=0)
        return False
    return True


def confirm(connection: redis.Redis) -> int:
    """Wait until the required replicas have every write made so far; how many did.

    Raises:
        QueueUnavailable: `not_replicated`, fewer did within the timeout (a 503: the
            sender retries, and its retry finds what was stored as known).
        redis.RedisError: Redis did not answer.
    """
    count = needed(connection)
    if count == 0:
        return 0
    with connection.pipeline(transaction=False) as pipe:
        pipe.incr(MARK)
        pipe.execute_command("WAIT", count, _policy.timeout_ms)
        _, acked = pipe.execute()
    if acked < count:
        raise QueueUnavailable(
            f"{acked} of {count} replicas acknowledged within {_policy.timeout_ms} ms; retry later",
            reason="not_replicated",
        )
    return acked
