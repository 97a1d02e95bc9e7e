"""Every registered source answers the same way through the one webhook route: bad
signatures, bad bodies, test deliveries, redeliveries. A new source is covered here by
registering it and giving it fixtures."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from helpers import answered, fixture_paths, moved
from workers.intake import admission
from workers.sources.registry import SOURCES


def _deliveries(name: str) -> list[Path]:
    """The source's fixtures that carry a lead (not ignored, not a test request)."""
    return [p for p in fixture_paths(name) if not p.stem.endswith(("__ignored", "__test_request"))]


@pytest.fixture
def deliver(client, env):
    def post(name: str, body: bytes, signed: bool = True, secret: str | None = None):
        secret = secret or env[SOURCES[name].secret_setting].split(",")[0]
        if getattr(SOURCES[name].module, "WINDOW_SECONDS", None):  # its replay window reads the body's time
            body = moved(body, int(time.time()))
        headers = {"Content-Type": "application/json"}
        if signed:  # in headers, or (Google's key) in the body
            body, more = SOURCES[name].signed(secret, body, f"http://localhost/webhooks/{name}")
            headers.update(more)
        return client.post(f"/webhooks/{name}", data=body, headers=headers)

    return post


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_missing_signature_returns_401(deliver, name):
    answer = deliver(name, _deliveries(name)[0].read_bytes(), signed=False)
    assert answer.status_code == 401 and answer.get_json()["error"] == "missing_signature"


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_bad_signature_returns_401(deliver, name):
    answer = deliver(name, _deliveries(name)[0].read_bytes(), secret="seed:not-the-secret")
    assert answer.status_code == 401 and answer.get_json()["error"] == "bad_signature"


# A source whose key travels in the body (Google's) cannot authenticate a body that is no
# JSON object: that is a 401 (tests/sources/test_googleads.py), not an acknowledged delivery.
SIGNED_APART = sorted(name for name, source in SOURCES.items() if not source.traits.sign_body)


@pytest.mark.parametrize("name", SIGNED_APART)
def test_a_signed_malformed_body_is_acknowledged_and_recorded(deliver, redis_conn, name):
    answer = deliver(name, b"{not json")
    assert answer.status_code == 200 and _recorded(redis_conn) == ["malformed_json"]


@pytest.mark.parametrize("name", SIGNED_APART)
def test_a_signed_wrong_shape_is_acknowledged_and_recorded(deliver, redis_conn, name):
    answer = deliver(name, b"[]")
    assert answer.status_code == 200 and _recorded(redis_conn) == ["unexpected_shape"]


def _recorded(redis_conn) -> list[str]:
    """The reasons `leadrelay ignored` keeps (Salesforce's SOAP Ack carries none)."""
    return [json.loads(item)["reason"] for item in redis_conn.lrange(admission.IGNORED, 0, -1)]


@pytest.mark.parametrize(
    "name, path",
    [(name, p) for name in sorted(SOURCES) for p in _deliveries(name)],
    ids=lambda v: v.name if hasattr(v, "name") else v,
)
def test_fixture_is_accepted_once_then_a_duplicate(deliver, name, path):
    body = path.read_bytes()
    first = answered(deliver(name, body))
    again = answered(deliver(name, body))
    sent = first["accepted"] + len([s for s in first["skipped"] if s["reason"] == "no_consent"])
    assert sent >= 1
    assert again["accepted"] == 0 and again["duplicates"] == first["accepted"]


TEST_REQUESTS = [(n, p) for n in sorted(SOURCES) for p in fixture_paths(n) if p.stem.endswith("__test_request")]


@pytest.mark.parametrize("name, path", TEST_REQUESTS, ids=lambda v: v.name if hasattr(v, "name") else v)
def test_test_delivery_is_acknowledged_and_never_sent(deliver, name, path):
    answer = deliver(name, path.read_bytes())
    assert answer.status_code == 200
    assert answer.get_json()["accepted"] == 0
    assert [s["reason"] for s in answer.get_json()["skipped"]] == ["test_delivery"]


def test_unknown_source_returns_404(client):
    answer = client.post("/webhooks/jotform", data=b"{}", headers={"Content-Type": "application/json"})
    assert answer.status_code == 404 and answer.get_json()["error"] == "unknown_source"


def test_no_list_outside_the_registry_names_the_sources():
    """Every list of sources is derived from the registry (the sandbox's secrets, the test
    settings, the CLI's choices, display names, default stages, the CRM clients): no module
    of ours spells two source names in one list or set of its own."""
    import ast
    import itertools

    from helpers import ROOT

    names = set(SOURCES)
    spelled = []
    for path in itertools.chain((ROOT / "workers").rglob("*.py"), (ROOT / "webhook_app").rglob("*.py")):
        if path.match("workers/sources/registry.py") or "standin" in path.parts:
            continue  # the registry itself; the stand-in plays the vendors (their APIs, not ours)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
                items = node.keys if isinstance(node, ast.Dict) else node.elts
                texts = {i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)}
                found = texts & names
                # A list of sources is all source names: utm sources ("instagram", "fb") are not.
                if len(found) >= 2 and found == texts:
                    spelled.append(f"{path.relative_to(ROOT)}:{node.lineno} {sorted(found)}")
    assert spelled == []


def test_a_source_authenticates_as_its_vendor_does_not_only_by_a_header():
    """The contract: a module's verify is given the URL and the sender's address when it
    names them, and a vendor whose token travels in the body signs with `sign_body`. Two
    sketches of such vendors (a token in the JSON body, as Zoho CRM's workflow webhooks
    send a parameter; an allowlisted sender address) pass through Source as they would."""
    import hmac
    import json
    from types import SimpleNamespace

    from workers.common.refusals import BadSignature
    from workers.sources.registry import CRM_STAGES, Source

    def body_token_verify(body, headers, secrets):
        token = json.loads(body).get("token", "")
        if not any(hmac.compare_digest(token, s) for s in secrets):
            raise BadSignature("token", reason="bad_signature")

    def sign_body(secret, body, url=""):
        return json.dumps({**json.loads(body), "token": secret}).encode(), {}

    PARSE = {"parse": lambda body: {"items": [], "skipped": []}, "lead_key": lambda item: ""}
    in_body = Source(
        "bodytoken",
        CRM_STAGES,
        "X",
        SimpleNamespace(NAME="bodytoken", verify=body_token_verify, sign=lambda *a: {}, sign_body=sign_body, **PARSE),
        "job",
        "Body token",
    )
    body, headers = in_body.signed("s3cret", b'{"stage": "won"}')
    assert headers == {} and json.loads(body)["token"] == "s3cret"
    in_body.verify(body, headers, ["s3cret"], url="https://x/webhooks/bodytoken", peer="10.0.0.1")
    with pytest.raises(BadSignature):
        in_body.verify(b'{"token": "wrong"}', {}, ["s3cret"])

    def allowlisted(body, headers, secrets, peer):
        if peer not in secrets:  # the secrets are the addresses it may post from
            raise BadSignature(f"{peer} is not allowed", reason="bad_signature")

    module = SimpleNamespace(NAME="listed", verify=allowlisted, sign=lambda *a: {}, **PARSE)
    by_address = Source("listed", CRM_STAGES, "X", module, "job", "Listed")
    by_address.verify(b"{}", {}, ["203.0.113.7"], url="https://x/", peer="203.0.113.7")
    with pytest.raises(BadSignature):
        by_address.verify(b"{}", {}, ["203.0.113.7"], peer="198.51.100.1")
