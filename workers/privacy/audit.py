"""The audit trail: every action that changes state from the admin page, the admin or
stage API, or the CLI (replay, purge, forget, unsuppress, stage changes posted), with who,
from where, what and when.

A Redis stream, `leadrelay:audit`, trimmed on each append to LEADRELAY_AUDIT_RETENTION_DAYS
(365 by default). Who is a fingerprint (the first 12 hex of a token's SHA-256, as paused
tokens are shown) or the CLI's user, never a token; what names the ids the action named
and counts, never a person (a forget names its reference, not the email it was given).
"""

from __future__ import annotations

import getpass
import json
import time

import redis

from workers.common.queues import redis_key
from workers.graphapi.pauses import fingerprint  # a token's name in logs, pauses and the trail alike

KEY = redis_key("audit")
DAY_MS = 86_400_000


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
        pipe.xadd(KEY, {"who": who, "where": where, "action": action, "detail": json.dumps(detail, sort_keys=True)})
        pipe.xtrim(KEY, minid=now_ms - retention_days * DAY_MS, approximate=False)
        pipe.execute()


def entries(connection: redis.Redis, count: int = 50) -> list[dict]:
    """The newest entries first."""
    out = []
    for entry_id, fields in connection.xrevrange(KEY, count=count):
        fields = {k.decode(): v.decode() for k, v in fields.items()}
        at = int(entry_id.decode().partition("-")[0]) / 1000
        out.append({"at": at, **fields, "detail": json.loads(fields.get("detail") or "{}")})
    return out


def line(entry: dict) -> str:
    """One entry as a person reads it."""
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(entry["at"]))
    detail = ", ".join(f"{k} {v}" for k, v in sorted(entry["detail"].items()))
    return f"{stamp} UTC  {entry['action']:<12} by {entry['who']} from {entry['where']}" + (
        f": {detail}" if detail else ""
    )
