"""Failover on Sentinel: what a SIGKILLed primary costs, with and without the replica wait.

Real servers on loopback (tests/redistopology.py): a Redis primary, a replica and three
Sentinels; leadrelay's web (gunicorn, as shipped) and two workers on the Sentinel
REDIS_URL; the Graph stand-in as Meta. Posters send signed leads steadily, each retried
until it is answered 200 as Meta retries. Halfway, the replica falls behind (its link is
cut for --lag-seconds, as a slow or partitioned replica does; 0: none) and the primary is
SIGKILLed. Meta (the stand-in) answers in --meta-ms (200), so leads wait in the inbox
while a batch is out, as they do live. Sentinel promotes the replica; the old primary comes back --return-seconds
later as the new replica. Then everything drains and the stand-in's events are counted:

    acknowledged  leads answered 200
    lost          acknowledged, never delivered
    duplicated    leads delivered more than once (Meta keeps one per event_id)
    other ids     leads delivered under more than one event_id (must be 0)

The same run is made with LEADRELAY_REPLICA_ACKS=0 (no wait) and =1 (wait for the
replica). Then the ingest cost of the wait: requests/s through the same web on the same
primary and replica, the wait off and on, alternated (bench/ingest.py's closed-loop load).

    .venv/bin/python bench/failover.py [--seconds 8] [--lag-seconds 1] [--posters 4] [--ingest-seconds 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench"), str(ROOT / "tests")]

import ingest  # noqa: E402
from benchenv import service_env, stop_all  # noqa: E402
from redistopology import Topology  # noqa: E402

from workers.common.queues import connect  # noqa: E402
from workers.intake import inbox  # noqa: E402
from workers.run.embedded_redis import free_port  # noqa: E402
from workers.standin.server import GraphStandin  # noqa: E402

BIN = Path(sys.executable).parent


def _start(command: str, env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        [str(BIN / "leadrelay"), command],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _ready(base: str) -> bool:
    try:
        return requests.get(f"{base}/readyz", timeout=1).status_code == 200
    except requests.RequestException:
        return False


class Posters:
    """Threads posting new signed leads until stopped; each lead until it is answered 200."""

    def __init__(self, base: str, count: int):
        self.base, self.count = base, count
        self.acknowledged: list[str] = []
        self.refused: Counter = Counter()
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self._post, args=(n,), daemon=True) for n in range(count)]
        self.lock = threading.Lock()

    def _post(self, worker: int) -> None:
        session, i = requests.Session(), 0
        while not self.stopping.is_set():
            i += 1
            body, headers = ingest.signed_lead(worker, worker * 10**6 + i)
            lead = body.split(b'"leadgen_id": "')[1].split(b'"')[0].decode()
            while True:  # as Meta does: the same notification until a 2xx
                try:
                    answer = session.post(f"{self.base}/webhooks/meta", data=body, headers=headers, timeout=10)
                    if answer.status_code == 200:
                        with self.lock:
                            self.acknowledged.append(lead)
                        break
                    self.refused[answer.json().get("error", answer.status_code)] += 1
                except requests.RequestException:
                    self.refused["connection"] += 1
                time.sleep(0.05)
            time.sleep(0.01)

    def __enter__(self):
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc):
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=60)


def failover_run(args, acks: str, folder: Path) -> dict:
    graph = GraphStandin(any_lead=True)
    graph.latency = args.meta_ms / 1000  # as Meta answers: leads wait in the inbox meanwhile
    base_graph = graph.start()
    topology = Topology(folder / f"redis-{acks}").start()
    port = free_port()
    env = {
        **service_env(topology.url, base_graph, str(folder / f"data-{acks}"), graph.dataset_id),
        "META_APP_SECRET": ingest.SECRET,
        "LEADRELAY_REPLICA_ACKS": acks,
        "LEADRELAY_REPLICA_ACK_TIMEOUT_MS": "500",
        "LEADRELAY_BIND": f"127.0.0.1:{port}",
        "WEB_CONCURRENCY": "2",
    }
    processes = [_start("web", env), _start("worker", env), _start("worker", env)]
    base = f"http://127.0.0.1:{port}"
    try:
        topology.wait(lambda: _ready(base))
        with Posters(base, args.posters) as posters:
            time.sleep(args.seconds / 2)
            if args.lag_seconds:
                topology.cut_replica()
                time.sleep(args.lag_seconds)
            killed = time.monotonic()
            topology.kill("primary")
            topology.resume("replica")
            topology.wait(topology.failed_over)
            promoted = time.monotonic() - killed
            time.sleep(args.return_seconds)
            topology.restart("primary")
            topology.wait(topology.rejoined)
            time.sleep(args.seconds / 2)
        connection = connect(topology.url)
        topology.wait(lambda: inbox.waiting(connection) == {"inbox": 0, "taken": 0}, timeout=120)
        time.sleep(2)  # the last batch's events reach the stand-in
        sent = Counter(str(event["user_data"].get("lead_id")) for event in graph.events)
        event_ids: dict[str, set] = {}
        for event in graph.events:
            event_ids.setdefault(str(event["user_data"].get("lead_id")), set()).add(event["event_id"])
        acknowledged = set(posters.acknowledged)
        return {
            "acknowledged": len(acknowledged),
            "lost": len(acknowledged - set(sent)),
            "duplicated": sum(1 for n in sent.values() if n > 1),
            "other_event_id": sum(1 for ids in event_ids.values() if len(ids) > 1),
            "delivered": len(sent),
            "failover_s": promoted,
            "refused": dict(posters.refused),
        }
    finally:
        stop_all(processes)
        topology.stop()
        graph.stop()


def ingest_cost(args, folder: Path) -> dict[str, list[float]]:
    """Requests/s through the shipped web, the replica wait off and on, alternated."""
    topology = Topology(folder / "redis-ingest").start()
    try:
        env = {**os.environ, "REDIS_URL": topology.url, "META_APP_SECRET": ingest.SECRET, "META_VERIFY_TOKEN": "v"}
        load = argparse.Namespace(
            redis=connect(topology.url),
            redis_pid=topology.processes["primary"].pid,
            seconds=args.ingest_seconds,
            wrk=False,
            connections=args.connections,
        )
        rates: dict[str, list[float]] = {"0": [], "1": []}
        for _ in range(args.rounds):
            for acks in rates:
                result = ingest.measure("webhook_app:create_app()", {**env, "LEADRELAY_REPLICA_ACKS": acks}, ROOT, load)
                rates[acks].append(result["rps"])
        return rates
    finally:
        topology.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8, help="posting, before and after the failover")
    parser.add_argument("--lag-seconds", type=float, default=1.0, help="the replica behind before the kill (0: none)")
    parser.add_argument("--return-seconds", type=float, default=2.0, help="the old primary back after the failover")
    parser.add_argument("--posters", type=int, default=4)
    parser.add_argument("--meta-ms", type=float, default=200, help="how long the stand-in takes to answer")
    parser.add_argument("--ingest-seconds", type=float, default=5)
    parser.add_argument("--connections", type=int, default=8, help="ingest cost: closed-loop connections")
    parser.add_argument("--rounds", type=int, default=2, help="ingest cost: alternated rounds")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        runs = {acks: failover_run(args, acks, Path(tmp)) for acks in ("0", "1")}
        rates = ingest_cost(args, Path(tmp))
    print(
        f"failover: primary SIGKILLed after {args.seconds / 2:g}s of steady posting ({args.posters} posters), "
        f"the replica {args.lag_seconds:g}s behind; old primary back {args.return_seconds:g}s after"
    )
    print(
        f"{'replica wait':<14} {'acknowledged':>12} {'lost':>6} {'duplicated':>10} {'other ids':>9} "
        f"{'failover s':>10}  answers other than 200 (retried)"
    )
    for acks, run in runs.items():
        label = "off (0)" if acks == "0" else "on (1)"
        print(
            f"{label:<14} {run['acknowledged']:>12} {run['lost']:>6} {run['duplicated']:>10} "
            f"{run['other_event_id']:>9} {run['failover_s']:>10.1f}  {run['refused']}"
        )
    off, on = statistics.median(rates["0"]), statistics.median(rates["1"])
    print(
        f"ingest, {args.connections} connections, {args.ingest_seconds:g}s x {args.rounds} rounds alternated: "
        f"wait off {off:.0f} req/s, on {on:.0f} req/s (runs {rates}); ratio on/off {on / off:.2f}"
    )


if __name__ == "__main__":
    main()
