"""Google as a destination (#62), as a user runs it: Google's lead form webhook in (Google's
samples), the lead and its CRM stages out through the Data Manager API stand-in over real
HTTP, with a real service account key signing its OAuth assertion (google-auth), every
request read by Google's own generated types. Never to Meta; Google's hashes, not Meta's."""

from __future__ import annotations

import hashlib
import json
import time
from datetime import datetime, timezone

import pytest
import redis
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from google.ads import datamanager_v1

from helpers import API_TOKEN, CRM_STAGE_TABLES, fast_forward, fixture_bytes
from workers import jobs
from workers.common.queues import job_id
from workers.config.settings import load
from workers.events import googleevents
from workers.failures import deadletters
from workers.graphapi import capi
from workers.sources.registry import SOURCES

ACCOUNT = "service@leadrelay-test.iam.gserviceaccount.com"
LEAD_ID = "Cj0KCQjwAAAAAAAAAAProductionLead0001"
# Google's formatting page's examples (developers.google.com/data-manager/api/devguides/concepts/formatting)
EMAIL = hashlib.sha256(b"cloudysanfrancisco@gmail.com").hexdigest()
PHONE = hashlib.sha256(b"+18005550100").hexdigest()


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture
def google(env, graph, monkeypatch, tmp_path):
    """The app with a Google destination, a service account whose public key the stand-in's
    token endpoint knows, and the stage API on."""
    from webhook_app import create_app

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    graph.google_keys[ACCOUNT] = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    path = tmp_path / "service-account.json"
    path.write_text(
        json.dumps(
            {
                "type": "service_account",
                "project_id": "leadrelay-test",
                "private_key_id": "k1",
                "private_key": pem,
                "client_email": ACCOUNT,
                "client_id": "1",
                "token_uri": f"{graph.url}/google/token",
            }
        )
    )
    mapping = tmp_path / "leadrelay.toml"
    mapping.write_text(CRM_STAGE_TABLES)  # its [google.acme]
    for name, value in {
        "GOOGLE_APPLICATION_CREDENTIALS": str(path),
        "GOOGLE_DATAMANAGER_URL": graph.url,
        "LEADRELAY_API_TOKEN": API_TOKEN,
        "LEADRELAY_CONFIG": str(mapping),
    }.items():
        monkeypatch.setenv(name, value)
    jobs.install(load())
    return create_app().test_client()


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


SUBMITTED = int(time.time()) - 60  # a minute before the test: it passes at any hour


def _post(client, env, name: str = "lead__production.json", key: str | None = None):
    """The fixture as Google posts it, submitted a minute ago, its form's key in the body."""
    source = SOURCES["googleads"]
    doc = json.loads(fixture_bytes("googleads", name))
    if "lead_submit_time" in doc:
        doc["lead_submit_time"] = _iso(SUBMITTED)
    body, headers = source.signed(key or env[source.secret_setting], json.dumps(doc).encode())
    return client.post("/webhooks/googleads", data=body, headers=headers)


def _stages(client, *stages: tuple[str, dict]):
    now = int(time.time())
    items = [
        {"email": "Cloudy.SanFrancisco+shopping@gmail.com", "stage": s, "occurred_at": now, **x} for s, x in stages
    ]
    return client.post("/api/v1/stage-events", json=items, headers={"Authorization": f"Bearer {API_TOKEN}"})


def _ingested(graph) -> list[dict]:
    """Each ingest request the stand-in took, read by Google's generated types (an unknown
    field or enum value raises)."""
    bodies = [r["body"] for r in graph.requests if r["kind"] == "google_ingest"]
    for body in bodies:
        datamanager_v1.IngestEventsRequest.from_json(json.dumps(body))
    return bodies


