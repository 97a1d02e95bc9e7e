"""Logs never carry a raw email, phone, name, token or secret: a full run, searched."""

import base64
import hashlib
import hmac
import json
import time

from helpers import APP_SECRET, CAPI_TOKEN, PAGE_TOKEN, TYPEFORM_SECRET, leadgen_body
from webhook_app import create_app

RAW = [
    "Joe@Example.com",
    "joe@example.com",
    "6505551212",
    "Joe Example",
    "Example",
    "ann.secret@example.org",
    "7911123456",
    "Annabel",
]


def test_a_full_run_logs_no_personal_data_and_no_secrets(env, monkeypatch, graph, work, capfd):
    monkeypatch.setenv("LEADRELAY_API_TOKEN", "crm-token-value")
    monkeypatch.setenv("LEADRELAY_ADMIN_TOKEN", "admin-token-value")
    client = create_app().test_client()
    created = int(time.time()) - 600
    graph.add_lead(
        "1234567890123456",
        created_time=created,
        field_data=[
            {"name": "full_name", "values": ["Joe Example"]},
            {"name": "email", "values": ["Joe@Example.com"]},
            {"name": "phone_number", "values": ["+1 650 555 1212"]},
            {"name": "date_of_birth", "values": ["someday"]},
        ],
    )
    body = leadgen_body("1234567890123456", created_time=created)
    signature = "sha256=" + hmac.new(APP_SECRET.encode(), body, hashlib.sha256).hexdigest()
    client.post("/webhooks/meta", data=body, headers={"X-Hub-Signature-256": signature})
    form = json.dumps(
        {
            "event_id": "e",
            "event_type": "form_response",
            "form_response": {
                "form_id": "F",
                "token": "t",
                "submitted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "hidden": {},
                "answers": [
                    {"type": "email", "email": "ann.secret@example.org", "field": {"id": "e", "ref": "email"}},
                    {"type": "text", "text": "Annabel", "field": {"id": "n", "ref": "first_name"}},
                    {"type": "phone_number", "phone_number": "not a phone", "field": {"id": "p", "ref": "phone"}},
                ],
            },
        }
    ).encode()
    form_sig = "sha256=" + base64.b64encode(hmac.new(TYPEFORM_SECRET.encode(), form, hashlib.sha256).digest()).decode()
    client.post("/webhooks/typeform", data=form, headers={"Typeform-Signature": form_sig})
    client.post(
        "/api/v1/stage-events",
        json=[
            {"email": "Joe@Example.com", "phone": "+44 7911 123456", "stage": "MQL", "occurred_at": int(time.time())}
        ],
        headers={"Authorization": "Bearer crm-token-value"},
    )
    graph.then({"status": 500}, on="events")  # a retry logs Meta's error too
    work()
    client.post("/admin/login", data={"token": "admin-token-value-wrong"})  # a refused login is logged
    client.post("/admin/login", data={"token": "admin-token-value"})
    client.get("/admin")
    client.get("/metrics")
    out, err = capfd.readouterr()
    logs = out + err
    assert '"event": "batch_done"' in logs and '"match_key_dropped"' in logs  # the run did log
    assert '"admin_login_refused"' in logs and '"admin_login"' in logs
    for raw in RAW + [APP_SECRET, PAGE_TOKEN, CAPI_TOKEN, TYPEFORM_SECRET, "crm-token-value", "admin-token-value"]:
        assert raw not in logs, f"{raw!r} appears in the logs"


def test_the_webhooks_request_id_follows_it_into_its_job(env, graph, work, capfd):
    client = create_app().test_client()  # logs are set up here, inside the capture
    graph.add_lead("1234567890123456")
    body = leadgen_body("1234567890123456", created_time=int(time.time()))
    signature = "sha256=" + hmac.new(APP_SECRET.encode(), body, hashlib.sha256).hexdigest()
    client.post("/webhooks/meta", data=body, headers={"X-Hub-Signature-256": signature, "X-Request-Id": "req-42"})
    work()
    out, err = capfd.readouterr()
    lines = [json.loads(line) for line in (out + err).splitlines() if line.startswith("{")]
    [webhook] = [entry for entry in lines if entry.get("event") == "webhook"]
    [batch] = [entry for entry in lines if entry.get("event") == "batch_done"]
    assert webhook["request_id"] == "req-42" and batch["request_ids"] == ["req-42"]
    assert batch["delivered"] == 1 and batch["job_ids"] == ["lead-meta-1234567890123456"]
