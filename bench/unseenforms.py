"""Scores a set of form and test-lead cases written from Typeform's, Tally's and Meta's own
documents by a hand that had not read the parser: each form body signed and posted to the
app (a Redis this script starts) under its own mapping file, and each Meta test lead's
answers through the worker's path (events/leadevents.hashed).

    .venv/bin/python bench/unseenforms.py tests/fixtures/unseen/forms-r2.jsonl [--show]

A case: {"id", "kind": tally | typeform | meta_test_lead, "mapping", "body", "field_data",
"expect": {"outcome": sent | not_sent} or {"keys": {key: plaintext or null}}, "judgement"}.
Prints right and wrong per kind (cases marked judgement, where the documents leave the
reading open, apart) and, with --show, each wrong one.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
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

SECRET = "unseen-forms"


def _signed(kind: str, body: bytes) -> dict:
    digest = base64.b64encode(hmac.new(SECRET.encode(), body, hashlib.sha256).digest()).decode()
    return {"Typeform-Signature": f"sha256={digest}"} if kind == "typeform" else {"Tally-Signature": digest}


def _now(body: dict) -> dict:
    """The submission as if sent now: the cases carry the times they were written at, and
    a form lead older than Meta's 7 days is never sent."""

    def stamp(ago: int) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - ago))

    body = json.loads(json.dumps(body))
    for holder in (body, body.get("data") or {}, body.get("form_response") or {}):
        for key, ago in (("createdAt", 60), ("submitted_at", 60), ("landed_at", 180)):  # landed before submitted
            if key in holder:
                holder[key] = stamp(ago)
    return body


def _form(case: dict, data: Path) -> str:
    from webhook_app import create_app

    path = data / f"{case['id']}.toml"
    path.write_text(case.get("mapping") or "")
    os.environ["LEADRELAY_CONFIG"] = str(path)
    client = create_app().test_client()
    body = json.dumps(_now(case["body"])).encode()
    answer = client.post(f"/webhooks/{case['kind']}", data=body, headers=_signed(case["kind"], body))
    got = "sent" if answer.status_code < 300 and (answer.get_json() or {}).get("accepted") == 1 else "not_sent"
    if got == case["expect"]["outcome"]:
        return "right"
    why = [item.get("reason") for item in (answer.get_json() or {}).get("skipped") or []]
    return f"wrong (got {got}, answered {answer.status_code} {','.join(filter(None, why))})"


def _keys(case: dict) -> str:
    from workers.events import leadevents

    sent = leadevents.hashed({"leadgen_id": "1"}, {"field_data": case["field_data"]}, "US")["user_data"]
    wrong = []
    for key, expected in case["expect"]["keys"].items():
        got = sent.get(key) or []
        if (expected is None and got) or (
            expected is not None and got != [hashlib.sha256(expected.encode()).hexdigest()]
        ):
            wrong.append(key)
    return "right" if not wrong else f"wrong ({', '.join(wrong)})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", type=Path)
    parser.add_argument("--show", action="store_true", help="list each wrong case")
    args = parser.parse_args()
    cases = [json.loads(line) for line in args.cases.read_text(encoding="utf-8").splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as data, EmbeddedRedis(Path(data)) as server:
        os.environ.update(
            {
                "REDIS_URL": server.url,
                "TYPEFORM_SECRET": SECRET,
                "TALLY_SIGNING_SECRET": SECRET,
                "LEADRELAY_ENV_FILE": "",
                "LEADRELAY_LOG_LEVEL": "ERROR",
                "LEADRELAY_DATA_DIR": data,
                "META_APP_SECRET": "unseen",
                "META_VERIFY_TOKEN": "unseen",
            }
        )
        scores: Counter = Counter()
        for case in cases:
            outcome = _keys(case) if case["kind"] == "meta_test_lead" else _form(case, Path(data))
            label = f"{case['kind']}{' (judgement)' if case.get('judgement') else ''}"
            scores[(label, outcome.split(" ")[0])] += 1
            if args.show and outcome != "right":
                print(f"{outcome:40} {case['id']}")
    print_scores(len(cases), scores, 28)
    return 0


if __name__ == "__main__":
    sys.exit(main())
