"""The Close source on its own: the signature as Close's docs compute it (HMAC-SHA256 with
the hex-decoded signature_key over timestamp and raw body), its window, and an opportunity's
status change read from the documented example."""

import hashlib
import hmac
import json
import time

import pytest

from helpers import fixture_bytes
from workers.common.refusals import BadSignature
from workers.vendors.close import webhook as close

KEY = "2c5e1b0e4e83f1f7c87d1a9d2f7a4e6b3c8d9e0f1a2b3c4d5e6f708192a3b4c5"  # hex, as Close returns it


def _fixture(name: str) -> bytes:
    return fixture_bytes("close", name)


def _documented_headers(key: str, body: bytes, timestamp: str) -> dict:
    """Close's own recipe: hmac.new(bytearray.fromhex(key), (timestamp + payload).encode(), sha256)."""
    data = timestamp + body.decode("utf-8")
    digest = hmac.new(bytearray.fromhex(key), data.encode("utf-8"), hashlib.sha256).hexdigest()
    return {"close-sig-hash": digest, "close-sig-timestamp": timestamp}


def test_a_delivery_signed_as_closes_docs_sign_verifies():
    body = _fixture("opportunity_updated__won.json")
    close.verify(body, _documented_headers(KEY, body, str(int(time.time()))), [KEY])


def test_our_signer_signs_as_close_does():
    body, now = _fixture("opportunity_updated__stage.json"), time.time()
    assert close.sign(KEY, body, now=now) == _documented_headers(KEY, body, str(int(now)))


@pytest.mark.parametrize(
    "change",
    [
        lambda h: {**h, "close-sig-hash": "0" * 64},
        lambda h: {**h, "close-sig-timestamp": str(int(h["close-sig-timestamp"]) + 1)},
        lambda h: {k: v for k, v in h.items() if k != "close-sig-timestamp"},
        lambda h: {**h, "close-sig-hash": h["close-sig-hash"][:63]},
    ],
    ids=["wrong hash", "another timestamp", "no timestamp", "short hash"],
)
def test_a_delivery_not_signed_with_the_key_is_refused(change):
    body = _fixture("opportunity_updated__won.json")
    with pytest.raises(BadSignature):
        close.verify(body, change(_documented_headers(KEY, body, str(int(time.time())))), [KEY])


def test_another_subscriptions_key_does_not_verify():
    body = _fixture("opportunity_updated__won.json")
    with pytest.raises(BadSignature):
        close.verify(body, _documented_headers(KEY, body, str(int(time.time()))), ["ab" * 32])


@pytest.mark.parametrize("age", [7 * 86400 + 60, -360])
def test_a_timestamp_older_than_a_week_or_in_the_future_is_refused(age):
    body = b"{}"
    with pytest.raises(BadSignature) as refused:
        close.verify(body, _documented_headers(KEY, body, str(int(time.time() - age))), [KEY])
    assert refused.value.reason == "stale_timestamp"


def test_a_retry_hours_later_with_its_first_timestamp_still_verifies():
    body = _fixture("opportunity_updated__won.json")
    close.verify(body, _documented_headers(KEY, body, str(int(time.time() - 6 * 3600))), [KEY])


@pytest.mark.parametrize("bad", ["not hex at all", "abcd", "zz" * 32])
def test_a_key_that_is_not_closes_is_refused_at_start(bad):
    with pytest.raises(ValueError):
        close.signature_key(bad)


def test_a_won_opportunity_is_the_won_stage_with_its_value_in_units():
    [item] = close.parse(_fixture("opportunity_updated__won.json"))["items"]
    assert (item["stage_id"], item["value"], item["currency"]) == ("won", 1000.0, "USD")  # 100000 cents
    assert item["event_key"] == "ev_2sYKRjcrA79yKxi3S4Crd7"
    assert item["contact_id"] == "cont_BwlwYQkIP6AooiXP1CMvc6Zbb5gGh2gPu4dqIDlDrII"
    assert item["account"] == "orga_XbVPx5fFbKlYTz9PW5Ih1XDhViV10YihIaEgMEb6fVW"
    assert item["occurred_at"] == 1547556503  # 2019-01-15T12:48:23 UTC: Close writes UTC without a zone


def test_a_move_to_an_active_status_is_that_status():
    [item] = close.parse(_fixture("opportunity_updated__stage.json"))["items"]
    assert item["stage_id"] == "stat_1CgBdsQ6zyzR1YiCjAoXxBLnBc2J1RUJ3Tu0Pmr6nQK"


def test_an_update_that_leaves_the_status_is_no_stage_change():
    doc = json.loads(_fixture("opportunity_updated__stage.json"))
    doc["event"]["previous_data"] = {"confidence": 50}
    doc["event"]["changed_fields"] = ["confidence"]
    assert close.parse(json.dumps(doc).encode())["skipped"][0]["reason"] == "no_stage_change"


@pytest.mark.parametrize(
    "name, reason",
    [("lead_updated__ignored.json", "not_an_opportunity_change"), ("opportunity_deleted__ignored.json", "deleted")],
)
def test_other_events_are_acknowledged_and_skipped(name, reason):
    parsed = close.parse(_fixture(name))
    assert parsed["items"] == [] and parsed["skipped"][0]["reason"] == reason
