"""Redis memory per lead kept: leads through the receiver's intake and a drain job to
the Graph stand-in, then Redis's own count of the bytes each kind of key holds.

Prints used_memory per lead (the whole difference, allocator included) and, per kind of
key, MEMORY USAGE averaged over a sample, with how long each kind is kept: what the
docs/deploying.md's sizing is computed from.

    .venv/bin/python bench/memory.py [--leads 10000]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from workers.run.embedded_redis import EmbeddedRedis  # noqa: E402
from workers.standin.server import GraphStandin  # noqa: E402

FIELDS = [
    {"name": "full_name", "values": ["Joe Example"]},
    {"name": "email", "values": ["joe{}@example.com"]},
    {"name": "phone_number", "values": ["+1650555{:04d}"]},
    {"name": "city", "values": ["Palo Alto"]},
    {"name": "zip_code", "values": ["94301"]},
]
KEPT = {
    "seen": "7 days (dedupe)",
    "confirmed": "8 days (never resend)",
    "profile": "90 days (stage events)",
    "profile-by": "90 days (find a lead by email or phone)",
    "lead-event": "7 days (Meta's window)",
    "accuracy": "9 days (the accuracy report)",
}


def kind(key: bytes) -> str:
    parts = key.decode().split(":")
    return parts[1] if parts[0] == "leadrelay" and len(parts) > 1 else parts[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leads", type=int, default=10000)
    args = parser.parse_args()
    graph = GraphStandin()
    graph.url = graph.start()
    first = 6_000_000_000_000_000
    now = int(time.time())
    for i in range(args.leads):
        fields = [{"name": f["name"], "values": [f["values"][0].format(i % 10000)]} for f in FIELDS]
        graph.add_lead(str(first + i), field_data=fields, created_time=now - 60)
    with EmbeddedRedis(Path(tempfile.mkdtemp(prefix="leadrelay-bench-redis-"))) as server:
        os.environ.update(
            {
                "REDIS_URL": server.url,
                "META_GRAPH_URL": graph.url,
                "META_APP_SECRET": "s",
                "META_VERIFY_TOKEN": "v",
                "META_PAGE_ACCESS_TOKEN": "p",
                "META_CAPI_ACCESS_TOKEN": "c",
                "META_DATASET_ID": "4242424242",
                "LEADRELAY_ENV_FILE": "",
                "LEADRELAY_LOG_LEVEL": "WARNING",
                "LEADRELAY_SWEEP_SECONDS": "0",
                "LEADRELAY_DATA_DIR": tempfile.mkdtemp(),
            }
        )
        from workers import jobs
        from workers.common import logs
        from workers.common.queues import connect, queue
        from workers.config.settings import load
        from workers.intake.admission import enqueue_new
        from workers.sources.registry import SOURCES

        logs.configure("WARNING")
        jobs.install(load())
        connection = connect(server.url)
        q = queue(connection, "leadrelay")
        before = connection.info("memory")["used_memory"]
        for start in range(0, args.leads, 100):
            enqueue_new(
                q,
                SOURCES["meta"],
                [
                    (
                        str(first + i),
                        {"leadgen_id": str(first + i), "page_id": "1", "form_id": "2", "created_time": now - 60},
                    )
                    for i in range(start, min(start + 100, args.leads))
                ],
                via="webhook",
            )
        q.empty()  # the drain jobs the intake queued: this process drains instead
        jobs.drain(0)
        assert len({e["event_id"] for e in graph.events}) == args.leads, len(graph.events)
        connection.delete(*connection.keys("rq:*"))  # queue bookkeeping, not kept per lead
        after = connection.info("memory")["used_memory"]
        sizes, counts = defaultdict(int), defaultdict(int)
        for key in connection.scan_iter(count=1000):
            counts[kind(key)] += 1
            if counts[kind(key)] <= 500:
                sizes[kind(key)] += connection.memory_usage(key, samples=0) or 0
    graph.stop()
    print(
        f"{args.leads} Lead Ads leads read, sent and kept; used_memory grew "
        f"{(after - before) / args.leads:.0f} bytes per lead"
    )
    print(f"{'key kind':<12} {'keys':>7} {'bytes each':>10} {'per lead':>9}  kept")
    total = 0.0
    for name in sorted(counts):
        each = sizes[name] / min(counts[name], 500)
        per_lead = each * counts[name] / args.leads
        total += per_lead
        print(f"{name:<12} {counts[name]:>7} {each:>10.0f} {per_lead:>9.0f}  {KEPT.get(name, '')}")
    print(f"{'all':<12} {'':>7} {'':>10} {total:>9.0f}")


if __name__ == "__main__":
    main()
