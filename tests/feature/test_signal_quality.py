"""What Meta receives, end to end: browser fields checked, Limited Data Use per form,
source and stage item, and a late Lead that is the same event it would have been."""

from __future__ import annotations

import hashlib
import json
import time

import pytest

from helpers import API_TOKEN as TOKEN
from helpers import LEAD, SUBMITTED, fixture, leadgen_body, leadrelay, sign, typeform_sig
from webhook_app import create_app

LDU = {"data_processing_options": ["LDU"], "data_processing_options_country": 0, "data_processing_options_state": 0}
CALIFORNIA = {
    "data_processing_options": ["LDU"],
    "data_processing_options_country": 1,
    "data_processing_options_state": 1000,
}


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture
def configured(env, monkeypatch, tmp_path):
    """The app with a mapping file; returns (client, post a Typeform body, post stage items)."""

    def start(toml: str):
        path = tmp_path / "leadrelay.toml"
        path.write_text(toml)
        monkeypatch.setenv("LEADRELAY_CONFIG", str(path))
        monkeypatch.setenv("LEADRELAY_API_TOKEN", TOKEN)
        client = create_app().test_client()

        def typeform(body: bytes):
            return client.post("/webhooks/typeform", data=body, headers={"Typeform-Signature": typeform_sig(body)})

        def stages(items):
            return client.post("/api/v1/stage-events", json=items, headers={"Authorization": f"Bearer {TOKEN}"})

        def meta(body: bytes):
            return client.post("/webhooks/meta", data=body, headers={"X-Hub-Signature-256": sign(body)})

        return meta, typeform, stages

    return start


def with_hidden(**hidden) -> bytes:
    doc = json.loads(fixture("typeform", "form_response__hidden_fields.json"))
    doc["form_response"]["hidden"].update(hidden)
    return json.dumps(doc).encode()


def test_placeholder_browser_fields_never_reach_meta(configured, work, graph):
    _, typeform, _ = configured("")
    body = with_hidden(
        fbc=f"fb.1.{SUBMITTED * 1000}.undefined",
        fbp="undefined",
        client_ip="unknown",
        user_agent="{{user_agent}}",
        page_url="%PAGE_URL%",
        event_id="null",
    )
    assert typeform(body).json["accepted"] == 1
    work()
    [event] = graph.events
    user_data = event["user_data"]
    assert user_data["fbc"] == f"fb.1.{SUBMITTED * 1000}.IwAR2xYzAbC"  # built from the real fbclid instead
    assert not {"fbp", "client_ip_address", "client_user_agent"} & set(user_data)
    assert event["action_source"] == "system_generated" and "event_source_url" not in event
    assert event["event_id"].startswith("typeform:")  # not the placeholder "null"


def test_the_clients_address_is_taken_from_a_forwarded_list(configured, work, graph):
    _, typeform, _ = configured("")
    typeform(with_hidden(client_ip="203.0.113.7, 10.0.0.1"))
    work()
    assert graph.events[0]["user_data"]["client_ip_address"] == "203.0.113.7"


def test_ldu_per_typeform_form_and_per_stage_item_reach_meta(configured, work, graph):
    _, typeform, stages = configured('[forms.typeform.aBc123Xy]\nemail = "email"\nldu = true\n')
    assert typeform(fixture("typeform", "form_response__hidden_fields.json")).json["accepted"] == 1
    work()  # the lead's profile exists before its stages come
    now = int(time.time())
    answer = stages(
        [
            {"email": "jose.muller@example.com", "stage": "QualifiedLead", "occurred_at": now, "ldu": True},
            {
                "external_id": "crm-9",
                "stage": "QualifiedLead",
                "occurred_at": now,
                "data_processing_options": ["LDU"],
                "data_processing_options_country": 1,
                "data_processing_options_state": 1000,
            },
            {"external_id": "crm-10", "stage": "QualifiedLead", "occurred_at": now},
        ]
    )
    assert answer.json["accepted"] == 3
    work()
    by_id = {e["event_id"]: e for e in graph.events}
    lead = by_id["lead-7f3c2a"]
    assert {k: lead[k] for k in LDU} == LDU
    qualified = by_id["typeform:aBc123Xy:9q3v9bp5alonta6239q3q1rfly2c2ukh:QualifiedLead"]
    assert {k: qualified[k] for k in LDU} == LDU
    [crm9] = [e for e in graph.events if e["user_data"].get("external_id") == [sha("crm-9")]]
    assert {k: crm9[k] for k in CALIFORNIA} == CALIFORNIA
    [crm10] = [e for e in graph.events if e["user_data"].get("external_id") == [sha("crm-10")]]
    assert "data_processing_options" not in crm10