def test_a_google_lead_goes_to_google_hashed_by_googles_rules_never_to_meta(google, env, graph, work):
    answer = _post(google, env)
    assert answer.status_code == 200 and answer.get_json()["accepted"] == 1
    work()
    [request] = _ingested(graph)
    assert request["destinations"] == [
        {
            "operatingAccount": {"accountType": "GOOGLE_ADS", "accountId": "1234567890"},
            "productDestinationId": "1001",
            "reference": "Lead",
        }
    ]
    [event] = request["events"]
    assert event["userData"]["userIdentifiers"] == [{"emailAddress": EMAIL}, {"phoneNumber": PHONE}]
    assert event["adIdentifiers"] == {"gclid": "Cj0KCQjwAAAAAAAAAAProductionClick001"}
    assert event["eventTimestamp"] == _iso(SUBMITTED)
    assert event["transactionId"] == googleevents.transaction_of(f"googleads:{LEAD_ID}:Lead")
    assert event["consent"] == {"adUserData": "CONSENT_GRANTED", "adPersonalization": "CONSENT_DENIED"}
    assert LEAD_ID not in json.dumps(event) and "cloudy" not in json.dumps(event).lower()
    assert graph.events == []  # Meta never hears of a Google lead


def test_a_redelivered_google_lead_is_a_duplicate_and_sent_once(google, env, graph, work):
    assert _post(google, env).get_json()["accepted"] == 1
    again = _post(google, env).get_json()
    assert again["accepted"] == 0 and again["duplicates"] == 1
    work()
    assert len([e for r in _ingested(graph) for e in r["events"]]) == 1


def test_a_crm_stage_of_a_google_lead_goes_to_googles_conversion_action_for_it(google, env, graph, work):
    _post(google, env)
    work()
    answer = _stages(google, ("marketing qualified", {}), ("won", {"value": 1200, "currency": "EUR"}))
    assert [r["status"] for r in answer.get_json()["results"]] == ["accepted", "accepted"]
    work()
    sent = {r["destinations"][0]["productDestinationId"]: r for r in _ingested(graph)[1:]}
    events = {
        d["reference"]: e
        for r in sent.values()
        for d in r["destinations"]
        for e in r["events"]
        if e["destinationReferences"] == [d["reference"]]
    }
    assert set(events) == {"QualifiedLead", "Purchase"}
    assert events["Purchase"]["conversionValue"] == 1200.0 and events["Purchase"]["currency"] == "EUR"
    assert events["Purchase"]["transactionId"] == googleevents.transaction_of(f"googleads:{LEAD_ID}:Purchase")
    assert events["QualifiedLead"]["adIdentifiers"]["gclid"].startswith("Cj0KCQjw")
    assert graph.events == []


def test_one_event_google_refuses_is_dead_lettered_alone_and_the_rest_go(google, env, graph, work, redis_conn):
    _post(google, env)
    work()
    graph.google_refuse.add(googleevents.transaction_of(f"googleads:{LEAD_ID}:Schedule"))
    _stages(google, ("marketing qualified", {}), ("meeting booked", {}), ("won", {"value": 10, "currency": "EUR"}))
    work()
    _ingested(graph)  # every request, the refused ones too, in Google's types
    names = sorted(e["event"]["destinationReferences"][0] for e in graph.google_events[1:])  # what Google took
    assert names == ["Purchase", "QualifiedLead"]
    letter = deadletters.get(redis_conn, job_id("stage", f"googleads:{LEAD_ID}:Schedule"))
    assert letter["reason"] == "invalid" and letter["event_name"] == "Schedule"
    assert "INVALID_FORMAT" in letter["detail"]


def test_googles_quota_is_retried_later_with_the_same_events(google, env, graph, work, redis_conn):
    graph.google_script.append((429, {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "Quota"}}))
    _post(google, env)
    work()
    assert len(_ingested(graph)) == 1 and graph.google_events == []  # tried once, refused for quota
    fast_forward(redis_conn)
    work()
    first, again = _ingested(graph)
    assert again["events"] == first["events"]  # the same event, the same transactionId
    [taken] = graph.google_events
    assert taken["event"]["transactionId"] == googleevents.transaction_of(f"googleads:{LEAD_ID}:Lead")


def test_a_lead_from_googles_test_button_is_recorded_never_uploaded(google, env, graph, work):
    answer = _post(google, env, "lead__test_button.json")
    assert answer.status_code == 200
    assert [s["reason"] for s in answer.get_json()["skipped"]] == ["test_delivery"]
    work()
    assert _ingested(graph) == []


def test_a_wrong_google_key_is_401_and_nothing_is_kept(google, env, graph, work):
    answer = _post(google, env, key="not-the-key")
    assert answer.status_code == 401 and answer.get_json()["error"] == "bad_signature"
    assert "not-the-key" not in answer.get_data(as_text=True)
    for no_object in (b"[]", b"not json", b"null"):  # no JSON object carries no key
        refused = google.post("/webhooks/googleads", data=no_object, headers={"Content-Type": "application/json"})
        assert refused.status_code == 401
    work()
    assert _ingested(graph) == []


