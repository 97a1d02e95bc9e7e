"""CRM stage changes per second, end to end: signed HubSpot, Pipedrive, HighLevel and
Salesforce webhooks in,
the people read back from the CRM stand-in (answering in --crm-latency seconds), stage
events out to the Conversions API stand-in; beside the stage API's figure, measured in
the same run on the same processes.

HubSpot is sent as HubSpot sends: up to 100 events per POST. Pipedrive as Pipedrive
does: one event per POST, --senders at a time; HighLevel likewise (one per POST, read back
one contact per GET: its API has no batch read); Salesforce as Outbound Messages of up to
100 notifications, read back in one SOQL query per batch. Each change is a different person, with
no Lead Ads lead behind it (the match is by hashed email). Goal: at least 200 events/s
for each CRM with the CRM answering in 100 ms.

    .venv/bin/python bench/crmstages.py [--events 1000] [--workers 2] [--crm-latency 0.1]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from stages import running, stage_api, wait_for_events  # noqa: E402

from workers.standin.server import GraphStandin  # noqa: E402
from workers.vendors.highlevel import webhook as highlevel  # noqa: E402
from workers.vendors.hubspot import webhook as hubspot  # noqa: E402
from workers.vendors.pipedrive import webhook as pipedrive  # noqa: E402
from workers.vendors.salesforce import samples as salesforce_samples  # noqa: E402
from workers.vendors.salesforce import webhook as salesforce  # noqa: E402

SECRETS = {
    "hubspot": "bench-hubspot-secret",
    "pipedrive": "bench:pipedrive",
    "highlevel": "seed:bench-highlevel",  # a seed: its private half signs here, its public half verifies
    "salesforce": "00Dx0000000BENCHEAG:bench-token",
}
MODULES = {"hubspot": hubspot, "pipedrive": pipedrive, "highlevel": highlevel, "salesforce": salesforce}


def _people(standin: GraphStandin, count: int, tag: str) -> list[dict]:
    return [standin.add_crm_person(f"{tag}{i}@example.com", amount=100 + i) for i in range(count)]


def _hubspot_bodies(people: list[dict], now: int) -> list[bytes]:
    events = [
        {
            "eventId": 10**12 + i,
            "portalId": 4512345,
            "occurredAt": now * 1000,
            "subscriptionType": "deal.propertyChange",
            "objectId": int(person["deal_id"]),
            "propertyName": "dealstage",
            "propertyValue": "closedwon",
        }
        for i, person in enumerate(people)
    ]
    return [json.dumps(events[start : start + 100]).encode() for start in range(0, len(events), 100)]


def _pipedrive_bodies(people: list[dict], now: int) -> list[bytes]:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
    return [
        json.dumps(
            {
                "data": {"id": i + 1, "stage_id": 3, "value": 500, "currency": "EUR", "person_id": int(p["person_id"])},
                "previous": {"stage_id": 2},
                "meta": {
                    "action": "change",
                    "entity": "deal",
                    "company_id": "1",
                    "id": str(uuid.uuid4()),
                    "timestamp": stamp,
                },
            }
        ).encode()
        for i, p in enumerate(people)
    ]


def _highlevel_bodies(people: list[dict], now: int) -> list[bytes]:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
    return [
        json.dumps(
            {
                "type": "OpportunityStatusUpdate",
                "locationId": "bench",
                "id": f"opp{i}",
                "contactId": p["highlevel_contact_id"],
                "status": "won",
                "monetaryValue": 500,
                "timestamp": stamp,
                "webhookId": str(uuid.uuid4()),
            }
        ).encode()
        for i, p in enumerate(people)
    ]


def _salesforce_bodies(people: list[dict], now: int) -> list[bytes]:
    org = SECRETS["salesforce"].partition(":")[0]
    out = []
    for start in range(0, len(people), 100):
        batch = people[start : start + 100]
        messages = [salesforce_samples.message(org, p["opportunity_id"], "Closed Won", now) for p in batch]
        head, _, _ = messages[0].partition("<Notification>")
        notes = [m[m.index("<Notification>") : m.index("</Notification>") + len("</Notification>")] for m in messages]
        out.append((head + "".join(notes) + "</notifications></soapenv:Body></soapenv:Envelope>").encode())
    return out


def crm(base: str, standin: GraphStandin, name: str, bodies: list[bytes], expected: int, senders: int) -> dict:
    module = MODULES[name]
    before = len(standin.events)
    started = time.perf_counter()

    def post(body: bytes) -> int:
        url = f"{base}/webhooks/{name}"
        headers = {"Content-Type": "application/json", **module.sign(SECRETS[name], body, url)}
        answer = requests.post(url, data=body, headers=headers, timeout=60)
        if answer.headers.get("X-Leadrelay-Accepted"):  # Salesforce is answered in SOAP
            return int(answer.headers["X-Leadrelay-Accepted"])
        return answer.json()["accepted"]

    with ThreadPoolExecutor(senders) as pool:
        accepted = sum(pool.map(post, bodies))
    done_in = wait_for_events(standin, before + expected, started)
    return {"posts": len(bodies), "accepted": accepted, "done_in": done_in, "sent": len(standin.events) - before}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--crm-latency", type=float, default=0.1)
    parser.add_argument("--senders", type=int, default=8, help="Pipedrive webhooks posted at a time")
    args = parser.parse_args()
    standin = GraphStandin()
    standin.url = standin.start()
    standin.crm_latency = args.crm_latency
    now = int(time.time())
    extra = {
        "HUBSPOT_CLIENT_SECRET": SECRETS["hubspot"],
        "HUBSPOT_ACCESS_TOKEN": "bench",
        "HUBSPOT_API_URL": standin.url,
        "PIPEDRIVE_WEBHOOK_CREDENTIALS": SECRETS["pipedrive"],
        "PIPEDRIVE_API_TOKEN": "bench",
        "PIPEDRIVE_API_URL": standin.url,
        "HIGHLEVEL_WEBHOOK_PUBLIC_KEY": SECRETS["highlevel"],
        "HIGHLEVEL_ACCESS_TOKEN": "bench",
        "HIGHLEVEL_API_URL": standin.url,
        "SALESFORCE_OUTBOUND_SECRET": SECRETS["salesforce"],
        "SALESFORCE_ACCESS_TOKEN": "bench",
        "SALESFORCE_API_URL": standin.url,
    }
    tmp = Path(tempfile.mkdtemp(prefix="leadrelay-crm-"))
    (tmp / "leadrelay.toml").write_text(
        '[crm.pipedrive.stages]\n"3" = "Schedule"\n'
        '[crm.highlevel]\ncurrency = "USD"\n[crm.salesforce]\ncurrency = "USD"\n'
    )
    extra["LEADRELAY_CONFIG"] = str(tmp / "leadrelay.toml")
    hub_people, pipe_people = _people(standin, args.events, "h"), _people(standin, args.events, "p")
    hl_people, sf_people = _people(standin, args.events, "g"), _people(standin, args.events, "s")
    with running(standin, args.workers, tmp, extra) as (base, _):
        reference = stage_api(base, standin, args.events, 100)
        hub = crm(base, standin, "hubspot", _hubspot_bodies(hub_people, now), args.events, 2)
        pipe = crm(base, standin, "pipedrive", _pipedrive_bodies(pipe_people, now), args.events, args.senders)
        high = crm(base, standin, "highlevel", _highlevel_bodies(hl_people, now), args.events, args.senders)
        sales = crm(base, standin, "salesforce", _salesforce_bodies(sf_people, now), args.events, 2)
    standin.stop()
    ref_rate = reference["accepted"] / reference["done_in"]
    print(
        f"{args.events} events each; {args.workers} workers, web WEB_CONCURRENCY=2, {os.cpu_count()} cores; "
        f"the CRM stand-in answers in {args.crm_latency * 1000:.0f} ms"
    )
    print(f"stage API (reference, 100 per request): {ref_rate:.0f} events/s end to end")
    for name, figures in (("hubspot", hub), ("pipedrive", pipe), ("highlevel", high), ("salesforce", sales)):
        rate = figures["sent"] / figures["done_in"]
        reads = {
            "hubspot": ("deal_read", "association_read", "contact_read"),
            "pipedrive": ("person_read",),
            "highlevel": ("highlevel_contact",),
            "salesforce": ("soql_query",),
        }[name]
        calls = sum(len(standin.calls(kind)) for kind in reads)
        print(
            f"{name:9}: {figures['posts']} webhooks, {figures['accepted']} accepted, {figures['sent']} events sent in "
            f"{figures['done_in']:.2f}s: {rate:.0f} events/s ({rate / ref_rate:.2f}x the stage API); "
            f"{calls} CRM reads ({figures['sent'] / max(calls, 1):.1f} changes a read); goal >= 200/s"
        )


if __name__ == "__main__":
    main()
