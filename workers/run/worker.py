"""The RQ worker as `leadrelay worker` runs it: our recovery and maintenance beside RQ's
loop, one log line per expected failure, and a patient start while Redis is away."""

from __future__ import annotations

import logging
import os
import signal
import sys
import time

import redis
from rq import SimpleWorker
from rq.exceptions import StopRequested

from workers import jobs
from workers.common import clock, logs, redisurl
from workers.common.policy import JobError, Paused
from workers.common.queues import SERIALIZER, connect, queue
from workers.config import redissafety, versions
from workers.config.settings import Settings
from workers.engine import recovery
from workers.events import personindex
from workers.failures import retention
from workers.googleapi import status as googlestatus
from workers.graphapi import capi
from workers.graphapi.pauses import Pauses
from workers.intake import inbox
from workers.run import redisowner
from workers.sweep import sweeper, watch

log = logs.get(__name__)


class LeadrelayWorker(SimpleWorker):
    """RQ's worker, plus our recovery sweep, and one log line (ours) per expected failure.

    Jobs run in the worker process itself (RQ's SimpleWorker) rather than in a forked
    work horse per job: a job is two short HTTP calls, and forking for each cost about
    a hundred milliseconds and the keep-alive connection to Meta (measured: 8 jobs/s
    forking, 65 without, one worker against the stand-in). Job timeouts still apply;
    a worker that dies takes only its current job, which recovery requeues.
    """

    def handle_exception(self, job, *exc_info):
        if isinstance(exc_info[1], (JobError, Paused)):
            return  # attempts.attempt already logged it, with the outcome; no traceback needed
        super().handle_exception(job, *exc_info)

    def run_maintenance_tasks(self):
        """RQ's own, then ours; each on its own: one that fails (Redis full, a race with
        another worker) is logged and tried again next pass, and the worker stays up."""
        days = self.settings.dead_letter_retention_days
        tasks = [("clock", lambda: clock.check(self.connection)), ("rq", super().run_maintenance_tasks)]
        for q in self.queues:
            # The next lead sweep, in case a killed sweep could not schedule it (one per slot).
            tasks += [
                ("sweep_schedule", lambda q=q: sweeper.schedule(q, self.settings.sweep_seconds)),
                ("watch_schedule", lambda q=q: watch.schedule(q, self.settings.watch_seconds)),
                ("recovery", lambda q=q: recovery.recover(self.connection, q)),
                ("drain_slots", lambda: inbox.follow_workers(self.connection, self.settings.drain_slots)),
                ("inbox_revive", lambda q=q: inbox.revive(q)),
                # A paused token is retested on time even when no job meets its pause.
                ("pause_retest", lambda q=q: Pauses(self.connection).retest_all(jobs.context().graph.probe, q)),
                ("scrub", lambda q=q: retention.scrub(self.connection, q, days)),
                ("prune", lambda q=q: retention.prune(self.connection, q)),
            ]
        tasks.append(("drop_held", lambda: retention.drop_held(self.connection)))
        # What was kept before the person index, indexed a second's worth a pass until done.
        tasks.append(("person_index", lambda: personindex.step(self.connection, seconds=1.0)))
        # What Google made of the requests it accepted, read once their time has come.
        tasks.append(("google_status", lambda: googlestatus.check_due(jobs.context().google, self.connection)))
        tasks.append(("redis_safety", self._say_if_redis_unsafe))
        for name, task in tasks:
            try:
                task()
            except redis.ConnectionError:
                raise  # RQ's loop waits for Redis; so does ours (work)
            except StopRequested:
                # SIGTERM while idle: RQ's handler raises this, and only this, to stop the
                # worker (it records nothing else); swallowed, the worker would go back to
                # waiting for jobs and ignore the stop.
                raise
            except Exception as err:  # noqa: BLE001 -- maintenance must never stop delivery
                log.error("maintenance_failed", task=name, error=type(err).__name__, detail=str(err)[:200])

    def _say_if_redis_unsafe(self) -> None:
        """Each pass, as at start: a Redis switched to losing writes is said loudly."""
        found = redissafety.problems(self.connection)
        if found:
            (log.warning if self.settings.allow_unsafe_redis else log.error)(
                "redis_unsafe", process="worker", problems=found
            )


# RQ blocks on an empty queue for worker_ttl - 15 s (405 s by default) before it looks
# at maintenance again; scheduled retries then sit idle if the worker holding the
# scheduler lock died. Shorter: a dead scheduler is replaced within about a minute.
MAINTENANCE_SECONDS = 30
WORKER_TTL_SECONDS = 35


