"""GET /metrics with 100 dead letters against 100,000, with 10 forms against 1,000 (on ten
Pages), and with 100 Pages against 1,000 and 10,000 (a form each), in one run: seven
embedded Redis servers, each filled through the functions the service uses (dead letters
recorded, Lead Ads leads marked for the accuracy report), one Flask app on each, the
scrapes taking turns. Then the once-a-minute recompute (per-Page accuracy, readiness) on
each, and the once-a-day sum of the window (when a day leaves it). The goal: a scrape and
the recompute cost the same whatever the account holds (an agency scrapes every 15 s,
forever). Past 50 Pages the named series stop growing (the rest are summed), so Pages are
compared from 100 up.

    .venv/bin/python bench/metrics.py [--rounds 60]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from benchenv import app_on  # noqa: E402

from workers.common.queues import connect  # noqa: E402
from workers.events import accuracymarks  # noqa: E402
from workers.failures import deadletters  # noqa: E402
from workers.run.embedded_redis import EmbeddedRedis  # noqa: E402

DAY = 86400


def dead_letters(connection, count: int, now: float) -> None:
    for n in range(count):
        reason = ("invalid", "transient", "auth", "expired")[n % 4]
        deadletters.record(
            connection,
            {
                "job_id": f"lead-meta-{10**15 + n}",
                "source": "meta",
                "reason": reason,
                "attempts": 1,
                "first_attempt_at": now,
                "last_attempt_at": now,
                "event_time": int(now),
                "args": {"leadgen_id": str(10**15 + n)},
            },
        )


def forms(connection, count: int, now: float, leads_per_form: int = 5, pages: int = 10) -> None:
    with connection.pipeline(transaction=False) as pipe:
        for form in range(count):
            page, form_id = str(100 + form % pages), str(5000 + form)  # ten Pages unless `pages` says
            for n in range(leads_per_form):
                lead = {"leadgen_id": f"{form}-{n}", "page_id": page, "form_id": form_id}
                lead["created_time"] = now - (n % 7) * DAY
                for kind in ("webhook", "confirmed"):
                    accuracymarks.mark(pipe, kind, [lead], now)
            if form % 100 == 99:
                pipe.execute()
        pipe.execute()


def line(name: str, values: list[float]) -> None:
    print(f"{name:<22}{min(values):>7.1f}ms{statistics.median(values):>7.1f}ms{max(values):>7.1f}ms")


def ratios(spent: dict[str, list[float]], pairs) -> None:
    for small, large in pairs:
        ratio = statistics.median(spent[large]) / statistics.median(spent[small])
        print(f"{large} against {small}: {ratio:.2f}x (medians)")


def recompute(client, connection, kept_key: str, rounds: int) -> list[float]:
    """A scrape that finds the slow figures gone (the first of each minute)."""
    spent = []
    for _ in range(max(5, rounds // 6)):
        connection.delete(kept_key)
        start = time.perf_counter()
        client.get("/metrics").get_data()
        spent.append((time.perf_counter() - start) * 1000)
    return spent


def roll(connection, rounds: int) -> list[float]:
    """The first read of a new day: the window's sums made again from its days."""
    from workers.events import accuracyrollup
    from workers.events.accuracy import window_key

    spent = []
    for _ in range(max(5, rounds // 6)):
        connection.delete(window_key("from"))
        start = time.perf_counter()
        accuracyrollup.window_days(connection, None)
        spent.append((time.perf_counter() - start) * 1000)
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=60)
    args = parser.parse_args()
    now = time.time()
    cases = {
        "100 dead letters": lambda c: dead_letters(c, 100, now),
        "100,000 dead letters": lambda c: dead_letters(c, 100_000, now),
        "10 forms": lambda c: forms(c, 10, now),
        "1,000 forms": lambda c: forms(c, 1000, now),
        "100 Pages": lambda c: forms(c, 100, now, pages=100),  # a form each
        "1,000 Pages": lambda c: forms(c, 1000, now, pages=1000),
        "10,000 Pages": lambda c: forms(c, 10_000, now, pages=10_000),
    }
    with tempfile.TemporaryDirectory() as data:
        servers = {name: EmbeddedRedis(Path(data) / str(i)) for i, name in enumerate(cases)}
        try:
            clients = {}
            for name, fill in cases.items():
                url = servers[name].start()
                started = time.perf_counter()
                fill(connect(url))
                print(f"{name:<22} written in {time.perf_counter() - started:.1f} s", flush=True)
                clients[name] = app_on(url, data).test_client()
            spent: dict[str, list[float]] = {name: [] for name in cases}
            sizes = {name: len(client.get("/metrics").get_data()) for name, client in clients.items()}
            for _ in range(args.rounds):
                for name, client in clients.items():
                    start = time.perf_counter()
                    client.get("/metrics").get_data()
                    spent[name].append((time.perf_counter() - start) * 1000)
            print(f"\n{'GET /metrics with':<22}{'min':>9}{'median':>9}{'max':>9}   body")
            for name, values in spent.items():
                print(
                    f"{name:<22}{min(values):>7.1f}ms{statistics.median(values):>7.1f}ms{max(values):>7.1f}ms"
                    f"   {sizes[name] / 1024:.0f} KB"
                )
            pairs = (
                ("100 dead letters", "100,000 dead letters"),
                ("10 forms", "1,000 forms"),
                ("100 Pages", "1,000 Pages"),
                ("100 Pages", "10,000 Pages"),
                ("10 forms", "10,000 Pages"),
            )
            ratios(spent, pairs)
            # What the first scrape of each minute pays to compute the slow figures again.
            try:
                from webhook_app.readinessmetrics import SLOW
            except ImportError:  # a tree from before the figures were kept: each scrape computes them
                return

            print("\nonce a minute (the accuracy and readiness reports computed again):")
            again = {name: recompute(clients[name], connect(servers[name].url), SLOW, args.rounds) for name in cases}
            for name, values in again.items():
                line(name, values)
            ratios(again, pairs[1:])
            print("\nonce a day (a day leaves the window: its per-Page sums made again from the days):")
            daily = {name: roll(connect(servers[name].url), args.rounds) for name in cases if "Pages" in name}
            for name, values in daily.items():
                line(name, values)
            ratios(daily, pairs[2:4])
        finally:
            for server in servers.values():
                server.stop()


if __name__ == "__main__":
    main()
