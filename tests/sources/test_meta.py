"""The Meta source on its own: signature, handshake and parsing, no app, no Redis."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers import APP_SECRET, OLD_APP_SECRET, fixture_bytes, sign
from workers.common.refusals import BadSignature, MalformedBody
from workers.sources import meta

SECRETS = (APP_SECRET, OLD_APP_SECRET)


def test_leadgen__single_verifies_and_parses_ids_as_strings():
    body = fixture_bytes("meta", "leadgen__single.json")
    meta.verify(body, {"X-Hub-Signature-256": sign(body)}, SECRETS)
    parsed = meta.parse(body)
    assert parsed["leads"] == [
        {
            "source": "meta",
            "leadgen_id": "123123123123",
            "page_id": "123123123",
            "form_id": "12312312312",
            "ad_id": "12312312312",
            "adgroup_id": "12312312312",
            "created_time": 1440120384,
        }
    ]


def test_leadgen__batch_walks_every_entry_and_skips_other_fields():
    parsed = meta.parse(fixture_bytes("meta", "leadgen__batch.json"))
    assert [lead["leadgen_id"] for lead in parsed["leads"]] == [
        "1000000000000001",
        "1000000000000002",
        "1000000000000003",
    ]
    assert parsed["skipped"] == [{"reason": "not_leadgen", "field": "feed"}]


def test_leadgen__batch_ad_id_zero_means_no_ad():
    leads = meta.parse(fixture_bytes("meta", "leadgen__batch.json"))["leads"]
    assert leads[1]["ad_id"] is None and leads[2]["ad_id"] is None


def test_signature_from_rotated_out_secret_still_verifies():
    body = fixture_bytes("meta", "leadgen__single.json")
    meta.verify(body, {"X-Hub-Signature-256": sign(body, OLD_APP_SECRET)}, SECRETS)


@pytest.mark.parametrize(
    "headers, reason",
    [
        ({}, "missing_signature"),
        ({"X-Hub-Signature": "sha1=0000"}, "missing_signature"),
        ({"X-Hub-Signature-256": "sha256=" + "0" * 64}, "bad_signature"),
        ({"X-Hub-Signature-256": "md5=abc"}, "bad_signature"),
        ({"X-Hub-Signature-256": "sha256="}, "bad_signature"),
    ],
)
def test_bad_or_missing_signature_raises_with_reason(headers, reason):
    with pytest.raises(BadSignature) as err:
        meta.verify(fixture_bytes("meta", "leadgen__single.json"), headers, SECRETS)
    assert err.value.reason == reason


def test_signature_over_reserialised_body_fails():
    body = fixture_bytes("meta", "leadgen__non_ascii.json")
    reserialised = json.dumps(json.loads(body)).encode()  # \u escapes instead of UTF-8 bytes
    with pytest.raises(BadSignature):
        meta.verify(reserialised, {"X-Hub-Signature-256": sign(body)}, SECRETS)


@pytest.mark.parametrize(
    "body, reason",
    [
        (b"not json", "malformed_json"),
        (b"\xff\xfe", "malformed_json"),
        (b"[1, 2]", "unexpected_shape"),
        (b'{"object": "page"}', "unexpected_shape"),
        (b'{"object": "page", "entry": {}}', "unexpected_shape"),
    ],
)
def test_malformed_body_raises_with_reason(body, reason):
    with pytest.raises(MalformedBody) as err:
        meta.parse(body)
    assert err.value.reason == reason


def test_leadgen_change_without_id_is_skipped_not_fatal():
    body = json.dumps(
        {
            "object": "page",
            "entry": [
                {
                    "changes": [
                        {"field": "leadgen", "value": {"page_id": "1"}},
                        {"field": "leadgen", "value": {"leadgen_id": "77"}},
                    ]
                }
            ],
        }
    ).encode()
    parsed = meta.parse(body)
    assert [lead["leadgen_id"] for lead in parsed["leads"]] == ["77"]
    assert parsed["skipped"] == [{"reason": "leadgen_without_id", "field": "leadgen"}]


@pytest.mark.parametrize(
    "args, expected",
    [
        ({"hub.mode": "subscribe", "hub.verify_token": "tok", "hub.challenge": "1158201444"}, "1158201444"),
        ({"hub.mode": "subscribe", "hub.verify_token": "wrong", "hub.challenge": "1"}, None),
        ({"hub.mode": "unsubscribe", "hub.verify_token": "tok", "hub.challenge": "1"}, None),
        ({"hub.mode": "subscribe", "hub.challenge": "1"}, None),
        ({"hub.mode": "subscribe", "hub.verify_token": "tok"}, None),
    ],
)
def test_handshake(args, expected):
    assert meta.handshake(args, "tok") == expected


@given(st.binary(max_size=512))
def test_parse_never_raises_anything_but_malformed_body(body):
    try:
        parsed = meta.parse(body)
    except MalformedBody:
        return
    assert all(lead["leadgen_id"].isdigit() for lead in parsed["leads"])


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=8),
        lambda children: (
            st.lists(children, max_size=3)
            | st.dictionaries(
                st.sampled_from(["entry", "changes", "field", "value", "leadgen_id", "object"]), children, max_size=4
            )
        ),
        max_leaves=20,
    )
)
def test_parse_any_json_shape_gives_leads_or_malformed(doc):
    body = json.dumps(
        {"object": "page", "entry": doc} if not isinstance(doc, list) else {"object": "page", "entry": doc}
    ).encode()
    try:
        parsed = meta.parse(body)
    except MalformedBody:
        return
    for lead in parsed["leads"]:
        assert lead["leadgen_id"].isdigit()
