"""How long the accuracy figures' periodic work holds Redis at an agency's size: --pages
Pages (one form each) marked on every day of the window, then the one-time rebuild after an
upgrade, the roll of the window at midnight, the window summed whole (after days without a
read) and the once-a-minute reads, each run alone with
Redis's SLOWLOG catching every command; prints the longest command of each, in ms.

    .venv/bin/python bench/slowlog.py [ROOT] [--pages 100000] [--leads 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def _longest(connection, step) -> tuple[float, float, str]:
    """(the longest command while `step` ran, in ms; the step's wall time, in s; what failed)."""
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
    return max((e["duration"] for e in entries), default=0) / 1000, took, failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default=str(HERE))
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--leads", type=int, default=3, help="leads per Page and day")
    args = parser.parse_args()
    root = Path(args.root).resolve()
    sys.path[:0] = [str(root), str(HERE / "bench")]

    from benchenv import service_env

    from workers.run.embedded_redis import EmbeddedRedis

    with tempfile.TemporaryDirectory() as data, EmbeddedRedis(Path(data) / "redis") as server:
        os.environ.update(service_env(server.url, "http://127.0.0.1:9", data))
        from workers.common.queues import connect
        from workers.config.mappingfile import validate
        from workers.config.settings import load
        from workers.events import accuracy, accuracymarks, accuracyrollup

        routes = validate(load())["routes"]
        connection = connect(server.url)  # as the service connects: its timeouts
        now = time.time()
        dates = accuracy.window(accuracy.WINDOW_DAYS, now)
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
        connection.config_set("slowlog-log-slower-than", 0)
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
            "once-a-minute read": lambda: (
                accuracyrollup.pages(connection, routes, now=now),
                accuracyrollup.coverage(connection, routes, now=now),
            ),
        }
        accuracyrollup.pages(connection, routes, now=now)  # a running service has its scripts loaded
        for name, step in steps.items():
            longest, took, failed = _longest(connection, step)
            print(f"  {name:28} longest command {longest:9.1f} ms   step {took:6.2f} s   {failed}")


if __name__ == "__main__":
    main()
