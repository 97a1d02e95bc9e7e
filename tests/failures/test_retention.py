"""Dead-letter housekeeping in bounded passes: each maintenance pass reads at most PER_PASS
dead letters from where the last one stopped, and over passes reaches every one."""

from __future__ import annotations

import time

import pytest
from rq import Queue
from rq.registry import FailedJobRegistry

from workers.common.queues import SERIALIZER
from workers.failures import deadletters, retention

SENDING = {"em": ["ab" * 32], "client_ip_address": "203.0.113.9", "client_user_agent": "Mozilla/5.0"}


@pytest.fixture
def queue(redis_conn) -> Queue:
    return Queue("leadrelay", connection=redis_conn, serializer=SERIALIZER)


def _dead(redis_conn, queue: Queue, count: int, at: float, same_time: bool = False) -> list[str]:
    ids = []
    for n in range(count):
        args = {"source": "typeform", "key": f"F:T{n}", "user_data": dict(SENDING)}
        job = queue.enqueue("workers.jobs.send_form_lead", args, job_id=f"lead-typeform-F-T{n}")
        FailedJobRegistry(queue=queue).add(job, exc_string="invalid")
        when = at if same_time else at + n
        deadletters.record(redis_conn, {"job_id": job.id, "args": args, "reason": "invalid", "last_attempt_at": when})
        ids.append(job.id)
    return ids


@pytest.mark.parametrize("same_time", [False, True], ids=["apart", "all-at-one-time"])
def test_a_scrub_pass_reads_a_bounded_share_and_the_passes_reach_every_one(redis_conn, queue, monkeypatch, same_time):
    monkeypatch.setattr(retention, "PER_PASS", 4)
    monkeypatch.setattr(retention, "_PAGE", 3)
    ids = _dead(redis_conn, queue, 10, time.time() - 9 * 86400, same_time)
    passes = []
    while (scrubbed := retention.scrub(redis_conn, queue, retention_days=7)) or not passes or passes[-1]:
        passes.append(scrubbed)
    assert sum(passes) == 10
    assert max(passes) <= (10 if same_time else 6)  # two pages a pass; dead letters at one time are read together
    assert all(deadletters.get(redis_conn, job_id)["scrubbed"] for job_id in ids)
    newer = _dead(redis_conn, queue, 1, time.time())[0]  # recorded now: its turn comes after the retention
    assert retention.scrub(redis_conn, queue, retention_days=7) == 0
    assert retention.scrub(redis_conn, queue, retention_days=7, now=time.time() + 8 * 86400) == 1
    assert deadletters.get(redis_conn, newer)["scrubbed"]


def test_a_prune_pass_reads_a_bounded_share_and_resumes_where_it_stopped(redis_conn, queue, monkeypatch):
    monkeypatch.setattr(retention, "PER_PASS", 100)
    monkeypatch.setattr(retention, "_PAGE", 50)
    redis_conn.config_set("zset-max-ziplist-entries", 0)  # scanned in steps, as a large index is
    try:
        ids = _dead(redis_conn, queue, 400, time.time() - 86400)
        for job_id in ids[::3]:
            FailedJobRegistry(queue=queue).remove(job_id)  # as rq's tools or its 30 days would
        forgotten = [retention.prune(redis_conn, queue) for _ in range(8)]
    finally:
        redis_conn.config_set("zset-max-ziplist-entries", 128)
    assert sum(forgotten) == len(ids[::3]) and max(forgotten) < len(ids[::3])
    assert sorted(j.decode() for j in redis_conn.zrange(deadletters.INDEX, 0, -1)) == sorted(set(ids) - set(ids[::3]))
