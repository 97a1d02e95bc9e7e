"""Typeform and Tally submissions end to end: signed webhook in, real Redis, worker,
the exact Conversions API event out at the Graph stand-in."""

import hashlib
import json
import time

import pytest

from helpers import OLD_FORM_SECRET, SUBMITTED, fixture, leadrelay, tally_sig, typeform_sig
from webhook_app import create_app
from workers.config.needed import ConfigError
from workers.events import profiles


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture
def post(client):
    def send(source: str, body: bytes, signature: str | None = "auto"):
        headers = {"Content-Type": "application/json"}
        if signature == "auto":
            signature = typeform_sig(body) if source == "typeform" else tally_sig(body)
        if signature is not None:
            headers["Typeform-Signature" if source == "typeform" else "Tally-Signature"] = signature
        return client.post(f"/webhooks/{source}", data=body, headers=headers)

    return send


@pytest.fixture
def mapped(env, monkeypatch, tmp_path):
    """A mapping file for the Typeform form: consent required, a value, hidden fields by default names."""
    path = tmp_path / "leadrelay.toml"
    path.write_text(
        '[forms.typeform.aBc123Xy]\nemail = "email"\nphone = "phone"\nfirst_name = "first_name"\n'
        'last_name = "last_name"\ncountry = "country"\nconsent = "marketing_consent"\n'
        'value = 50\ncurrency = "eur"\n'
    )
    monkeypatch.setenv("LEADRELAY_CONFIG", str(path))
    client = create_app().test_client()

    def send(name: str, signature=None):
        body = fixture("typeform", name)
        return client.post(
            "/webhooks/typeform", data=body, headers={"Typeform-Signature": signature or typeform_sig(body)}
        )

    return send


def test_typeform_form_response__hidden_fields_sends_exactly_this_event(mapped, work, graph, redis_conn):
    answer = mapped("form_response__hidden_fields.json")
    assert answer.status_code == 200 and answer.json["accepted"] == 1
    work()
    [send] = graph.calls("events")
    assert send["body"]["data"] == [
        {
            "event_name": "Lead",
            "event_time": SUBMITTED,
            "action_source": "website",
            "event_id": "lead-7f3c2a",  # the pixel's id: Meta counts one Lead
            "event_source_url": "https://example.com/demo?utm_source=facebook",
            "user_data": {
                "em": [sha("jose.muller@example.com")],
                "ph": [sha("4915112345678")],
                "fn": [sha("josé")],
                "ln": [sha("müller")],
                "country": [sha("de")],
                "fbc": f"fb.1.{SUBMITTED * 1000}.IwAR2xYzAbC",
                "fbp": "fb.1.1731575555123.1098115397",
                "client_user_agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X)",
            },
            "custom_data": {"value": 50, "currency": "EUR"},
        }
    ]
    profile = profiles.find(redis_conn, "em", sha("jose.muller@example.com"))
    assert profile["key"] == "aBc123Xy:9q3v9bp5alonta6239q3q1rfly2c2ukh"  # the form and its submission
    assert profile["fbc"] == f"fb.1.{SUBMITTED * 1000}.IwAR2xYzAbC"
    assert profiles.load(redis_conn, "typeform", "aBc123Xy:9q3v9bp5alonta6239q3q1rfly2c2ukh") == profile


def test_job_arguments_hold_hashes_never_raw_answers(mapped, redis_conn):
    mapped("form_response__hidden_fields.json")
    everything = b" ".join(redis_conn.dump(k) or b"" for k in redis_conn.keys("*"))
    [(_, fields)] = redis_conn.xrange("leadrelay:inbox")
    job = fields[b"e"]
    assert b"lead-typeform-aBc123Xy-9q3v9bp5alonta6239q3q1rfly2c2ukh" in job
    for raw in (b"Jose.Muller@Example.com", b"jose.muller@example.com", b"4915112345678", "Müller".encode()):
        assert raw not in job and raw not in everything


def test_skipped_questions_and_answers_out_of_order_map_by_ref(mapped, work, graph):
    mapped("form_response__skipped_questions.json")
    work()
    [event] = graph.events
    assert event["user_data"] == {"em": [sha("claire@example.fr")], "country": [sha("fr")]}
    assert event["action_source"] == "system_generated"  # no user agent and page URL: not a website event
    assert event["custom_data"] == {
        "event_source": "crm",
        "lead_event_source": "Typeform",
        "value": 50,
        "currency": "EUR",
    }


