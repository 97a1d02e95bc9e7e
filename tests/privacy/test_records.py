"""Every kind of record has a retention: a run that writes nearly every kind (a Lead Ads
lead, a form, stages, a dead letter, an ignored and a held delivery, an admin login and a
wrong token, a forget), then every key in Redis is matched to its row in the records table
(workers/privacy/records.py), and a key its row says expires must have a TTL. The rows
docs/privacy.md shows are the table's."""

from __future__ import annotations

import re
import time

from helpers import ROOT, fixture, invalid_dead_letter, leadgen_body, leadrelay, sign, typeform_sig
from workers.privacy.records import RECORDS, record_of

ADMIN, API = "admin-token-value", "api-token-value"


def _run_that_writes_everything(client, graph, work) -> None:
    created = int(time.time()) - 600
    answers = [{"name": "email", "values": ["kept@example.com"]}]
    graph.add_lead("6600000000000001", created_time=created, field_data=answers)
    body = leadgen_body("6600000000000001", created_time=int(time.time()) - 60)
    client.post("/webhooks/meta", data=body, headers={"X-Hub-Signature-256": sign(body)})
    unmapped = leadgen_body("6600000000000009", created_time=int(time.time()) - 60).replace(b'"111"', b'"999"')
    client.post("/webhooks/meta", data=unmapped, headers={"X-Hub-Signature-256": sign(unmapped)})
    work()
    stage = {"email": "kept@example.com", "stage": "QualifiedLead", "occurred_at": int(time.time()) - 30}
    answer = client.post("/api/v1/stage-events", json=stage, headers={"Authorization": f"Bearer {API}"})
    assert answer.get_json()["accepted"] == 1, answer.get_json()
    form = fixture("typeform", "form_response__hidden_fields.json", int(time.time()) - 30)
    client.post("/webhooks/typeform", data=form, headers={"Typeform-Signature": typeform_sig(form)})
    work()
    invalid_dead_letter(client, graph, work, "6600000000000002")
    client.get("/admin/dead-letters", headers={"Authorization": "Bearer wrong"})
    client.post("/admin/login", data={"token": ADMIN})
    client.get("/metrics")
    assert leadrelay("forget", "--email", "gone@example.com").returncode == 0


def test_every_key_a_run_writes_has_a_row_and_a_ttl_where_its_row_says(env, monkeypatch, graph, work, redis_conn):
    from webhook_app import create_app

    monkeypatch.setenv("LEADRELAY_ADMIN_TOKEN", ADMIN)
    monkeypatch.setenv("LEADRELAY_API_TOKEN", API)
    monkeypatch.setenv("LEADRELAY_ADMIN_COOKIE_SECURE", "false")
    _run_that_writes_everything(create_app().test_client(), graph, work)
    keys = sorted(k.decode() for k in redis_conn.scan_iter(match="*", count=1000))
    assert len(keys) > 30, keys  # the run wrote what it meant to
    unlisted = [key for key in keys if record_of(key) is None]
    assert unlisted == []
    forever = [k for k in keys if record_of(k).expires and redis_conn.ttl(k) < 0]
    assert forever == []
    kinds = {record_of(k).kind for k in keys}
    wanted = ("profile", "profile lookup", "ledger entry", "stage claim", "dedupe record", "dead letter", "suppression")
    assert set(wanted) <= kinds, set(wanted) - kinds


def test_a_row_that_says_a_key_expires_is_caught_when_it_does_not(redis_conn):
    redis_conn.set("leadrelay:profile:meta:1", "{}")  # a profile written with no TTL
    assert record_of("leadrelay:profile:meta:1").expires and redis_conn.ttl("leadrelay:profile:meta:1") == -1
    assert record_of("leadrelay:no-such-kind") is None


def test_the_docs_show_every_row_of_the_table():
    doc = (ROOT / "docs" / "privacy.md").read_text()
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `([^`]+)` \|.*$", doc, re.M)}
    assert sorted(rows) == sorted(r.pattern for r in RECORDS)
    for record in RECORDS:
        row = rows[record.pattern]
        assert f"| {record.kind} | {record.holds} | {record.kept} |" in row
        assert row.endswith(f"| {'yes' if record.expires else 'no'} | {'yes' if record.person else 'no'} |")


def test_what_forget_removed_is_said_in_words_a_person_reads():
    from workers.privacy.records import counted

    assert [counted(1, "profile"), counted(2, "profile lookup"), counted(3, "inbox entry")] == [
        "1 profile",
        "2 profile lookups",
        "3 inbox entries",
    ]
