"""Erasing one person, as a privacy officer asks for it: a Lead Ads lead, two stages, a dead
letter and a waiting job; `forget` by email; then every Redis key and value is read and
none holds the person, but the suppression list; a late webhook and a CRM stage for them
are acknowledged, recorded and never sent; the audit trail shows who did it."""

from __future__ import annotations

import hashlib
import json
import time
import zlib

from helpers import (
    API,
    agency_lead,
    agency_post,
    hubspot_deal_event,
    leadgen_body,
    leadrelay,
    post_signed,
    privacy_api,
    privacy_walks,
    sign,
)
from workers.events import suppression

EMAIL, PHONE = "Ann.Forget@Example.com", "+44 7911 123456"
LEAD, DEAD_LEAD = "7700000000000001", "7700000000000002"
OPERATOR_TOKEN, ADMIN_TOKEN = "operator-api-token", "admin-token-value"


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


EM, PH = _hash("ann.forget@example.com"), _hash("447911123456")  # Meta's normalisation: lower case; digits


def _everything(connection) -> str:
    """Every key and value in Redis as text, RQ's compressed job data opened, the
    suppression list left out."""
    out = []
    for key in connection.scan_iter(match="*", count=1000):
        if key == suppression.KEY.encode():
            continue
        kind = connection.type(key).decode()
        out.append(key.decode("utf-8", "replace"))
        if kind == "string":
            out.append((connection.get(key) or b"").decode("utf-8", "replace"))  # gone since the scan: nothing
        elif kind == "list":
            out += [v.decode("utf-8", "replace") for v in connection.lrange(key, 0, -1)]
        elif kind in ("set", "zset"):
            values = connection.smembers(key) if kind == "set" else connection.zrange(key, 0, -1)
            out += [v.decode("utf-8", "replace") for v in values]
        elif kind == "hash":
            for field, value in connection.hgetall(key).items():
                if field == b"data":
                    value = zlib.decompress(value)
                out += [field.decode("utf-8", "replace"), value.decode("utf-8", "replace")]
        elif kind == "stream":
            out += [json.dumps({k.decode(): v.decode() for k, v in f.items()}) for _, f in connection.xrange(key)]
    return "\n".join(out)


def _lead(graph, leadgen_id: str, email: str = EMAIL) -> None:
    graph.add_lead(
        leadgen_id,
        created_time=int(time.time()) - 600,
        field_data=[
            {"name": "full_name", "values": ["Ann Forget"]},
            {"name": "email", "values": [email]},
            {"name": "phone_number", "values": [PHONE]},
        ],
    )


def _webhook(client, leadgen_id: str):
    body = leadgen_body(leadgen_id, created_time=int(time.time()) - 600)
    return client.post("/webhooks/meta", data=body, headers={"X-Hub-Signature-256": sign(body)})


def _stage(client, stage: str, token: str = OPERATOR_TOKEN, **item):
    item = {"email": EMAIL, "stage": stage, "occurred_at": int(time.time()) - 60, **item}
    return client.post("/api/v1/stage-events", json=item, headers={"Authorization": f"Bearer {token}"})