def test_in_dry_run_googles_events_are_kept_beside_metas(google, env, graph, work, monkeypatch, redis_conn):
    from webhook_app import create_app

    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS")
    jobs.install(load())
    dry = create_app().test_client()  # both processes without Google's credentials
    _post(dry, env, "lead__test_button.json")  # a test lead: visible in a dry run
    work()
    [kept] = capi.last_dry_run(redis_conn, 10)
    assert kept["platform"] == "google" and kept["dataset"] == "google:acme" and kept["test"] is True
    assert kept["conversion_action"] == "1001" and kept["event"]["event_name"] == "Lead"
    assert kept["event"]["userData"]["userIdentifiers"][0] == {"emailAddress": _sha("test@example.com")}
    assert _ingested(graph) == []


def test_what_google_made_of_a_request_is_read_30_minutes_later_and_counted(google, env, graph, work, redis_conn):
    from workers.common import counters
    from workers.googleapi import status

    _post(google, env)
    work()
    [request_id] = [r.decode() for r in redis_conn.zrange(status.DUE, 0, -1)]
    sent_at = int(_request(redis_conn, request_id)[0]["sent_at"])
    client = jobs.context().google
    assert status.check_due(client, redis_conn, now=sent_at + 60) == {}  # not before 30 minutes
    graph.google_requests[request_id] = {
        "requestStatusPerDestination": [{"requestStatus": "PROCESSING"}],
    }
    assert status.check_due(client, redis_conn, now=sent_at + 31 * 60) == {"processing": 1}
    assert redis_conn.zscore(status.DUE, request_id) > sent_at + 31 * 60  # read again later
    graph.google_requests[request_id] = {
        "requestStatusPerDestination": [
            {
                "requestStatus": "PARTIAL_SUCCESS",
                "errorInfo": {"errorCounts": [{"recordCount": "1", "reason": "PROCESSING_ERROR_REASON_EVENT_TOO_OLD"}]},
                "eventsIngestionStatus": {"recordCount": "0"},
            }
        ]
    }
    assert status.check_due(client, redis_conn, now=sent_at + 5 * 3600) == {"partial_success": 1}
    [record] = _request(redis_conn, request_id)
    assert record["status"] == "PARTIAL_SUCCESS" and record["destination"] == "acme"
    assert json.loads(record["errors"]) == {"PROCESSING_ERROR_REASON_EVENT_TOO_OLD": 1}
    assert json.loads(record["events"]) == {"Lead": 1} and record["job"].startswith("drain")
    assert redis_conn.zcard(status.DUE) == 0
    figure = counters.field(counters.GOOGLE_PROCESSING, "acme", "error", "PROCESSING_ERROR_REASON_EVENT_TOO_OLD")
    assert int(redis_conn.hget(counters.HASH, figure)) == 1


def test_doctor_checks_the_service_account_and_each_conversion_action(google, env, graph):
    from workers.run import doctor

    graph.google_actions = {"1001": "UPLOAD_CLICKS", "1002": "UPLOAD_CLICKS", "1003": "WEBPAGE"}  # no 1004
    found = {c.name: c for c in doctor.run() if c.name.startswith("google")}
    assert found["google credentials"].ok
    assert found["google conversion action Lead"].ok and found["google conversion action QualifiedLead"].ok
    assert not found["google conversion action Schedule"].ok
    assert "UPLOAD_CLICKS" in found["google conversion action Schedule"].fix
    assert not found["google conversion action Purchase"].ok
    assert "INVALID_CONVERSION_ACTION_ID" in found["google conversion action Purchase"].detail
    assert "create it in Google Ads" in found["google conversion action Purchase"].fix
    assert graph.google_events == []  # validated only: nothing uploaded
    graph.google_keys.clear()  # Google no longer knows the key
    [refused] = [c for c in doctor.run() if c.name == "google credentials"]
    assert not refused.ok and "GOOGLE_APPLICATION_CREDENTIALS" in refused.fix


