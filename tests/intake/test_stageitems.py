"""Funnel stages from a CRM: the full chain for a Meta lead, the rules, batching."""

import hashlib
import time

import pytest

from helpers import API_TOKEN as TOKEN
from helpers import LEAD, delivered_lead, leadgen_body, leadrelay
from webhook_app import create_app
from workers.failures import deadletters

EM = hashlib.sha256(b"joe@example.com").hexdigest()
PH = hashlib.sha256(b"16505551212").hexdigest()


@pytest.fixture
def api(env, monkeypatch):
    monkeypatch.setenv("LEADRELAY_API_TOKEN", TOKEN)
    client = create_app().test_client()

    def post(body, token=TOKEN):
        return client.post("/api/v1/stage-events", json=body, headers={"Authorization": f"Bearer {token}"})

    return post


@pytest.fixture
def meta_lead(graph, post_meta, work):
    """A Lead Ads lead that came in two hours ago and whose Lead event went out."""
    return delivered_lead(graph, post_meta, work, 7200)


def sent(graph, name):
    return [e for e in graph.events if e["event_name"] == name]


def test_full_chain_lead_qualified_schedule_purchase(api, meta_lead, work, graph):
    now = int(time.time())
    steps = [
        ("MQL", "QualifiedLead", None, None),
        ("meeting booked", "Schedule", None, None),
        ("Closed Won", "Purchase", 50000, "INR"),
    ]
    for offset, (stage, event_name, value, currency) in enumerate(steps):
        item = {
            "leadgen_id": LEAD,
            "stage": stage,
            "occurred_at": now - 600 + offset * 60,
            "lead_event_source": "HubSpot",
        }
        if value:
            item |= {"value": value, "currency": currency}
        answer = api(item)
        assert answer.status_code == 202 and answer.json["results"][0]["status"] == "accepted"
        work()
        [event] = sent(graph, event_name)
        assert event == {
            "dataset_id": "4242424242",
            "event_name": event_name,
            "event_time": now - 600 + offset * 60,
            "action_source": "system_generated",
            "event_id": f"meta:{LEAD}:{event_name}",
            "user_data": {"em": [EM], "ph": [PH], "lead_id": int(LEAD)},
            "custom_data": {
                "event_source": "crm",
                "lead_event_source": "HubSpot",
                **({"value": value, "currency": currency} if value else {}),
            },
        }
    assert [e["event_name"] for e in graph.events] == ["Lead", "QualifiedLead", "Schedule", "Purchase"]


def test_identity_by_email_finds_the_lead_and_raw_email_is_never_kept(api, meta_lead, work, graph, redis_conn):
    api({"email": " Joe@Example.com ", "stage": "QualifiedLead", "occurred_at": int(time.time())})
    work()
    [event] = sent(graph, "QualifiedLead")
    assert event["user_data"]["lead_id"] == int(LEAD)
    everything = b" ".join(redis_conn.dump(k) or b"" for k in redis_conn.keys("*"))
    assert b"Joe@Example.com" not in everything and b"joe@example.com" not in everything


def test_unknown_person_is_sent_with_what_was_given_hashed(api, work, graph):
    api({"email": "new@example.com", "phone": "+44 7911 123456", "stage": "SQL", "occurred_at": int(time.time())})
    work()
    [event] = graph.events
    assert event["event_name"] == "Schedule"
    assert event["user_data"] == {
        "em": [hashlib.sha256(b"new@example.com").hexdigest()],
        "ph": [hashlib.sha256(b"447911123456").hexdigest()],
    }


@pytest.mark.parametrize(
    "stage, suggestion",
    [
        ("QUALIFIED_LEAD", "QualifiedLead"),
        ("qualified_lead", "QualifiedLead"),
        ("Qualified Lead", "QualifiedLead"),
        ("qualified", "QualifiedLead"),
        ("purchased", "Purchase"),
        ("Shedule", "Schedule"),
    ],
)
def test_misspelt_names_are_rejected_with_the_right_name(api, meta_lead, stage, suggestion):
    [result] = api({"leadgen_id": LEAD, "stage": stage, "occurred_at": int(time.time())}).json["results"]
    assert result["status"] == "rejected" and result["reason"] == "unknown_stage"
    assert f"did you mean {suggestion}?" in result["detail"]


def test_rules_reject_with_reasons(api, meta_lead, work, graph):
    now = int(time.time())
    answer = api(
        [
            {"leadgen_id": LEAD, "stage": "MQL", "occurred_at": now - 8 * 86400},
            {"leadgen_id": LEAD, "stage": "MQL", "occurred_at": now + 3600},
            {"leadgen_id": LEAD, "stage": "MQL", "occurred_at": meta_lead - 60},
            {"leadgen_id": LEAD, "stage": "won", "occurred_at": now},
            {"leadgen_id": LEAD, "stage": "won", "occurred_at": now, "value": 10, "currency": "EURO"},
            {"stage": "MQL", "occurred_at": now},
            {"leadgen_id": LEAD, "stage": "Disqualified", "occurred_at": now},
        ]
    )
    assert answer.status_code == 202
    assert [(r["status"], r.get("reason")) for r in answer.json["results"]] == [
        ("rejected", "too_old"),
        ("rejected", "future_time"),
        ("rejected", "before_lead"),
        ("rejected", "purchase_needs_value"),
        ("rejected", "bad_currency"),
        ("rejected", "unknown_person"),
        ("recorded", "negative_stage"),
    ]
    assert "2804003" in answer.json["results"][0]["detail"]
    work()
    assert [e["event_name"] for e in graph.events] == ["Lead"]


