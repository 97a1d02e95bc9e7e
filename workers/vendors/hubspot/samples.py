"""The sandbox's `leadrelay send-test hubspot`: the sample lead's deal moved through three
stages in one delivery, as HubSpot batches its webhook events."""

from __future__ import annotations

import json
import time

from workers.run import crmsamples

STAGES = ("qualifiedtobuy", "appointmentscheduled", "closedwon")


def send(settings, web: str, name: str, leadgen_id: str) -> dict:
    return crmsamples.crm_stages(settings, web, name, leadgen_id, bodies)


def bodies(made: dict, now: int) -> list[str]:
    return [json.dumps([_event(made["deal_id"], stage, now, n) for n, stage in enumerate(STAGES)])]


def _event(deal_id: str, stage: str, now: int, n: int) -> dict:
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
