"""The sandbox's `leadrelay send-test close`: the sample lead's opportunity moved to a status,
then won with a value, one delivery each (the first redelivered, as a retry would be)."""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timezone

from workers.run import crmsamples
from workers.vendors.close.standin import ACTIVE, QUALIFIED, WON

ORGANIZATION = "orga_sandbox0000000000000000000000000000000000"


def send(settings, web: str, name: str, leadgen_id: str) -> dict:
    return crmsamples.crm_stages(settings, web, name, leadgen_id, bodies)


def bodies(made: dict, now: int) -> list[str]:
    contact = made["close_contact_id"]
    qualified = _event(contact, now, QUALIFIED, "active", ACTIVE)
    return [qualified, qualified, _event(contact, now + 1, WON, "won", QUALIFIED)]


def _event(contact_id: str, when: int, status: str, kind: str, before: str) -> str:
    stamp = datetime.fromtimestamp(when, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")
    return json.dumps(
        {
            "subscription_id": "whsub_sandbox",
            "event": {
                "id": f"ev_{uuid.uuid5(uuid.NAMESPACE_URL, f'{contact_id}{status}{when}').hex}",
                "object_type": "opportunity",
                "action": "updated",
                "object_id": "oppo_sandbox",
                "organization_id": ORGANIZATION,
                "date_created": stamp,
                "changed_fields": ["status_id", "status_label", "status_type"],
                "previous_data": {"status_id": before},
                "data": {
                    "id": "oppo_sandbox",
                    "contact_id": contact_id,
                    "lead_id": f"lead_{contact_id[5:]}",
                    "status_id": status,
                    "status_type": kind,
                    "value": 120000,
                    "value_currency": "EUR",
                    "organization_id": ORGANIZATION,
                },
            },
        }
    )