def test_consent_false_sends_nothing_and_is_recorded(mapped, work, graph, redis_conn):
    answer = mapped("form_response__no_consent.json")
    assert answer.status_code == 200 and answer.json["accepted"] == 0
    assert answer.json["skipped"][0]["reason"] == "no_consent"
    work()
    assert graph.calls("events") == []
    [record] = [json.loads(r) for r in redis_conn.lrange("leadrelay:ignored", 0, -1)]
    assert record["reason"] == "no_consent" and "nobody@example.com" not in json.dumps(record)


def test_unknown_form_is_acknowledged_and_recorded_never_404(mapped, redis_conn, env, monkeypatch, tmp_path):
    path = tmp_path / "other.toml"
    path.write_text('[forms.typeform.SomeOtherForm]\nemail = "email"\n')
    monkeypatch.setenv("LEADRELAY_CONFIG", str(path))
    client = create_app().test_client()
    body = fixture("typeform", "form_response__hidden_fields.json")
    answer = client.post("/webhooks/typeform", data=body, headers={"Typeform-Signature": typeform_sig(body)})
    assert answer.status_code == 200 and answer.json["accepted"] == 0
    assert answer.json["skipped"] == [
        {"reason": "unknown_form", "form_id": "aBc123Xy", "submission_id": "9q3v9bp5alonta6239q3q1rfly2c2ukh"}
    ]
    assert json.loads(redis_conn.lindex("leadrelay:ignored", 0))["reason"] == "unknown_form"


def test_typeform_test_request_never_reaches_the_dataset(mapped, work, graph):
    answer = mapped("form_response__test_request.json")
    assert answer.status_code == 200 and answer.json["skipped"][0]["reason"] == "test_delivery"
    work()
    assert graph.calls("events") == []


def test_redelivery_enqueues_nothing(mapped, redis_conn):
    assert mapped("form_response__hidden_fields.json").json["accepted"] == 1
    again = mapped("form_response__hidden_fields.json")
    assert again.json["accepted"] == 0 and again.json["duplicates"] == 1


@pytest.mark.parametrize("source", ["typeform", "tally"])
def test_bad_signature_returns_401(post, source, redis_conn):
    body = fixture(source, "form_response__hidden_fields.json")
    answer = post(source, body, signature=typeform_sig(body, "wrong") if source == "typeform" else tally_sig(body, "x"))
    assert answer.status_code == 401 and answer.json["error"] == "bad_signature"
    assert redis_conn.keys("rq:job:*") == []


@pytest.mark.parametrize("source", ["typeform", "tally"])
def test_missing_signature_returns_401(post, source):
    answer = post(source, fixture(source, "form_response__hidden_fields.json"), signature=None)
    assert answer.status_code == 401 and answer.json["error"] == "missing_signature"


@pytest.mark.parametrize("source", ["typeform", "tally"])
def test_reserialised_body_is_rejected(post, source):
    body = fixture(source, "form_response__hidden_fields.json")
    signature = typeform_sig(body) if source == "typeform" else tally_sig(body)
    answer = post(source, json.dumps(json.loads(body)).encode(), signature=signature)
    assert answer.status_code == 401


def test_rotated_typeform_secret_still_accepted(post):
    body = fixture("typeform", "form_response__hidden_fields.json")
    assert post("typeform", body, signature=typeform_sig(body, OLD_FORM_SECRET)).status_code == 200


def test_source_without_a_secret_fails_closed(env, monkeypatch):
    monkeypatch.delenv("TALLY_SIGNING_SECRET")
    client = create_app().test_client()
    answer = client.post("/webhooks/tally", data=fixture("tally", "form_response__hidden_fields.json"))
    assert answer.status_code == 401 and answer.json["error"] == "source_disabled"
    monkeypatch.setenv("LEADRELAY_ALLOW_UNSIGNED", "tally")
    client = create_app().test_client()
    assert (
        client.post("/webhooks/tally", data=fixture("tally", "form_response__hidden_fields.json")).json["accepted"] == 1
    )


def test_tally_with_defaults_finds_email_phone_names_and_choices(post, work, graph):
    assert post("tally", fixture("tally", "form_response__hidden_fields.json")).json["accepted"] == 1
    work()
    [event] = graph.events
    assert event["event_id"] == "tally:mO4xQe:Lead"  # no pixel id given: ours, stable
    assert event["event_time"] == SUBMITTED
    assert event["user_data"] == {
        "em": [sha("jose.muller@example.com")],
        "ph": [sha("4915112345678")],
        "fn": [sha("josé")],
        "ln": [sha("müller")],
        "country": [sha("de")],
        "fbc": f"fb.1.{SUBMITTED * 1000}.IwAR2xYzAbC",
        "fbp": "fb.1.1731575555123.1098115397",
    }


