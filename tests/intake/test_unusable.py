"""An authenticated delivery is never refused: whatever its body, every source answers 2xx
and records what it could not use, with its reason and the body's shape (never a value).
Unauthenticated stays 401. docs/decisions/authenticated-never-refused.md."""

import json
import time

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from helpers import post_signed
from workers.intake import admission, unusable
from workers.sources.registry import SOURCES

BODIES = [b"[]", b"{}", b'{"x": 1}', b"not json", b'"text"', b"null", b'{"meta": {}, "data": null}', b'{"entry": 5}']
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def _authentic(name: str, body: bytes) -> bytes:
    """HighLevel authenticates an object by its signature and a fresh `timestamp` in it:
    without one, a captured delivery could be replayed (401, rightly)."""
    try:
        doc = json.loads(body)
    except ValueError:
        return body
    if name == "highlevel" and isinstance(doc, dict):
        doc["timestamp"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        return json.dumps(doc).encode()
    return body


def _ignored(redis_conn) -> list[dict]:
    return [json.loads(item) for item in redis_conn.lrange(admission.IGNORED, 0, -1)]


def _carries_a_key(name: str, body: bytes) -> bool:
    """A source whose key travels in the body (Google's) authenticates only a JSON object:
    any other body carries no key, and is refused (tests/feature/test_google_ads.py)."""
    if not SOURCES[name].traits.sign_body:
        return True
    try:
        return isinstance(json.loads(body), dict)
    except ValueError:
        return False


@pytest.mark.parametrize(
    "name, body",
    [(name, body) for name in sorted(SOURCES) for body in BODIES if _carries_a_key(name, body)],
    ids=lambda v: v.decode()[:20] if isinstance(v, bytes) else v,
)
def test_a_signed_body_of_any_shape_is_acknowledged_and_recorded(client, env, redis_conn, name, body):
    answer = post_signed(client, name, _authentic(name, body), env)
    assert 200 <= answer.status_code < 300, answer.get_data(as_text=True)
    if answer.status_code == 200 and (answer.get_json(silent=True) or {}).get("accepted") == 0:
        recorded = [item for item in _ignored(redis_conn) if item["source"] == name]
        skipped = (answer.get_json(silent=True) or {}).get("skipped")
        assert recorded or skipped is not None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=JSON, name=st.sampled_from(sorted(SOURCES)))
def test_signed_random_json_gets_2xx_from_every_source(client, env, name, doc):
    assume(_carries_a_key(name, json.dumps(doc).encode()))
    answer = post_signed(client, name, _authentic(name, json.dumps(doc).encode()), env)
    assert 200 <= answer.status_code < 300, (name, answer.get_data(as_text=True))


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_an_unsigned_body_is_still_refused(client, name):
    answer = client.post(f"/webhooks/{name}", data=b"{}", headers={"Content-Type": "application/json"})
    assert answer.status_code == 401


def test_an_unusable_body_is_recorded_with_its_shape_and_no_value(client, env, redis_conn):
    body = json.dumps({"meta": {"action": "delete", "email": "ana@example.com"}, "data": None}).encode()
    post_signed(client, "pipedrive", b"x" + body, env)
    [item] = [i for i in _ignored(redis_conn) if i["source"] == "pipedrive"]
    assert item["reason"] == "malformed_json" and "ana@example.com" not in json.dumps(item)


def test_a_shape_names_keys_and_types_never_values():
    shape = unusable.shape(json.dumps({"data": None, "meta": {"action": "x", "ana@example.com": 1}}).encode())
    assert shape == "{data:null, meta:{action:str, ?:int}}"
