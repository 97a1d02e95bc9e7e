"""Consent read as the form tool means it, from Tally's documented payload
(https://tally.so/help/webhooks: a CHECKBOXES field carries the ticked options' ids in
`value`, and one boolean field per option labelled "<question> (<option>)") and Typeform's
(https://www.typeform.com/developers/responses/payload/: boolean, choice and choices
answers): one box, several, unticked and null; a single choice by its words."""

from __future__ import annotations

import json

import pytest

from helpers import fixture, tally_sig, typeform_sig
from webhook_app import create_app

YES, NEWS = "c0ffee00-0000-4000-8000-000000000001", "c0ffee00-0000-4000-8000-000000000002"


def _tally(value, options=((YES, "I agree to be contacted"),)) -> bytes:
    doc = json.loads(fixture("tally", "form_response__hidden_fields.json"))
    fields = [f for f in doc["data"]["fields"] if not f["label"].startswith("Consent")]
    fields.append(
        {
            "key": "question_wQ1K7w",
            "label": "Consent",
            "type": "CHECKBOXES",
            "value": value,
            "options": [{"id": i, "text": t} for i, t in options],
        }
    )
    for option_id, text in options:  # Tally's per-option boolean field
        ticked = isinstance(value, list) and option_id in value
        fields.append(
            {
                "key": f"question_wQ1K7w_{option_id[:8]}",
                "label": f"Consent ({text})",
                "type": "CHECKBOXES",
                "value": ticked,
            }
        )
    doc["data"]["fields"] = fields
    return json.dumps(doc).encode()


def _client(monkeypatch, tmp_path, table: str):
    path = tmp_path / "leadrelay.toml"
    path.write_text(table)
    monkeypatch.setenv("LEADRELAY_CONFIG", str(path))
    return create_app().test_client()


def _post_tally(client, body: bytes) -> dict:
    return client.post("/webhooks/tally", data=body, headers={"Tally-Signature": tally_sig(body)}).get_json()


TALLY = '[forms.tally.wMqLp2]\nemail = "Work email"\nconsent = "Consent"\n'
TWO = ((YES, "Yes, contact me"), (NEWS, "Send me the newsletter"))


@pytest.mark.parametrize(
    "value, options, table, sent",
    [
        ([YES], ((YES, "I agree to be contacted"),), TALLY, True),  # one box, ticked
        ([], ((YES, "I agree to be contacted"),), TALLY, False),  # unticked
        (None, ((YES, "I agree to be contacted"),), TALLY, False),  # null
        ([YES], TWO, TALLY, True),  # several, one ticked: a ticked box consents
        ([YES, NEWS], TWO, TALLY, True),
        ([YES], TWO, TALLY + 'consent_option = "Yes, contact me"\n', True),
        ([NEWS], TWO, TALLY + 'consent_option = "Yes, contact me"\n', False),  # only the newsletter
    ],
    ids=["one-ticked", "unticked", "null", "several-one", "several-both", "named-ticked", "named-other"],
)
def test_tally_checkbox_consent(env, monkeypatch, tmp_path, work, graph, value, options, table, sent):
    answer = _post_tally(_client(monkeypatch, tmp_path, table), _tally(value, options))
    assert answer["accepted"] == (1 if sent else 0), answer
    if not sent:
        assert answer["skipped"][0]["reason"] == "no_consent"
    work()
    assert len(graph.events) == (1 if sent else 0)


def _typeform(answer: dict) -> bytes:
    doc = json.loads(fixture("typeform", "form_response__hidden_fields.json"))
    doc["form_response"]["answers"] = [
        a for a in doc["form_response"]["answers"] if a["field"]["ref"] != "marketing_consent"
    ] + [{**answer, "field": {"id": "c1", "ref": "marketing_consent", "type": answer["type"]}}]
    return json.dumps(doc).encode()


@pytest.mark.parametrize(
    "answer, option, sent",
    [
        ({"type": "boolean", "boolean": True}, None, True),  # yes/no and legal questions
        ({"type": "boolean", "boolean": False}, None, False),
        ({"type": "choice", "choice": {"label": "Yes"}}, None, True),
        ({"type": "choice", "choice": {"label": "No"}}, None, False),  # a radio's No is no consent
        ({"type": "choice", "choice": {"label": "I agree"}}, "I agree", True),
        ({"type": "choices", "choices": {"labels": ["Email me"]}}, None, True),  # a ticked box
        ({"type": "choices", "choices": {"labels": []}}, None, False),
    ],
    ids=["bool-true", "bool-false", "choice-yes", "choice-no", "choice-named", "choices-ticked", "choices-none"],
)
def test_typeform_consent(env, monkeypatch, tmp_path, work, graph, answer, option, sent):
    table = '[forms.typeform.aBc123Xy]\nemail = "email"\nconsent = "marketing_consent"\n'
    client = _client(monkeypatch, tmp_path, table + (f'consent_option = "{option}"\n' if option else ""))
    body = _typeform(answer)
    got = client.post("/webhooks/typeform", data=body, headers={"Typeform-Signature": typeform_sig(body)}).get_json()
    assert got["accepted"] == (1 if sent else 0), got
