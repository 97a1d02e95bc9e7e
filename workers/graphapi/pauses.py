"""Tokens paused after an auth failure: jobs that need them wait instead of failing.

Notes: docs/internals/graphapi.md
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import Callable

import redis
from rq import Queue
from rq.registry import ScheduledJobRegistry

from workers.common import logs
from workers.common.policy import PROBE_EVERY_SECONDS
from workers.common.queues import redis_key

log = logs.get(__name__)


def fingerprint(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()[:12]


class Pauses:
    def __init__(self, connection: redis.Redis):
        self.connection = connection

    def get(self, token: str) -> dict | None:
        raw = self.connection.get(redis_key("pause", fingerprint(token)))
        return json.loads(raw) if raw else None

    def pause(self, token: str, error: dict, label: str, service: str = "Meta") -> bool:
        """Pause the token (`label`: the setting that holds it; `service`: who refused it);
        True when this call paused it (so it is logged once, loudly)."""
        fp = fingerprint(token)
        record = {"fingerprint": fp, "token": label, "service": service, "since": int(time.time()), **error}
        paused = bool(self.connection.set(redis_key("pause", fp), json.dumps(record), nx=True))
        if paused:
            self.connection.sadd(redis_key("pauses"), fp)
            log.error(
                "token_paused",
                token=label,
                fingerprint=fp,
                code=error.get("code"),
                subcode=error.get("subcode"),
                fbtrace_id=error.get("fbtrace_id"),
                detail=f"{service} refused this token; jobs that need it wait. Fix the token, then "
                "`leadrelay replay --reason auth` (and `leadrelay resume` if it is the same token).",
            )
        return paused

    def wait(self, fp: str, job_id: str) -> None:
        self.connection.sadd(redis_key("pause", fp, "waiting"), job_id)

    def probe_due(self, fp: str) -> bool:
        """One waking job per PROBE_EVERY_SECONDS gets to test the token."""
        return bool(self.connection.set(redis_key("pause", fp, "probe"), 1, nx=True, ex=PROBE_EVERY_SECONDS))

    def retest(self, fp: str, probe: Callable[[str], bool], queue: Queue | None) -> bool:
        """Test the paused token when its retest is due, and resume its waiting jobs
        (onto `queue`) if Meta takes it again; True when the pause was lifted. `probe`:
        the client's own cheap call with the token behind `fp`."""
        if queue is not None and self.probe_due(fp) and probe(fp):
            self.resume(fp, queue)
            return True
        return False

    def retest_all(self, probe: Callable[[str], bool], queue: Queue) -> int:
        """`retest` every pause whose retest is due (a worker's maintenance pass); how
        many were lifted."""
        return sum(self.retest(p["fingerprint"], probe, queue) for p in self.all())

    def all(self) -> list[dict]:
        """Each pause, with how many jobs wait on it and `next_retest_at` (unix seconds:
        when its token is tested again; now, if it is due)."""
        out = []
        now = int(time.time())
        for fp in sorted(self.connection.smembers(redis_key("pauses"))):
            fp = fp.decode()
            with self.connection.pipeline(transaction=False) as pipe:
                pipe.get(redis_key("pause", fp))
                pipe.scard(redis_key("pause", fp, "waiting"))
                pipe.ttl(redis_key("pause", fp, "probe"))
                raw, waiting, ttl = pipe.execute()
            if raw:
                out.append({**json.loads(raw), "waiting": waiting, "next_retest_at": now + max(ttl, 0)})
        return out

    def resume(self, fp: str, queue: Queue) -> int:
        """Lift the pause and run its waiting jobs now; how many were woken.

        The pause goes first, in one transaction with reading who waits: a job woken while
        the pause still stood would find it, wait again for a minute, and the
        deletion would then forget it was waiting.
        """
        waiting_key = redis_key("pause", fp, "waiting")
        with self.connection.pipeline() as pipe:
            pipe.smembers(waiting_key)
            pipe.delete(redis_key("pause", fp), waiting_key, redis_key("pause", fp, "probe"))
            pipe.srem(redis_key("pauses"), fp)
            job_ids = [j.decode() for j in pipe.execute()[0]]
        scheduled = ScheduledJobRegistry(queue=queue)
        woken = 0
        for job_id in job_ids:
            job = queue.fetch_job(job_id)
            # Only the caller that took it off the schedule enqueues it: two resumes at once
            # must not run a job twice.
            if job is not None and scheduled.remove(job):
                queue.enqueue_job(job)
                woken += 1
        log.warning("token_resumed", fingerprint=fp, woken=woken)
        return woken