def test_an_account_google_will_not_take_conversions_for_is_reported_with_its_fix(google, env, graph):
    from workers.run import doctor

    reason = "DESTINATION_ACCOUNT_NOT_ENABLED_ENHANCED_CONVERSIONS_FOR_LEADS"
    details = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason}]
    refusal = {"error": {"code": 400, "status": "FAILED_PRECONDITION", "message": "not enabled", "details": details}}
    graph.google_script.extend([(400, refusal)] * 4)  # every action's validation
    found = [c for c in doctor.run() if c.name.startswith("google conversion action")]
    assert found and all(not c.ok and "enhanced conversions for leads" in c.fix for c in found)
    assert all(reason in c.detail for c in found)


def test_forgetting_a_google_leads_person_leaves_nothing_of_theirs(google, env, graph, work, redis_conn, monkeypatch):
    from helpers import leadrelay
    from webhook_app import create_app

    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS")  # dry run: their events kept, to be found too
    jobs.install(load())
    dry = create_app().test_client()
    _post(dry, env)
    work()
    assert _stages(dry, ("marketing qualified", {}), ("won", {"value": 5, "currency": "EUR"})).status_code == 202
    work()
    assert len(capi.last_dry_run(redis_conn, 20)) >= 3
    assert _traces(redis_conn)  # their profile, its lookups, their dry-run events, the ledger's marks...
    assert leadrelay("forget", "--email", "Cloudy.SanFrancisco+shopping@gmail.com").returncode == 0
    work()
    assert _traces(redis_conn) == []


def _traces(redis_conn) -> list[tuple[str, str]]:
    """Every key whose name or content holds the Google lead's id, hashes or click id."""
    traces = (LEAD_ID, EMAIL, PHONE, "Cj0KCQjwAAAAAAAAAAProductionClick001")
    found = []
    for key in redis_conn.scan_iter(count=1000):
        kind = redis_conn.type(key).decode()
        values = {
            "string": lambda: [redis_conn.get(key)],
            "list": lambda: redis_conn.lrange(key, 0, -1),
            "hash": lambda: [*redis_conn.hkeys(key), *redis_conn.hvals(key)],
            "set": lambda: list(redis_conn.smembers(key)),
            "zset": lambda: redis_conn.zrange(key, 0, -1),
        }.get(kind, lambda: [])()
        text = key.decode() + " ".join(v.decode("utf-8", "replace") for v in values if isinstance(v, bytes))
        found += [(key.decode(), t) for t in traces if t in text]
    return found


def test_a_crm_deal_won_for_a_google_leads_person_goes_to_google_and_a_meta_leads_to_meta(
    google, env, graph, work, redis_conn
):
    """Every stage source feeds both: HubSpot's deal webhook, its person read back from the
    CRM, each stage to the platform that brought the person, never to the other."""
    from helpers import hubspot_deal_event, leadgen_body, post_signed, sign

    _post(google, env)
    graph.add_lead("6600000000000077", field_data=[{"name": "email", "values": ["meta.person@example.com"]}])
    body = leadgen_body("6600000000000077", created_time=int(time.time()) - 60)
    google.post("/webhooks/meta", data=body, headers={"X-Hub-Signature-256": sign(body)})
    work()
    google_deal = graph.add_crm_person("Cloudy.SanFrancisco+shopping@gmail.com", amount=900, currency="EUR")
    meta_deal = graph.add_crm_person("meta.person@example.com", amount=300, currency="EUR")
    for event_id, made in ((1, google_deal), (2, meta_deal)):
        won = json.dumps([hubspot_deal_event(made["deal_id"], "closedwon", event_id=event_id)]).encode()
        assert post_signed(google, "hubspot", won, env).get_json()["accepted"] == 1
    work()
    [purchase] = [e["event"] for e in graph.google_events if e["event"]["destinationReferences"] == ["Purchase"]]
    assert purchase["conversionValue"] == 900.0 and purchase["currency"] == "EUR"
    assert purchase["transactionId"] == googleevents.transaction_of(f"googleads:{LEAD_ID}:Purchase")
    metas = [e for e in graph.events if e["event_name"] == "Purchase"]
    assert [e["user_data"]["lead_id"] for e in metas] == [6600000000000077]
    assert metas[0]["custom_data"]["value"] == 300


