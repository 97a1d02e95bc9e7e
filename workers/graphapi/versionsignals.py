"""What Meta itself says about the API version a call ran on, kept where every process reads
it.

Notes: docs/internals/graphapi.md
"""

from __future__ import annotations

import json
import re
import time

import redis

from workers.common import counters, logs
from workers.common.queues import redis_key

KEY = redis_key("api-version-warning")
KEEP_SECONDS = 7 * 86400  # Meta says it on every call while it lasts; a week after the last, it is gone
_VERSION = re.compile(r"v\d+\.\d+")
log = logs.get(__name__)
_said: set[str] = set()  # logged once per process and text: the header comes with every call


def record(connection: redis.Redis | None, configured: str, warning: str) -> None:
    """Keep the newest warning (with the version Meta says it served) and count it. A lost
    write never fails the call it came with."""
    found = _VERSION.findall(warning)
    served = found[0] if found else "unknown"
    if warning not in _said:
        _said.add(warning)
        log.warning(
            "api_version_warning",
            configured=configured,
            served=served,
            warning=warning[:300],
            fix="set META_API_VERSION to a current version (`leadrelay doctor`), then restart",
        )
    if connection is None:
        return
    entry = {"configured": configured, "served": served, "warning": warning[:300], "at": int(time.time())}
    try:
        with connection.pipeline(transaction=False) as pipe:
            pipe.set(KEY, json.dumps(entry), ex=KEEP_SECONDS)
            counters.count(pipe, counters.VERSION_WARNINGS, served)
            pipe.execute()
    except redis.RedisError:
        pass


def read(connection: redis.Redis) -> dict | None:
    """The newest warning Meta gave, within the last week: {configured, served, warning, at}."""
    raw = connection.get(KEY)
    return json.loads(raw) if raw else None
