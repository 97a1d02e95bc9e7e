"""The worker's maintenance pass: its tasks run on a healthy Redis without a failure, and a
stop asked for meanwhile (SIGTERM while idle) is never swallowed."""

import pytest
import redis
from redis.connection import Connection
from rq.exceptions import StopRequested

from workers.common.queues import queue
from workers.config.settings import load
from workers.run.worker import LeadrelayWorker


class StopsAtTime(Connection):
    """Redis as a SIGTERM finds it: RQ's handler raises StopRequested in whatever runs, here
    the first command of the pass (the clock check's TIME)."""

    def send_packed_command(self, command, check_health=True):
        if b"TIME" in (command if isinstance(command, bytes) else b"".join(command)):
            raise StopRequested()
        return super().send_packed_command(command, check_health)


def test_a_stop_asked_for_during_maintenance_stops_the_worker(env, redis_url):
    pool = redis.ConnectionPool.from_url(redis_url, connection_class=StopsAtTime)
    connection = redis.Redis(connection_pool=pool)
    worker = LeadrelayWorker([queue(connection, "leadrelay")], connection=connection)
    worker.settings = load()
    with pytest.raises(StopRequested):
        worker.run_maintenance_tasks()


def test_a_pass_on_a_healthy_redis_runs_every_task_without_a_failure(env, redis_url, capfd):
    from workers.common import logs

    logs.configure("INFO")
    connection = redis.Redis.from_url(redis_url)
    worker = LeadrelayWorker([queue(connection, "leadrelay")], connection=connection)
    worker.settings = load()
    worker.run_maintenance_tasks()
    assert '"maintenance_failed"' not in capfd.readouterr().err
