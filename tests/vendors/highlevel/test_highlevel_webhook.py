"""HighLevel's webhooks: signed with a key pair made by the `cryptography` library (the
public half configured as HighLevel publishes its own, base64 SubjectPublicKeyInfo), Ed25519
in x-ghl-signature and the legacy RSA in x-wh-signature, never falling back from a failed
Ed25519; a payload outside five minutes refused; a reused webhookId a duplicate; storage
down answered 429, the only status HighLevel retries."""

from __future__ import annotations

import base64
import json
import time

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, padding, rsa

from helpers import fixture_bytes, moved
from workers.common.refusals import BadSignature
from workers.vendors.highlevel import webhook

ED = ed25519.Ed25519PrivateKey.generate()
RSA = rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _published(key) -> str:
    der = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(der).decode()


KEYS = f"{_published(ED)},{_published(RSA)}"  # both, as HIGHLEVEL_WEBHOOK_PUBLIC_KEY holds them


def _won(now: float | None = None) -> bytes:
    return moved(fixture_bytes("highlevel", "OpportunityStatusUpdate__won.json"), int(now or time.time()))


def _ed(body: bytes) -> dict:
    return {"x-ghl-signature": base64.b64encode(ED.sign(body)).decode()}


def _rsa(body: bytes) -> dict:
    return {"x-wh-signature": base64.b64encode(RSA.sign(body, padding.PKCS1v15(), hashes.SHA256())).decode()}


def test_ed25519_and_the_legacy_rsa_signature_both_verify_with_the_published_keys():
    body = _won()
    webhook.verify(body, _ed(body), KEYS.split(","))
    webhook.verify(body, _rsa(body), KEYS.split(","))


def test_a_failed_ed25519_signature_never_falls_back_to_a_good_legacy_one():
    body = _won()
    wrong = {"x-ghl-signature": base64.b64encode(ED.sign(body + b" ")).decode()}
    with pytest.raises(BadSignature):
        webhook.verify(body, {**wrong, **_rsa(body)}, KEYS.split(","))


def test_no_signature_a_bad_one_or_another_key_is_refused():
    body = _won()
    for headers, reason in (({}, "missing_signature"), ({"x-ghl-signature": "not base64!"}, "bad_signature")):
        with pytest.raises(BadSignature) as refused:
            webhook.verify(body, headers, KEYS.split(","))
        assert refused.value.reason == reason
    other = ed25519.Ed25519PrivateKey.generate()
    with pytest.raises(BadSignature):
        webhook.verify(body, {"x-ghl-signature": base64.b64encode(other.sign(body)).decode()}, KEYS.split(","))


def test_a_payload_outside_five_minutes_is_a_replay_and_refused():
    now = time.time()
    for skew in (-301, 301):
        body = _won(now + skew)
        with pytest.raises(BadSignature) as refused:
            webhook.verify(body, _ed(body), KEYS.split(","), now=now)
        assert refused.value.reason == "stale_timestamp"
    webhook.verify(_won(now - 299), _ed(_won(now - 299)), KEYS.split(","), now=now)


def test_a_stage_change_and_a_win_parse_to_stage_ids_a_contact_and_a_value():
    [won] = webhook.parse(fixture_bytes("highlevel", "OpportunityStatusUpdate__won.json"))["items"]
    assert (won["stage_id"], won["contact_id"], won["value"], won["account"]) == (
        "won",
        "CWBf1PR9LvvBkcYqiXlc",
        200,
        "ve9EPM428h8vShlRW1KT",
    )
    [stage] = webhook.parse(fixture_bytes("highlevel", "OpportunityStageUpdate__stage.json"))["items"]
    assert stage["stage_id"] == "7915dedc-8f18-44d5-8bc3-77c04e994a10"
    open_status = json.loads(fixture_bytes("highlevel", "OpportunityStatusUpdate__won.json")) | {"status": "open"}
    assert webhook.parse(json.dumps(open_status).encode())["skipped"][0]["reason"] == "no_stage_change"


def test_through_the_route_a_reused_webhook_id_is_a_duplicate_and_storage_down_is_429(env, monkeypatch):
    from webhook_app import create_app
    from workers.run.embedded_redis import free_port

    monkeypatch.setenv("HIGHLEVEL_WEBHOOK_PUBLIC_KEY", KEYS)
    client = create_app().test_client()
    body = _won()
    first = client.post("/webhooks/highlevel", data=body, headers=_ed(body)).get_json()
    again = client.post("/webhooks/highlevel", data=body, headers=_ed(body)).get_json()
    assert (first["accepted"], again["duplicates"]) == (1, 1)
    stale = _won(time.time() - 3600)
    assert client.post("/webhooks/highlevel", data=stale, headers=_ed(stale)).status_code == 401
    monkeypatch.setenv("REDIS_URL", f"redis://127.0.0.1:{free_port()}/0")
    down = create_app().test_client().post("/webhooks/highlevel", data=body, headers=_ed(body))
    assert down.status_code == 429 and down.get_json()["error"] == "queue_unavailable"
