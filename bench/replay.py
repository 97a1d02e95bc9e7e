"""Replay of N dead letters: `leadrelay replay --all` against RQ's own `rq requeue --all`,
each on the same N freshly failed lead jobs, in one run on an embedded Redis.

Both requeue every failed job of the queue; ours also checks each against Meta's ledger
and 7-day window, forgets its dead-letter record, and puts each lead back into the inbox,
where drain jobs take them in batches (RQ's puts each job back on the queue, one lead
per job). Product goal: 10,000 in at most 3 s, the command's start included.

    .venv/bin/python bench/replay.py [--dead 10000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from rq.registry import FailedJobRegistry  # noqa: E402

from workers import jobs  # noqa: E402
from workers.common.queues import connect, job_id, queue  # noqa: E402
from workers.engine.jobwork import Work, dead_letter  # noqa: E402
from workers.failures import deadletters  # noqa: E402
from workers.intake import inbox  # noqa: E402
from workers.run.embedded_redis import EmbeddedRedis  # noqa: E402

BIN = Path(sys.executable).parent


def fail(connection, count: int) -> None:
    """`count` lead jobs in RQ's failed registry, each with its dead-letter record, as a
    worker leaves them after Meta refused the token."""
    q = queue(connection, "leadrelay")
    registry = FailedJobRegistry(queue=q)
    now = time.time()
    for start in range(0, count, 1000):
        with connection.pipeline() as pipe:
            for n in range(start, min(start + 1000, count)):
                leadgen = {
                    "source": "meta",
                    "leadgen_id": str(10**15 + n),
                    "page_id": "1",
                    "form_id": "2",
                    "created_time": int(now),
                }
                job = q.create_job(
                    jobs.process_meta_lead,
                    args=(leadgen,),
                    job_id=job_id("lead", "meta", str(10**15 + n)),
                    failure_ttl=30 * 86400,
                )
                job.origin = q.name
                job.save(pipeline=pipe)
                pipe.zadd(registry.key, {job.id: now + 30 * 86400})
                work = Work(
                    job.id,
                    "meta",
                    leadgen["leadgen_id"],
                    "Lead",
                    f"meta:{leadgen['leadgen_id']}:Lead",
                    int(now),
                    leadgen,
                )
                entry = dead_letter(
                    work, "auth", "HTTP 401 code 190", attempts=1, first_attempt_at=now, last_attempt_at=now
                )
                pipe.set(deadletters.record_key(job.id), json.dumps(entry))
                pipe.zadd(deadletters.INDEX, {job.id: now})
            pipe.execute()


def timed(command: list[str], env: dict) -> float:
    started = time.perf_counter()
    subprocess.run(command, env=env, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dead", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="leadrelay-replay-"))
    with EmbeddedRedis(tmp / "redis") as server:
        connection = connect(server.url)
        env = {
            **os.environ,
            "REDIS_URL": server.url,
            "LEADRELAY_ENV_FILE": "",
            "LEADRELAY_LOG_LEVEL": "WARNING",
            "META_APP_SECRET": "s",
            "META_VERIFY_TOKEN": "v",
            "META_PAGE_ACCESS_TOKEN": "p",
            "META_DATASET_ID": "42",
        }
        ours, theirs = [], []
        for _ in range(args.rounds):
            for command, times in (
                ([str(BIN / "leadrelay"), "replay", "--all"], ours),
                (
                    [
                        str(BIN / "rq"),
                        "requeue",
                        "--all",
                        "--queue",
                        "leadrelay",
                        "--url",
                        server.url,
                        "--serializer",
                        "rq.serializers.JSONSerializer",
                    ],
                    theirs,
                ),
            ):
                connection.flushdb()
                fail(connection, args.dead)
                times.append(timed(command, env))
                # Ours puts the leads back into the inbox (drain jobs take them in batches); RQ's
                # puts each job back on the queue.
                back = connection.xlen(inbox.STREAM) if times is ours else connection.llen("rq:queue:leadrelay")
                assert back == args.dead, f"not every job was requeued: {back}"
    a, b = statistics.median(ours), statistics.median(theirs)
    print(
        f"{args.dead} dead letters, median of {args.rounds}: leadrelay replay --all {a:.2f} s "
        f"({args.dead / a:,.0f}/s), rq requeue --all {b:.2f} s; ratio {a / b:.2f} (below 1: faster than RQ's own)"
    )
    print(f"each run, leadrelay: {', '.join(f'{t:.2f}' for t in ours)}; rq: {', '.join(f'{t:.2f}' for t in theirs)}")


if __name__ == "__main__":
    main()