def test_googles_window_not_metas_a_stage_nine_days_on_still_goes_to_google(google, env, graph, work):
    doc = json.loads(fixture_bytes("googleads", "lead__production.json"))
    doc["lead_submit_time"] = _iso(time.time() - 12 * 86400)
    source = SOURCES["googleads"]
    body, headers = source.signed(env[source.secret_setting], json.dumps(doc).encode())
    assert google.post("/webhooks/googleads", data=body, headers=headers).get_json()["accepted"] == 1
    work()
    late = {
        "email": "Cloudy.SanFrancisco+shopping@gmail.com",
        "stage": "won",
        "occurred_at": int(time.time()) - 9 * 86400,
        "value": 50,
        "currency": "EUR",
    }
    answer = google.post(
        "/api/v1/stage-events",
        json=[late, {**late, "email": "nobody@example.com"}],
        headers={"Authorization": f"Bearer {API_TOKEN}"},
    ).get_json()
    assert [r["status"] for r in answer["results"]] == ["accepted", "rejected"], answer["results"]
    assert answer["results"][1]["reason"] == "too_old"  # Meta's 7 days for a person Google did not bring
    work()
    names = sorted(e["event"]["destinationReferences"][0] for e in graph.google_events)
    assert names == ["Lead", "Purchase"]


def test_a_person_both_platforms_brought_has_each_stage_sent_to_each_and_only_once(google, env, graph, work):
    from helpers import leadgen_body, sign

    _post(google, env)
    email = [{"name": "email", "values": ["cloudy.sanfrancisco+shopping@gmail.com"]}]
    graph.add_lead("6600000000000088", field_data=email)  # the same person, by a Meta ad too
    body = leadgen_body("6600000000000088", created_time=int(time.time()) - 30)
    google.post("/webhooks/meta", data=body, headers={"X-Hub-Signature-256": sign(body)})
    work()
    answer = _stages(google, ("won", {"value": 700, "currency": "EUR"})).get_json()
    [result] = answer["results"]
    assert result["status"] == "accepted" and [a["status"] for a in result["also"]] == ["accepted"]
    again = _stages(google, ("won", {"value": 700, "currency": "EUR"})).get_json()
    assert again["duplicate"] == 2 and [a["status"] for a in again["results"][0]["also"]] == ["duplicate"]
    work()
    googles = [e["event"] for e in graph.google_events if e["event"]["destinationReferences"] == ["Purchase"]]
    metas = [e for e in graph.events if e["event_name"] == "Purchase"]
    assert len(googles) == 1 and googles[0]["conversionValue"] == 700.0
    assert len(metas) == 1 and metas[0]["user_data"]["lead_id"] == 6600000000000088
    assert "google" not in json.dumps(metas[0]).lower()  # Meta's event carries nothing of Google's


def test_a_refused_service_account_pauses_googles_path_and_the_next_lead_waits(google, env, graph, work, redis_conn):
    from workers.graphapi.pauses import fingerprint

    graph.google_denied.add("1234567890")  # the service account is no user of the account
    _post(google, env)
    work()
    credentials = env.get("GOOGLE_APPLICATION_CREDENTIALS") or jobs.context().settings.google_credentials
    pause = redis_conn.get(f"leadrelay:pause:{fingerprint(credentials)}")
    assert pause and json.loads(pause)["service"] == "Google"
    assert graph.google_events == []
    letter = deadletters.get(redis_conn, f"lead-googleads-{LEAD_ID}")
    assert letter["reason"] == "auth" and "access to the Google Ads account" in json.dumps(letter), letter
    doc = json.loads(fixture_bytes("googleads", "lead__production.json")) | {"lead_id": "SECOND-LEAD"}
    body, headers = SOURCES["googleads"].signed(env["GOOGLE_ADS_WEBHOOK_KEY"], json.dumps(doc).encode())
    assert google.post("/webhooks/googleads", data=body, headers=headers).get_json()["accepted"] == 1
    work()
    assert graph.google_events == []  # it waits: a probe asks Google (validateOnly), which still refuses
    assert deadletters.get(redis_conn, "lead-googleads-SECOND-LEAD") is None
    graph.google_denied.clear()  # access given
    redis_conn.delete(f"leadrelay:pause:{fingerprint(credentials)}:probe")  # five minutes on: a probe is due
    work()
    assert [e["event"]["transactionId"] for e in graph.google_events] == [
        googleevents.transaction_of("googleads:SECOND-LEAD:Lead")
    ]  # the waiting lead goes; the refused one stays a dead letter for `leadrelay replay --reason auth`


