"""Accounting soak: every item an answer accepted ends in exactly one place, per source.

Starts an embedded Redis, the Graph stand-in, leadrelay's web process under gunicorn and
two `leadrelay worker` processes (a third replaces one SIGKILLed mid-run with --kill). It
pushes signed Lead Ads notifications, then signed Standard Webhooks stage changes for
those leads (the body docs/signed.md gives, naming each by leadgen_id: the case that once
vanished), for leads nobody knows, and redeliveries. When everything has settled it looks
up each accepted item, one by one, and prints per source:

    accepted = sent + ignored + dead + waiting      (and unaccounted: any other)

sent: Meta has its event (a lead's Lead; a stage change's stage event for its lead);
ignored: `leadrelay ignored` lists it with its reason; dead: a dead letter; waiting: still
in the inbox, queued or scheduled. Exits 1 when an item is unaccounted.

    .venv/bin/python bench/accounting.py [--leads 300] [--stages 300] [--kill]
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import requests

sys.path[:0] = [str(Path(__file__).resolve().parent.parent), str(Path(__file__).resolve().parent)]

from benchenv import service_env  # noqa: E402
from soakparts import SECRET, Workers, notification  # noqa: E402
from soakparts import web as start_web  # noqa: E402

from workers.common.queues import connect, queue  # noqa: E402
from workers.failures import deadletters  # noqa: E402
from workers.intake import admission, inbox  # noqa: E402
from workers.run.embedded_redis import EmbeddedRedis, free_port  # noqa: E402
from workers.sources import signed  # noqa: E402
from workers.standin.server import GraphStandin  # noqa: E402

SIGNED_SECRET = "whsec_" + base64.b64encode(b"accounting-soak-secret-32-bytes!").decode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leads", type=int, default=300)
    parser.add_argument("--stages", type=int, default=300)
    parser.add_argument("--kill", action="store_true", help="SIGKILL a worker while stages drain")
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args()
    rng = random.Random(7)
    tmp = Path(tempfile.mkdtemp(prefix="leadrelay-accounting-"))
    standin = GraphStandin(any_lead=True)
    graph_url = standin.start()
    with EmbeddedRedis(tmp / "redis") as server, open(tmp / "processes.log", "w") as log:
        port = free_port()
        env = {
            **service_env(server.url, graph_url, str(tmp / "data"), "42"),
            "META_APP_SECRET": SECRET,  # what the soak's notifications are signed with
            "SIGNED_WEBHOOK_SECRET": SIGNED_SECRET,
            "LEADRELAY_LOG_LEVEL": "WARNING",
            "LEADRELAY_BIND": f"127.0.0.1:{port}",
            "WEB_CONCURRENCY": "2",
        }
        web = start_web(env, log)
        workers = Workers(env, 2, log)
        base = f"http://127.0.0.1:{port}"
        _wait(lambda: requests.get(f"{base}/readyz", timeout=1).ok, 30)
        connection = connect(server.url)
        accepted: dict[str, dict[str, str]] = {"meta": {}, "signed": {}}  # source -> job id -> what it is
        session = requests.Session()

        leads = [str(2 * 10**15 + i) for i in range(args.leads)]
        for lead in leads:
            standin.add_lead(lead, created_time=int(time.time()) - 60)
            body, headers = notification([lead], 1)
            if session.post(f"{base}/webhooks/meta", data=body, headers=headers).json()["accepted"]:
                accepted["meta"][f"lead-meta-{lead}"] = f"meta:{lead}:Lead"  # job ids are deterministic
        _wait(lambda: _settled(connection), args.timeout)

        stages = []
        for n in range(args.stages):
            kind = rng.choice(["named", "named", "named", "stranger", "nobody"])
            lead = rng.choice(leads) if kind == "named" else str(9 * 10**15 + n)
            doc = {"stage": rng.choice(["QualifiedLead", "Schedule"]), "occurred_at": int(time.time())}
            if kind != "nobody":
                doc["leadgen_id"] = lead
            stages.append((f"msg_{n}", json.dumps({**doc, "n": n}).encode(), lead, doc["stage"]))
        stages += [s for s in stages if rng.random() < 0.1]  # a sender's retries: the same message again
        rng.shuffle(stages)
        killed = False
        for i, (msg_id, body, lead, stage) in enumerate(stages):
            headers = {"Content-Type": "application/json", **signed.sign(SIGNED_SECRET, body, msg_id=msg_id)}
            if session.post(f"{base}/webhooks/signed", data=body, headers=headers).json()["accepted"]:
                accepted["signed"][f"stage-signed-{msg_id}"] = f"meta:{lead}:{stage}"
            if args.kill and not killed and i > len(stages) // 2:
                workers.kill_one(rng)
                killed = True
        _wait(lambda: _settled(connection), args.timeout)
        workers.stop()
        web.send_signal(signal.SIGTERM)
        web.wait(timeout=30)
        sent = {e["event_id"] for e in standin.events}
        ignored = _ignored_keys(connection)
        dead = {
            entry["job_id"]
            for entry in deadletters.select(connection, queue(connection, "leadrelay"), deadletters.Filter())
        }
        waiting = _waiting_ids(connection)
    standin.stop()
    unaccounted = 0
    print(f"{'source':<8}{'accepted':>10}{'sent':>8}{'ignored':>9}{'dead':>6}{'waiting':>9}{'unaccounted':>13}")
    for source, items in accepted.items():
        fate = Counter(_fate(job_id, event_id, sent, ignored, dead, waiting) for job_id, event_id in items.items())
        unaccounted += fate["unaccounted"]
        print(
            f"{source:<8}{len(items):>10}{fate['sent']:>8}{fate['ignored']:>9}{fate['dead']:>6}"
            f"{fate['waiting']:>9}{fate['unaccounted']:>13}"
        )
    print(f"workers 2{' (one SIGKILLed mid-run, replaced)' if args.kill else ''}; logs in {tmp}")
    sys.exit(1 if unaccounted else 0)


def _fate(job_id: str, event_id: str, sent: set, ignored: set, dead: set, waiting: set) -> str:
    """Where one accepted item ended: its event at Meta (for a stage change: its stage for
    its lead, the first of that stage per lead being the one sent), a record, a dead letter,
    or still waiting."""
    key = job_id.split("-", 2)[-1]  # lead-meta-<id>, stage-signed-<msg id>
    if event_id in sent:
        return "sent"
    if key in ignored:
        return "ignored"
    if job_id in dead:
        return "dead"
    if job_id in waiting:
        return "waiting"
    return "unaccounted"


def _ignored_keys(connection) -> set[str]:
    """The event keys (a stage change's message id) `leadrelay ignored` lists."""
    keys = set()
    for raw in connection.lrange(admission.IGNORED, 0, -1):
        item = json.loads(raw)
        keys.update(str(item[k]) for k in ("event_key", "leadgen_id") if item.get(k))
    return keys


def _waiting_ids(connection) -> set[str]:
    ids = {json.loads(fields[b"e"])["id"] for _, fields in connection.xrange(inbox.STREAM)}
    ids |= {j.decode() for j in connection.lrange("rq:queue:leadrelay", 0, -1)}
    ids |= {j.decode() for j in connection.zrange("rq:scheduled:leadrelay", 0, -1)}
    return ids


def _settled(connection) -> bool:
    busy = connection.xlen(inbox.STREAM) + connection.llen("rq:queue:leadrelay") + connection.zcard("rq:wip:leadrelay")
    return busy == 0


def _wait(check, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    quiet = 0
    while time.monotonic() < deadline:
        try:
            quiet = quiet + 1 if check() else 0
        except requests.RequestException:
            quiet = 0
        if quiet >= 4:  # settled four looks in a row: nothing left in flight
            return
        time.sleep(0.25)


if __name__ == "__main__":
    main()