def test_a_repeat_stage_is_a_duplicate_and_not_sent(api, meta_lead, work, graph):
    item = {"leadgen_id": LEAD, "stage": "MQL", "occurred_at": int(time.time())}
    assert api(item).json["accepted"] == 1
    assert api(item).json["results"][0]["status"] == "duplicate"
    work()
    assert len(sent(graph, "QualifiedLead")) == 1


def test_lead_is_sent_first_when_it_never_went(api, graph, post_meta, work, monkeypatch):
    monkeypatch.delenv("META_CAPI_ACCESS_TOKEN")  # dry-run while the lead came in: its Lead never went
    created = int(time.time()) - 3600
    graph.add_lead(LEAD, created_time=created)
    post_meta(leadgen_body(LEAD, created_time=created))
    work()
    monkeypatch.setenv("META_CAPI_ACCESS_TOKEN", "token")
    api({"leadgen_id": LEAD, "stage": "MQL", "occurred_at": int(time.time())})
    work()
    [request] = graph.calls("events")
    assert [e["event_name"] for e in request["body"]["data"]] == ["Lead", "QualifiedLead"]
    assert request["body"]["data"][0]["event_time"] == created


def test_batch_of_500_with_one_invalid_delivers_499_and_dead_letters_one(api, work, graph, redis_conn):
    now = int(time.time())
    items = [{"external_id": f"crm-{i}", "stage": "QualifiedLead", "occurred_at": now} for i in range(500)]
    answer = api(items)
    assert answer.json["accepted"] == 500
    bad = answer.json["results"][137]["event_id"]
    graph.refuse_event_ids.add(bad)
    work()
    received = [e["event_id"] for e in graph.events]
    assert len(received) == 499 and bad not in received and len(set(received)) == 499
    assert len(graph.calls("events")) <= 2 * 10 + 1  # halving: a few requests, not 500
    [dead] = deadletters.select(redis_conn, _queue(redis_conn), deadletters.Filter())
    assert dead["event_id"] == bad and dead["reason"] == "invalid" and dead["subcode"] == 2804016


def test_api_needs_its_token(api, env, monkeypatch):
    assert api({"stage": "MQL"}, token="wrong").status_code == 401
    monkeypatch.delenv("LEADRELAY_API_TOKEN")
    assert create_app().test_client().post("/api/v1/stage-events", json={}).status_code == 404  # off when unset


def test_more_than_1000_items_is_refused(api):
    answer = api([{"stage": "MQL"}] * 1001)
    assert answer.status_code == 413 and answer.json["error"] == "too_many_items"


def _queue(redis_conn):
    from rq import Queue

    from workers.common.queues import SERIALIZER

    return Queue("leadrelay", connection=redis_conn, serializer=SERIALIZER)


def test_import_stages_from_a_sheet_reports_each_row(env, meta_lead, work, graph, tmp_path):
    now = int(time.time())
    sheet = tmp_path / "stages.csv"
    sheet.write_text(
        "leadgen_id,email,stage,occurred_at,value,currency\n"
        f"{LEAD},,MQL,{now - 60},,\n"
        f",new@example.com,won,{now},1200,EUR\n"
        f"{LEAD},,qualified_lead,{now},,\n"
        f"{LEAD},,won,{now - 9 * 86400},99,EUR\n"
    )
    out = leadrelay("import-stages", str(sheet))
    assert out.returncode == 1  # rows were rejected
    lines = out.stdout.splitlines()
    assert lines[0] == "row 2: accepted QualifiedLead" and lines[1] == "row 3: accepted Purchase"
    assert lines[2].startswith("row 4: rejected unknown_stage") and "did you mean QualifiedLead?" in lines[2]
    assert lines[3].startswith("row 5: rejected too_old")
    assert lines[4] == "4 rows: accepted 2, duplicate 0, recorded (negative stages, not sent) 0, rejected 2"
    trail = leadrelay("audit", "--action", "import_stages").stdout  # who imported what, never a row's data
    assert "import_stages" in trail and "rows 4" in trail.replace("=", " ") and "example" not in trail.lower()
    work()
    assert sorted(e["event_name"] for e in graph.events) == ["Lead", "Purchase", "QualifiedLead"]
    [purchase] = sent(graph, "Purchase")
    assert purchase["custom_data"]["value"] == 1200 and purchase["custom_data"]["currency"] == "EUR"


@pytest.mark.parametrize("source_name", [42, ["HubSpot"], "x" * 101, "  "])
def test_a_lead_event_source_that_is_not_a_short_name_is_rejected(api, source_name):
    answer = api(
        {
            "email": "joe@example.com",
            "stage": "QualifiedLead",
            "occurred_at": int(time.time()) - 60,
            "lead_event_source": source_name,
        }
    )
    [result] = answer.json["results"]
    assert result["status"] == "rejected" and result["reason"] == "bad_lead_event_source"