def test_tally_redelivery_is_deduped_on_response_id(post):
    body = fixture("tally", "form_response__hidden_fields.json")
    assert post("tally", body).json["accepted"] == 1
    assert post("tally", body).json == {"accepted": 0, "duplicates": 1, "skipped": []}


def test_old_submission_is_not_sent(post, work, graph, redis_conn):
    post("tally", fixture("tally", "form_response__hidden_fields.json", submitted=int(time.time()) - 8 * 86400))
    work()
    assert graph.calls("events") == []
    assert json.loads(redis_conn.get("leadrelay:dead:lead-tally-mO4xQe"))["reason"] == "expired"


@pytest.mark.parametrize(
    "text, where",
    [
        ("[forms.typeform.F]\nemail = 3\n", "forms.typeform.F.email"),
        ("[forms.typeform.F]\nvalue = 5\n", "forms.typeform.F.currency"),
        ('[forms.typeform.F]\nvalue = 5\ncurrency = "EURO"\n', "forms.typeform.F.currency"),
        ('[forms.typeform.F]\naction_source = "web"\n', "forms.typeform.F.action_source"),
        ('[forms.typeform.F]\nemial = "email"\n', "forms.typeform.F.emial"),
        ('[forms.jotform.F]\nemail = "email"\n', "forms"),
        ("not toml [", "not valid TOML"),
    ],
)
def test_mapping_file_mistakes_fail_at_start_naming_the_setting(env, monkeypatch, tmp_path, text, where):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    monkeypatch.setenv("LEADRELAY_CONFIG", str(path))
    with pytest.raises(ConfigError) as err:
        create_app()
    assert err.value.setting == "LEADRELAY_CONFIG" and where in str(err.value)


def test_ignored_command_lists_what_was_not_sent(mapped, redis_conn):
    mapped("form_response__no_consent.json")
    out = leadrelay("ignored")
    assert out.returncode == 0
    [row] = [json.loads(line) for line in out.stdout.splitlines()]
    assert row["reason"] == "no_consent" and row["source"] == "typeform" and row["form_id"] == "aBc123Xy"


def test_a_submission_with_nothing_identifying_is_dead_lettered_not_sent(post, work, graph, redis_conn):
    body = json.dumps(
        {
            "eventId": "x",
            "eventType": "FORM_RESPONSE",
            "data": {
                "responseId": "weak1",
                "formId": "wMqLp2",
                "createdAt": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
                "fields": [
                    {
                        "key": "q1",
                        "label": "Gender",
                        "type": "MULTIPLE_CHOICE",
                        "value": ["o1"],
                        "options": [{"id": "o1", "text": "female"}],
                    },
                    {"key": "q2", "label": "First name", "type": "INPUT_TEXT", "value": "Ann"},
                ],
            },
        }
    ).encode()
    assert post("tally", body).json["accepted"] == 1
    work()
    assert graph.calls("events") == []
    dead = json.loads(redis_conn.get("leadrelay:dead:lead-tally-weak1"))
    assert dead["reason"] == "invalid" and "fn, ge" in dead["detail"]


def test_a_lone_surrogate_as_raw_bytes_in_a_hidden_field_is_replaced_at_the_door(
    env, monkeypatch, tmp_path, work, graph, redis_conn
):
    """`ED BF BF` is a surrogate encoded as UTF-8; Python's JSON reader lets it through, and
    it used to fail in the worker, stalling its drain job for good."""
    path = tmp_path / "leadrelay.toml"
    path.write_text('[forms.typeform.aBc123Xy]\nemail = "email"\n')
    monkeypatch.setenv("LEADRELAY_CONFIG", str(path))
    body = fixture("typeform", "form_response__hidden_fields.json").replace(
        b'"utm_source": "facebook"', b'"utm_source": "fb\xed\xbf\xbf"'
    )
    assert b"\xed\xbf\xbf" in body
    answer = (
        create_app()
        .test_client()
        .post("/webhooks/typeform", data=body, headers={"Typeform-Signature": typeform_sig(body)})
    )
    assert answer.status_code == 200 and answer.json["accepted"] == 1
    work()
    assert [e["event_id"] for e in graph.events] == ["lead-7f3c2a"]
    assert redis_conn.xlen("leadrelay:inbox") == 0
