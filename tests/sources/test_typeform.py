"""The Typeform source on its own: signature (Typeform's published vector), parsing."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers import fixture_bytes
from workers.common.refusals import BadSignature, MalformedBody
from workers.sources import typeform


def test_typeforms_published_signature_vector():
    assert (
        typeform.signature("my-webook-secret", b'{"foo":"bar"}')
        == "sha256=X2b3nUhiGjaWHxmPO/YQzUvHXBNac4gPjZ5/bjXrhQY="
    )
    typeform.verify(
        b'{"foo":"bar"}',
        {"Typeform-Signature": "sha256=X2b3nUhiGjaWHxmPO/YQzUvHXBNac4gPjZ5/bjXrhQY="},
        ["my-webook-secret"],
    )


@pytest.mark.parametrize(
    "headers, reason",
    [
        ({}, "missing_signature"),
        ({"Typeform-Signature": "sha256=X2b3nUhiGjaWHxmPO/YQzUvHXBNac4gPjZ5/bjXrhQY="}, "bad_signature"),
        ({"Typeform-Signature": "X2b3nUhiGjaWHxmPO/YQzUvHXBNac4gPjZ5/bjXrhQY="}, "bad_signature"),  # no prefix
    ],
)
def test_bad_or_missing_signature(headers, reason):
    with pytest.raises(BadSignature) as err:
        typeform.verify(b'{"foo": "bar"}', headers, ["my-webook-secret"])
    assert err.value.reason == reason


def test_form_response__hidden_fields_parses_answers_by_field_and_hidden_fields():
    [lead] = typeform.parse(fixture_bytes("typeform", "form_response__hidden_fields.json"))["leads"]
    assert lead["form_id"] == "aBc123Xy" and lead["submission_id"] == "9q3v9bp5alonta6239q3q1rfly2c2ukh"
    assert lead["submitted_at"] == 1795252443  # 2026-11-21T09:14:03Z, not the delivery time
    assert {a["ref"]: a["value"] for a in lead["answers"]}["country"] == "Germany"  # choice label
    assert lead["hidden"]["fbclid"] == "IwAR2xYzAbC" and lead["test"] is False
    assert typeform.lead_key(lead) == "aBc123Xy:9q3v9bp5alonta6239q3q1rfly2c2ukh"


def test_form_response__test_request_is_marked_as_test():
    [lead] = typeform.parse(fixture_bytes("typeform", "form_response__test_request.json"))["leads"]
    assert lead["test"] is True


def test_form_response_partial__ignored():
    parsed = typeform.parse(fixture_bytes("typeform", "form_response_partial__ignored.json"))
    assert parsed == {"leads": [], "skipped": [{"reason": "not_form_response", "event_type": "form_response_partial"}]}


@pytest.mark.parametrize(
    "body",
    [
        b"nope",
        json.dumps({"event_type": "form_response"}).encode(),
        json.dumps({"event_type": "form_response", "form_response": {"form_id": "x"}}).encode(),
    ],
)
def test_malformed_form_response_raises(body):
    with pytest.raises(MalformedBody):
        typeform.parse(body)


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=6),
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(
                st.sampled_from(
                    [
                        "answers",
                        "field",
                        "hidden",
                        "type",
                        "email",
                        "choice",
                        "label",
                        "id",
                        "ref",
                        "form_id",
                        "token",
                        "submitted_at",
                    ]
                ),
                inner,
                max_size=5,
            )
        ),
        max_leaves=25,
    )
)
def test_parse_any_form_response_shape_gives_a_lead_or_malformed(response):
    body = json.dumps({"event_type": "form_response", "form_response": response}).encode()
    try:
        parsed = typeform.parse(body)
    except MalformedBody:
        return
    [lead] = parsed["leads"]
    assert all(isinstance(v, str) for v in lead["hidden"].values())
