"""Requests signed by the vendors' and the standard's own libraries: HubSpot's
(`hubspot-api-client`'s Signature, v3), Standard Webhooks' (`standardwebhooks`) and
Svix's (`svix`), through the app. Each is accepted; each near miss (one byte of the body,
the URL, the method, the timestamp, the secret, the message id) is refused 401. And each
vendor's documented example's outcome, end to end."""

from __future__ import annotations

import base64
import time
from datetime import datetime, timezone

import pytest
from hubspot.utils.signature import Signature
from standardwebhooks.webhooks import Webhook as StandardWebhook
from svix.webhooks import Webhook as SvixWebhook

from helpers import fixture_bytes

URL = "http://localhost/webhooks/hubspot"
SECRET = "hubspot-test-secret"  # the env fixture's HUBSPOT_CLIENT_SECRET
SIGNED = "whsec_" + base64.b64encode(b"a-standard-webhooks-secret-32by").decode()


def _hubspot_headers(body: bytes, *, url: str = URL, method: str = "POST", millis: int | None = None, secret=SECRET):
    stamp = str(int(time.time() * 1000) if millis is None else millis)
    signature = Signature.get_signature(secret, body.decode(), "v3", http_uri=url, http_method=method, timestamp=stamp)
    return {"X-HubSpot-Signature-v3": signature, "X-HubSpot-Request-Timestamp": stamp}


def test_hubspots_library_signs_what_the_receiver_accepts_and_each_near_miss_is_refused(client):
    body = fixture_bytes("hubspot", "webhooks_api_example__ignored.json")
    ok = client.post("/webhooks/hubspot", data=body, headers=_hubspot_headers(body))
    assert ok.status_code == 200, ok.get_json()
    # The documented example: `subscriber` is no stage the default table maps, a creation is no stage change.
    assert [s["reason"] for s in ok.get_json()["skipped"]] == ["not_a_stage_change", "unmapped_stage"]
    near_misses = {
        "body": (body.replace(b"subscriber", b"subscribed"), _hubspot_headers(body)),
        "url": (body, _hubspot_headers(body, url="http://localhost/webhooks/hubspot?x=1")),
        "method": (body, _hubspot_headers(body, method="PUT")),
        "secret": (body, _hubspot_headers(body, secret="another-secret")),
        "old": (body, _hubspot_headers(body, millis=int((time.time() - 301) * 1000))),
    }
    for name, (sent, headers) in near_misses.items():
        refused = client.post("/webhooks/hubspot", data=sent, headers=headers)
        assert refused.status_code == 401, name


def test_hubspots_generic_format_signed_by_its_library_is_a_stage_change(client):
    body = fixture_bytes("hubspot", "object_propertychange__generic_deal.json")
    answer = client.post("/webhooks/hubspot", data=body, headers=_hubspot_headers(body)).get_json()
    assert answer["accepted"] == 1 and answer["skipped"] == []


@pytest.mark.parametrize("library", [StandardWebhook, SvixWebhook], ids=["standardwebhooks", "svix"])
def test_standard_webhooks_libraries_sign_what_the_receiver_accepts(client, monkeypatch, library):
    from webhook_app import create_app

    monkeypatch.setenv("SIGNED_WEBHOOK_SECRET", SIGNED)
    web = create_app().test_client()
    body = fixture_bytes("signed", "stage_change__stage_api_shape.json").decode()
    now = datetime.now(timezone.utc)

    def headers(msg_id: str, when: datetime = now, secret: str = SIGNED, signed_body: str = body) -> dict:
        signature = library(secret).sign(msg_id, when, signed_body)
        return {"webhook-id": msg_id, "webhook-timestamp": str(int(when.timestamp())), "webhook-signature": signature}

    ok = web.post("/webhooks/signed", data=body, headers={"Content-Type": "application/json", **headers("msg_lib1")})
    assert ok.status_code == 200 and ok.get_json()["accepted"] == 1, ok.get_json()
    other = "whsec_" + base64.b64encode(b"another-secret-of-thirty-two-by!").decode()
    stale = datetime.fromtimestamp(now.timestamp() - 301, timezone.utc)
    near_misses = {
        "body": (body.replace("QualifiedLead", "Purchase"), headers("msg_lib2")),
        "secret": (body, headers("msg_lib3", secret=other)),
        "old": (body, headers("msg_lib4", when=stale)),
        "id": (body, {**headers("msg_lib5"), "webhook-id": "msg_lib6"}),
    }
    for name, (sent, sent_headers) in near_misses.items():
        refused = web.post("/webhooks/signed", data=sent, headers={"Content-Type": "application/json", **sent_headers})
        assert refused.status_code == 401, name
