"""Graph calls per lead the sweep recovers: 1,000 Lead Ads leads whose webhooks never
came, swept and sent, counted as Meta's rate limits count them (each list call, and
each request inside a Graph batch), against the Graph stand-in on an embedded Redis.

    .venv/bin/python bench/sweep.py [--leads 1000]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from benchenv import running_against  # noqa: E402

from workers.standin.server import GraphStandin  # noqa: E402

BIN = Path(sys.executable).parent
PAGE, FORM = "111", "555"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leads", type=int, default=1000)
    args = parser.parse_args()
    graph = GraphStandin()
    graph.page_forms[PAGE] = [FORM]
    created = int(time.time()) - 3600
    for n in range(args.leads):
        graph.add_lead(str(7200000000000000 + n), created_time=created - n, form_id=FORM)
    with running_against(graph) as (url, env):
        from workers import jobs
        from workers.common.queues import connect, queue
        from workers.config.settings import load
        from workers.events import accuracy
        from workers.sweep import sweeper

        connection = connect(url)
        accuracy.mark_now(connection, "webhook", [{"leadgen_id": "0", "page_id": PAGE, "form_id": FORM}])
        result = sweeper.sweep(jobs.install(load()), queue(connection, "leadrelay"))
        subprocess.run([str(BIN / "leadrelay"), "worker", "--burst"], env=env, check=True, capture_output=True)
    listings = len(graph.calls("form_leads"))
    batches = len(graph.calls("batch"))
    reads = len(graph.calls("lead"))  # each read, on its own or inside a batch (the stand-in records both)
    recovered = result["recovered"]
    sent = sum(1 for e in graph.events if e["event_name"] == "Lead")
    calls = listings + reads
    print(f"recovered {recovered} leads, {sent} Lead events sent")
    print(f"Graph calls as rate limits count them: {listings} lead lists, {reads} lead reads (in {batches} batches)")
    print(f"per recovered lead: {calls / max(recovered, 1):.3f}")


if __name__ == "__main__":
    main()
