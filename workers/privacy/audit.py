"""The audit trail: every action that changes state from the admin page, the admin or stage
API, or the CLI (replay, purge, forget, unsuppress, stage changes posted), with who, from
where, what and when.

Notes: docs/internals/privacy.md
"""

from __future__ import annotations

import getpass
import json
import time

import redis

from workers.common.queues import redis_key
from workers.graphapi.pauses import fingerprint  # a token's name in logs, pauses and the trail alike

KEY = redis_key("audit")
# Requests that changed nothing (a stage post whose every item was a duplicate or refused):
# counted per day, action and caller, never appended, so they cannot push real entries out.
UNCHANGED = redis_key("audit", "unchanged")
DAY_MS = 86_400_000
MAX_ENTRIES = 200_000  # besides the days: a busy client's stage posts cannot grow it without bound


def cli_actor() -> tuple[str, str]:
    """(who, from where) for a command run here."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return f"cli:{user}", "local"


def selection(where) -> dict:
    """A dead-letter selection (deadletters.Filter) as the audit names it: the filter, and
    each job id by its fingerprint (a job id names its lead, which a forget must not leave
    behind here; whoever holds the id can still match it)."""
    named = {k: v for k, v in vars(where).items() if v and k != "job_ids"}
    if where.job_ids:
        named["jobs"] = [fingerprint(job_id) for job_id in where.job_ids[:50]]
    return named


def record(connection: redis.Redis, who: str, where: str, action: str, retention_days: int = 365, **detail) -> None:
    now_ms = int(time.time() * 1000)
    with connection.pipeline(transaction=False) as pipe:
        pipe.xadd(
            KEY,
            {"who": who, "where": where, "action": action, "detail": json.dumps(detail, sort_keys=True)},
            maxlen=MAX_ENTRIES,
            approximate=True,
        )
        pipe.xtrim(KEY, minid=now_ms - retention_days * DAY_MS, approximate=False)
        pipe.execute()


def count_unchanged(connection: redis.Redis, who: str, action: str, retention_days: int = 365) -> None:
    """A request that changed nothing: one more in the day's count for this caller and action."""
    day = time.strftime("%Y-%m-%d", time.gmtime())
    with connection.pipeline(transaction=False) as pipe:
        pipe.hincrby(UNCHANGED, f"{day} {action} {who}", 1)
        pipe.expire(UNCHANGED, retention_days * 86400)
        pipe.execute()


def unchanged(connection: redis.Redis) -> dict[str, int]:
    """`day action who` -> how many requests changed nothing."""
    return {k.decode(): int(v) for k, v in sorted(connection.hgetall(UNCHANGED).items())}


def entries(connection: redis.Redis, count: int = 50, action: str | None = None, ref: str | None = None) -> list[dict]:
    """The newest entries first; with `action` or `ref` (a forget's reference), only those,
    read back through the whole trail if need be (it holds at most MAX_ENTRIES)."""
    out, last = [], "+"
    while len(out) < count:
        page = connection.xrevrange(KEY, max=last, count=1000)
        for entry_id, fields in page:
            entry = _entry(entry_id, fields)
            if (action is None or entry["action"] == action) and (ref is None or entry["detail"].get("ref") == ref):
                out.append(entry)
        if len(page) < 1000 or (action is None and ref is None):
            break
        last = "(" + page[-1][0].decode()
    return out[:count]


def _entry(entry_id: bytes, fields: dict) -> dict:
    fields = {k.decode(): v.decode() for k, v in fields.items()}
    at = int(entry_id.decode().partition("-")[0]) / 1000
    return {"at": at, **fields, "detail": json.loads(fields.get("detail") or "{}")}


def line(entry: dict) -> str:
    """One entry as a person reads it, every field escaped: a value a caller wrote (a replay
    filter's reason) cannot print a newline or a control character, so no line can be forged."""
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(entry["at"]))
    detail = ", ".join(f"{escaped(k)} {escaped(v)}" for k, v in sorted(entry["detail"].items()))
    action, who, where = (escaped(entry[name]) for name in ("action", "who", "where"))
    return f"{stamp} UTC  {action:<12} by {who} from {where}" + (f": {detail}" if detail else "")


def escaped(value) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
    return "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in text)
