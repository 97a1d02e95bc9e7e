"""The sandbox's `leadrelay send-test highlevel`.

Notes: docs/internals/vendors.md
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timezone

from workers.run import crmsamples
from workers.vendors.highlevel.standin import PIPELINES

QUALIFIED = PIPELINES["pipelines"][0]["stages"][0]["id"]


def send(settings, web: str, name: str, leadgen_id: str) -> dict:
    return crmsamples.crm_stages(settings, web, name, leadgen_id, bodies)


def bodies(made: dict, now: int) -> list[str]:
    contact = made["highlevel_contact_id"]
    stage = _event(contact, now, "OpportunityStageUpdate", pipelineStageId=QUALIFIED, status="open")
    won = _event(contact, now + 1, "OpportunityStatusUpdate", pipelineStageId=QUALIFIED, status="won")
    return [stage, stage, won]


def _event(contact_id: str, when: int, kind: str, **fields) -> str:
    stamp = datetime.fromtimestamp(when, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return json.dumps(
        {
            "type": kind,
            "locationId": "ve9EPM428h8vShlRW1KT",
            "id": "bCdKGtr9cPO6Ohxzthbl",
            "contactId": contact_id,
            "pipelineId": PIPELINES["pipelines"][0]["id"],
            "monetaryValue": 1200,
            "name": "Sandbox Lead",
            "source": "facebook",
            "dateAdded": stamp,
            "timestamp": stamp,
            "webhookId": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{kind}{contact_id}{when}")),
            **fields,
        }
    )
