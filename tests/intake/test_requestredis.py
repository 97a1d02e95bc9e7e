"""The receiver's write: inbox.admit through its held Redis connections (workers/intake/requestredis.py),
against the real server."""

from __future__ import annotations

import multiprocessing
import threading

import pytest
import redis

from helpers import wait_for
from workers.intake import inbox
from workers.intake.requestredis import RequestRedis


def _client_id(request_redis: RequestRedis) -> int:
    return request_redis.execute_command("CLIENT", "ID")


def test_a_lane_answers_as_the_client_does_and_keeps_its_connection(redis_conn):
    request_redis = RequestRedis(redis_conn)
    assert request_redis.execute_command("SET", "k", "v") == b"OK"
    assert request_redis.execute_command("GET", "k") == b"v"
    assert _client_id(request_redis) == _client_id(request_redis)  # one connection, held between commands


def test_admit_through_a_lane_stores_and_dedupes_as_through_the_client(redis_conn):
    request_redis = RequestRedis(redis_conn)
    entries = [
        ("lead-meta-1", inbox.entry("lead-meta-1", "f", {"leadgen_id": "1"})),
        ("lead-meta-2", inbox.entry("lead-meta-2", "f", {"leadgen_id": "2"})),
    ]
    assert inbox.admit(request_redis, entries, inbox.SLOTS) == ([0, 1], [0], [])
    assert inbox.admit(redis_conn, entries, inbox.SLOTS) == ([], [], [])
    assert redis_conn.xlen(inbox.STREAM) == 2


def test_admit_loads_its_script_again_after_redis_forgot_it(redis_conn):
    request_redis = RequestRedis(redis_conn)
    redis_conn.script_flush()  # as after a restart without persistence of scripts
    entry = ("lead-meta-7", inbox.entry("lead-meta-7", "f", {"leadgen_id": "7"}))
    assert inbox.admit(request_redis, [entry], inbox.SLOTS)[0] == [0]
    assert redis_conn.script_exists(inbox._ADMIT_SHA) == [True]
    assert _client_id(request_redis) == _client_id(request_redis)  # NOSCRIPT is an answer: the connection stays


def test_a_connection_redis_closed_while_idle_is_replaced_once(redis_conn):
    request_redis = RequestRedis(redis_conn)
    first = _client_id(request_redis)
    redis_conn.client_kill_filter(_id=first)
    assert request_redis.execute_command("PING") == b"PONG"
    assert _client_id(request_redis) != first


def test_a_connection_whose_answer_never_came_is_dropped_not_reused(redis_url, redis_conn):
    request_redis = RequestRedis(redis.Redis.from_url(redis_url, socket_timeout=0.2))
    with pytest.raises(redis.TimeoutError):
        request_redis.execute_command("BLPOP", "waiting", 5)
    # Redis sees the closed socket on its own time.
    wait_for(lambda: redis_conn.info("clients")["blocked_clients"] == 0, 10, every=0.01)
    redis_conn.rpush("waiting", "x")
    assert request_redis.execute_command("PING") == b"PONG"  # not the BLPOP's late answer
    assert redis_conn.lrange("waiting", 0, -1) == [b"x"]


def _child_id(request_redis: RequestRedis, answers) -> None:
    answers.put(_client_id(request_redis))


def test_a_forked_process_opens_its_own_connections(redis_conn):
    request_redis = RequestRedis(redis_conn)
    parent = _client_id(request_redis)
    context = multiprocessing.get_context("fork")
    answers = context.Queue()
    child = context.Process(target=_child_id, args=(request_redis, answers))
    child.start()
    child_id = answers.get(timeout=30)
    child.join(timeout=30)
    assert child_id != parent
    assert _client_id(request_redis) == parent


def test_after_redis_dropped_every_connection_one_call_finds_a_fresh_one(redis_conn):
    request_redis = RequestRedis(redis_conn)
    blocked = threading.Thread(target=request_redis.execute_command, args=("BLPOP", "waiting", 10))
    blocked.start()  # holds one connection while the main thread opens a second
    wait_for(lambda: redis_conn.info("clients")["blocked_clients"], 10, every=0.01)
    assert request_redis.execute_command("PING") == b"PONG"
    redis_conn.rpush("waiting", "x")
    blocked.join(timeout=10)
    assert len({_client_id(request_redis), _client_id(request_redis)}) == 1 and len(request_redis._idle) == 2
    redis_conn.client_kill_filter(_type="normal", skipme=True)  # as a restart would
    assert request_redis.execute_command("PING") == b"PONG"


def _entries(first: int, count: int) -> list[tuple[str, str]]:
    return [
        (f"lead-meta-{i}", inbox.entry(f"lead-meta-{i}", "f", {"leadgen_id": str(i)}))
        for i in range(first, first + count)
    ]


def test_admit_wakes_one_drain_slot_and_one_more_per_fifty_waiting_and_only_free_ones(redis_conn):
    request_redis = RequestRedis(redis_conn)
    assert inbox.admit(request_redis, _entries(0, 120), inbox.SLOTS)[1] == [0, 1, 2]  # 120 waiting: three drain jobs
    assert inbox.admit(request_redis, _entries(120, 1), inbox.SLOTS)[1] == []  # all three awake already
    inbox.free_slot(redis_conn, 1)
    assert inbox.admit(request_redis, _entries(121, 1), inbox.SLOTS)[1] == [1]
    assert inbox.admit(request_redis, _entries(122, 200), inbox.SLOTS)[1] == [3]  # at most SLOTS
    assert redis_conn.ttl(inbox.SLOT + "3") > 0  # a slot whose drain job dies frees itself


def test_a_primary_turned_replica_drops_the_connection_so_the_retry_looks_again(redis_conn):
    """After a failover the old primary answers writes READONLY: that connection is
    dropped and the call is a ConnectionError (Sentinel's connections then ask where the
    primary is), as redis-py's own reading does, not an error answer on a kept socket."""
    request_redis = RequestRedis(redis_conn)
    first = _client_id(request_redis)
    redis_conn.execute_command("REPLICAOF", "127.0.0.1", "1")  # a primary nobody answers at: still read-only
    try:
        with pytest.raises(redis.ConnectionError):
            request_redis.execute_command("SET", "k", "v")
    finally:
        redis_conn.execute_command("REPLICAOF", "NO", "ONE")
    assert request_redis.execute_command("SET", "k", "v") == b"OK"
    assert _client_id(request_redis) != first and len(request_redis._idle) == 1