def test_forget_by_email_leaves_nothing_but_the_suppression_and_nothing_more_is_sent(
    env, monkeypatch, graph, work, redis_conn
):
    from webhook_app import create_app

    monkeypatch.setenv("LEADRELAY_API_TOKEN", OPERATOR_TOKEN)
    monkeypatch.setenv("LEADRELAY_ADMIN_TOKEN", ADMIN_TOKEN)
    client = create_app().test_client()
    _lead(graph, LEAD)
    assert _webhook(client, LEAD).get_json()["accepted"] == 1
    work()
    for stage in ("QualifiedLead", "Schedule"):
        assert _stage(client, stage).get_json()["accepted"] == 1
    work()
    _lead(graph, DEAD_LEAD)  # their second lead, whose Lead event Meta refuses (2804016)
    _webhook(client, DEAD_LEAD)
    refusal = {"code": 100, "error_subcode": 2804016, "message": "m", "fbtrace_id": "TR"}
    graph.then({"status": 400, "error": refusal}, on="events")
    work()
    assert _stage(client, "Purchase", value=120, currency="EUR").get_json()["accepted"] == 1  # waits: no work()
    sent_before = len(graph.events)
    everything = _everything(redis_conn)
    for mark in (EM, PH, LEAD, DEAD_LEAD):
        assert mark in everything, f"the scenario never stored {mark}"

    answer = privacy_api(client, "forget", OPERATOR_TOKEN, privacy_walks, email=EMAIL)  # the stage still waits
    assert answer.status_code == 200, answer.get_json()
    done = answer.get_json()
    assert done["removed"]["profile"] == 2 and done["removed"]["dedupe record"] == 2, done["removed"]
    for kind in ("profile", "profile lookup", "ledger entry", "stage claim", "dedupe record", "dead letter", "job"):
        assert done["removed"].get(kind), (kind, done["removed"])
    assert "cannot be recalled" in done["sent_already"]

    everything = _everything(redis_conn)
    for mark in (EM, PH, EM[:32], LEAD, DEAD_LEAD, "ann.forget", "Forget", "7911123456"):
        assert mark not in everything, mark
    fields = [f.decode() for f in redis_conn.hkeys(suppression.KEY)]
    assert f"default|em:{EM}" in fields and f"default|ph:{PH}" in fields

    # Late: Meta redelivers the lead, the CRM moves them on (the API, a HubSpot deal read
    # back from its stand-in), a worker runs what waits.
    assert _webhook(client, LEAD).status_code == 200
    late = _stage(client, "Purchase", value=99, currency="EUR").get_json()
    assert late["results"][0] == {"index": 0, "status": "recorded", "reason": "suppressed"}
    deal = graph.add_crm_person(EMAIL.lower(), PHONE)["deal_id"]
    won = json.dumps([hubspot_deal_event(deal, "closedwon")]).encode()
    assert post_signed(client, "hubspot", won, env).get_json()["accepted"] == 1  # its person is read later
    work()
    assert graph.calls("contact_read")  # the worker did read HubSpot's person back
    assert len(graph.events) == sent_before
    ignored = leadrelay("ignored").stdout
    assert ignored.count(done["ref"]) >= 3 and LEAD not in ignored
    assert LEAD not in _everything(redis_conn), [k for k in redis_conn.keys("*") if LEAD.encode() in k]

    # Who did it: the admin API, the CLI and the page show the same entries.
    trail = client.get("/admin/audit", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}).get_json()["entries"]
    forgets = [e for e in trail if e["action"] == "forget"]
    assert forgets and forgets[0]["detail"]["ref"] == done["ref"]
    assert forgets[0]["who"] == "api:operator:" + hashlib.sha256(OPERATOR_TOKEN.encode()).hexdigest()[:12]
    assert [e["action"] for e in trail].count("stage_events") == 4
    assert EMAIL.lower() not in json.dumps(trail) and EM not in json.dumps(trail)
    printed = leadrelay("audit").stdout
    assert f"forget       by api:operator:{forgets[0]['who'].rsplit(':', 1)[1]}" in printed
    assert done["ref"] in printed


