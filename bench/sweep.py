"""Graph calls per lead the sweep recovers: 1,000 Lead Ads leads, all of them or one in ten
without their webhook, swept and sent, counted as Meta's rate limits count them (each list
call, and each request inside a Graph batch), against the Graph stand-in on an embedded
Redis. With one in ten missing, no answers of a lead already delivered may be read.

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


def scenario(leads: int, every: int) -> dict:
    """`leads` leads, every `every`-th with no webhook (1: all of them), the rest delivered by
    their webhooks first; then one sweep and a worker: the Graph calls the sweep and the
    recovered leads' sending cost, and the answers read of leads already delivered."""
    graph = GraphStandin()
    graph.page_forms[PAGE] = [FORM]
    created = int(time.time()) - 3600
    ids = [str(7200000000000000 + n) for n in range(leads)]
    for n, leadgen_id in enumerate(ids):
        graph.add_lead(leadgen_id, created_time=created - n, form_id=FORM)
    with running_against(graph) as (url, env):
        from workers import jobs
        from workers.common.queues import connect, queue
        from workers.config.settings import load
        from workers.events import accuracymarks
        from workers.intake import admission, kinds
        from workers.sources.registry import SOURCES
        from workers.sweep import sweeper

        connection = connect(url)
        ctx = jobs.install(load())
        delivered = [
            {"leadgen_id": i, "page_id": PAGE, "form_id": FORM, "created_time": created - n}
            for n, i in enumerate(ids)
            if n % every
        ]
        work, _ = kinds.lead_jobs(SOURCES["meta"], delivered, ctx.routes, ctx.processing)
        admission.enqueue_new(queue(connection, "leadrelay"), SOURCES["meta"], work, via="webhook")
        accuracymarks.mark_now(connection, "webhook", [{"leadgen_id": "0", "page_id": PAGE, "form_id": FORM}])
        subprocess.run([str(BIN / "leadrelay"), "worker", "--burst"], env=env, check=True, capture_output=True)
        before = {kind: len(graph.calls(kind)) for kind in ("form_leads", "batch", "lead")}
        answered_before = len([c for c in graph.calls("form_leads") if "field_data" in str(c.get("query"))])
        result = sweeper.sweep(ctx, queue(connection, "leadrelay"))
        subprocess.run([str(BIN / "leadrelay"), "worker", "--burst"], env=env, check=True, capture_output=True)
    listings = len(graph.calls("form_leads")) - before["form_leads"]
    reads = len(graph.calls("lead")) - before["lead"]  # each read, on its own or inside a batch
    answer_lists = [c for c in graph.calls("form_leads") if "field_data" in str(c.get("query"))][answered_before:]
    recovered = result["recovered"]
    return {
        "recovered": recovered,
        "listings": listings,
        "reads": reads,
        "answer_listings": len(answer_lists),
        "per_recovered": (listings + reads) / max(recovered, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leads", type=int, default=1000)
    args = parser.parse_args()
    for every, name in ((1, "all missing"), (10, "one in ten missing")):
        found = scenario(args.leads, every)
        print(
            f"{name:>19}: recovered {found['recovered']} of {args.leads} leads; Graph calls as rate limits "
            f"count them: {found['listings']} lead lists ({found['answer_listings']} with answers), "
            f"{found['reads']} lead reads; per recovered lead {found['per_recovered']:.3f}"
        )


if __name__ == "__main__":
    main()
