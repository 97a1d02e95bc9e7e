"""Stage events per second, end to end with batching: API in, Conversions API out.

Starts an embedded Redis, the Graph stand-in, leadrelay's web process (gunicorn) and
workers; posts N stage changes in requests of --per-request items, and measures from
the first POST until the stand-in has received every event. Product goal: at least
2,000 events/s on a 2-core machine. Twice in one sitting: for people never seen (no lead
to attach), then for people who are known leads (their profiles written first, found by
their external id: the common case, a CRM moving leads we delivered), and the ratio.

    .venv/bin/python bench/stages.py [--events 20000] [--per-request 500] [--workers 2]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from workers.run.embedded_redis import EmbeddedRedis, free_port  # noqa: E402
from workers.standin.server import GraphStandin  # noqa: E402

BIN = Path(sys.executable).parent
TOKEN = "bench-api-token"
VALUE = {"value": 10, "currency": "EUR"}


@contextmanager
def running(standin: GraphStandin, workers: int, tmp: Path, extra: dict | None = None):
    """An embedded Redis, leadrelay's web process (gunicorn, 2 processes) and `workers`
    workers against `standin`; yields the web address, stops them all after."""
    with EmbeddedRedis(tmp / "redis") as redis_server, open(tmp / "processes.log", "w") as log:
        port = free_port()
        env = {
            **os.environ,
            "REDIS_URL": redis_server.url,
            "META_APP_SECRET": "s",
            "META_VERIFY_TOKEN": "v",
            "META_PAGE_ACCESS_TOKEN": "page",
            "META_DATASET_ID": "42",
            "META_CAPI_ACCESS_TOKEN": "capi",
            "META_GRAPH_URL": standin.url,
            "LEADRELAY_API_TOKEN": TOKEN,
            "LEADRELAY_LOG_LEVEL": "WARNING",
            "LEADRELAY_BIND": f"127.0.0.1:{port}",
            "WEB_CONCURRENCY": "2",
            **(extra or {}),
        }
        procs = [
            subprocess.Popen(
                [str(BIN / "gunicorn"), "-c", "python:webhook_app.gunicorn_conf", "webhook_app:create_app()"],
                env=env,
                cwd=ROOT,
                stdout=log,
                stderr=log,
            )
        ]
        procs += [
            subprocess.Popen([str(BIN / "leadrelay"), "worker"], env=env, cwd=ROOT, stdout=log, stderr=log)
            for _ in range(workers)
        ]
        base = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                requests.get(f"{base}/readyz", timeout=1).raise_for_status()
                break
            except requests.RequestException:
                time.sleep(0.1)
        try:
            yield base, redis_server.url
        finally:
            for proc in procs:
                proc.send_signal(signal.SIGTERM)
            for proc in procs:
                proc.wait(timeout=60)


def make_known(redis_url: str, prefix: str, events: int) -> None:
    """A delivered Lead Ads lead for each person `prefix-<i>`: its profile, found by its
    external id, and its Lead event in the ledger."""
    import redis

    from helpers import known_lead
    from workers.events import conversions, ledger, profiles
    from workers.identity.userdata import hash_value

    connection = redis.Redis.from_url(redis_url)
    with connection.pipeline(transaction=False) as pipe:
        for i in range(events):
            user_data = {"external_id": [hash_value("external_id", f"{prefix}-{i}")]}
            profiles.write(pipe, known_lead(8800000000000000 + i, user_data, "42"), 90)
            # Delivered: Meta has its Lead event, so no stage sends it first.
            ledger.confirm(pipe, conversions.event_id("meta", str(8800000000000000 + i), conversions.LEAD), "bench")
        pipe.execute()


def stage_api(base: str, standin: GraphStandin, events: int, per_request: int, prefix: str = "crm") -> dict:
    """Post `events` stage changes through the stage API, `per_request` a request; the
    figures once the stand-in has received them all."""
    before = len(standin.events)
    now = int(time.time())
    bodies = [
        [
            {"external_id": f"{prefix}-{i}", "stage": "QualifiedLead", "occurred_at": now, **VALUE}
            for i in range(start, min(start + per_request, events))
        ]
        for start in range(0, events, per_request)
    ]
    started = time.perf_counter()

    def post(body):
        return requests.post(
            f"{base}/api/v1/stage-events", json=body, timeout=60, headers={"Authorization": f"Bearer {TOKEN}"}
        ).json()["accepted"]

    with ThreadPoolExecutor(2) as pool:
        accepted = sum(pool.map(post, bodies))
    accepted_in = time.perf_counter() - started
    done_in = wait_for_events(standin, before + accepted, started)
    return {"requests": len(bodies), "accepted": accepted, "accepted_in": accepted_in, "done_in": done_in}


def wait_for_events(standin: GraphStandin, count: int, started: float, limit: float = 300) -> float:
    """Seconds from `started` until the stand-in holds `count` events (or the limit)."""
    while len(standin.events) < count and time.perf_counter() - started < limit:
        time.sleep(0.05)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--per-request", type=int, default=500)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    standin = GraphStandin()
    standin.url = standin.start()
    rates = {}
    with running(standin, args.workers, Path(tempfile.mkdtemp(prefix="leadrelay-stages-"))) as (base, redis_url):
        for kind, prefix in (("unknown people", "crm"), ("known leads", "lead")):
            if kind == "known leads":
                make_known(redis_url, prefix, args.events)
            before, calls = len(standin.events), len(standin.calls("events"))
            figures = stage_api(base, standin, args.events, args.per_request, prefix)
            accepted, accepted_in, done_in = figures["accepted"], figures["accepted_in"], figures["done_in"]
            received = len(standin.events) - before
            rates[kind] = received / done_in
            print(
                f"{kind}: {args.events} stage events in {figures['requests']} API requests of {args.per_request}; "
                f"{args.workers} workers, web WEB_CONCURRENCY=2, {os.cpu_count()} cores"
            )
            print(f"  accepted {accepted} in {accepted_in:.2f}s ({accepted / accepted_in:.0f}/s at the API)")
            print(
                f"  received by the stand-in {received} in {len(standin.calls('events')) - calls} Conversions API "
                f"requests, {done_in:.2f}s after the first POST: {rates[kind]:.0f} events/s end to end (goal >= 2000)"
            )
    standin.stop()
    print(f"known leads / unknown people, same sitting: {rates['known leads'] / rates['unknown people']:.2f}")


if __name__ == "__main__":
    main()
