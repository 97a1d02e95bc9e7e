"""The soak's cast and its readers (bench/soak.py): the signed notifications it pushes,
the worker processes it kills and replaces, an agency's mapping file, and what it reads
back afterwards: the jobs killed or cut off mid-send (from the processes' log lines) and
the /metrics figures."""

from __future__ import annotations

import hashlib
import hmac
import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import psutil

if TYPE_CHECKING:
    from workers.standin.server import GraphStandin

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
SECRET = "soak-app-secret"


def page_of(leadgen_id: str, clients: int) -> str:
    return str(100 + int(leadgen_id) % clients) if clients > 1 else "1"


def notification(leadgen_ids: list[str], clients: int) -> tuple[bytes, dict]:
    now = int(time.time())
    body = json.dumps(
        {
            "object": "page",
            "entry": [
                {
                    "id": page_of(lid, clients),
                    "time": now,
                    "changes": [
                        {
                            "field": "leadgen",
                            "value": {
                                "leadgen_id": lid,
                                "page_id": page_of(lid, clients),
                                "form_id": f"2{page_of(lid, clients)}",
                                "created_time": now,
                            },
                        }
                    ],
                }
                for lid in leadgen_ids
            ],
        }
    ).encode()
    digest = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    return body, {"Content-Type": "application/json", "X-Hub-Signature-256": f"sha256={digest}"}


def web(env: dict, log) -> subprocess.Popen:
    """leadrelay's web process under gunicorn with the shipped settings, its output to `log`."""
    return subprocess.Popen(
        [str(BIN / "gunicorn"), "-c", "python:webhook_app.gunicorn_conf", "webhook_app:create_app()"],
        env=env,
        cwd=ROOT,
        stdout=log,
        stderr=log,
    )


class Workers:
    """Worker processes that can be killed the hard way (worker and work horse) and replaced."""

    def __init__(self, env: dict, count: int, log):
        self.env, self.log, self.procs, self.kills = env, log, [], 0
        for _ in range(count):
            self.start()

    def start(self):
        self.procs.append(
            subprocess.Popen(
                [str(BIN / "leadrelay"), "worker"],
                env=self.env,
                cwd=ROOT,
                stdout=self.log,
                stderr=self.log,
                start_new_session=True,
            )
        )

    def kill_one(self, rng: random.Random):
        victim = self.procs.pop(rng.randrange(len(self.procs)))
        try:
            tree = [psutil.Process(victim.pid), *psutil.Process(victim.pid).children(recursive=True)]
        except psutil.NoSuchProcess:
            tree = []
        for process in tree:
            try:
                process.send_signal(signal.SIGKILL)
            except psutil.NoSuchProcess:
                pass
        victim.wait()
        self.kills += 1
        self.start()

    def replace_exited(self):
        """Start a new worker for each that exited on its own (a worker that lost Redis may)."""
        for proc in [p for p in self.procs if p.poll() is not None]:
            self.procs.remove(proc)
            self.start()

    def stop(self):
        for proc in self.procs:
            proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            proc.wait(timeout=60)


def agency(clients: int, standin: GraphStandin, tmp: Path) -> dict:
    """The mapping file and token variables for N clients, and the stand-in told whose is what."""
    lines, env = [], {"LEADRELAY_CONFIG": str(tmp / "agency.toml")}
    for c in range(clients):
        page, dataset = str(100 + c), str(9000 + c)
        lines += [
            f'[datasets.client{c}]\nid = "{dataset}"\ntoken_env = "CLIENT{c}_CAPI"\n',
            f'[pages.{page}]\ntoken_env = "CLIENT{c}_PAGE"\ndataset = "client{c}"\n',
        ]
        env |= {f"CLIENT{c}_CAPI": f"client{c}-capi", f"CLIENT{c}_PAGE": f"client{c}-page"}
        standin.add_client(page, f"client{c}-page", {dataset: f"client{c}-capi"})
    (tmp / "agency.toml").write_text("\n".join(lines))
    return env


def scraped(text: str) -> dict:
    """{(series, *label values in name order): value} from Prometheus text."""
    from prometheus_client.parser import text_string_to_metric_families

    return {
        (s.name, *(v for _, v in sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def recovered_leads(log: Path) -> set[str]:
    """Job ids of the leads whose job was killed or cut off from Redis mid-run and then
    recovered: a lead's own job, a drain job's reclaimed or resumed entries, the leads of
    a batch retry job. A resend of their events (same event_id) is expected."""
    recovered, batched = set(), {}
    for line in log.read_text().splitlines():
        if '"batch_retry"' in line:  # leads retried together in one job
            batched[json.loads(line)["job_id"]] = json.loads(line)["job_ids"]
        if '"job_recovered"' in line:
            recovered.add(json.loads(line)["job_id"])
        if '"inbox_reclaimed"' in line or '"inbox_resumed"' in line:  # a drain job killed, or stopped by
            recovered.update(json.loads(line)["job_ids"])  # the Redis restart, with them in hand
    recovered.update(lead for job in recovered & batched.keys() for lead in batched[job])  # a batch job killed
    return recovered
