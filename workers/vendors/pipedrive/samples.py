"""The sandbox's `leadrelay send-test pipedrive`: the sample lead's deal moved to a stage,
then won, one delivery each, as Pipedrive sends one event per POST."""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timezone

from workers.run import crmsamples


def send(settings, web: str, name: str, leadgen_id: str) -> dict:
    return crmsamples.crm_stages(settings, web, name, leadgen_id, bodies)


def bodies(made: dict, now: int) -> list[str]:
    return [_change(made["person_id"], now, stage) for stage in ("2", "won")]


def _change(person_id: str, now: int, stage: str) -> str:
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
