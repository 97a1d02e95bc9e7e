"""Scores a set of vendor deliveries written from each vendor's own documents by a hand that
had not read the parsers: each body signed as its vendor signs it and posted to the app (a
Redis this script starts), then read by the vendor's parser.

    .venv/bin/python bench/unseenvendors.py tests/fixtures/unseen/vendors-r3.jsonl [--show]

A case: {"id", "vendor", "url", "request": {"headers", "body" | "body_text"}, "expect":
{"http": "2xx", "events": [{"kind", "record", "stage", "emails", "ids", "value",
"currency", "ad_click_id"}]}}. Right when the answer is 2xx and what the parser reads
matches every field the case states (kinds: stage, won, lost, booking, reschedule and
chat_from_ad are read; cancellation and deleted are acknowledged and recorded, not sent).
What a vendor reads back later (HubSpot's amount and currency, a person's emails) and what
the mapping file decides (a Standard Webhooks event type) are outside this parse-level score.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchenv import print_scores  # noqa: E402

from workers.run.embedded_redis import EmbeddedRedis  # noqa: E402

SOURCE_OF = {"standard": "signed"}
MAPPING = (
    '[crm.pipedrive.stages]\n"7" = "QualifiedLead"\nwon = "Purchase"\nlost = "lost"\n'
    '[crm.salesforce.stages]\n"Closed Won" = "Purchase"\n'
    '[crm.highlevel.stages]\nwon = "Purchase"\n'
)
SENT = {"stage", "won", "lost", "booking", "reschedule", "chat_from_ad"}


def _env(data: str, url: str) -> None:
    from workers.sources.registry import SOURCES

    os.environ.update({"REDIS_URL": url, "LEADRELAY_ENV_FILE": "", "LEADRELAY_LOG_LEVEL": "ERROR"})
    os.environ.update({"LEADRELAY_DATA_DIR": data, "META_VERIFY_TOKEN": "unseen", "LEADRELAY_SWEEP_SECONDS": "0"})
    for source in SOURCES.values():
        os.environ[source.secret_setting] = ("seed:" if source.secret_parser else "") + f"{source.name}-unseen"
        if source.token_setting:
            os.environ[source.token_setting] = "unseen-token"
    mapping = Path(data) / "leadrelay.toml"
    mapping.write_text(MAPPING)
    os.environ["LEADRELAY_CONFIG"] = str(mapping)


def _body(case: dict) -> bytes:
    """The body as sent now: HighLevel signs a `timestamp` in it, five minutes good."""
    request = case["request"]
    if "body_text" in request:
        return request["body_text"].encode()
    body = request["body"]
    if case["vendor"] == "highlevel" and isinstance(body, dict) and "timestamp" in body:
        body = {**body, "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    return json.dumps(body).encode()


def _answer(client, case: dict) -> int:
    from workers.sources.registry import SOURCES

    name = SOURCE_OF.get(case["vendor"], case["vendor"])
    body, query = _body(case), case["request"].get("query") or ""
    path = f"/webhooks/{name}" + (f"?{query.lstrip('?')}" if query else "")
    headers = SOURCES[name].sign(
        os.environ[SOURCES[name].secret_setting].split(",")[0], body, f"http://localhost{path}"
    )
    extra = {
        k: v for k, v in (case["request"].get("headers") or {}).items() if k.lower() not in {h.lower() for h in headers}
    }
    return client.post(path, data=body, headers={"Content-Type": "application/json", **extra, **headers}).status_code


def _read(case: dict) -> list[dict]:
    from workers.common.refusals import MalformedBody
    from workers.sources.registry import SOURCES

    source = SOURCES[SOURCE_OF.get(case["vendor"], case["vendor"])]
    try:
        parsed = source.parse(_body(case), case["request"].get("headers") or {})
    except MalformedBody:
        return []
    return parsed.get("items") or parsed.get("leads") or []


def _matches(event: dict, item: dict) -> bool:
    said = json.dumps(item, default=str).casefold()
    person = item.get("person") or {}
    read_back = item.get("currency") is None and person.get("currency") is None  # HubSpot: read with the deal
    for field in ("record", "stage", "ad_click_id") + (() if read_back else ("currency",)):
        stated = str(event.get(field) or "").rstrip("/").rsplit("/", 1)[-1]  # a URI's last segment: its id
        if stated and stated.casefold() not in said:
            return False
    value = item.get("value") if item.get("value") is not None else (item.get("person") or {}).get("value")
    if event.get("value") is not None and value is not None and abs(float(value) - float(event["value"])) > 0.005:
        return False
    if event.get("kind") == "chat_from_ad" and event.get("ids"):
        if not any(str(i).casefold() in said for i in event["ids"]):
            return False
    return True


def score(case: dict, status: int) -> str:
    if not 200 <= status < 300:
        return f"wrong (answered {status})"
    sent = [e for e in case["expect"].get("events") or [] if e.get("kind") in SENT]
    items = _read(case)
    if len(items) != len(sent):
        return f"wrong (read {len(items)} items, expected {len(sent)})"
    for event in sent:
        if not any(_matches(event, item) for item in items):
            return f"wrong ({event.get('kind')} {event.get('record')} not read as stated)"
    return "right"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", type=Path)
    parser.add_argument("--show", action="store_true", help="list each wrong case")
    args = parser.parse_args()
    cases = [json.loads(line) for line in args.cases.read_text(encoding="utf-8").splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as data, EmbeddedRedis(Path(data)) as server:
        _env(data, server.url)
        from webhook_app import create_app

        client = create_app().test_client()
        scores: Counter = Counter()
        for case in cases:
            outcome = score(case, _answer(client, case))
            scores[(case["vendor"], outcome.split(" ")[0])] += 1
            if args.show and outcome != "right":
                print(f"{outcome:52} {case['id']}")
    print_scores(len(cases), scores, 12)
    return 0


if __name__ == "__main__":
    sys.exit(main())
