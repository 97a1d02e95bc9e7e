"""Google's path beside Meta's, in the same run: leads in by each platform's webhook (Meta's
leadgen notification, read back from the Graph stand-in; Google's lead form POST, one lead
each, as Google sends them), then a CRM stage for each lead through the stage API; events
per second end to end and requests per 1,000 events, each platform's stand-in answering in
--latency seconds (the same server: Google's OAuth and Data Manager API beside Graph).

    .venv/bin/python bench/google.py [--leads 1000] [--workers 2] [--latency 0.1] [--senders 8]
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from stages import TOKEN, running  # noqa: E402

from workers.standin.server import GraphStandin  # noqa: E402

APP_SECRET, GOOGLE_KEY, ACCOUNT = "s", "bench-google-key", "bench@leadrelay-bench.iam.gserviceaccount.com"
MAPPING = """
[google.bench]
operating_account = "1234567890"
[google.bench.conversion_actions]
Lead = "1001"
QualifiedLead = "1002"
"""


def _service_account(standin: GraphStandin, tmp: Path) -> Path:
    """A real key: google-auth signs its assertion, the stand-in checks it with the public half."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    standin.google_keys[ACCOUNT] = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    path = tmp / "service-account.json"
    path.write_text(
        json.dumps(
            {
                "type": "service_account",
                "private_key": pem.decode(),
                "private_key_id": "b1",
                "client_email": ACCOUNT,
                "token_uri": f"{standin.url}/google/token",
            }
        )
    )
    return path


def _meta_body(leadgen_id: str, now: int) -> bytes:
    change = {"leadgen_id": leadgen_id, "page_id": "101", "form_id": "555", "created_time": now}
    doc = {"object": "page", "entry": [{"id": "101", "time": now, "changes": [{"field": "leadgen", "value": change}]}]}
    return json.dumps(doc).encode()


def _google_body(lead_id: str, i: int, stamp: str) -> bytes:
    columns = [
        {"column_id": "EMAIL", "string_value": f"bench.person{i}@gmail.com"},
        {"column_id": "PHONE_NUMBER", "string_value": f"+1 650 253 {i % 10000:04d}"},
    ]
    doc = {"lead_id": lead_id, "form_id": 777, "gcl_id": f"Cj0KCQjwBENCH{i}", "lead_submit_time": stamp}
    return json.dumps({**doc, "user_column_data": columns, "google_key": GOOGLE_KEY}).encode()


def _leads(base: str, bodies: list[tuple[str, bytes]], senders: int, count, standin, before: int) -> dict:
    started = time.perf_counter()

    def post(pair: tuple[str, bytes]) -> int:
        path, body = pair
        headers = {"Content-Type": "application/json"}
        if path == "meta":
            headers["X-Hub-Signature-256"] = "sha256=" + hmac.new(APP_SECRET.encode(), body, hashlib.sha256).hexdigest()
        return requests.post(f"{base}/webhooks/{path}", data=body, headers=headers, timeout=60).json()["accepted"]

    with ThreadPoolExecutor(senders) as pool:
        accepted = sum(pool.map(post, bodies))
    return _done(standin, count, before + accepted, started) | {"accepted": accepted}


def _stages(base: str, items: list[dict], count, standin, before: int) -> dict:
    started = time.perf_counter()
    accepted = 0
    for start in range(0, len(items), 500):  # a CRM's sync posts many at a time
        answer = requests.post(
            f"{base}/api/v1/stage-events",
            json=items[start : start + 500],
            timeout=60,
            headers={"Authorization": f"Bearer {TOKEN}"},
        ).json()
        accepted += answer["accepted"]
    return _done(standin, count, before + accepted, started) | {"accepted": accepted}


def _done(standin, count, wanted: int, started: float, limit: float = 300) -> dict:
    while count() < wanted and time.perf_counter() - started < limit:
        time.sleep(0.05)
    return {"done_in": time.perf_counter() - started}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leads", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--senders", type=int, default=8)
    args = parser.parse_args()
    standin = GraphStandin(any_lead=True)
    standin.url = standin.start()
    tmp = Path(tempfile.mkdtemp(prefix="leadrelay-google-"))
    (tmp / "leadrelay.toml").write_text(MAPPING)
    extra = {
        "META_APP_SECRET": APP_SECRET,
        "GOOGLE_ADS_WEBHOOK_KEY": GOOGLE_KEY,
        "GOOGLE_APPLICATION_CREDENTIALS": str(_service_account(standin, tmp)),
        "GOOGLE_DATAMANAGER_URL": standin.url,
        "LEADRELAY_CONFIG": str(tmp / "leadrelay.toml"),
    }
    now, stamp = int(time.time()), time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    meta_ids = [str(7700000000000000 + i) for i in range(args.leads)]
    google_ids = [f"BENCH{i:08d}" for i in range(args.leads)]
    metas = lambda: len(standin.events)  # noqa: E731
    googles = lambda: len(standin.google_events)  # noqa: E731
    figures = {}
    with running(standin, args.workers, tmp, extra) as (base, _):
        standin.latency = args.latency  # every answer, Graph's and Google's alike
        for name, count, calls, run in (
            (
                "meta leads",
                metas,
                "events",
                lambda: _leads(
                    base, [("meta", _meta_body(i, now)) for i in meta_ids], args.senders, metas, standin, metas()
                ),
            ),
            (
                "google leads",
                googles,
                "google_ingest",
                lambda: _leads(
                    base,
                    [("googleads", _google_body(g, i, stamp)) for i, g in enumerate(google_ids)],
                    args.senders,
                    googles,
                    standin,
                    googles(),
                ),
            ),
            (
                "meta stages",
                metas,
                "events",
                lambda: _stages(
                    base,
                    [{"leadgen_id": i, "stage": "mql", "occurred_at": int(time.time())} for i in meta_ids],
                    metas,
                    standin,
                    metas(),
                ),
            ),
            (
                "google stages",
                googles,
                "google_ingest",
                lambda: _stages(
                    base,
                    [
                        {"submission_id": f"googleads:{g}", "stage": "mql", "occurred_at": int(time.time())}
                        for g in google_ids
                    ],
                    googles,
                    standin,
                    googles(),
                ),
            ),
        ):
            before_events, before_calls = count(), len(standin.calls(calls))
            result = run()
            sent, requests_made = count() - before_events, len(standin.calls(calls)) - before_calls
            figures[name] = (result, sent, requests_made)
    standin.stop()
    print(
        f"{args.leads} leads a platform, then a stage each; {args.workers} workers, WEB_CONCURRENCY=2, "
        f"{os.cpu_count()} cores; both stand-ins answer in {args.latency * 1000:.0f} ms"
    )
    for pair in (("meta leads", "google leads"), ("meta stages", "google stages")):
        rates = {}
        for name in pair:
            result, sent, made = figures[name]
            rates[name] = sent / result["done_in"]
            print(
                f"{name:13}: {result['accepted']} accepted, {sent} events sent in {result['done_in']:.2f}s: "
                f"{rates[name]:.0f} events/s, {made * 1000 / max(sent, 1):.1f} requests per 1,000 events"
            )
        print(f"  google / meta: {rates[pair[1]] / max(rates[pair[0]], 1e-9):.2f}x")


if __name__ == "__main__":
    main()
