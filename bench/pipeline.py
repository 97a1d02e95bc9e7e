"""Pipeline throughput: a backlog of Lead Ads leads through the workers to the Graph
stand-in, in leads/s and worker CPU per lead, next to a minimal one-lead-per-job RQ
worker in the same run.

For each worker count (1, 2, 4) and stand-in latency (0 and 100 ms per HTTP request):
- leadrelay: `leadrelay worker` processes; the leads go in through the receiver's own
  intake (inbox.admit, 100 leads per call, as webhooks would), after the workers are up;
- minimal: `rq worker` (SimpleWorker) processes running bench/minimal_job.py, one RQ job
  per lead doing one lead read and one event send with `requests`.
It times from the first lead in to the last event the stand-in received, and reads the
workers' CPU time (user + system, from the kernel) over the same span.

    .venv/bin/python bench/pipeline.py [--leads 2000] [--reference-leads 500] [--workers 1,2,4] [--latency 0,0.1]
        [--rounds 3]

Leads go in as webhooks bring them (marked for the accuracy report) and the workers run at
the shipped log level (INFO). The stand-in waits `latency` once per HTTP request: a Graph
batch of 50 reads, or a Conversions API request of many events, costs one wait, which
assumes Meta answers a batch as fast as one call.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from rq import Queue, Worker  # noqa: E402

from workers.common.queues import SERIALIZER, connect  # noqa: E402
from workers.intake.admission import enqueue_new  # noqa: E402
from workers.run.embedded_redis import EmbeddedRedis  # noqa: E402
from workers.sources.registry import SOURCES  # noqa: E402
from workers.standin.server import GraphStandin  # noqa: E402

BIN = Path(sys.executable).parent
REFERENCE = "batch"  # --reference
FIRST_ID = 7_000_000_000_000_000


def environment(redis_url: str, graph_url: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("META_", "LEADRELAY_"))}
    return {
        **env,
        "REDIS_URL": redis_url,
        "META_GRAPH_URL": graph_url,
        "META_APP_SECRET": "bench-secret",
        "META_VERIFY_TOKEN": "bench",
        "META_PAGE_ACCESS_TOKEN": "bench-page",
        "META_CAPI_ACCESS_TOKEN": "bench-capi",
        "META_DATASET_ID": "4242424242",
        "LEADRELAY_ENV_FILE": "",  # the log level is the shipped one (INFO): the product as it runs
        "LEADRELAY_SWEEP_SECONDS": "0",
        "LEADRELAY_DATA_DIR": tempfile.mkdtemp(prefix="leadrelay-bench-"),
        "PYTHONPATH": str(ROOT / "bench"),
    }


def start_workers(kind: str, count: int, env: dict, connection) -> list[subprocess.Popen]:
    command = (
        [str(BIN / "leadrelay"), "worker"]
        if kind == "leadrelay"
        else [
            str(BIN / "rq"),
            "worker",
            "-w",
            "rq.worker.SimpleWorker",
            "--url",
            env["REDIS_URL"],
            "-q",
            "--serializer",
            "rq.serializers.JSONSerializer",
            "minimal",
        ]
    )
    procs = [
        subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(count)
    ]
    deadline = time.monotonic() + 60
    while len(Worker.all(connection=connection)) < count:
        if time.monotonic() > deadline:
            raise SystemExit(f"{kind} workers did not start")
        time.sleep(0.1)
    return procs


def cpu_seconds(procs: list[subprocess.Popen]) -> float:
    total = 0.0
    for proc in procs:
        times = psutil.Process(proc.pid).cpu_times()
        total += times.user + times.system
    return total


def feed(kind: str, connection, leads: list[str]) -> None:
    if kind == "leadrelay":
        source = SOURCES["meta"]
        queue = Queue("leadrelay", connection=connection, serializer=SERIALIZER)
        for start in range(0, len(leads), 100):
            chunk = leads[start : start + 100]
            enqueue_new(
                queue,
                source,
                [
                    (lid, {"leadgen_id": lid, "page_id": "111", "form_id": "555", "created_time": int(time.time())})
                    for lid in chunk
                ],
                via="webhook",  # as a webhook brings them: the drain marks them for the accuracy report
            )
        return
    queue = Queue("minimal", connection=connection, serializer=SERIALIZER)
    with connection.pipeline() as pipe:
        if REFERENCE == "batch":  # a job per 50 leads, as leadrelay's drain takes them
            for start in range(0, len(leads), 50):
                queue.enqueue("minimal_job.relay_batch", leads[start : start + 50], pipeline=pipe, result_ttl=0)
        else:
            for lid in leads:
                queue.enqueue("minimal_job.relay", lid, pipeline=pipe, result_ttl=0)
        pipe.execute()


def measure(
    kind: str, workers: int, latency: float, leads: int, server: EmbeddedRedis, graph: GraphStandin, first: int
) -> dict:
    connection = connect(server.url)
    connection.flushdb()
    graph.events.clear()
    graph.requests.clear()
    graph.latency = latency
    env = environment(server.url, graph.url)
    procs = start_workers(kind, workers, env, connection)
    try:
        ids = [str(first + i) for i in range(leads)]
        cpu_before, redis_before = cpu_seconds(procs), _redis_cpu(connection)
        started = time.perf_counter()
        feed(kind, connection, ids)
        while len(graph.events) < leads:
            if time.perf_counter() - started > 600:
                raise SystemExit(f"{kind}: {len(graph.events)} of {leads} events after 600 s")
            time.sleep(0.01)
        elapsed = time.perf_counter() - started
        cpu = cpu_seconds(procs) - cpu_before
        redis_cpu = _redis_cpu(connection) - redis_before
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=30)
    distinct = len({event["event_id"] for event in graph.events})
    return {
        "leads_per_s": leads / elapsed,
        "cpu_ms_per_lead": cpu * 1000 / leads,
        "redis_ms_per_lead": redis_cpu * 1000 / leads,
        "events": len(graph.events),
        "distinct": distinct,
        "calls": len(graph.requests),
    }


def _spread(runs: list[dict], key: str) -> str:
    values = [run[key] for run in runs]
    return f"{min(values):.0f} / {statistics.median(values):.0f} / {max(values):.0f}"


def _median(runs: list[dict]) -> float:
    return statistics.median(run["leads_per_s"] for run in runs)


def _redis_cpu(connection) -> float:
    info = connection.info("cpu")
    return info["used_cpu_sys"] + info["used_cpu_user"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leads", type=int, default=2000)
    parser.add_argument(
        "--reference-leads",
        type=int,
        default=500,
        help="leads for the minimal worker (slower: fewer keep the run short; it prints a rate)",
    )
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--latency", default="0,0.1", help="stand-in seconds per HTTP request, comma-separated")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each, for min/median/max")
    parser.add_argument(
        "--reference", choices=("batch", "single"), default="batch", help="minimal job: per 50 leads, or per lead"
    )
    args = parser.parse_args()
    global REFERENCE
    REFERENCE = args.reference
    graph = GraphStandin(any_lead=True)
    graph.url = graph.start()
    first = FIRST_ID
    print(
        f"{args.leads} leads per leadrelay run, {args.reference_leads} per minimal run, {os.cpu_count()} cores; "
        "minimal = one RQ job per "
        + ("50 leads, a Graph batch read and one event send" if REFERENCE == "batch" else "lead, two requests")
    )
    print(
        f"{'latency':>8} {'workers':>7} | {'leadrelay/s min/median/max':>28} {'cpu ms':>7} {'redis ms':>8} | "
        f"{'minimal/s min/median/max':>26} {'cpu ms':>7} | {'ratio':>6}"
    )
    with EmbeddedRedis(Path(tempfile.mkdtemp(prefix="leadrelay-bench-redis-"))) as server:
        for latency in (float(x) for x in args.latency.split(",")):
            for workers in (int(x) for x in args.workers.split(",")):
                ours, base = [], []
                for _ in range(args.rounds):  # the two take turns: a busy moment falls on both
                    ours.append(measure("leadrelay", workers, latency, args.leads, server, graph, first))
                    first += args.leads
                    base.append(measure("minimal", workers, latency, args.reference_leads, server, graph, first))
                    first += args.leads
                    assert ours[-1]["distinct"] == ours[-1]["events"] == args.leads, ours[-1]
                rate, reference = _spread(ours, "leads_per_s"), _spread(base, "leads_per_s")
                print(
                    f"{latency * 1000:>6.0f}ms {workers:>7} | {rate:>28} "
                    f"{statistics.median(r['cpu_ms_per_lead'] for r in ours):>7.2f} "
                    f"{statistics.median(r['redis_ms_per_lead'] for r in ours):>8.2f} | "
                    f"{reference:>26} {statistics.median(r['cpu_ms_per_lead'] for r in base):>7.2f} | "
                    f"{_median(ours) / _median(base):>5.2f}x",
                    flush=True,
                )
    graph.stop()


if __name__ == "__main__":
    main()
