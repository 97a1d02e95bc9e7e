"""The sandbox's `leadrelay send-test google`: a lead as Google's lead form webhook posts it
(Google's documented shape, the sandbox's key in the body), then its next stages through the
stage API, so `leadrelay dry-run` shows its Google events beside a Meta lead's.

Notes: docs/internals/run.md
"""

from __future__ import annotations

import json
import time
import uuid
from datetime import datetime, timezone

import requests

from workers.config.settings import Settings
from workers.run.sendtest import STAGES, _fields, _next_sample, answer_of, person, post, signed

WAIT_SECONDS = 15.0  # for the worker to take the lead before its stages are sent


def sample_body(tag: str, number: int = 1) -> dict:
    """A lead as Google posts it (developers.google.com/google-ads/webhook/docs/samples),
    the `number`th sample person's (sendtest._fields: no other sample shares them), with a
    Gmail address whose dots Google drops."""
    lead_id = f"SANDBOX{tag.upper()}"
    phone = person(_fields(tag, number))["phone"]
    return {
        "lead_id": lead_id,
        "api_version": "1.0",
        "form_id": 40000000001,
        "campaign_id": 20000000001,
        "adgroup_id": 0,
        "creative_id": 0,
        "gcl_id": f"Cj0KCQjwSANDBOX{tag}",
        "is_test": False,
        "lead_submit_time": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "user_column_data": [
            {"column_name": "Full Name", "string_value": "Sam Sample", "column_id": "FULL_NAME"},
            {"column_name": "User Email", "string_value": f"sam.sample.{tag}+ads@gmail.com", "column_id": "EMAIL"},
            {
                "column_name": "User Phone",
                "string_value": phone,
                "column_id": "PHONE_NUMBER",
            },
        ],
    }


def send(settings: Settings, web: str, name: str) -> dict:
    """Post the lead, then its stages once the worker has taken it."""
    tag = uuid.uuid4().hex[:8]
    doc = sample_body(tag, _next_sample(settings))
    body, headers = signed_body(name, settings, json.dumps(doc).encode())
    response = post(f"{web}/webhooks/{name}", body, headers)
    if response.status_code >= 300:
        return {"source": name, "status": response.status_code, "answer": answer_of(response), "next": ""}
    stages = _stages(settings, web, f"{name}:{doc['lead_id']}")
    return {
        "source": name,
        "lead_id": doc["lead_id"],
        "person": {
            "email": doc["user_column_data"][1]["string_value"],
            "phone": doc["user_column_data"][2]["string_value"],
        },
        "status": max(response.status_code, stages["status"]),
        "answer": answer_of(response),
        "stages": stages["answer"],
        "next": "`leadrelay dry-run` shows its Lead, QualifiedLead, Schedule and Purchase as Google's "
        "Data Manager API takes them (a conversion action each, Google's hashes, the gclid), "
        "with its event name and id beside them (`--dataset google:sandbox`: only those); a Meta "
        "lead's (`send-test meta`) show beside them",
    }


def signed_body(name: str, settings: Settings, body: bytes) -> tuple[bytes, dict]:
    """Google's key goes in the body (`google_key`), the sandbox's first key."""
    from workers.sources.registry import SOURCES

    keys = settings.source_secrets.get(name)
    return SOURCES[name].signed(keys[0], body) if keys else (body, signed(name, settings, body))


def _stages(settings: Settings, web: str, submission: str) -> dict:
    """The stage API, tried again while the lead is not taken yet (`unknown_person`)."""
    items = [
        {"submission_id": submission, "stage": stage, "occurred_at": int(time.time()) + 1}
        | ({"value": value, "currency": "USD"} if value else {})
        for stage, value in STAGES
    ]
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        response = requests.post(
            f"{web}/api/v1/stage-events",
            json=items,
            timeout=10,
            headers={"Authorization": f"Bearer {settings.api_token}"},
        )
        answer = answer_of(response)
        waiting = isinstance(answer, dict) and any(
            r.get("reason") == "unknown_person" for r in answer.get("results") or []
        )
        if not waiting or time.monotonic() > deadline:
            return {"status": response.status_code, "answer": answer}
        time.sleep(0.3)
