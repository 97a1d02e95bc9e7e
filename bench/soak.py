"""Soak: thousands of signed webhooks while workers are killed and Meta misbehaves.

Starts an embedded Redis, the Graph stand-in with random faults (5xx, throttling,
dropped connections, timeouts), leadrelay's web process under gunicorn and several
`leadrelay worker` processes. It pushes signed leadgen notifications (some carrying
several leads, some delivered twice, as Meta does) while a chaos loop SIGKILLs a
random worker with its work horse and starts a new one. When the queue has drained
it counts the events the stand-in received, by event_id: lost, duplicated, dead letters.
With --clients N, N clients of an agency (a Page, a Page token, a dataset and a CAPI token
each, in a mapping file; the stand-in refuses any token on another client's lead or
dataset) share the run, and it also counts events that reached another client's dataset.

With --redis-restart, Redis stops and starts again once, halfway through the pushing.

With --drop-webhooks 0.3, that share of notifications is never sent (the leads exist at
the stand-in only) and the worker's sweep must find them; it prints how long the last
recovered lead took from its creation to Meta's confirmation.

    .venv/bin/python bench/soak.py [--leads 3000] [--workers 3] [--kill-every 2] [--fault-rate 0.15] [--clients 1]
                                   [--drop-webhooks 0] [--redis-restart]
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

sys.path[:0] = [str(Path(__file__).resolve().parent.parent), str(Path(__file__).resolve().parent)]

from soakparts import SECRET, Workers, agency, notification, page_of, recovered_leads, scraped  # noqa: E402
from soakparts import web as start_web  # noqa: E402

from workers.common.queues import SERIALIZER, connect  # noqa: E402
from workers.common.times import unix_time  # noqa: E402
from workers.failures import deadletters  # noqa: E402
from workers.intake import inbox  # noqa: E402
from workers.run.embedded_redis import EmbeddedRedis, free_port  # noqa: E402
from workers.standin.server import GraphStandin  # noqa: E402

FAULTS = [
    {"status": 500},
    {"status": 503, "error": {"code": 2, "is_transient": True}},
    {"status": 400, "error": {"code": 613, "message": "Calls to this api have exceeded the rate limit."}},
    {"status": 400, "error": {"code": 80005}},
    {"drop": True},  # connection reset before any answer
    {"delay": 1.0, "drop": True},  # a timeout: the request never reached Meta's processing
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leads", type=int, default=3000)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--kill-every", type=float, default=2.0, help="seconds between worker kills")
    parser.add_argument("--fault-rate", type=float, default=0.15, help="share of Graph calls that fail")
    parser.add_argument("--redeliver", type=float, default=0.1, help="share of notifications sent twice")
    parser.add_argument("--timeout", type=float, default=600, help="give up draining after this many seconds")
    parser.add_argument("--clients", type=int, default=1, help="clients of an agency sharing the run (1: none)")
    parser.add_argument(
        "--drop-webhooks",
        type=float,
        default=0.0,
        help="share of notifications never sent: the sweep must recover their leads",
    )
    parser.add_argument("--redis-restart", action="store_true", help="restart Redis once, halfway through")
    args = parser.parse_args()
    rng = random.Random(11)

    tmp = Path(tempfile.mkdtemp(prefix="leadrelay-soak-"))
    standin = GraphStandin(any_lead=True)
    standin.chaos_rate, standin.chaos_actions = args.fault_rate, FAULTS
    graph_url = standin.start()
    with EmbeddedRedis(tmp / "redis") as redis_server, open(tmp / "processes.log", "w") as log:
        port = free_port()
        env = {
            **os.environ,
            "REDIS_URL": redis_server.url,
            "META_APP_SECRET": SECRET,
            "META_VERIFY_TOKEN": "v",
            "META_PAGE_ACCESS_TOKEN": "page",
            "META_DATASET_ID": "42",
            "META_CAPI_ACCESS_TOKEN": "capi",
            "META_GRAPH_URL": graph_url,
            "LEADRELAY_RETRY_BASE_SECONDS": "0.2",
            "LEADRELAY_GRAPH_TIMEOUT_SECONDS": "0.5",
            "LEADRELAY_LOG_LEVEL": "WARNING",
            "LEADRELAY_BIND": f"127.0.0.1:{port}",
            "WEB_CONCURRENCY": "2",
            "LEADRELAY_SWEEP_SECONDS": "5",
            "LEADRELAY_SWEEP_GRACE_SECONDS": "3",
        }
        if args.clients > 1:
            for name in ("META_PAGE_ACCESS_TOKEN", "META_DATASET_ID", "META_CAPI_ACCESS_TOKEN"):
                env.pop(name)
            env |= agency(args.clients, standin, tmp)
        web = start_web(env, log)
        workers = Workers(env, args.workers, log)
        base = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                requests.get(f"{base}/readyz", timeout=1).raise_for_status()
                break
            except requests.RequestException:
                time.sleep(0.1)

        lead_ids = [str(10**15 + i) for i in range(args.leads)]
        if args.clients > 1:
            standin.lead_pages.update((lid, page_of(lid, args.clients)) for lid in lead_ids)
        for page in {page_of(lid, args.clients) for lid in lead_ids}:
            standin.page_forms[page] = [f"2{page}"]  # one Lead Ads form per Page (form ids are Graph ids)
        batches, i = [], 0
        while i < len(lead_ids):
            size = rng.choice([1, 1, 1, 2, 3])
            batches.append(lead_ids[i : i + size])
            i += size
        batches += [b for b in batches if rng.random() < args.redeliver]  # Meta redelivers
        rng.shuffle(batches)
        dropped = {id(b) for b in batches if rng.random() < args.drop_webhooks}
        never = {lid for b in batches if id(b) in dropped for lid in b} - {
            lid for b in batches if id(b) not in dropped for lid in b
        }
        statuses: Counter = Counter()
        answered_items = Counter()  # lead items in deliveries answered 200
        # Leads of a delivery answered anything but 200 (503 while Redis restarts): the
        # unanswered attempt may have stored them (Redis wrote the lead, its answer was lost
        # as it shut down), and then the retry that gets the 200 counts them as duplicates.
        unanswered = set()
        session = threading.local()

        def push(batch):
            if not hasattr(session, "s"):
                session.s = requests.Session()
            for lid in batch:  # the lead exists at Meta whether or not its webhook comes
                if lid not in standin.leads:
                    standin.add_lead(lid, form_id=f"2{page_of(lid, args.clients)}", created_time=int(time.time()))
            if id(batch) in dropped:
                return
            body, headers = notification(batch, args.clients)
            for _ in range(600):  # as Meta does, until it is acknowledged (a Redis restart answers 503)
                try:
                    status = session.s.post(f"{base}/webhooks/meta", data=body, headers=headers, timeout=10).status_code
                except requests.RequestException:
                    status = "connection error"
                statuses[status] += 1
                if status == 200:
                    answered_items[0] += len(batch)
                    return
                unanswered.update(batch)
                time.sleep(0.2)

        stop_chaos = threading.Event()

        restarts = []

        def chaos():
            while not stop_chaos.wait(args.kill_every):
                workers.replace_exited()  # as a process supervisor would
                workers.kill_one(rng)
                if args.redis_restart and not restarts and sum(statuses.values()) >= len(batches) / 2:
                    # Half the notifications are in: Redis stops (SIGTERM: it writes its append-only
                    # file out) and starts again on the same port and data, as a deploy or a failover
                    # would. Meanwhile the receiver answers 503 and the workers lose their connection.
                    down = time.time()
                    redis_server.stop()
                    redis_server.start()
                    restarts.append(time.time() - down)
                    workers.replace_exited()

        started = time.time()
        chaos_thread = threading.Thread(target=chaos, daemon=True)
        chaos_thread.start()
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(push, batches))
        pushed_in = time.time() - started

        connection = connect(redis_server.url)
        expected = {f"meta:{lid}:Lead" for lid in lead_ids}

        def pending() -> int:
            """Jobs not settled yet. The intermediate list holds jobs a worker popped but had
            not started when it was killed; RQ's own cleanup requeues them after a minute."""
            # Failed jobs without a dead letter are crashes the next sweep requeues.
            crashed = connection.zcard("rq:failed:leadrelay") - connection.zcard(deadletters.INDEX)
            sweeps = sum(1 for j in connection.zrange("rq:scheduled:leadrelay", 0, -1) if j.startswith(b"sweep-"))
            return (
                sum(connection.zcard(k) for k in ("rq:scheduled:leadrelay", "rq:wip:leadrelay"))
                - sweeps
                + sum(connection.llen(k) for k in ("rq:queue:leadrelay", "rq:queue:leadrelay:intermediate"))
                + max(crashed, 0)
                + connection.xlen(inbox.STREAM)
            )  # leads not finished by a drain job yet

        # Keep killing while the backlog drains, then let the last workers finish.
        while time.time() - started < args.timeout and pending() and time.time() - started < pushed_in * 2 + 10:
            time.sleep(0.5)
        stop_chaos.set()
        chaos_thread.join()
        workers.kill_one(rng)  # one more fresh worker: its start-up sweep finds any orphan
        quiet, last_report = 0, time.time()
        while time.time() - started < args.timeout and (
            quiet < 6 or len({e["event_id"] for e in standin.events}) < len(lead_ids)
        ):
            quiet = quiet + 1 if pending() == 0 else 0
            time.sleep(0.5)
            if time.time() - last_report > 15:
                last_report = time.time()
                print(
                    f"  draining: queued {connection.llen('rq:queue:leadrelay')}, scheduled "
                    f"{connection.zcard('rq:scheduled:leadrelay')}, running {connection.zcard('rq:wip:leadrelay')}, "
                    f"popped by killed workers {connection.llen('rq:queue:leadrelay:intermediate')}, "
                    f"received {len(set(e['event_id'] for e in standin.events))}",
                    flush=True,
                )
        drained_in = time.time() - started
        figures = scraped(requests.get(f"{base}/metrics", timeout=10).text)
        workers.stop()
        web.send_signal(signal.SIGTERM)
        web.wait(timeout=30)

        received = Counter(e["event_id"] for e in standin.events)
        from rq import Queue

        dead = deadletters.select(
            connection, Queue("leadrelay", connection=connection, serializer=SERIALIZER), deadletters.Filter()
        )
    standin.stop()
    lost = expected - set(received)
    owner = {f"meta:{lid}:Lead": str(9000 + int(page_of(lid, args.clients)) - 100) for lid in lead_ids}
    crossed = sum(1 for e in standin.events if args.clients > 1 and e["dataset_id"] != owner[e["event_id"]])
    duplicated = {k: n for k, n in received.items() if n > 1}
    graph_calls = len(standin.requests)
    print(
        f"leads {len(lead_ids)} in {len(batches)} signed notifications "
        f"({len(batches) - len(set(map(tuple, batches)))} redelivered); HTTP answers {dict(statuses)}"
    )
    print(
        f"workers {args.workers}, SIGKILLed (worker + horse) {workers.kills} times; Graph calls {graph_calls}, "
        f"fault rate {args.fault_rate:.0%}"
    )
    print(
        f"pushed in {pushed_in:.1f}s, drained in {drained_in:.1f}s"
        + (f"; Redis restarted once, down {restarts[0]:.1f}s" if restarts else "")
    )
    print(f"events received {sum(received.values())}, distinct event_ids {len(received)}")
    if never:
        confirmed_at = {
            e.get("event_id"): r["at"]
            for r in standin.requests
            if r["kind"] == "events" and r["body"]
            for e in r["body"].get("data", [])
        }
        took = [
            confirmed_at[f"meta:{lid}:Lead"] - unix_time(standin.leads[lid]["created_time"])
            for lid in never
            if f"meta:{lid}:Lead" in confirmed_at
        ]
        print(
            f"webhooks never sent for {len(never)} leads: the sweep recovered {len(took)}; the last took "
            f"{max(took, default=0):.1f}s from creation to Meta's confirmation "
            f"(median {sorted(took)[len(took) // 2] if took else 0:.1f}s)"
        )
    recovered = recovered_leads(tmp / "processes.log")
    killed_mid_send = {k for k in duplicated if "lead-" + k.rsplit(":", 1)[0].replace(":", "-") in recovered}
    print(
        f"lost {len(lost)}, duplicated {len(duplicated)}, dead letters {len(dead)} "
        f"{dict(Counter(d['reason'] for d in dead))}"
    )
    if args.clients > 1:
        per = Counter(e["dataset_id"] for e in standin.events)
        print(f"clients {args.clients}: events per dataset {dict(sorted(per.items()))}; cross-client events {crossed}")
    if duplicated:
        print(
            f"  of the duplicated, {len(killed_mid_send)} belong to jobs killed (or cut off from Redis) mid-run "
            f"and recovered: the send reached Meta, the answer never reached us; the resend carries the same "
            f"event_id, which Meta dedupes"
        )
    print(f"logs: {tmp / 'processes.log'}")
    if lost or set(duplicated) - killed_mid_send or crossed:
        print("examples:", sorted(lost)[:5], sorted(set(duplicated) - killed_mid_send)[:5])
        sys.exit(1)
    accepted = figures.get(("leadrelay_webhooks_received_total", "accepted", "meta"), 0)
    repeats = figures.get(("leadrelay_webhooks_received_total", "duplicate", "meta"), 0)
    confirmed = sum(
        v for k, v in figures.items() if k[0] == "leadrelay_events_sent_total" and k[2:] == ("Lead", "delivered")
    )
    retries = sum(v for k, v in figures.items() if k[0] == "leadrelay_retries_total")
    print(
        f"/metrics: webhooks accepted {accepted:.0f}, duplicate {repeats:.0f}; events confirmed {confirmed:.0f}; "
        f"retries {retries:.0f}"
    )
    # Every item answered 200 is counted once, accepted or duplicate; every lead whose
    # webhook came is counted accepted once, unless a delivery of it went unanswered (above).
    came = len(lead_ids) - len(never)
    if (
        accepted + repeats != answered_items[0]
        or not came - len(unanswered) <= accepted <= came
        or confirmed != len(lead_ids)
    ):  # the sweep brought the rest
        print("the metrics disagree with what the stand-in received")
        sys.exit(1)
    if accepted < came:
        print(
            f"  {came - accepted:.0f} leads counted duplicate, not accepted: stored by a delivery answered 503 "
            f"(Redis shut down before its answer went out), then acknowledged on Meta's retry"
        )


if __name__ == "__main__":
    main()
