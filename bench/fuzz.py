"""The hostile-input fuzzers of tests/feature/test_hostile.py, run for as many cases as asked, then
everything they got admitted worked off by two real workers against the Graph stand-in.

Signed bodies for every source and the stage API, built from the same strategies, against
the app in this process and a Redis this script starts. Each Meta body also carries a valid
lead, and each stage request a valid item, beside the hostile ones: those must be queued
and delivered. Then two `leadrelay worker` processes drain it all; the line has stalled
when nothing moves for --stall seconds while work remains. Prints the cases and answers
per endpoint (the privacy API's forget and export too, once the leads are kept: no profile
may be erased by identifiers that name nobody), the unmeant answers (500, or the safety
net's `unusable_request`), valid items
not queued or not delivered, every admitted lead's outcome (delivered, dead-lettered, set
aside, or still waiting), stalls, worker exits and crashes (failed jobs without a
dead-letter record); exits 1 if anything but delivered or dead-lettered is not 0.

    .venv/bin/python bench/fuzz.py --cases 30000
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "feature")]

import test_hostile as cases  # noqa: E402  (the strategies, not the tests)

from workers.run.embedded_redis import EmbeddedRedis  # noqa: E402
from workers.sources.registry import SOURCES  # noqa: E402
from workers.standin.server import GraphStandin  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20000, help="cases in all, shared among the endpoints")
    parser.add_argument("--stall", type=float, default=60, help="seconds without progress that count as a stall")
    parser.add_argument(
        "--privacy-cases", type=int, default=300, help="forget and export cases (each reads all of Redis: #60)"
    )
    args = parser.parse_args()
    per_endpoint = max(args.cases // 9, 1)
    standin = GraphStandin(any_lead=True)
    graph_url = standin.start()
    with tempfile.TemporaryDirectory() as data, EmbeddedRedis(Path(data)) as server:
        os.environ.update(
            {
                "REDIS_URL": server.url,
                "META_APP_SECRET": "fuzz",
                "META_VERIFY_TOKEN": "fuzz",
                "META_PAGE_ACCESS_TOKEN": "page",
                "META_CAPI_ACCESS_TOKEN": "capi",
                "META_DATASET_ID": standin.dataset_id,
                "META_GRAPH_URL": graph_url,
                "LEADRELAY_API_TOKEN": cases.API_TOKEN,
                "LEADRELAY_ENV_FILE": "",
                "LEADRELAY_LOG_LEVEL": "ERROR",
                "LEADRELAY_DATA_DIR": data,
                "HUBSPOT_ACCESS_TOKEN": "hubspot",
                "HUBSPOT_API_URL": graph_url,
                "PIPEDRIVE_API_TOKEN": "pipedrive",
                "PIPEDRIVE_API_URL": graph_url,
            }
        )
        for source in SOURCES.values():  # a key's setting holds a seed of its own (keys are never secrets)
            os.environ.setdefault(source.secret_setting, "seed:fuzz" if source.secret_parser else "fuzz")
        from webhook_app import create_app
        from workers.common.queues import connect, queue
        from workers.config.settings import load
        from workers.engine import quarantine
        from workers.failures import deadletters

        client = create_app().test_client()
        answers: dict[str, Counter] = {}
        unmeant: list[tuple[str, bytes, int]] = []
        valid_leads, valid_stage_events, not_queued = [], [], []
        serial = itertools.count(10**15)
        now = int(time.time())

        def post(endpoint: str, body: bytes):
            if endpoint == "stages":
                response = client.post(
                    "/api/v1/stage-events", data=body, headers={"Authorization": f"Bearer {cases.API_TOKEN}"}
                )
            else:
                response = client.post(
                    f"/webhooks/{endpoint}",
                    data=body,
                    headers=SOURCES[endpoint].sign(
                        os.environ[SOURCES[endpoint].secret_setting], body, f"http://localhost/webhooks/{endpoint}"
                    ),
                )
            answers.setdefault(endpoint, Counter())[response.status_code] += 1
            if not cases._answered(response):
                unmeant.append((endpoint, body[:300], response.status_code))
            return response

        def meta_case(lead):
            valid = str(next(serial))
            doc = cases._meta(lead)
            doc["entry"][0]["changes"].insert(
                0, {"field": "leadgen", "value": {"leadgen_id": valid, "created_time": now}}
            )
            post("meta", cases._body(doc))
            valid_leads.append(valid)  # its job is looked for once the fuzzing is over

        def stage_case(items):
            email = f"fuzz{next(serial)}@example.com"
            answer = post("stages", cases._body([*items, {"stage": "MQL", "email": email, "occurred_at": now}]))
            last = ((answer.get_json() or {}).get("results") or [{}])[-1]
            if last.get("status") != "accepted":
                not_queued.append(("stages", email))
            else:
                valid_stage_events.append(last["event_id"])

        runs = settings(
            max_examples=per_endpoint, database=None, deadline=None, suppress_health_check=list(HealthCheck)
        )
        plans = {
            "meta": (cases.META_LEADS, meta_case),
            "typeform": (
                cases.TYPEFORM_RESPONSES,
                lambda response: post(
                    "typeform", cases._body({"event_type": "form_response", "event_id": "e", "form_response": response})
                ),
            ),
            "tally": (
                cases.TALLY_DATA,
                lambda data: post("tally", cases._body({"eventType": "FORM_RESPONSE", "data": data})),
            ),
            "hubspot": (cases.HUBSPOT_EVENTS, lambda events: post("hubspot", cases._body(events))),
            "pipedrive": (cases.PIPEDRIVE_CHANGES, lambda change: post("pipedrive", cases._body(change))),
            **{
                name: (strategy, lambda doc, name=name: post(name, cases._body(doc)))
                for name, strategy in cases.BOOKINGS.items()
            },
            "stages": (cases.STAGE_ITEMS, stage_case),
        }
        started = time.monotonic()
        for endpoint, (strategy, _) in plans.items():

            def one_case(name, value):
                plans[name][1](value)

            runs(given(st.just(endpoint), strategy)(one_case))()
            print(
                f"{endpoint:9} {sum(answers[endpoint].values()):>7} cases  "
                f"answers {dict(sorted(answers[endpoint].items()))}",
                flush=True,
            )
        print(f"fuzzed in {time.monotonic() - started:.0f} s; working the queue off...", flush=True)

        settings_ = load()
        connection = connect(settings_.redis_url)
        q = queue(connection, settings_.queue_name)
        admitted = {entry["id"]: _event_id(entry) for entry in _inbox(connection)}
        not_queued += [
            ("meta", lead)
            for lead in valid_leads
            if f"lead-meta-{lead}" not in admitted and not connection.exists(f"rq:job:lead-meta-{lead}")
        ]
        started = time.monotonic()
        result = _drain(connection, q, data, args.stall)
        delivered = {event["event_id"] for event in standin.events}
        undelivered = [lead for lead in valid_leads if f"meta:{lead}:Lead" not in delivered]
        undelivered += [event_id for event_id in valid_stage_events if event_id not in delivered]
        failed = q.failed_job_registry.get_job_ids()
        crashed = [job_id for job_id in failed if deadletters.get(connection, job_id) is None]
        dead = Counter(
            f"{e['reason']}: {e['detail'][:70]}" for e in deadletters.select(connection, q, deadletters.Filter())
        )
        from workers.intake import admission

        recorded = {json.loads(raw).get("event_key") for raw in connection.lrange(admission.IGNORED, 0, -1)}
        outcomes = Counter(
            "delivered"
            if event_id in delivered
            else "dead-lettered"
            if deadletters.get(connection, job_id)
            # A CRM's or a booking tool's change is settled once its stage event went, was a
            # duplicate of one that went, or was refused and recorded with its reason.
            else "stage settled"
            if job_id.startswith("stage-") and (event_id in recorded or not connection.exists(f"rq:job:{job_id}"))
            else "waiting"
            for job_id, event_id in admitted.items()
        )
        people = _privacy(client, connection, settings(runs, max_examples=args.privacy_cases), answers, unmeant)
        print(
            f"workers: {len(admitted)} admitted leads drained in {time.monotonic() - started:.0f} s; events at "
            f"the stand-in {len(delivered)}; dead letters {dict(dead)}; set aside {connection.llen(quarantine.KEPT)}"
        )
        for endpoint, body, status in unmeant[:20]:
            print(f"UNMEANT {endpoint} {status}: {body!r}")
        print(f"unmeant answers (500 or safety net): {len(unmeant)}")
        print(f"valid items not queued: {len(not_queued)} {not_queued[:5]}")
        print(f"valid items queued but not delivered: {len(undelivered)} {undelivered[:5]}")
        print(f"admitted leads: {dict(outcomes)} (every one delivered or dead-lettered: {not outcomes['waiting']})")
        print(
            f"stalls: {result['stalls']}; worker exits before the stop: {result['exits']}; "
            f"left in the inbox: {result['left']}"
        )
        print(f"worker crashes (failed without a dead letter): {len(crashed)} {crashed[:5]}")
        standin.stop()
        bad = (
            people["erased"]
            or unmeant
            or not_queued
            or undelivered
            or crashed
            or outcomes["waiting"]
            or result["stalls"]
            or result["exits"]
            or result["left"]
        )
        return 1 if bad else 0


def _privacy(client, connection, runs, answers: dict, unmeant: list) -> dict:
    """The privacy API (forget, export) sent hostile identifiers with the operator's token,
    once the fuzzed leads are kept: no 500, and no profile erased by what names nobody."""
    from workers.privacy.person import GIVEN

    def kept() -> int:
        return sum(1 for _ in connection.scan_iter(match="leadrelay:profile:*", count=1000))

    before = kept()
    bodies = st.dictionaries(st.sampled_from([*GIVEN, "all_matching"]), cases.values, max_size=4)

    def one_case(action, doc):
        response = client.post(
            f"/api/v1/people/{action}", data=cases._body(doc), headers={"Authorization": f"Bearer {cases.API_TOKEN}"}
        )
        answers.setdefault("people", Counter())[response.status_code] += 1
        meant = response.status_code in {*cases.ANSWERS, 403, 409}
        if not meant or (response.get_json() or {}).get("error") == "unusable_request":
            unmeant.append((f"people/{action}", cases._body(doc)[:300], response.status_code))

    runs(given(st.sampled_from(["forget", "export"]), bodies)(one_case))()
    erased = before - kept()
    print(
        f"people    {sum(answers['people'].values()):>7} cases  answers {dict(sorted(answers['people'].items()))}; "
        f"profiles kept before {before}, erased by identifiers that name nobody {erased}",
        flush=True,
    )
    return {"erased": erased}


def _inbox(connection) -> list[dict]:
    from workers.intake import inbox

    return [json.loads(fields[b"e"]) for _, fields in connection.xrange(inbox.STREAM)]


def _event_id(entry: dict) -> str:
    arg = entry.get("arg") or {}
    if "crm" in arg:  # a stage change: its event id is its lead's, known once it is read
        return str(arg.get("event_key"))
    return f"meta:{arg['leadgen_id']}:Lead" if "leadgen_id" in arg else str(arg.get("event_id"))


def _drain(connection, q, data: str, stall: float) -> dict:
    """Two worker processes until the inbox and the queue are empty; a stall is `stall`
    seconds in which the work left did not shrink; a worker that exits on its own counts."""
    from workers.intake import inbox

    logs = [open(Path(data) / f"worker{n}.log", "w") for n in range(2)]
    workers = [
        subprocess.Popen(
            [str(Path(sys.executable).parent / "leadrelay"), "worker"], env=dict(os.environ), stdout=log, stderr=log
        )
        for log in logs
    ]
    stalls, last, moved = 0, None, time.monotonic()
    try:
        while True:
            waiting = inbox.waiting(connection)
            left = waiting["inbox"] + q.count + q.started_job_registry.count
            if left == 0:
                break
            if left != last:
                last, moved = left, time.monotonic()
            elif time.monotonic() - moved > stall:
                stalls += 1
                print(f"STALL: {left} waiting, nothing moved for {stall:.0f} s", flush=True)
                break
            time.sleep(0.5)
        exits = sum(1 for w in workers if w.poll() is not None)
    finally:
        for w in workers:
            if w.poll() is None:
                w.send_signal(signal.SIGTERM)
        for w in workers:
            w.wait(timeout=60)
    return {"stalls": stalls, "exits": exits, "left": inbox.waiting(connection)["inbox"]}


if __name__ == "__main__":
    sys.exit(main())
