"""Forget and export as jobs: a request accepted in the web process (the person suppressed at
once), the walk done by a worker, its state read back by reference.

Notes: docs/internals/privacy.md
"""

from __future__ import annotations

import json
import secrets
import time

import redis
from rq import Queue

from workers import jobnames
from workers.common.queues import redis_key
from workers.config.routing import Routes
from workers.privacy import forget as privacy
from workers.privacy.person import NoIdentifier, resolve

KEY = redis_key("privacy-request")  # :<ref> -> the request, its state and result (a hash)
RECENT = redis_key("privacy-requests")  # ref -> accepted at: the newest, for the admin page
KEEP_SECONDS = 7 * 86400  # a request's state; an export's result, an hour
EXPORT_SECONDS = 3600
RECENT_KEEP = 100
QUEUED, RUNNING, DONE, REFUSED, FAILED = "queued", "running", "done", "refused", "failed"


def accept(
    connection: redis.Redis,
    queue: Queue,
    routes: Routes,
    given: dict,
    region: str,
    datasets: list[str],
    action: str,
    who: str,
    where: str,
    audit_days: int = 365,
    all_matching: bool = False,
) -> dict:
    """Take a forget or an export: the identifiers checked and hashed here (nothing raw is
    kept), a forget's person suppressed from this moment, the walk queued. The state.

    Raises:
        NoIdentifier: see person.resolve.
    """
    person = resolve(connection, given, region, datasets, routes)
    ref = f"{action}-{secrets.token_hex(8)}"
    suppressed = privacy.suppress_new(connection, person, ref) if action == "forget" else 0
    request = {  # hashed: the person as `resolve` reads them again, never as given
        "email": person.hashed.get("em", []),
        "phone": person.hashed.get("ph", []),
        "external_id": person.hashed.get("external_id", []),
        "lead_id": person.lead_ids,
        "person_id": person.person_ids,
    }
    now = int(time.time())
    state = {"ref": ref, "action": action, "state": QUEUED, "accepted_at": now, "datasets": datasets}
    job = {"region": region, "datasets": datasets, "who": who, "where": where, "audit_days": audit_days}
    job["all_matching"] = all_matching
    stored = {"state": json.dumps(state), "request": json.dumps(request), "job": json.dumps(job)}
    with connection.pipeline() as pipe:
        pipe.hset(f"{KEY}:{ref}", mapping=stored)
        pipe.expire(f"{KEY}:{ref}", KEEP_SECONDS)
        pipe.zadd(RECENT, {ref: now})
        pipe.zremrangebyrank(RECENT, 0, -RECENT_KEEP - 1)
        pipe.execute()
    queue.enqueue(jobnames.PRIVACY_REQUEST, {"ref": ref}, job_id=ref, result_ttl=KEEP_SECONDS, failure_ttl=KEEP_SECONDS)
    return {**state, "suppressed": suppressed}


def run(connection: redis.Redis, routes: Routes, ref: str) -> dict:
    """The walk a request asked for; its state kept under its reference, the person's
    hashes and ids dropped from it once done."""
    key = f"{KEY}:{ref}"
    stored = connection.hgetall(key)
    if not stored:
        return {"ref": ref, "state": "expired"}
    state = json.loads(stored[b"state"])
    if b"request" not in stored:  # walked already (a job run twice): its state stands
        return {k: v for k, v in state.items() if k != "result"}
    request, job = json.loads(stored[b"request"]), json.loads(stored[b"job"])
    _save(connection, key, {**state, "state": RUNNING, "started_at": int(time.time())})
    args = (connection, routes, request, job["region"], job["datasets"])
    try:
        if state["action"] == "forget":
            done = privacy.forget(*args, job["who"], job["where"], job["audit_days"], job["all_matching"], ref=ref)
            result = {key: done[key] for key in ("removed", "others", "read", "sent_already")}
        else:
            result = privacy.export(*args, all_matching=job["all_matching"])
    except privacy.SharedIdentifiers as err:
        final = {**state, "state": REFUSED, "error": "shared_identifiers", "detail": str(err), "others": err.others}
    except NoIdentifier:  # what was given reaches nothing of the caller's (another client's lead id)
        final = {**state, "state": DONE, **({"result": {}} if state["action"] == "export" else {"removed": {}})}
    except Exception as err:
        _save(connection, key, {**state, "state": FAILED, "error": type(err).__name__})
        raise  # RQ keeps the failed job; the request's state says so
    else:
        final = {**state, "state": DONE, **({"result": result} if state["action"] == "export" else result)}
    final["finished_at"] = int(time.time())
    with connection.pipeline() as pipe:
        pipe.hdel(key, "request", "job")
        pipe.hset(key, "state", json.dumps(final))
        pipe.expire(key, EXPORT_SECONDS if state["action"] == "export" else KEEP_SECONDS)
        pipe.execute()
    return {k: v for k, v in final.items() if k != "result"}


def status(connection: redis.Redis, ref: str, datasets: list[str]) -> dict | None:
    """A request's state, for a caller who reaches every dataset it was about; None otherwise
    (or when it is not kept any more)."""
    raw = connection.hget(f"{KEY}:{ref}", "state") if _ref(ref) else None
    if raw is None:
        return None
    state = json.loads(raw)
    return state if set(state["datasets"]) <= set(datasets) else None


def recent(connection: redis.Redis, count: int = 20) -> list[dict]:
    """The newest requests' states, newest first (the admin page)."""
    refs = [r.decode() for r in connection.zrevrange(RECENT, 0, count - 1)]
    with connection.pipeline(transaction=False) as pipe:
        for ref in refs:
            pipe.hget(f"{KEY}:{ref}", "state")
        states = pipe.execute()
    return [{k: v for k, v in json.loads(s).items() if k != "result"} for s in states if s]


def _save(connection: redis.Redis, key: str, state: dict) -> None:
    connection.hset(key, "state", json.dumps(state))


def _ref(ref: str) -> bool:
    action, _, token = ref.partition("-")
    return action in ("forget", "export") and len(token) == 16 and all(c in "0123456789abcdef" for c in token)
