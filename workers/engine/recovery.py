"""Jobs that died outside our policy get another run: nothing is lost silently.

Notes: docs/internals/engine.md
"""

from __future__ import annotations

import os
import socket
import time

import redis
from rq import Queue, Worker
from rq.exceptions import InvalidJobOperation, NoSuchJobError, SchedulerNotFound
from rq.executions import Execution
from rq.registry import FailedJobRegistry, StartedJobRegistry
from rq.scheduler import RQScheduler

from workers import jobnames
from workers.common import counters, logs
from workers.common.policy import CRASHED
from workers.common.queues import redis_key
from workers.engine.jobwork import Work, dead_letter
from workers.failures import deadletters
from workers.intake import inbox

MAX_CRASHES = 3
CLAIM = redis_key("recovering", "")  # + job id: the worker settling that failed job
CLAIM_TTL = 30  # held while one worker settles the job; lapses if that worker dies meanwhile
log = logs.get(__name__)


def pid_alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A killed work horse whose worker died too is a zombie until something reaps it.
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return True


def worker_gone(connection: redis.Redis, worker_name: str) -> bool:
    worker = Worker.find_by_key(Worker.redis_worker_namespace_prefix + worker_name, connection=connection)
    if worker is None:
        return True
    return worker.hostname == socket.gethostname() and not pid_alive(worker.pid)


def _horse_alive(queue: Queue, job_id: str) -> bool:
    """RQ runs a job in a work horse with a session of its own: it can outlive its worker."""
    job = queue.fetch_job(job_id)
    meta = job.meta if job else {}
    return meta.get("host") == socket.gethostname() and pid_alive(meta.get("pid"))


def expire_orphans(connection: redis.Redis, queue: Queue) -> int:
    """Hand started jobs whose worker is gone to RQ's abandoned-job cleanup; how many."""
    started = StartedJobRegistry(queue=queue)
    orphans = 0
    for job_id, execution_id in started.get_job_and_execution_ids(cleanup=False):
        try:
            execution = Execution.fetch(execution_id, job_id, connection)
        except ValueError:
            continue  # no execution record: RQ's own expiry handles it
        gone = execution.worker_name and worker_gone(connection, execution.worker_name)
        if gone and not _horse_alive(queue, job_id):
            connection.zadd(started.key, {f"{job_id}:{execution_id}": 0}, xx=True)
            orphans += 1
    if orphans:
        started.cleanup()
    return orphans


def requeue_crashed(connection: redis.Redis, queue: Queue) -> dict:
    """Requeue failed jobs that have no dead-letter record; counts of requeued and given up.

    Every worker runs this at its start and in each maintenance pass, and workers start
    together at a deploy: each job is settled by the one worker that claims it first (a
    short-lived SET NX), the others move on."""
    failed = FailedJobRegistry(queue=queue)
    counts = {"requeued": 0, "crashed": 0}
    for job_id in failed.get_job_ids():
        if deadletters.get(connection, job_id) or not connection.set(CLAIM + job_id, 1, nx=True, ex=CLAIM_TTL):
            continue
        try:
            job = queue.fetch_job(job_id)
            # Still failed? Another worker may have settled it between our listing and our claim.
            if job is None or connection.zscore(failed.key, job_id) is None:
                continue
            outcome = (
                _drain_crashed(connection, queue, failed, job)
                if jobnames.current(job.func_name) == jobnames.DRAIN
                else _crashed(connection, failed, job)
            )
        except (InvalidJobOperation, NoSuchJobError):  # settled meanwhile by RQ itself, or a replay
            continue
        finally:
            connection.delete(CLAIM + job_id)
        counts[outcome] += 1
    return counts


def _drain_crashed(connection: redis.Redis, queue: Queue, failed: FailedJobRegistry, job) -> str:
    """A drain job holds no lead of its own (its leads wait in the inbox, for whichever
    drain job claims them; one that keeps killing its handler is set aside there), and a
    long one is often the one a kill meets: no dead letter, a fresh drain job for its slot
    instead. It is still seen: an error line with RQ's last words, and a count in
    /metrics (`leadrelay_jobs_total{source="drain",outcome="crashed"}`)."""
    failed.remove(job, delete_job=True)
    slot = job.args[0] if job.args and isinstance(job.args[0], int) else 0
    inbox.free_slot(connection, slot)
    if inbox.claim_slot(connection, slot):
        inbox.wake(queue, [slot])
    counters.count(connection, counters.JOBS, "drain", "crashed")
    log.error("drain_job_recovered", job_id=job.id, slot=slot, cause=_last_words(job))
    return "requeued"


def _crashed(connection: redis.Redis, failed: FailedJobRegistry, job) -> str:
    job.meta["crashes"] = job.meta.get("crashes", 0) + 1
    job.save_meta()
    if job.meta["crashes"] <= MAX_CRASHES:
        failed.requeue(job)
        log.warning("job_recovered", job_id=job.id, crashes=job.meta["crashes"])
        return "requeued"
    now = time.time()
    args = job.args[0] if job.args and isinstance(job.args[0], dict) else None
    work = Work(
        job_id=job.id,
        source=(args or {}).get("source"),
        key=None,
        event_name=None,
        event_id=None,
        event_time=None,
        args=args,
    )
    deadletters.record(
        connection,
        dead_letter(
            work,
            CRASHED,
            _last_words(job) or "the worker died under this job",
            attempts=job.meta.get("attempts", 0) + job.meta["crashes"],
            first_attempt_at=job.meta.get("first_attempt_at", now),
            last_attempt_at=now,
        ),
    )
    log.error("job_dead_letter", job_id=job.id, reason=CRASHED, crashes=job.meta["crashes"])
    return "crashed"


def _last_words(job) -> str:
    """The last line of RQ's record of the failure (the exception), if any."""
    result = job.latest_result()
    lines = ((result.exc_string if result else "") or "").strip().splitlines()
    return lines[-1] if lines else ""


def release_dead_scheduler_lock(connection: redis.Redis, queue: Queue) -> bool:
    """Free the scheduler lock of a scheduler that died on this host.

    Retries are scheduled jobs; while a dead scheduler's lock lives on (61 s), none
    is enqueued. The lock names its scheduler, whose record says where it ran.
    """
    lock_key = RQScheduler.get_locking_key(queue.name)
    owner = connection.get(lock_key)
    if not owner:
        return False
    try:
        scheduler = RQScheduler.fetch(owner.decode(), connection)
    except (SchedulerNotFound, KeyError):  # KeyError: a record half gone (its heartbeat outlived it)
        return False
    if scheduler.hostname != socket.gethostname() or pid_alive(scheduler.pid):
        return False
    # Delete only if it is still that owner's lock.
    with connection.pipeline() as pipe:
        try:
            pipe.watch(lock_key)
            if pipe.get(lock_key) != owner:
                return False
            pipe.multi()
            pipe.delete(lock_key)
            pipe.execute()
        except redis.WatchError:
            return False
    log.warning("scheduler_lock_released", queue=queue.name, dead_pid=scheduler.pid)
    return True


def recover(connection: redis.Redis, queue: Queue) -> dict:
    """Both checks of the module docstring, and the dead scheduler's lock; counts."""
    orphans = expire_orphans(connection, queue)
    freed = release_dead_scheduler_lock(connection, queue)
    return {"orphans": orphans, "scheduler_lock_freed": int(freed), **requeue_crashed(connection, queue)}