def test_ldu_per_source_for_lead_ads(configured, work, graph):
    post_meta, _, _ = configured("[sources.meta]\nldu = {country = 1, state = 1000}\n[sources.crm]\nldu = false\n")
    created = int(time.time()) - 600
    graph.add_lead(LEAD, created_time=created)
    post_meta(leadgen_body(LEAD, created_time=created))
    work()
    [lead] = graph.events
    assert {k: lead[k] for k in CALIFORNIA} == CALIFORNIA


def test_crm_source_default_applies_to_stage_items(configured, work, graph):
    _, _, stages = configured("[sources.crm]\nldu = true\n")
    stages(
        [
            {"external_id": "crm-1", "stage": "QualifiedLead", "occurred_at": int(time.time())},
            {"external_id": "crm-2", "stage": "QualifiedLead", "occurred_at": int(time.time()), "ldu": False},
        ]
    )
    work()
    by_key = {e["user_data"]["external_id"][0]: e for e in graph.events}
    assert {k: by_key[sha("crm-1")][k] for k in LDU} == LDU
    assert by_key[sha("crm-2")]["data_processing_options"] == []
    assert "data_processing_options_country" not in by_key[sha("crm-2")]


@pytest.mark.parametrize(
    "item, detail",
    [
        ({"ldu": "yes"}, "must be true, false"),
        ({"ldu": {"country": 2}}, "country must be 0"),
        ({"data_processing_options": ["LDU"], "data_processing_options_state": 6}, "state must be 0"),
        ({"data_processing_options": ["XYZ"]}, 'must be ["LDU"]'),
    ],
)
def test_a_bad_ldu_item_is_rejected_with_its_reason(configured, item, detail):
    _, _, stages = configured("")
    [result] = stages(
        [{"external_id": "crm-1", "stage": "QualifiedLead", "occurred_at": int(time.time()), **item}]
    ).json["results"]
    assert result["status"] == "rejected" and result["reason"] == "bad_ldu" and detail in result["detail"]


@pytest.mark.parametrize(
    "toml, where",
    [
        ('[sources.meta]\nldu = "yes"\n', "sources.meta.ldu"),
        ("[sources.hubspot]\nldu = true\n", "sources"),  # its events are stage events: [sources.crm]
        ("[sources.salesforce]\nldu = true\n", "sources"),
        ("[sources.meta]\nlimit = 1\n", "sources.meta"),
        ("[forms.typeform.f1]\nldu = {state = 6}\n", "forms.typeform.f1.ldu"),
        ('[forms.typeform.f1]\nregion = "XX"\n', "forms.typeform.f1.region"),
    ],
)
def test_mapping_file_ldu_and_region_mistakes_name_the_entry(configured, toml, where):
    from workers.config.needed import ConfigError

    with pytest.raises(ConfigError) as err:
        configured(toml)
    assert str(err.value).startswith(f"LEADRELAY_CONFIG: {where}")


def test_a_forms_region_reads_its_phones_when_the_lead_gives_no_country(configured, work, graph):
    _, typeform, _ = configured('[forms.typeform.aBc123Xy]\nemail = "email"\nphone = "phone"\nregion = "FR"\n')
    doc = json.loads(fixture("typeform", "form_response__hidden_fields.json"))
    answers = [a for a in doc["form_response"]["answers"] if a["field"]["ref"] != "country"]  # no country given
    for answer in answers:
        if answer["type"] == "phone_number":
            answer["phone_number"] = "06 12 34 56 78"
    doc["form_response"]["answers"] = answers
    typeform(json.dumps(doc).encode())
    work()
    assert graph.events[0]["user_data"]["ph"] == [sha("33612345678")]