def work(settings: Settings, burst: bool = False) -> bool:
    """Run an RQ worker with its scheduler (retries are scheduled jobs) on our queue.

    When Redis goes away (a restart, a failover: RQ's worker then quits), the worker
    waits for it and starts again, as a new RQ worker: what the old one held is
    recovered like a dead worker's once its record expires. A burst worker just fails.
    """
    refusals = 0
    while True:
        try:
            return _work(settings, burst)
        except (redis.ConnectionError, redis.TimeoutError) as err:  # BusyLoadingError too: Redis reads its file
            if burst:
                raise
            # The RQ worker that lost Redis has quit, but its signal handlers are still in
            # place and would raise out of the wait below as a traceback. Nothing is held
            # while waiting: a stop signal simply ends the process (the next worker's start
            # installs its own handlers).
            on_stop_signal(_stopped_while_waiting)
            where = redisurl.masked(settings.redis_url)
            log.error("redis_lost", redis_url=where, error=type(err).__name__, detail="starts again once Redis answers")
            _wait_for_redis(settings.redis_url, where)
        except redis.RedisError as err:
            # Redis answers but refuses (full: OutOfMemoryError; a replica after a failover:
            # ReadOnlyError): the worker waits, longer each time up to a minute, and starts
            # again; nothing it held is lost (recovery and the inbox take it back).
            if burst:
                raise
            refusals += 1
            on_stop_signal(_stopped_while_waiting)
            delay = min(60, 2**refusals)
            log.error("redis_refused", error=type(err).__name__, detail=str(err)[:200], retry_in_seconds=delay)
            time.sleep(delay)


def on_stop_signal(handler) -> None:
    """TERM (a supervisor, a deploy) and INT (Ctrl-C) both mean: stop."""
    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)


def _stopped_while_redis_away() -> None:
    log.info("worker_stopped", redis="unreachable")


def _stopped_while_waiting(signum, frame):
    _stopped_while_redis_away()
    sys.exit(0)


REPEAT_SECONDS = 30  # while it waits, the worker says so again this often


def _wait_for_redis(url: str, where: str, every: float = 1.0) -> None:
    said = time.monotonic()
    while True:
        time.sleep(every)
        try:
            if connect(url).ping():
                return
        except redis.RedisError as err:  # refused, loading, or (a host cut off) no answer at all: TimeoutError
            if time.monotonic() - said >= REPEAT_SECONDS:
                redisowner.unreachable(where, err)
                said = time.monotonic()


def _work(settings: Settings, burst: bool) -> bool:
    connection = connect(settings.redis_url)
    clock.check(connection)  # before anything is decided or scheduled
    q = queue(connection, settings.queue_name)
    worker = LeadrelayWorker(
        [q],
        connection=connection,
        serializer=SERIALIZER,
        maintenance_interval=MAINTENANCE_SECONDS,
        worker_ttl=WORKER_TTL_SECONDS,
    )
    worker.settings = settings
    ctx = jobs.install(settings)  # the jobs this process runs use these settings, read once
    capi.warn_at_start(ctx.routes.datasets.values(), "worker")
    versions.warn_at_start(settings.api_version, "worker")
    sweeper.schedule(q, settings.sweep_seconds)  # one job per time slot, whoever schedules it
    watch.schedule(q, settings.watch_seconds)
    swept = recovery.recover(connection, q)
    inbox.follow_workers(connection, settings.drain_slots, joining=True)
    inbox.revive(q)
    if any(swept.values()):
        log.warning("recovery_sweep", **swept)
    # RQ's own lines ("Job OK", "Result is kept for 604800 seconds", one set per job) say
    # what our one job_attempt line already says: shown only at DEBUG.
    rq_level = "DEBUG" if settings.log_level == "DEBUG" else "WARNING"
    logging.getLogger("rq").setLevel(rq_level)
    log.info("worker_started", queue=q.name, pid=os.getpid())
    _stop_softly_while_starting(worker)
    try:
        worked = worker.work(burst=burst, with_scheduler=True, logging_level=rq_level)
        if burst or worker._stop_requested or worker._shutdown_requested_date:
            return worked
        # RQ's loop also ends on a Redis timeout or an error it did not expect (a Redis still
        # loading its file after a restart: BusyLoadingError), and returns as if asked to
        # stop: the process exited and a host stopped working. Not asked to stop: start again.
        raise redis.ConnectionError("the worker's loop ended without a stop being asked for")
    except redis.ConnectionError:
        if worker._stop_requested or worker._shutdown_requested_date:
            # Asked to stop while Redis was away (RQ retries it inside its loop, where a
            # stop signal still reaches it): its goodbye could not be written, and its
            # record lapses after WORKER_TTL_SECONDS. Nothing to wait for.
            _stopped_while_redis_away()
            return False
        raise


def _stop_softly_while_starting(worker: LeadrelayWorker) -> None:
    """RQ installs its TERM and INT handlers only after the worker has registered itself
    and started its scheduler; a signal in between (a deploy replacing a worker that was
    just starting) killed the process outright and left its record behind for
    WORKER_TTL_SECONDS, counted as a live worker. Until RQ's handlers take over, a
    signal asks for the warm stop they would: RQ's loop sees it first thing, then
    unregisters the worker and stops its scheduler."""

    owner = os.getpid()

    def stop(signum, frame):
        if os.getpid() != owner:
            # RQ's scheduler, forked while this handler was in place, stopped before it put
            # in its own: RQ waits for it to exit, so it must (it would run on for good, and
            # the worker with it, when its loop ended right after starting it).
            os._exit(0)
        worker._stop_requested = True  # what RQ's own handler sets for a busy worker

    on_stop_signal(stop)
