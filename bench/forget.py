"""What a forget and an export cost as the account grows: Redis is filled with --leads leads
(at each size named, in turn) as the drain and the stage API keep them (a profile and its
lookups, the dedupe record, the ledger's Lead, a stage of every third lead with its claim,
its ledger entry and its batch job in the person index, a dead letter of every hundredth),
then one person's records are found and removed, read from the person index and by reading
every key (the walk, which forget used before the index and uses until its backfill is
done). Prints, per size, each one's time and Redis commands; last, the backfill an upgrade
runs over everything held, its pace and its longest Redis command. ROOT: a checkout to measure.

    .venv/bin/python bench/forget.py [ROOT] [--leads 10000,100000,1000000] [--walk-max 1000000]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
DAY = 86400


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _fill(connection, first: int, last: int, now: float) -> None:
    """Leads first..last-1, each another person's (person n: pn@example.com), as kept."""
    for start in range(first, last, 2000):
        with connection.pipeline(transaction=False) as pipe:
            for n in range(start, min(start + 2000, last)):
                _lead(pipe, n, f"p{n}@example.com", now)
            pipe.execute()


def _lead(pipe, n: int, email: str, now: float, lead: int | None = None, phone: str = "") -> None:
    from workers.common.queues import redis_key
    from workers.events import personindex, profiles

    lead_id = str(lead or 10**15 + n)
    profile = {
        "source": "meta", "key": lead_id, "lead_id": int(lead_id), "created_time": int(now - (n % 90) * DAY),
        "page_id": str(10**9 + n % 1000), "form_id": str(10**10 + n % 1000),
        "user_data": {"em": [_hash(email)], "ph": [_hash(phone or f"1555{n:07d}")]}, "fbc": None,
        "dataset": "default", "dataset_id": "4242424242",
    }  # fmt: skip
    profiles.write(pipe, profile, 90)
    pipe.set(redis_key("seen", f"lead-meta-{lead_id}"), 1, ex=7 * DAY)
    pipe.set(redis_key("confirmed", f"meta:{lead_id}:Lead"), "TR", ex=8 * DAY)
    if n % 3 == 0:
        event_id = f"meta:{lead_id}:QualifiedLead"
        pipe.set(redis_key("stage", event_id), 1, ex=90 * DAY)
        pipe.set(redis_key("confirmed", event_id), "TR", ex=8 * DAY)
        personindex.note_events(pipe, [event_id])
    if n % 100 == 0:
        job = f"lead-meta-{lead_id}"
        entry = {"job_id": job, "reason": "invalid", "args": {"user_data": profile["user_data"]}}
        pipe.set(redis_key("dead", job), json.dumps(entry))
        pipe.zadd(redis_key("dead"), {job: now})
        pipe.hset(redis_key("dead-reasons"), job, "invalid default")


def _measure(connection, run) -> tuple[float, int, dict]:
    before = connection.info("stats")["total_commands_processed"]
    started = time.perf_counter()
    result = run()
    took = time.perf_counter() - started
    return took, connection.info("stats")["total_commands_processed"] - before - 1, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default=str(HERE))
    parser.add_argument("--leads", default="10000,100000,1000000")
    parser.add_argument("--walk-max", type=int, default=1_000_000, help="the largest size the walk is timed at")
    args = parser.parse_args()
    root = Path(args.root).resolve()
    sys.path[:0] = [str(root), str(HERE / "bench")]

    from benchenv import service_redis

    with service_redis() as (connection, routes):
        from workers.events import personindex
        from workers.privacy import forget

        connection.hset(personindex.BACKFILL, "done", 1)  # a Redis the index has held from the start
        forget.BACKFILL_SECONDS = 0.0  # the walk, when asked for, at once
        now, held = time.time(), 0
        print(f"{root}")
        print(
            f"{'leads':>9} {'keys':>10} | {'how':>5} {'export s':>9} {'commands':>9} | {'forget s':>9} {'commands':>9}"
        )
        for size in [int(s) for s in args.leads.split(",")]:
            _fill(connection, held, size, now)
            held = size
            keys = connection.dbsize()
            ways = [("index", 1)] + ([("walk", 0)] if size <= args.walk_max else [])
            for how, done in ways:
                email = f"asked.{size}.{how}@example.com"
                with connection.pipeline(transaction=False) as pipe:  # the person: two leads and a stage
                    for n, lead in ((3, 9 * 10**15 + size + done), (4, 9 * 10**15 + size + 2 + done)):
                        _lead(pipe, n, email, now, lead, f"1666{size:07d}{done}")
                    pipe.execute()
                connection.hset(personindex.BACKFILL, mapping={"done": done, "cursor": 0 if done else 1})
                given, datasets = {"email": email}, sorted(routes.datasets)
                exported = lambda: forget.export(connection, routes, given, "US", datasets)  # noqa: E731
                e_took, e_cmds, found = _measure(connection, exported)
                f_took, f_cmds, gone = _measure(
                    connection, lambda: forget.forget(connection, routes, given, "US", datasets, "bench", "bench")
                )
                assert found["read"] == gone["read"] and ((how == "index") == (gone["read"] == "index"))
                assert gone["removed"]["profile"] == 2, gone["removed"]
                print(f"{size:>9} {keys:>10} | {how:>5} {e_took:>9.3f} {e_cmds:>9} | {f_took:>9.3f} {f_cmds:>9}")
        # The backfill after an upgrade, over everything held: keys a second and the longest command.
        connection.delete(personindex.BACKFILL)
        connection.config_set("slowlog-log-slower-than", 1000)
        connection.slowlog_reset()
        started, steps = time.perf_counter(), 0
        while not personindex.step(connection):
            steps += 1
        took = time.perf_counter() - started
        longest = max((e["duration"] for e in connection.slowlog_get(100_000)), default=0) / 1000
        rate = connection.dbsize() / took
        print(f"backfill over {connection.dbsize()} keys: {steps + 1} steps in {took:.1f} s ({rate:,.0f} keys/s),")
        print(f"  its longest Redis command {longest:.1f} ms")


if __name__ == "__main__":
    main()
