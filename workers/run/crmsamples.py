"""What the sandbox's `leadrelay send-test <crm or booking tool>` samples share.

Notes: docs/internals/run.md
"""

from __future__ import annotations

import json
import time
import uuid
from datetime import datetime, timedelta, timezone

import requests

from workers.config.settings import Settings
from workers.graphapi.graph import Graph
from workers.run.sendtest import answer_of, signed
from workers.run.sendtest import post as send
from workers.sources.registry import SOURCES


def crm_stages(settings: Settings, web: str, crm: str, leadgen_id: str, bodies_of, post=None) -> dict:
    """Sandbox: the sample lead's person made in every CRM of the stand-in, then the CRM's
    signed webhook moving that person's deal, as `bodies_of(made, now)` (the vendor's
    samples.py) writes the CRM's deliveries; `post(settings, web, crm, body)` delivers one
    where the CRM does not post a signed JSON body (Salesforce's SOAP to a secret path)."""
    email = _sample_email(settings, leadgen_id)
    made = requests.post(f"{settings.graph_url}/_standin/crm", json={"email": email}, timeout=10).json()
    now = int(time.time()) + 1  # after the lead (created this second): a stage before its lead is refused
    bodies = bodies_of(made, now)
    answers = []
    for body in bodies:
        if post is not None:
            status, answer = post(settings, web, crm, body)
        else:
            url = f"{web}/webhooks/{crm}"
            response = send(url, body.encode(), signed(crm, settings, body.encode(), url))
            status, answer = response.status_code, answer_of(response)
        answers.append({"status": status, "answer": answer})
    return {
        "source": crm,
        "leadgen_id": leadgen_id,
        "status": max(a["status"] for a in answers),
        "answers": answers,
        "next": "the worker reads the person back from the stand-in's CRM API and queues the stage events: "
        "`leadrelay dry-run` shows them with the lead's lead_id, value and currency",
    }


def booking(settings: Settings, web: str, source: str, leadgen_id: str, body_of=None) -> dict:
    """The sample lead books a meeting (Calendly, Cal.com: `body_of(email, when, key)`, the
    vendor's samples.py), or a signed tool posts its next stage (Standard Webhooks, its
    module's `sample_body`): the person is in the push, as these tools send it."""
    email = _sample_email(settings, leadgen_id)
    now = datetime.now(timezone.utc) + timedelta(seconds=1)  # after the lead: a stage before it is refused
    stamp, key = now.strftime("%Y-%m-%dT%H:%M:%SZ"), uuid.uuid4().hex[:22]
    doc = (body_of or SOURCES[source].module.sample_body)(email, stamp, key)  # the tool's own shape
    body = json.dumps(doc).encode()
    url = f"{web}/webhooks/{source}"
    response = send(url, body, signed(source, settings, body, url))
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
