"""The inbox's drain slots follow the workers: more worker hosts, more drain jobs at once."""

import redis
from rq import Worker

from workers.common.queues import queue
from workers.intake import admission, inbox


def _entries(start: int, count: int) -> list[tuple[str, str]]:
    return [(f"lead-meta-{n}", inbox.entry(f"lead-meta-{n}", "f", {"n": n})) for n in range(start, start + count)]


def test_without_a_kept_count_four_drain_jobs_run_at_once(redis_conn):
    assert inbox.admit(redis_conn, _entries(0, 500), inbox.SLOTS)[1] == [0, 1, 2, 3]


def test_one_drain_slot_per_live_worker_at_least_four(redis_conn):
    q = queue(redis_conn, "leadrelay")
    workers = [Worker([q], connection=redis_conn, name=f"w{n}") for n in range(6)]
    assert inbox.follow_workers(redis_conn) == inbox.SLOTS  # none registered yet: the floor
    for worker in workers:
        worker.register_birth()
    assert inbox.follow_workers(redis_conn) == 6
    assert inbox.admit(redis_conn, _entries(0, 500), inbox.SLOTS)[1] == [0, 1, 2, 3, 4, 5]
    assert 0 < redis_conn.ttl(inbox.SLOT_COUNT) <= inbox.SLOT_COUNT_TTL  # lapses with the workers


def test_the_setting_wins_and_maintenance_wakes_as_many(redis_conn):
    q = queue(redis_conn, "leadrelay")
    assert inbox.follow_workers(redis_conn, setting=8) == 8
    for _ in range(400):
        redis_conn.xadd(inbox.STREAM, {"e": "{}"})
    assert inbox.revive(q) and sorted(inbox.wake_for(q, 400)) == []  # all 8 awake already
    assert len(q) == 8


def test_a_drain_job_that_could_not_be_queued_leaves_its_slot_free_for_the_next_wake(env, redis_conn):
    """After a Redis restart the receiver's admit can succeed and its wake fail (the
    client's connection did): the lead is stored and its slot is free, so the worker's
    next wake (its reconnect, its maintenance pass) queues a drain job at once instead of
    a minute later."""
    from workers.intake.requestredis import RequestRedis
    from workers.run.embedded_redis import free_port
    from workers.sources.registry import SOURCES

    gone = queue(redis.Redis(port=free_port(), socket_connect_timeout=1), "leadrelay")  # nothing listens there
    argument = {"source": "meta", "leadgen_id": "9", "page_id": "1", "form_id": "2", "created_time": 1}
    counts = admission.enqueue_new(gone, SOURCES["meta"], [("9", argument)], request_redis=RequestRedis(redis_conn))
    assert counts["accepted"] == 1 and inbox.waiting(redis_conn)["inbox"] == 1
    assert not redis_conn.keys(inbox.SLOT + "*")
    assert inbox.revive(queue(redis_conn, "leadrelay"))
