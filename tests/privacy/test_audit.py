"""The audit trail cannot be flooded or forged: requests that changed nothing are counted,
not appended; the stream is capped by size as well as age; `leadrelay audit` finds a forget
by its action and reference however much came after it, and prints every field escaped."""

from __future__ import annotations

import json
import time

from helpers import ADMIN, leadrelay, privacy_api
from webhook_app import create_app
from workers.privacy import audit

TOKEN = "crm-token"


def _client(monkeypatch):
    monkeypatch.setenv("LEADRELAY_API_TOKEN", TOKEN)
    monkeypatch.setenv("LEADRELAY_ADMIN_TOKEN", ADMIN)
    return create_app().test_client()


def _stages(client, items):
    return client.post("/api/v1/stage-events", json=items, headers={"Authorization": f"Bearer {TOKEN}"})


def test_requests_that_change_nothing_are_counted_not_appended(env, monkeypatch, redis_conn):
    client = _client(monkeypatch)
    item = {"email": "ann@example.com", "stage": "QualifiedLead", "occurred_at": int(time.time()) - 60}
    assert _stages(client, [item]).status_code == 202  # accepted: one entry
    for _ in range(100):
        _stages(client, [])  # empty
        _stages(client, [item])  # a duplicate
        _stages(client, [{"email": "x", "stage": "NoSuchStage", "occurred_at": 1}])  # refused
    assert redis_conn.xlen(audit.KEY) == 1
    [(what, number)] = audit.unchanged(redis_conn).items()
    assert what.split(" ")[1] == "stage_events" and number == 300
    printed = leadrelay("audit").stdout
    assert "300 request(s) that changed nothing" in printed


def test_a_forget_is_found_by_action_and_reference_behind_thousands_of_entries(env, monkeypatch, redis_conn, work):
    client = _client(monkeypatch)
    forgot = privacy_api(client, "forget", TOKEN, work, email="ann@example.com").get_json()
    with redis_conn.pipeline(transaction=False) as pipe:
        for n in range(3000):
            pipe.xadd(audit.KEY, {"who": "api", "where": "x", "action": "stage_events", "detail": json.dumps({"n": n})})
        pipe.execute()
    assert leadrelay("audit", "--count", "50").stdout.count("forget ") == 0  # pushed out of the newest 50
    found = leadrelay("audit", "--action", "forget", "--json").stdout.splitlines()
    assert [json.loads(line)["detail"]["ref"] for line in found] == [forgot["ref"]]
    by_ref = leadrelay("audit", "--ref", forgot["ref"]).stdout
    assert forgot["ref"] in by_ref and by_ref.count("\n") == 1
    assert leadrelay("audit", "--ref", "forget-0000").stdout.strip() == "no entry matches"


def test_the_stream_is_capped_by_size(env, redis_conn):
    with redis_conn.pipeline(transaction=False) as pipe:
        for n in range(audit.MAX_ENTRIES + 500):
            pipe.xadd(audit.KEY, {"who": "api", "where": "x", "action": "stage_events", "detail": "{}"})
        pipe.execute()
    audit.record(redis_conn, "cli:test", "local", "forget", ref="forget-1")
    assert audit.MAX_ENTRIES <= redis_conn.xlen(audit.KEY) <= audit.MAX_ENTRIES + 100  # trimmed a node at a time


def test_a_value_a_caller_wrote_prints_escaped_and_cannot_forge_a_line(env, monkeypatch, redis_conn):
    client = _client(monkeypatch)
    forged = "x\n2026-11-27 21:00:00 UTC  forget       by cli:root from local: ref forget-deadbeef\x1b[2K"
    answer = client.post("/admin/replay", json={"reason": forged}, headers={"Authorization": f"Bearer {ADMIN}"})
    assert answer.status_code == 200
    printed = leadrelay("audit").stdout.splitlines()
    assert len(printed) == 1 and "\\u000a2026-11-27" in printed[0] and "\x1b" not in printed[0]
    assert "\\u001b[2K" in printed[0]
