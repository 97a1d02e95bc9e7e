"""`leadrelay send-test hubspot|pipedrive|calendly|calcom|signed`, the sandbox's: the
sample lead's deal moved in a CRM, a meeting booked for it, a signing tool's stage for it,
each as its tool signs and sends it (the CRMs' people made in the stand-in first)."""

from __future__ import annotations

import json
import time
import uuid
from datetime import datetime, timedelta, timezone

import requests

from workers.config.settings import Settings
from workers.graphapi.graph import Graph
from workers.run.sendtest import answer_of, post, signed
from workers.sources import SOURCES


def crm_stages(settings: Settings, web: str, crm: str, leadgen_id: str) -> dict:
    """Sandbox: the sample lead's person as a HubSpot deal's contact and a Pipedrive deal's
    person in the stand-in, then the CRM's signed webhook moving that deal (HubSpot: three
    stages in one batch, as HubSpot batches; Pipedrive: a stage change, then a win)."""
    email = _sample_email(settings, leadgen_id)
    made = requests.post(f"{settings.graph_url}/_standin/crm", json={"email": email}, timeout=10).json()
    now = int(time.time()) + 1  # after the lead (created this second): a stage before its lead is refused
    if crm == "hubspot":
        bodies = [
            json.dumps([_hubspot_event(made["deal_id"], stage, now, n) for n, stage in enumerate(HUBSPOT_STAGES)])
        ]
    else:
        bodies = [_pipedrive_change(made["person_id"], now, stage) for stage in ("2", "won")]
    answers = []
    for body in bodies:
        url = f"{web}/webhooks/{crm}"
        response = post(url, body.encode(), signed(crm, settings, body.encode(), url))
        answers.append({"status": response.status_code, "answer": answer_of(response)})
    return {
        "source": crm,
        "leadgen_id": leadgen_id,
        "status": max(a["status"] for a in answers),
        "answers": answers,
        "next": "the worker reads the person back from the stand-in's CRM API and queues the stage events: "
        "`leadrelay dry-run` shows them with the lead's lead_id, value and currency",
    }


HUBSPOT_STAGES = ("qualifiedtobuy", "appointmentscheduled", "closedwon")


def _hubspot_event(deal_id: str, stage: str, now: int, n: int) -> dict:
    return {
        "eventId": time.time_ns() // 1000 + n,  # a new change each time (HubSpot's ids never repeat)
        "subscriptionId": 1,
        "portalId": 4242,
        "appId": 4242,
        "occurredAt": now * 1000 + n,  # the stages in order, after the lead was created
        "subscriptionType": "deal.propertyChange",
        "attemptNumber": 0,
        "objectId": int(deal_id),
        "propertyName": "dealstage",
        "propertyValue": stage,
        "changeSource": "CRM_UI",
    }


def _pipedrive_change(person_id: str, now: int, stage: str) -> str:
    won = stage == "won"
    return json.dumps(
        {
            "data": {
                "id": 4242,
                "value": 1200,
                "currency": "EUR",
                "person_id": int(person_id),
                "stage_id": 2 if won else int(stage),
                "status": "won" if won else "open",
            },
            "previous": {"status": "open"} if won else {"stage_id": 1},
            "meta": {
                "action": "change",
                "entity": "deal",
                "company_id": "4242",
                "id": str(uuid.uuid4()),
                "timestamp": datetime.fromtimestamp(now, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "version": "2.0",
            },
        }
    )


def booking(settings: Settings, web: str, source: str, leadgen_id: str) -> dict:
    """The sample lead books a meeting (Calendly, Cal.com), or a signed tool posts its next
    stage (Standard Webhooks): the person is in the push, as these tools send it."""
    email = _sample_email(settings, leadgen_id)
    now = datetime.now(timezone.utc) + timedelta(seconds=1)  # after the lead: a stage before it is refused
    stamp, key = now.strftime("%Y-%m-%dT%H:%M:%SZ"), uuid.uuid4().hex[:22]
    doc = SOURCES[source].module.sample_body(email, stamp, key)  # the tool's own shape (its source module)
    body = json.dumps(doc).encode()
    url = f"{web}/webhooks/{source}"
    response = post(url, body, signed(source, settings, body, url))
    return {
        "source": source,
        "leadgen_id": leadgen_id,
        "status": response.status_code,
        "answer": answer_of(response),
        "next": "its stage event for the lead (Schedule; StartTrial for `signed`), with lead_id: `leadrelay dry-run`",
    }


def _sample_email(settings: Settings, leadgen_id: str) -> str:
    """The sample lead's email, read from the stand-in as a worker reads it."""
    lead = Graph(settings).call(
        "GET", leadgen_id, settings.page_access_token, params={"fields": "field_data"}, probe=True
    )
    return next(f["values"][0] for f in lead.get("field_data", []) if f.get("name") == "email")
