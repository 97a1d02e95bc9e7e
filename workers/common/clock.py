"""The time a worker decides by: its own clock, or Redis's when the two disagree.

Notes: docs/internals/common.md
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import redis

from workers.common import logs

log = logs.get(__name__)
TOLERANCE_SECONDS = 30.0  # NTP keeps hosts far closer; beyond this a decision can go wrong
_offset = 0.0  # Redis's time minus ours, while beyond the tolerance; else 0


def now() -> float:
    """Unix seconds, as the installation agrees on them."""
    return time.time() + _offset


def utcnow() -> datetime:
    return datetime.now(timezone.utc) + timedelta(seconds=_offset)


def check(connection: redis.Redis) -> float:
    """Compare with Redis's clock; the skew in seconds (ours minus Redis's). Beyond the
    tolerance, decide by Redis's time from now on, and say so when that starts or stops."""
    global _offset
    before = time.time()
    seconds, micros = connection.time()
    ours = (before + time.time()) / 2  # the middle of the round trip
    skew = ours - (seconds + micros / 1e6)
    if abs(skew) > TOLERANCE_SECONDS:
        if not _offset:
            log.warning(
                "clock_skew",
                skew_seconds=round(skew, 1),
                tolerance_seconds=TOLERANCE_SECONDS,
                detail="this host's clock differs from Redis's: deciding by Redis's time; fix NTP here",
            )
        _offset = -skew
    elif _offset:
        log.info("clock_skew_gone", skew_seconds=round(skew, 1))
        _offset = 0.0
    _follow_in_rq()
    return skew


_RQ_CLOCK: dict = {}  # (module, name) -> RQ's own function, while ours stands in


def _follow_in_rq() -> None:
    """RQ's modules read `now` and `current_timestamp` from rq.utils, each under its own
    name: while the clocks disagree those names are ours, else RQ's own again."""
    import rq.job
    import rq.queue
    import rq.registry
    import rq.scheduler
    import rq.utils

    ours = {"now": utcnow, "current_timestamp": _timestamp}
    for module in (rq.utils, rq.job, rq.queue, rq.registry, rq.scheduler):
        for name, function in ours.items():
            if not hasattr(module, name):
                continue
            if _offset:
                _RQ_CLOCK.setdefault((module, name), getattr(module, name))
                setattr(module, name, function)
            elif (module, name) in _RQ_CLOCK:
                setattr(module, name, _RQ_CLOCK.pop((module, name)))


def _timestamp() -> int:
    return int(now())