def test_a_late_lead_is_the_same_event_it_would_have_been(configured, work, graph, monkeypatch):
    """Built in dry run, sent later ahead of a stage event: same keys (first and last
    name too), same source, same LDU fields, same event_id."""
    monkeypatch.delenv("META_CAPI_ACCESS_TOKEN")
    post_meta, _, stages = configured("[sources.meta]\nldu = true\n")
    created = int(time.time()) - 3600
    graph.add_lead(LEAD, created_time=created)
    post_meta(leadgen_body(LEAD, created_time=created))
    work()
    monkeypatch.setenv("META_CAPI_ACCESS_TOKEN", "token")
    stages([{"leadgen_id": LEAD, "stage": "MQL", "occurred_at": int(time.time()), "lead_event_source": "HubSpot"}])
    work()
    [lead] = [e for e in graph.events if e["event_name"] == "Lead"]
    assert lead["event_id"] == f"meta:{LEAD}:Lead" and lead["event_time"] == created
    assert set(lead["user_data"]) == {"em", "ph", "fn", "ln", "lead_id"}
    assert lead["custom_data"] == {"event_source": "crm", "lead_event_source": "leadrelay"}
    assert {k: lead[k] for k in LDU} == LDU


def test_a_test_event_code_is_announced_by_every_process_and_on_the_admin_page(env, monkeypatch, capfd, work, tmp_path):
    """The worker says it at start; the web process says it once, in gunicorn's master
    (the gunicorn settings' on_starting), not once per web process."""
    import runpy

    monkeypatch.setenv("META_TEST_EVENT_CODE", "TEST4242")
    monkeypatch.setenv("LEADRELAY_ADMIN_TOKEN", "admin-token")
    # Else the settings file makes a metrics folder of its own, in this process's
    # environment for good: the /metrics of every later test would read it.
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    client = create_app().test_client()
    work()
    runpy.run_module("webhook_app.gunicorn_conf")["on_starting"](None)
    out, err = capfd.readouterr()
    lines = [json.loads(line) for line in (out + err).splitlines() if line.startswith("{")]
    assert {line["process"] for line in lines if line["event"] == "test_event_code"} == {"web", "worker"}
    client.post("/admin/login", data={"token": "admin-token"})
    assert b'id="test-event-code"' in client.get("/admin").data


def test_without_a_test_event_code_nothing_is_announced(env, capfd, client, work):
    work()
    out, err = capfd.readouterr()
    assert '"test_event_code"' not in out + err


def test_match_key_coverage_per_event_name_in_the_cli_and_on_the_admin_page(env, monkeypatch, graph, work):
    monkeypatch.setenv("LEADRELAY_ADMIN_TOKEN", "admin-token")
    client = create_app().test_client()
    created = int(time.time()) - 600
    for leadgen_id, fields in (("111", None), ("222", [{"name": "email", "values": ["a@b.co"]}])):
        graph.add_lead(leadgen_id, created_time=created, field_data=fields)
        body = leadgen_body(leadgen_id, created_time=created)
        client.post("/webhooks/meta", data=body, headers={"X-Hub-Signature-256": sign(body)})
    work()
    answer = leadrelay("coverage", "--json")
    assert answer.returncode == 0, answer.stderr
    tables = json.loads(answer.stdout)
    for rows in tables.values():
        assert rows["Lead"]["events"] == 2
        assert rows["Lead"]["keys"]["em"] == 1.0 and rows["Lead"]["keys"]["ph"] == 0.5
        assert rows["Lead"]["keys"]["lead_id"] == 1.0 and rows["Lead"]["keys"]["db"] == 0.0
    text = leadrelay("coverage").stdout
    assert "since the counters began" in text and "50%" in text
    client.post("/admin/login", data={"token": "admin-token"})
    page = client.get("/admin").get_data(as_text=True)
    assert 'data-coverage="Lead:ph">50%' in page and 'data-coverage="Lead:em">100%' in page
