"""Signed-webhook ingest: leadrelay's receiver next to a bare Flask endpoint.

All run under the same gunicorn settings (webhook_app/gunicorn_conf.py) in the same run, against the
same embedded Redis, with the same closed-loop load: every request is a new, correctly
signed leadgen notification. Prints requests/s, p50/p99 and the ratios. Goal: leadrelay
at >= 75% of the bare figure with wrk 2 threads x 32 connections, p99 under 20 ms.

Three references: `bare` (bench/bare_app.py) reads the body and answers 200; `limit`
(bench/limit_app.py) is the limit for a receiver, bare Flask plus a signature
check, a JSON parse and one Redis round trip through redis-py's client; `roundtrip` is
the floor under any receiver that writes to Redis, bare Flask plus one round trip on a
plain socket and nothing else.

Two load generators: our Python client (bench/loadgen.py, one process per connection)
and wrk (`--wrk`), which is lighter and keeps many more connections busy. wrk comes from
Debian's packages (`apt-get install wrk`); the script installs it when it is missing and
it may (root), else says how. wrk cannot sign, so the script signs the requests first
(one per lead id, more than a run sends) and a Lua script sends them in turn; the
warm-up sends other leads than the run, so no request of the run is a redelivery.

wrk's connections send as fast as they are answered, which keeps every core busy: the
p99 then is mostly how long a request waits for a CPU. `--pause-ms N` makes each wait N
ms between requests, a steady load below saturation. Each endpoint also gets its CPU per
request (its web processes, and Redis) and the machine's steal time during its run (Linux):
CPU per request is steadier than requests/s on a shared machine, and steal says when a run
was not comparable.

`--before REF` also measures leadrelay as it was at a git commit (checked out in a
temporary worktree), in the same run: a change's figure beside the one before it, both
beside the same references.

    .venv/bin/python bench/ingest.py [--seconds 10] [--connections 8] [--rounds 2] [--before REF]
    .venv/bin/python bench/ingest.py --wrk [--threads 2] [--connections 32] [--pause-ms 40]
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import loadgen  # noqa: E402

from workers.common.queues import connect  # noqa: E402
from workers.run.embedded_redis import EmbeddedRedis, free_port  # noqa: E402

SECRET = "bench-app-secret"


def signed_lead(worker: int, i: int) -> tuple[bytes, dict]:
    leadgen_id = str(10**15 + (os.getpid() % 10**6) * 10**8 + i)  # unique across processes and rounds
    body = json.dumps(
        {
            "object": "page",
            "entry": [
                {
                    "id": "1",
                    "time": int(time.time()),
                    "changes": [
                        {
                            "field": "leadgen",
                            "value": {
                                "leadgen_id": leadgen_id,
                                "page_id": "1",
                                "form_id": "2",
                                "ad_id": "3",
                                "created_time": int(time.time()),
                            },
                        }
                    ],
                }
            ],
        }
    ).encode()
    digest = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    return body, {"Content-Type": "application/json", "X-Hub-Signature-256": f"sha256={digest}"}


def serve(app_spec: str, env: dict, cwd: Path) -> tuple[subprocess.Popen, int]:
    port = free_port()
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), "-c", "python:webhook_app.gunicorn_conf", app_spec],
        env={**env, "LEADRELAY_BIND": f"127.0.0.1:{port}"},
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            if requests.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                return proc, port
        except requests.RequestException:  # not listening yet, or still booting its workers
            time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"{app_spec} did not start")


def measure(app_spec: str, env: dict, cwd: Path, args) -> dict:
    if args.redis is not None:
        args.redis.flushdb()  # every lead new to leadrelay in every run: no cheaper duplicates
    proc, port = serve(app_spec, env, cwd)
    try:
        if args.wrk:
            _wrk(port, args, 1.0, start=args.signed // 2)  # warm up connections and imports, on other leads
        else:
            loadgen.run(port, signed_lead, args.connections, 1.0)  # warm up connections and imports
        web = [proc.pid, *_children(proc.pid)]
        before = _cpu_seconds(web), _cpu_seconds([args.redis_pid]), _steal()
        result = (
            _wrk(port, args, args.seconds)
            if args.wrk
            else loadgen.run(port, signed_lead, args.connections, args.seconds)
        )
        after = _cpu_seconds(web), _cpu_seconds([args.redis_pid]), _steal()
        served = result["rps"] * args.seconds
        return {
            **result,
            "web_ms": 1000 * (after[0] - before[0]) / served,
            "redis_ms": 1000 * (after[1] - before[1]) / served,
            "steal": (after[2][0] - before[2][0]) / max(1, after[2][1] - before[2][1]),
        }
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _children(pid: int) -> list[int]:
    return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def _cpu_seconds(pids: list[int]) -> float:
    """User plus system CPU of these processes so far (Linux's /proc)."""
    ticks = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def _steal() -> tuple[int, int]:
    """(ticks a hypervisor gave to others, all ticks) so far, over all cores (/proc/stat)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return fields[7], sum(fields)


_WRK_LUA = """
local lines, n, counter, step, pause = {}, 0, 0, 1, 0
local prefix, suffix = [==[%s]==], [==[%s]==]
local index = 0
function setup(thread) thread:set("tid", index); index = index + 1 end
function init(args)
  for line in io.lines(args[1]) do n = n + 1; lines[n] = line end
  counter, step, pause = tid + tonumber(args[3]), tonumber(args[2]), tonumber(args[4])
end
function delay() return pause end
function request()
  local id, sig = lines[(counter %% n) + 1]:match("(%%S+) (%%S+)")
  counter = counter + step
  return wrk.format("POST", "/webhooks/meta", {["Content-Type"] = "application/json",
                    ["X-Hub-Signature-256"] = "sha256=" .. sig}, prefix .. id .. suffix)
end
"""


def wrk_script(folder: Path, count: int) -> tuple[Path, Path]:
    """`count` signed leads (id and signature per line) and the Lua script that sends them."""
    now = int(time.time())
    prefix = '{"object":"page","entry":[{"id":"1","time":%d,"changes":[{"field":"leadgen","value":{"leadgen_id":"' % now
    suffix = '","page_id":"1","form_id":"2","ad_id":"3","created_time":%d}}]}]}' % now
    lines = []
    for i in range(count):
        lead_id = str(2 * 10**15 + i)
        body = (prefix + lead_id + suffix).encode()
        lines.append(f"{lead_id} {hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()}")
    (folder / "leads.txt").write_text("\n".join(lines) + "\n")
    (folder / "leads.lua").write_text(_WRK_LUA % (prefix, suffix))
    return folder / "leads.lua", folder / "leads.txt"


def _wrk(port: int, args, seconds: float, start: int = 0) -> dict:
    out = subprocess.run(
        [
            "wrk",
            "-t",
            str(args.threads),
            "-c",
            str(args.connections),
            "-d",
            f"{seconds:g}s",
            "--timeout",
            "5s",
            "--latency",
            "-s",
            str(args.lua),
            f"http://127.0.0.1:{port}",
            "--",
            str(args.leads_file),
            str(args.threads),
            str(start),
            str(args.pause_ms),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    units = {"us": 0.001, "ms": 1.0, "s": 1000.0}

    def latency(label: str) -> float:
        found = re.search(rf"^\s+{label}\s+([\d.]+)(us|ms|s)$", out, re.M)
        if found is None:
            raise SystemExit(f"no {label} latency in wrk's output:\n{out}")
        return float(found.group(1)) * units[found.group(2)]

    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
        "p50_ms": latency("50%"),
        "p99_ms": latency("99%"),
        "statuses": {"non-2xx": int(errors.group(1)) if errors else 0},
    }


@contextmanager
def _worktree(ref: str | None, folder: Path):
    """leadrelay at `ref`, checked out in `folder` for the run (None: nothing)."""
    if not ref:
        yield None
        return
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(folder), ref], check=True, capture_output=True
    )
    try:
        yield folder
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(folder)], capture_output=True)


def ensure_wrk() -> None:
    if shutil.which("wrk"):
        return
    if os.geteuid() == 0 and shutil.which("apt-get"):
        subprocess.run(["apt-get", "install", "-y", "-qq", "wrk"], check=True, stdout=subprocess.DEVNULL)
        return
    raise SystemExit("wrk is not installed: `sudo apt-get install wrk` (Debian, Ubuntu) or `brew install wrk`")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--connections", type=int, default=None, help="8 (Python client) or 32 (wrk)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--wrk", action="store_true", help="load with wrk instead of the Python client")
    parser.add_argument("--threads", type=int, default=2, help="wrk threads")
    parser.add_argument("--signed", type=int, default=300_000, help="leads signed ahead for wrk")
    parser.add_argument(
        "--pause-ms",
        type=int,
        default=0,
        help="wrk: each connection waits this long between requests (a load below saturation)",
    )
    parser.add_argument("--before", metavar="REF", help="also measure leadrelay at this git commit, in the same run")
    args = parser.parse_args()
    args.redis = None
    args.connections = args.connections or (32 if args.wrk else 8)
    if args.wrk:
        ensure_wrk()
        args.lua, args.leads_file = wrk_script(Path(tempfile.mkdtemp(prefix="leadrelay-wrk-")), args.signed)

    with (
        tempfile.TemporaryDirectory() as tmp,
        EmbeddedRedis(Path(tmp) / "redis") as redis_server,
        _worktree(args.before, Path(tmp) / "before") as before,
    ):
        env = {
            **os.environ,
            "REDIS_URL": redis_server.url,
            "META_APP_SECRET": SECRET,
            "META_VERIFY_TOKEN": "v",  # and the shipped log level (INFO): the receiver as it runs
        }
        args.redis, args.redis_pid = connect(redis_server.url), redis_server.process.pid
        results: dict[str, list[dict]] = {"bare": [], "roundtrip": [], "limit": [], "held": [], "leadrelay": []}
        for _ in range(args.rounds):  # alternate, so drift on the machine hits all alike
            results["bare"].append(measure("bare_app:create_app()", env, ROOT / "bench", args))
            results["roundtrip"].append(measure("limit_app:create_roundtrip_app()", env, ROOT / "bench", args))
            results["limit"].append(measure("limit_app:create_app()", env, ROOT / "bench", args))
            results["held"].append(measure("limit_app:create_held_app()", env, ROOT / "bench", args))
            results["leadrelay"].append(measure("webhook_app:create_app()", env, ROOT, args))
            if before:  # gunicorn puts its folder first on the path: that tree's leadrelay is served
                results.setdefault("before", []).append(measure("webhook_app:create_app()", env, before, args))

    client = f"wrk {args.threads} threads x {args.connections}" if args.wrk else f"Python client x {args.connections}"
    if args.wrk and args.pause_ms:
        client += f", each pausing {args.pause_ms} ms between requests,"
    print(
        f"leadrelay's gunicorn settings, {os.cpu_count()} cores, {client} keep-alive connections, "
        f"{args.seconds:g}s x {args.rounds} rounds, each request a new signed lead"
    )
    print(
        f"{'endpoint':<10} {'req/s min/median/max':>22} {'p50 ms':>8} {'p99 ms':>8} {'CPU ms/request: web':>20} "
        f"{'Redis':>6} {'steal':>6}  statuses"
    )
    summary = {}
    for name, runs in results.items():
        rps, p50, p99, web_ms, redis_ms = (
            statistics.median(r[key] for r in runs) for key in ("rps", "p50_ms", "p99_ms", "web_ms", "redis_ms")
        )
        steal = max(r["steal"] for r in runs)
        statuses: dict = {}
        for r in runs:
            for code, n in r["statuses"].items():
                statuses[code] = statuses.get(code, 0) + n
        summary[name] = rps, p99
        spread = f"{min(r['rps'] for r in runs):.0f} / {rps:.0f} / {max(r['rps'] for r in runs):.0f}"
        print(
            f"{name:<10} {spread:>22} {p50:>8.2f} {p99:>8.2f} {web_ms:>20.3f} {redis_ms:>6.3f} {steal:>6.1%}"
            f"  {statuses}"
        )
    ratio = summary["leadrelay"][0] / summary["bare"][0]
    print(
        f"ratio leadrelay/bare: {ratio:.0%} (goal >= 75%); leadrelay p99 {summary['leadrelay'][1]:.2f} ms "
        f"(goal <= 20 ms)"
    )
    print(
        f"ratio roundtrip/bare: {summary['roundtrip'][0] / summary['bare'][0]:.0%}; "
        f"limit/bare: {summary['limit'][0] / summary['bare'][0]:.0%}; "
        f"leadrelay/limit: {summary['leadrelay'][0] / summary['limit'][0]:.0%}; "
        f"leadrelay/held (the limit on a held connection, the fair one): "
        f"{summary['leadrelay'][0] / summary['held'][0]:.2f}x (medians)"
    )
    if "before" in summary:
        print(
            f"leadrelay at {args.before} ('before') in the same run: "
            f"before/held {summary['before'][0] / summary['held'][0]:.2f}x, "
            f"leadrelay/before {summary['leadrelay'][0] / summary['before'][0]:.2f}x (medians)"
        )
    print(
        "steal: the share of the machine's time its hypervisor gave to others during the worst run "
        "(figures from a run above a few % are not comparable)"
    )


if __name__ == "__main__":
    main()