def test_forgetting_with_one_clients_token_leaves_the_others_person_alone(agency, graph, work, redis_conn):
    from webhook_app import create_app

    web = create_app().test_client()
    shared = "shared.person@example.com"
    for leadgen_id, page in (("8800000000000011", "101"), ("8800000000000022", "202")):
        assert agency_post(web, agency_lead(graph, leadgen_id, page, email=shared)).get_json()["accepted"] == 1
    work()
    answer = privacy_api(web, "forget", API["acme"], work, email=shared).get_json()
    assert answer["datasets"] == ["acme", "acme_b2b"] and answer["removed"]["profile"] == 1
    everything = _everything(redis_conn)
    assert "8800000000000011" not in everything
    assert "8800000000000022" in everything  # Brand B's lead of the same email
    em = _hash(shared)
    assert f"leadrelay:profile-by:brandb:em:{em}" in everything
    assert f"leadrelay:profile-by:acme:em:{em}" not in everything
    # Brand B sees its person as before, and can still move them on.
    export = privacy_api(web, "export", API["brandb"], work, email=shared).get_json()
    assert [p["lead_id"] for p in export["profiles"]] == [8800000000000022] and not export["suppressed"]
    stage = {"email": shared, "stage": "QualifiedLead", "occurred_at": int(time.time()) - 30}
    for client, status in (("acme", "recorded"), ("brandb", "accepted")):
        item = {**stage, "dataset": client}  # Acme's person has no lead left to route by
        result = web.post("/api/v1/stage-events", json=item, headers={"Authorization": f"Bearer {API[client]}"})
        assert result.get_json()["results"][0]["status"] == status


def test_unsuppress_is_explicit_and_audited(env, monkeypatch, graph, work, redis_conn):
    from webhook_app import create_app

    monkeypatch.setenv("LEADRELAY_API_TOKEN", OPERATOR_TOKEN)
    client = create_app().test_client()
    forgotten = leadrelay("forget", "--email", EMAIL, "--json")
    ref = json.loads(forgotten.stdout)["ref"]
    _lead(graph, LEAD)
    _webhook(client, LEAD)
    work()
    assert graph.events == []
    assert leadrelay("unsuppress", ref).returncode == 0
    assert redis_conn.hlen(suppression.KEY) == 0
    _lead(graph, "7700000000000003")
    _webhook(client, "7700000000000003")
    work()
    assert [e["event_name"] for e in graph.events] == ["Lead"]
    actions = [json.loads(line)["action"] for line in leadrelay("audit", "--json").stdout.splitlines()]
    assert actions[:2] == ["unsuppress", "forget"]
    assert leadrelay("unsuppress", ref).returncode == 1  # nothing left under it


def test_the_admin_page_forgets_from_its_own_form_and_shows_the_trail(env, monkeypatch, graph, work, redis_conn):
    import re

    from webhook_app import create_app

    monkeypatch.setenv("LEADRELAY_ADMIN_TOKEN", ADMIN_TOKEN)
    monkeypatch.setenv("LEADRELAY_ADMIN_COOKIE_SECURE", "false")
    client = create_app().test_client()
    _lead(graph, LEAD)
    _webhook(client, LEAD)
    work()
    assert client.post("/admin/login", data={"token": ADMIN_TOKEN}).status_code == 303
    csrf = re.search(r'name="csrf" value="([^"]+)"', client.get("/admin").get_data(as_text=True)).group(1)
    assert client.post("/admin/people/forget", data={"email": EMAIL, "csrf": "forged"}).status_code == 400
    answer = client.post("/admin/people/forget", data={"email": EMAIL, "csrf": csrf}, follow_redirects=True)
    page = answer.get_data(as_text=True)
    ref = re.search(r"Forget (forget-[0-9a-f]+) accepted: suppressed from now on", page).group(1)
    assert "cannot be recalled" in page
    assert f'<tr data-request="{ref}" data-state="queued">' in page  # the page shows it waiting
    assert redis_conn.exists(f"leadrelay:profile:meta:{LEAD}")  # nothing walked in the request
    work()
    page = client.get("/admin").get_data(as_text=True)
    row = re.search(rf'<tr data-request="{ref}" data-state="done">.*?</tr>', page, re.S).group(0)
    assert "1 profile" in row
    assert '<tr data-audit="forget">' in page and ref in page
    assert "admin-session:" in page and EMAIL.lower() not in page.lower()
    assert not redis_conn.exists(f"leadrelay:profile:meta:{LEAD}")