def test_an_event_past_the_destinations_window_is_dead_lettered_expired_never_sent(
    google, env, graph, work, redis_conn
):
    doc = json.loads(fixture_bytes("googleads", "lead__production.json"))
    doc["lead_submit_time"] = _iso(time.time() - 95 * 86400)  # past the 90-day window
    source = SOURCES["googleads"]
    body, headers = source.signed(env[source.secret_setting], json.dumps(doc).encode())
    assert google.post("/webhooks/googleads", data=body, headers=headers).get_json()["accepted"] == 1
    work()
    assert [r for r in graph.requests if r["kind"] == "google_ingest"] == []
    letter = deadletters.get(redis_conn, f"lead-googleads-{LEAD_ID}")
    assert letter["reason"] == "expired" and "90-day window" in letter["detail"]


AGENCY = """
[datasets.acme]
id = "111"
[datasets.other]
id = "222"
[clients.acme]
token_env = "ACME_API_TOKEN"
datasets = ["acme"]
[clients.acme.secrets]
googleads = "ACME_GOOGLE_KEY"
[google.acme]
dataset = "acme"
operating_account = "1111111111"
forms = ["123456789"]
conversion_actions = { Lead = "11" }
[google.other]
dataset = "other"
operating_account = "2222222222"
forms = ["999"]
conversion_actions = { Lead = "22" }
"""


def test_a_clients_own_google_key_reaches_its_own_destinations_only(env, graph, work, monkeypatch, tmp_path):
    from webhook_app import create_app

    mapping = tmp_path / "agency.toml"
    mapping.write_text(AGENCY)
    for name, value in {
        "LEADRELAY_CONFIG": str(mapping),
        "ACME_API_TOKEN": "acme-api",
        "ACME_GOOGLE_KEY": "acme-key",
    }.items():
        monkeypatch.setenv(name, value)
    jobs.install(load())
    client = create_app().test_client()
    source = SOURCES["googleads"]
    doc = json.loads(fixture_bytes("googleads", "lead__production.json"))
    for form_id, lead_id, expected in ((123456789, "ACME-LEAD", 1), (999, "OTHER-LEAD", 0)):
        body, headers = source.signed("acme-key", json.dumps({**doc, "form_id": form_id, "lead_id": lead_id}).encode())
        answer = client.post("/webhooks/googleads", data=body, headers=headers).get_json()
        assert answer["accepted"] == expected, answer
    assert [s["reason"] for s in answer["skipped"]] == ["form_out_of_scope"]
    work()
    kept = capi.last_dry_run(redis.Redis.from_url(env["REDIS_URL"]), 10)  # no credentials: dry run
    assert [(k["dataset"], k["conversion_action"]) for k in kept] == [("google:acme", "11")]


def test_check_config_names_each_destination_and_a_conversion_action_no_stage_sends(env, monkeypatch, tmp_path):
    from helpers import leadrelay

    said = leadrelay("check-config")
    assert said.returncode == 0
    assert "Google destination acme (account 1234567890, dataset default): keeps events (dry run" in said.stdout
    assert "conversion actions Lead 1001, Purchase 1004, QualifiedLead 1002, Schedule 1003" in said.stdout
    mapping = tmp_path / "bad.toml"
    mapping.write_text('[google.acme]\noperating_account = "123-456-7890"\nconversion_actions = { Qualified = "2" }\n')
    monkeypatch.setenv("LEADRELAY_CONFIG", str(mapping))
    refused = leadrelay("check-config")
    assert refused.returncode != 0
    assert "google.acme.conversion_actions.Qualified: is no event a stage sends" in refused.stdout + refused.stderr
    assert "did you mean QualifiedLead?" in refused.stdout + refused.stderr


