"""The hostile-input fuzzers of tests/test_hostile.py, run for as many cases as asked.

Signed bodies for every source and the stage API, built from the same strategies, against
the app in this process and a Redis this script starts. Prints the cases run per endpoint,
what they were answered with, and every case answered 500 or caught by the safety net
(`unusable_request`); exits 1 if there was any.

    .venv/bin/python bench/fuzz.py --cases 100000
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path[:0] = [str(Path(__file__).resolve().parent.parent), str(Path(__file__).resolve().parent.parent / "tests")]

import test_hostile as cases  # noqa: E402  (the strategies, not the tests)
from workers.embedded_redis import EmbeddedRedis  # noqa: E402
from workers.sources import SOURCES  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20000, help="cases in all, shared among the endpoints")
    args = parser.parse_args()
    per_endpoint = max(args.cases // 4, 1)
    with tempfile.TemporaryDirectory() as data, EmbeddedRedis(Path(data)) as server:
        os.environ.update({"REDIS_URL": server.url, "META_APP_SECRET": "fuzz", "META_VERIFY_TOKEN": "fuzz",
                           "LEADRELAY_API_TOKEN": cases.API_TOKEN, "LEADRELAY_ENV_FILE": "",
                           "LEADRELAY_LOG_LEVEL": "ERROR", "LEADRELAY_DATA_DIR": data})
        for source in SOURCES.values():
            os.environ.setdefault(source.secret_setting, "fuzz")
        from webhook_app import create_app

        client = create_app().test_client()
        answers: dict[str, Counter] = {}
        bad: list[tuple[str, bytes, int]] = []

        def post(endpoint: str, body: bytes) -> None:
            if endpoint == "stages":
                response = client.post("/api/v1/stage-events", data=body,
                                       headers={"Authorization": f"Bearer {cases.API_TOKEN}"})
            else:
                module = SOURCES[endpoint].module
                response = client.post(f"/webhooks/{endpoint}", data=body,
                                       headers={module.SIGNATURE_HEADER: module.signature("fuzz", body)})
            answers.setdefault(endpoint, Counter())[response.status_code] += 1
            if not cases._answered(response):
                bad.append((endpoint, body[:300], response.status_code))

        runs = settings(max_examples=per_endpoint, database=None, deadline=None,
                        suppress_health_check=list(HealthCheck))
        bodies = {
            "meta": (cases.META_LEADS, lambda lead: cases._body(cases._meta(lead))),
            "typeform": (cases.TYPEFORM_RESPONSES, lambda response: cases._body(
                {"event_type": "form_response", "event_id": "e", "form_response": response})),
            "tally": (cases.TALLY_DATA, lambda data: cases._body({"eventType": "FORM_RESPONSE", "data": data})),
            "stages": (cases.STAGE_ITEMS, cases._body),
        }
        for endpoint, (strategy, _) in bodies.items():
            runs(given(st.just(endpoint), strategy)(lambda name, value: post(name, bodies[name][1](value))))()
            print(f"{endpoint:9} {sum(answers[endpoint].values()):>7} cases  "
                  f"answers {dict(sorted(answers[endpoint].items()))}", flush=True)
        for endpoint, body, status in bad[:20]:
            print(f"UNMEANT {endpoint} {status}: {body!r}")
        print(f"{len(bad)} cases answered 500 or caught by the safety net")
        return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
