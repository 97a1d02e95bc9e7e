"""The readiness report and /metrics with 100,000 leads kept, against the same calls with
1,000, in one run: two embedded Redis servers, each holding a month of a funnel written
by the functions that count real events (the funnel's counters, the accuracy marks, the
stage lag), one Flask app on each. The goal: the report and the scrape cost the same
whatever the traffic, since they read counters and never the leads.

    .venv/bin/python bench/readiness.py [--small 1000] [--large 100000] [--rounds 100]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from benchenv import app_on  # noqa: E402

from workers.common.queues import connect  # noqa: E402
from workers.config.routing import DEFAULT  # noqa: E402
from workers.events import accuracymarks, conversions, funnel, stagelag  # noqa: E402
from workers.run.embedded_redis import EmbeddedRedis  # noqa: E402

DAY = 86400
PAGES = [("1000", "2000"), ("1001", "2001"), ("1002", "2002")]


def fill(connection, leads: int, now: float) -> None:
    """A month of `leads`: each Lead event counted, a quarter qualified, the last 7 days
    marked in the accuracy report, each stage's post counted on its source."""
    rng = random.Random(leads)
    for start in range(0, leads, 1000):
        with connection.pipeline(transaction=False) as pipe:
            for n in range(start, min(start + 1000, leads)):
                created = int(now - rng.random() * 30 * DAY)
                lead_id = 10**15 + n
                page, form = PAGES[n % len(PAGES)]
                lead = {"event_name": conversions.LEAD, "event_id": f"lead-{n}", "event_time": created}
                funnel.record(pipe, [{**lead, "user_data": {"lead_id": lead_id}}], DEFAULT, created + 5)
                if created > now - 8 * DAY:
                    marked = {"leadgen_id": str(lead_id), "page_id": page, "form_id": form, "created_time": created}
                    for kind in ("meta", "webhook", "confirmed"):
                        accuracymarks.mark(pipe, kind, [marked], now)
                if rng.random() < 0.25:
                    at = min(int(created + rng.uniform(0, 5) * DAY), int(now))
                    stage = {"event_name": "QualifiedLead", "event_id": f"q-{n}", "event_time": at}
                    stage["user_data"] = {"lead_id": lead_id}
                    funnel.record(pipe, [stage], DEFAULT, at + 600, {stage["event_id"]: created})
                    stagelag.record(pipe, "hubspot", [{"occurred_at": at}], [{"status": "accepted"}], at + 600)
            pipe.execute()


def timed(calls: dict, rounds: int) -> dict:
    """Median milliseconds of each call over `rounds`, the calls taking turns within each
    round (so a busy moment of the machine falls on both), after one warm-up each."""
    spent: dict = {name: [] for name in calls}
    for call in calls.values():
        call()
    for _ in range(rounds):
        for name, call in calls.items():
            start = time.perf_counter()
            call()
            spent[name].append((time.perf_counter() - start) * 1000)
    return {name: statistics.median(values) for name, values in spent.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=1000)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=100)
    args = parser.parse_args()
    from workers.reports import readiness

    now = time.time()
    with tempfile.TemporaryDirectory() as data:
        servers = {size: EmbeddedRedis(Path(data) / str(size)) for size in (args.small, args.large)}
        try:
            apps = {}
            for size, server in servers.items():
                url = server.start()
                started = time.perf_counter()
                fill(connect(url), size, now)
                print(f"{size:>7} leads written in {time.perf_counter() - started:.1f} s", flush=True)
                apps[size] = (app_on(url, data), connect(url))
            calls = {}
            for size, (app, connection) in apps.items():
                ext = app.extensions["leadrelay"]
                client = app.test_client()
                found = readiness.report(connection, ext["routes"], ext["settings"])
                leads = found["datasets"][0]["gates"][0]["value"]
                scraped = client.get("/metrics").get_data(as_text=True)
                served = f'leadrelay_readiness_figure{{dataset="default",gate="leads_30d"}} {float(leads)}' in scraped
                print(f"{size:>7} leads kept: {leads} in the last 30 days (/metrics agrees: {served})", flush=True)
                calls[("readiness report", size)] = lambda c=connection, e=ext: readiness.report(
                    c, e["routes"], e["settings"]
                )
                calls[("GET /metrics", size)] = lambda c=client: c.get("/metrics").get_data()
            medians = timed(calls, args.rounds)
            print(f"\n{'call':<18}{args.small:>10} leads{args.large:>10} leads{'ratio':>10}")
            for call in ("readiness report", "GET /metrics"):
                small, large = medians[(call, args.small)], medians[(call, args.large)]
                print(f"{call:<18}{small:>13.2f} ms{large:>13.2f} ms{large / small:>9.2f}x")
        finally:
            for server in servers.values():
                server.stop()


if __name__ == "__main__":
    main()
