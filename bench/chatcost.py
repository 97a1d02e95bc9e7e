"""What a WhatsApp ad-started chat costs the web process next to a Lead Ads webhook, same run:
CPU per request (the app in this process, each delivery signed as Meta signs it, each a new
person) and Redis round trips per request (Redis's own count of read events).

    .venv/bin/python bench/chatcost.py [ROOT] [--requests 2000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
SECRET = "bench-secret"  # benchenv.service_env's


def _leadgen(n: int) -> bytes:
    change = {"leadgen_id": str(10**15 + n), "page_id": "111", "form_id": "555", "created_time": int(time.time())}
    return json.dumps({"object": "page", "entry": [{"id": "111", "changes": [{"field": "leadgen", "value": change}]}]})


def _chat(n: int) -> bytes:
    message = {
        "from": f"1650555{n % 10000:04d}",
        "id": f"wamid.bench{n}",
        "timestamp": str(int(time.time()) - 5),
        "type": "text",
        "text": {"body": "Is it still available?"},
        "referral": {"source_type": "ad", "source_id": "120226305854810726", "ctwa_clid": f"Afe4bench{n:08d}"},
    }
    value = {
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": "15550783881", "phone_number_id": "106540352242922"},
        "contacts": [{"profile": {"name": "Bench"}, "wa_id": message["from"]}],
        "messages": [message],
    }
    doc = {
        "object": "whatsapp_business_account",
        "entry": [{"id": "102290129340398", "changes": [{"field": "messages", "value": value}]}],
    }
    return json.dumps(doc)


def _post(client, path: str, body: str) -> None:
    raw = body.encode()
    signature = "sha256=" + hmac.new(SECRET.encode(), raw, hashlib.sha256).hexdigest()
    answer = client.post(path, data=raw, headers={"Content-Type": "application/json", "X-Hub-Signature-256": signature})
    assert answer.status_code == 200, answer.get_data()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default=str(HERE))
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    root = Path(args.root).resolve()
    sys.path[:0] = [str(root), str(HERE / "bench")]
    import os

    from benchenv import app_on

    from workers.run.embedded_redis import EmbeddedRedis

    with tempfile.TemporaryDirectory() as data, EmbeddedRedis(Path(data) / "redis") as server:
        os.environ["LEADRELAY_LOG_LEVEL"] = "ERROR"
        client = app_on(server.url, data).test_client()
        connection = __import__("redis").Redis.from_url(server.url)
        kinds = {"lead ads": ("/webhooks/meta", _leadgen), "whatsapp chat": ("/webhooks/whatsapp", _chat)}
        cpu: dict[str, list[float]] = {k: [] for k in kinds}
        trips: dict[str, list[float]] = {k: [] for k in kinds}
        serial = 0
        for n in range(args.rounds):
            for name in kinds if n % 2 == 0 else reversed(list(kinds)):
                path, make = kinds[name]
                bodies = [make(serial + i) for i in range(args.requests)]
                serial += args.requests
                before = connection.info("stats")["total_reads_processed"]
                started = time.process_time()
                for body in bodies:
                    _post(client, path, body)
                cpu[name].append((time.process_time() - started) / args.requests * 1e6)
                trips[name].append((connection.info("stats")["total_reads_processed"] - before - 1) / args.requests)
    print(f"{root}: {args.requests} requests a kind, {args.rounds} rounds, medians")
    for name in kinds:
        print(
            f"  {name:14} {statistics.median(cpu[name]):7.0f} µs CPU  {statistics.median(trips[name]):5.2f} round trips"
        )
    ratio = statistics.median(cpu["whatsapp chat"]) / statistics.median(cpu["lead ads"])
    print(f"  chat / lead    {ratio:7.2f}x CPU")


if __name__ == "__main__":
    main()
