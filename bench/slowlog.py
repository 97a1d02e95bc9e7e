"""How long the periodic work holds Redis at an agency's size: --pages Pages (one form
each) with --leads leads marked on every day of the accuracy window, and --dead dead
letters; then the accuracy figures' one-time rebuild after an upgrade, their roll at
midnight, their window summed whole (after days without a read), a worker's dead-letter
scrub and prune passes and RQ's registry cleanup, and the once-a-minute reads, each run
alone with Redis's SLOWLOG catching every command of a ms or more; prints the longest of each
(ms), how many of its commands took 10 ms or more, and its time. ROOT: a checkout to measure
(this one by default).

    .venv/bin/python bench/slowlog.py [ROOT] [--pages 100000] [--leads 3] [--dead 100000]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def _longest(connection, step) -> tuple[float, int, float, str]:
    """While `step` ran: its longest command in ms, how many took 10 ms or more, its wall
    time in s, and what failed."""
    import redis

    connection.slowlog_reset()
    started = time.monotonic()
    failed = ""
    try:
        step()
    except redis.TimeoutError:  # the service's own socket timeout (queues.connect): Redis still runs it
        failed = "timed out at the service's 5 s socket timeout; "
        while True:
            try:
                connection.ping()
                break
            except (redis.BusyLoadingError, redis.ResponseError, redis.TimeoutError):
                time.sleep(0.2)
    took = time.monotonic() - started
    entries = [e for e in connection.slowlog_get(100_000) if not e["command"].startswith(b"SLOWLOG")]
    if os.environ.get("SLOWLOG_SHOW"):
        for e in sorted(entries, key=lambda e: -e["duration"])[:3]:
            print("   ", e["duration"], e["command"][:100])
    over = sum(e["duration"] >= 10_000 for e in entries)
    return max((e["duration"] for e in entries), default=0) / 1000, over, took, failed


def _dead_letters(connection, count: int, now: float):
    """`count` dead letters as deadletters.record keeps them (the record, the index, the
    reason), their times spread over RQ's 30 days, each job in RQ's failed registry (the
    registry's entry only: the housekeeping reads the job itself only to scrub it)."""
    import json

    from rq import Queue

    from workers.common.queues import SERIALIZER
    from workers.failures import deadletters

    queue = Queue("leadrelay", connection=connection, serializer=SERIALIZER)
    for first in range(0, count, 1000):
        with connection.pipeline(transaction=False) as pipe:
            for n in range(first, min(first + 1000, count)):
                job_id, at = f"lead-meta-{2 * 10**15 + n}", now - 30 * 86400 * n / count
                user_data = {"em": ["ab" * 32], "client_ip_address": "203.0.113.9", "client_user_agent": "Mozilla/5.0"}
                entry = {"job_id": job_id, "reason": "invalid", "last_attempt_at": at, "args": {"user_data": user_data}}
                pipe.set(deadletters.record_key(job_id), json.dumps(entry))
                pipe.zadd(deadletters.INDEX, {job_id: at})
                pipe.hset(deadletters.REASONS, job_id, "invalid default")
                pipe.zadd(queue.failed_job_registry.key, {job_id: now + 30 * 86400 - (now - at)})
            pipe.execute()
    return queue


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default=str(HERE))
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--leads", type=int, default=3, help="leads per Page and day")
    parser.add_argument("--dead", type=int, default=100_000, help="dead letters")
    args = parser.parse_args()
    root = Path(args.root).resolve()
    sys.path[:0] = [str(root), str(HERE / "bench")]

    from benchenv import service_redis

    with service_redis() as (connection, routes):
        from workers.events import accuracy, accuracymarks, accuracyrollup
        from workers.failures import retention

        now = time.time()
        dates = accuracy.window(accuracy.WINDOW_DAYS + 1, now)  # and the day that leaves it at midnight
        accuracyrollup.window_days(connection, routes, now - 86400)  # a service running since yesterday
        started, serial = time.monotonic(), 0
        for first in range(0, args.pages, 500):
            with connection.pipeline(transaction=False) as pipe:
                for page in range(first, min(first + 500, args.pages)):
                    for n, _ in enumerate(dates):
                        created = now - (len(dates) - 1 - n) * 86400
                        leads = []
                        for _ in range(args.leads):
                            serial += 1
                            leads.append({"id": str(10**15 + serial), "page_id": str(10**9 + page),
                                          "form_id": str(10**10 + page), "created_time": created})  # fmt: skip
                        accuracymarks.mark_all(pipe, [("meta", leads), ("webhook", leads[:2])], now, routes)
                pipe.execute()
        took = time.monotonic() - started
        print(f"{root}: {args.pages} Pages, {serial} leads marked over {len(dates)} days in {took:.0f} s")
        queue = _dead_letters(connection, args.dead, now)
        print(f"  and {args.dead} dead letters over 30 days, with their failed jobs in RQ's registry")
        connection.config_set("slowlog-log-slower-than", 1000)  # µs: every command of a ms or more
        connection.config_set("slowlog-max-len", 100_000)
        yesterday = accuracy.window(accuracy.WINDOW_DAYS, now - 86400)[0]
        steps = {  # the rebuild first: a Redis never rolled up does it at the first read
            "one-time rebuild": lambda: (
                connection.delete(accuracyrollup.ROLLED),
                accuracyrollup.window_days(connection, routes, now),
            ),
            "midnight roll of the window": lambda: (
                connection.set(accuracy.window_key("from"), yesterday),  # as the day before left it
                accuracyrollup.window_days(connection, routes, now),
            ),
            "window summed whole": lambda: (
                connection.delete(accuracy.window_key("from")),  # days without a read, or expired
                accuracyrollup.window_days(connection, routes, now),
            ),
            "dead-letter scrub pass": lambda: retention.scrub(connection, queue, 7, now=now),
            "dead-letter prune pass": lambda: retention.prune(connection, queue, now=now),
            "RQ's registry cleanup": lambda: queue.failed_job_registry.cleanup(),
            "once-a-minute read": lambda: (
                accuracyrollup.pages(connection, routes, now=now),
                accuracyrollup.coverage(connection, routes, now=now),
            ),
        }
        _longest(connection, lambda: accuracyrollup.pages(connection, routes, now=now))  # a running service's scripts
        for name, step in steps.items():
            longest, over, took, failed = _longest(connection, step)
            said = f"{longest:9.1f} ms" if longest else "   < 1 ms   "
            print(
                f"  {name:28} longest command {said}  {over:6d} commands of 10 ms or more"
                f"   step {took:6.2f} s   {failed}"
            )


if __name__ == "__main__":
    main()
