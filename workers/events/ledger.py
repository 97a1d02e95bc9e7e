"""The confirmed-events ledger: each `event_id` Meta accepted, with the `fbtrace_id` of its
answer, kept CONFIRMED_TTL (8 days: past Meta's 7-day window, after which Meta refuses the
event anyway).

Notes: docs/internals/events.md
"""

from __future__ import annotations

import redis

from workers.common import policy
from workers.common.queues import redis_key


def key(event_id: str) -> str:
    return redis_key("confirmed", event_id)


def confirmed(connection: redis.Redis, event_id: str) -> bool:
    """Meta already counted this event: never send it again."""
    return bool(connection.exists(key(event_id)))


def confirmed_many(connection: redis.Redis, event_ids: list[str | None]) -> list[bool]:
    """`confirmed` for many events in one round trip (None: no event, not confirmed)."""
    with connection.pipeline(transaction=False) as pipe:
        for event_id in event_ids:
            pipe.exists(key(event_id or ""))
        return [bool(found) and bool(event_id) for found, event_id in zip(pipe.execute(), event_ids)]


def confirm(pipe, event_id: str, fbtrace_id: str | None) -> None:
    """Record, in the caller's pipeline, that Meta accepted the event."""
    pipe.set(key(event_id), fbtrace_id or "1", ex=policy.CONFIRMED_TTL)


def kept_key(event_id: str) -> str:
    return redis_key("kept", event_id)


def kept_before(connection: redis.Redis, event_ids: list[str]) -> list[bool]:
    """Which of these events a dry run already kept (its funnel counted them then)."""
    with connection.pipeline(transaction=False) as pipe:
        for event_id in event_ids:
            pipe.exists(kept_key(event_id))
        return [bool(found) for found in pipe.execute()]


def keep(pipe, event_id: str) -> None:
    """Record, in the caller's pipeline, that a dry run kept the event (not that Meta took it)."""
    pipe.set(kept_key(event_id), 1, ex=policy.CONFIRMED_TTL)
