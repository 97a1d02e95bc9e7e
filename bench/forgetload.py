"""Ingest on the web tier while forgets run: Redis filled with --leads leads (as bench/forget.py
fills it), leadrelay's web tier under gunicorn taking signed Lead Ads webhooks from the
Python load generator, three windows of --seconds each: nothing else running; forgets one
after another through the person index, as a worker runs them; forgets reading every key
(the walk), as a worker ran them before the index. Prints each window's requests/s and p99,
and how many forgets ran in it.

    .venv/bin/python bench/forgetload.py [--leads 1000000] [--seconds 10] [--connections 8]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(HERE), str(HERE / "bench")]


def _forgets(url: str, data: str, walk: bool, stop, done) -> None:
    """Forget one person after another (each with two leads, written just before), until `stop`."""
    from benchenv import service_env

    os.environ.update(service_env(url, "http://127.0.0.1:9", data))
    from forget import _lead

    from workers.common.queues import connect
    from workers.config.mappingfile import validate
    from workers.config.settings import load
    from workers.events import personindex
    from workers.privacy import forget

    routes = validate(load())["routes"]
    connection = connect(url)
    forget.BACKFILL_SECONDS = 0.0
    if walk:
        connection.hset(personindex.BACKFILL, mapping={"done": 0, "cursor": 1})
    n = 0
    while not stop.is_set():
        email = f"asked.{os.getpid()}.{n}@example.com"
        with connection.pipeline(transaction=False) as pipe:
            for k in (1, 2):
                _lead(pipe, k, email, time.time(), 8 * 10**15 + 10 * n + k, f"1777{n:07d}{k}")
            pipe.execute()
        forget.forget(connection, routes, {"email": email}, "US", sorted(routes.datasets), "bench", "bench")
        n += 1
        done.value = n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leads", type=int, default=1_000_000)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--connections", type=int, default=8)
    args = parser.parse_args()

    import ingest
    import loadgen
    from benchenv import service_env
    from forget import _fill

    from workers.common.queues import connect
    from workers.events import personindex
    from workers.run.embedded_redis import EmbeddedRedis

    with tempfile.TemporaryDirectory() as data, EmbeddedRedis(Path(data) / "redis") as server:
        env = {**service_env(server.url, "http://127.0.0.1:9", data), "META_APP_SECRET": ingest.SECRET}
        connection = connect(server.url)
        started = time.monotonic()
        _fill(connection, 0, args.leads, time.time())
        connection.hset(personindex.BACKFILL, "done", 1)
        print(f"{args.leads} leads, {connection.dbsize()} keys, filled in {time.monotonic() - started:.0f} s")
        proc, port = ingest.serve("webhook_app:create_app()", env, HERE)
        try:
            loadgen.run(port, ingest.signed_lead, args.connections, 1.0)  # warm up
            print(f"{'meanwhile':<34} {'req/s':>7} {'p50 ms':>7} {'p99 ms':>7} {'forgets':>8}")
            for label, walk in (
                ("nothing", None),
                ("forgets by the person index", False),
                ("forgets reading every key", True),
            ):
                stop, done = mp.Event(), mp.Value("i", 0)
                worker = None
                if walk is not None:
                    worker = mp.Process(target=_forgets, args=(server.url, data, walk, stop, done))
                    worker.start()
                    time.sleep(0.5)  # its imports done: the window sees forgets only
                result = loadgen.run(port, ingest.signed_lead, args.connections, args.seconds)
                stop.set()
                if worker is not None:
                    worker.join(timeout=2)
                    if worker.is_alive():  # a walk mid-way: cut off, as the window is over
                        worker.kill()
                        worker.join()
                connection.hset(personindex.BACKFILL, "done", 1)
                row = f"{label:<34} {result['rps']:>7.0f} {result['p50_ms']:>7.2f} {result['p99_ms']:>7.2f}"
                print(f"{row} {done.value:>8}")
        finally:
            proc.terminate()
            proc.wait(timeout=30)


if __name__ == "__main__":
    main()