def test_no_near_miss_of_the_key_gets_in_and_a_body_too_deep_to_read_is_refused(google, env, graph, work, redis_conn):
    key = env["GOOGLE_ADS_WEBHOOK_KEY"]
    doc = json.loads(fixture_bytes("googleads", "lead__production.json"))
    near = ["", " ", key + " ", " " + key, key.upper(), key[:-1], key + "0", key * 2, "\u0000" + key[1:], key + "\n"]
    bodies = [json.dumps({**doc, "google_key": value}).encode() for value in near]
    bodies += [json.dumps({**doc, "google_key": value}).encode() for value in (None, 0, [key], {"key": key})]
    bodies += [json.dumps({**doc, "Google_key": key}).encode(), json.dumps({**doc, "GOOGLE_KEY": key}).encode()]
    bodies.append(b'{"google_key": "' + key.encode() + b'", "x": ' + b"[" * 10_000 + b"]" * 10_000 + b"}")
    for body in bodies:
        answer = google.post(
            "/webhooks/googleads", data=body, headers={"Content-Type": "application/json", "google_key": key}
        )
        assert answer.status_code == 401, body[:80]
    work()
    assert graph.requests == [] or all(r["kind"] != "google_ingest" for r in graph.requests)
    assert redis_conn.keys("leadrelay:seen:*") == []


def test_every_lead_sends_the_stages_of_leads_google_did_not_bring_to_google_too(
    google, env, graph, work, monkeypatch, tmp_path
):
    """Only where the mapping says so: a Meta lead's stage goes to Meta, and to Google by the
    email and phone the stage gives (Google's keys, no click id), each its own event."""
    from helpers import CRM_STAGE_TABLES, leadgen_body, sign
    from webhook_app import create_app

    mapping = tmp_path / "every.toml"
    mapping.write_text(
        CRM_STAGE_TABLES.replace(
            'operating_account = "123-456-7890"', 'operating_account = "123-456-7890"\nevery_lead = true'
        )
    )
    monkeypatch.setenv("LEADRELAY_CONFIG", str(mapping))
    jobs.install(load())
    client = create_app().test_client()
    graph.add_lead("6600000000000099", field_data=[{"name": "email", "values": ["Meta.Person@gmail.com"]}])
    body = leadgen_body("6600000000000099", created_time=int(time.time()) - 30)
    client.post("/webhooks/meta", data=body, headers={"X-Hub-Signature-256": sign(body)})
    work()
    item = {
        "email": "Meta.Person@gmail.com",
        "phone": "+1 650 253 0000",
        "stage": "mql",
        "occurred_at": int(time.time()),
    }
    answer = client.post(
        "/api/v1/stage-events", json=[item], headers={"Authorization": f"Bearer {API_TOKEN}"}
    ).get_json()
    [result] = answer["results"]
    assert result["event_id"] == "meta:6600000000000099:QualifiedLead"
    assert [a["event_id"] for a in result["also"]] == ["googleads-meta:6600000000000099:QualifiedLead"]
    work()
    [meta] = [e for e in graph.events if e["event_name"] == "QualifiedLead"]
    assert meta["user_data"]["lead_id"] == 6600000000000099
    [sent] = [e["event"] for e in graph.google_events]
    assert "adIdentifiers" not in sent  # no click: Google matches by its own keys alone
    assert sent["userData"]["userIdentifiers"] == [
        {"emailAddress": _sha("metaperson@gmail.com")},
        {"phoneNumber": _sha("+16502530000")},
    ]


def test_a_lead_google_could_match_on_nothing_is_dead_lettered_with_why_never_sent(
    google, env, graph, work, redis_conn
):
    doc = json.loads(fixture_bytes("googleads", "lead__production.json"))
    doc = {**doc, "gcl_id": None, "user_column_data": [{"column_id": "COMPANY_NAME", "string_value": "Example"}]}
    body, headers = SOURCES["googleads"].signed(env["GOOGLE_ADS_WEBHOOK_KEY"], json.dumps(doc).encode())
    assert google.post("/webhooks/googleads", data=body, headers=headers).get_json()["accepted"] == 1
    work()
    assert [r for r in graph.requests if r["kind"] == "google_ingest"] == []
    letter = deadletters.get(redis_conn, f"lead-googleads-{LEAD_ID}")
    assert letter["reason"] == "invalid" and "NO_IDENTIFIERS_PROVIDED" in letter["detail"]


def _request(redis_conn, request_id: str) -> list[dict]:
    """A Google request's record as kept (googleapi/status.py)."""
    from workers.googleapi import status

    raw = redis_conn.hgetall(status.key(request_id))
    return [{"request_id": request_id, **{k.decode(): v.decode() for k, v in raw.items()}}] if raw else []
