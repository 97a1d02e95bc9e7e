"""Redis commands per delivered lead: 1,000 Lead Ads leads put in the inbox as webhooks
bring them, then sent by one `leadrelay worker --burst` against the Graph stand-in; the
commands Redis processed during the burst (drain jobs, RQ's own bookkeeping, counters,
profiles, the ledger, the accuracy marks), divided by the leads delivered. Give another
checkout's root to measure that tree with the same script.

    .venv/bin/python bench/commands.py [ROOT] [--leads 1000]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default=str(HERE))
    parser.add_argument("--leads", type=int, default=1000)
    args = parser.parse_args()
    root = Path(args.root).resolve()
    sys.path[:0] = [str(root)]
    from benchenv import running_against

    from workers.common.queues import connect, queue
    from workers.standin.server import GraphStandin

    graph = GraphStandin(any_lead=True)
    with running_against(graph) as (url, env):
        from workers.intake.admission import enqueue_new
        from workers.sources.registry import SOURCES

        connection = connect(url)
        q = queue(connection, "leadrelay")
        for start in range(0, args.leads, 100):
            ids = [str(10**15 + n) for n in range(start, min(start + 100, args.leads))]
            leads = [
                (i, {"leadgen_id": i, "page_id": "111", "form_id": "555", "created_time": int(time.time())})
                for i in ids
            ]
            enqueue_new(q, SOURCES["meta"], leads, via="webhook")
        before = connection.info("stats")["total_commands_processed"]
        worker = [sys.executable, "-c", "from workers.cli import main; main()", "worker", "--burst"]
        subprocess.run(worker, env={**env, "PYTHONPATH": str(root)}, cwd=root, check=True, capture_output=True)
        after = connection.info("stats")["total_commands_processed"]
    sent = sum(1 for e in graph.events if e["event_name"] == "Lead")
    print(f"{root}: {sent} leads delivered, {(after - before) / max(sent, 1):.1f} Redis commands per lead")


if __name__ == "__main__":
    main()
