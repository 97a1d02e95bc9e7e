"""The Pipedrive source on its own: HTTP Basic credentials compared in constant time, and
a deal change that is a stage change or a win, told apart from one that is not."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers import fixture_bytes
from workers.common.refusals import BadSignature, MalformedBody
from workers.vendors.pipedrive import webhook as pipedrive

CREDENTIALS = "leadrelay:s3cret-pass"


def test_the_webhooks_credentials_verify():
    pipedrive.verify(b"{}", pipedrive.sign(CREDENTIALS, b"{}"), [CREDENTIALS])


@pytest.mark.parametrize(
    "header",
    ["", "Bearer x", "Basic", "Basic !!!", pipedrive.signature("leadrelay:wrong"), pipedrive.signature("leadrelay:")],
)
def test_anything_but_the_credentials_is_refused(header):
    with pytest.raises(BadSignature):
        pipedrive.verify(b"{}", {"Authorization": header} if header else {}, [CREDENTIALS])


def test_rotated_credentials_verify_during_rotation():
    pipedrive.verify(b"{}", pipedrive.sign("old:pass", b"{}"), [CREDENTIALS, "old:pass"])


def test_change_deal__stage_is_a_stage_change_with_value_and_person():
    [item] = pipedrive.parse(fixture_bytes("pipedrive", "change_deal__stage.json"))["items"]
    assert (item["stage_id"], item["person_id"], item["value"], item["currency"]) == ("3", "2096", 4800, "EUR")
    assert (item["account"], item["object_id"]) == ("11728051", "1187")
    assert pipedrive.lead_key(item) == "4f7c2a9e-91b3-4d6e-8a21-6c0b9e3d5f12"


def test_change_deal__won_is_the_won_stage():
    [item] = pipedrive.parse(fixture_bytes("pipedrive", "change_deal__won.json"))["items"]
    assert item["stage_id"] == "won" and item["value"] == 4800


def test_a_change_of_value_alone_is_no_stage_change():
    parsed = pipedrive.parse(fixture_bytes("pipedrive", "change_deal_value__ignored.json"))
    assert parsed["items"] == [] and parsed["skipped"][0]["reason"] == "no_stage_change"


def test_a_person_change_is_skipped():
    doc = json.loads(fixture_bytes("pipedrive", "change_deal__stage.json"))
    doc["meta"]["entity"] = "person"
    assert pipedrive.parse(json.dumps(doc).encode())["skipped"][0]["reason"] == "not_a_deal_change"


@pytest.mark.parametrize("body", [b"[]", b"{}", b'{"meta": {}}', b"not json"])
def test_what_is_not_a_webhooks_v2_body_is_malformed(body):
    with pytest.raises(MalformedBody):
        pipedrive.parse(body)


@given(
    data=st.dictionaries(
        st.sampled_from(["id", "stage_id", "status", "value", "currency", "person_id"]),
        st.one_of(st.none(), st.integers(), st.text(max_size=20), st.booleans()),
    ),
    previous=st.dictionaries(
        st.sampled_from(["stage_id", "status"]), st.one_of(st.none(), st.integers(), st.text(max_size=8))
    ),
)
def test_any_deal_change_parses_or_is_refused_as_malformed(data, previous):
    doc = json.loads(fixture_bytes("pipedrive", "change_deal__stage.json"))
    doc["data"], doc["previous"] = data, previous
    try:
        parsed = pipedrive.parse(json.dumps(doc).encode())
    except MalformedBody:
        return
    assert len(parsed["items"]) + len(parsed["skipped"]) == 1


def test_a_v1_updated_deal_is_a_stage_change_known_by_its_deal_and_time():
    """Pipedrive sends v1 and v2 webhooks side by side: a v1 `updated.deal` with `current`
    and `previous` is the same stage change a v2 `change` is."""
    [item] = pipedrive.parse(fixture_bytes("pipedrive", "updated_deal__v1_stage.json"))["items"]
    assert (item["object_id"], item["stage_id"], item["person_id"], item["value"]) == ("4718", "3", "2102", 800)
    assert pipedrive.lead_key(item) == "v1-4718-1791295202123456"  # meta.id is the deal's: the time tells retries


@pytest.mark.parametrize("name", ["delete_deal__ignored.json", "deleted_deal__v1__ignored.json"])
def test_a_deleted_deal_is_acknowledged_and_skipped(name):
    parsed = pipedrive.parse(fixture_bytes("pipedrive", name))
    assert parsed["items"] == [] and parsed["skipped"][0]["reason"] in ("deleted", "not_a_deal_change")
