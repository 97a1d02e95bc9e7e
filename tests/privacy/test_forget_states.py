"""Forgetting a person in each state their lead can be in: waiting in the inbox (a Lead Ads
webhook, a Typeform submission), dead-lettered, waiting for a retry, and taken up by the
worker while the forget runs. After the forget and the worker's next run, nothing in Redis
holds them but the suppression list, and nothing is sent."""

from __future__ import annotations

import hashlib
import json
import time

import pytest

from helpers import leadgen_body, privacy_api, privacy_walks, sign, typeform_sig
from webhook_app import create_app

EMAIL = "ann.states@example.com"
EM = hashlib.sha256(EMAIL.encode()).hexdigest()
LEAD = "7700000000000101"
TOKEN = "operator-token"


def _typeform(token: str = "tok1") -> bytes:
    return json.dumps(
        {
            "event_id": f"e-{token}",
            "event_type": "form_response",
            "form_response": {
                "form_id": "F",
                "token": token,
                "submitted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 60)),
                "hidden": {},
                "answers": [{"type": "email", "email": EMAIL, "field": {"id": "e", "ref": "email"}}],
            },
        }
    ).encode()


def _lead(graph):
    graph.add_lead(LEAD, created_time=int(time.time()) - 600, field_data=[{"name": "email", "values": [EMAIL]}])


@pytest.fixture
def client(env, monkeypatch):
    monkeypatch.setenv("LEADRELAY_API_TOKEN", TOKEN)
    return create_app().test_client()


def _forget(client, work):
    """The API's forget of the person, its walk run by `work`: what it removed."""
    answer = privacy_api(client, "forget", TOKEN, work, email=EMAIL, lead_id=LEAD)
    assert answer.status_code == 200, answer.get_json()
    return answer.get_json()


def _held(redis_conn) -> list[str]:
    from workers.events import suppression

    out = []
    for key in redis_conn.scan_iter(match="*", count=1000):
        if key == suppression.KEY.encode():
            continue
        text = key.decode()
        kind = redis_conn.type(key).decode()
        if kind == "string":  # a key the worker deleted since the scan found it holds nothing
            text += (redis_conn.get(key) or b"").decode("utf-8", "replace")
        elif kind == "stream":
            text += json.dumps([{k.decode(): v.decode() for k, v in f.items()} for _, f in redis_conn.xrange(key)])
        elif kind == "hash":
            import zlib

            for f, v in redis_conn.hgetall(key).items():
                if f == b"data":
                    try:
                        v = zlib.decompress(v)
                    except zlib.error:
                        pass
                text += f.decode("utf-8", "replace") + v.decode("utf-8", "replace")
        elif kind in ("list",):
            text += " ".join(v.decode("utf-8", "replace") for v in redis_conn.lrange(key, 0, -1))
        elif kind in ("set", "zset"):
            values = redis_conn.smembers(key) if kind == "set" else redis_conn.zrange(key, 0, -1)
            text += " ".join(v.decode("utf-8", "replace") for v in values)
        if LEAD in text or EM in text or EM[:32] in text:
            out.append(key.decode())
    return out


def test_a_typeform_submission_waiting_in_the_inbox(client, graph, work, redis_conn):
    body = _typeform()
    answer = client.post("/webhooks/typeform", data=body, headers={"Typeform-Signature": typeform_sig(body)})
    assert answer.get_json()["accepted"] == 1, answer.get_json()
    assert _held(redis_conn)  # the inbox holds it
    done = _forget(client, work)
    assert _held(redis_conn) == [], (done, _held(redis_conn))
    work()
    assert graph.events == [] and _held(redis_conn) == []


def test_a_lead_ads_lead_waiting_in_the_inbox(client, graph, work, redis_conn):
    _lead(graph)
    body = leadgen_body(LEAD, created_time=int(time.time()) - 600)
    assert client.post("/webhooks/meta", data=body, headers={"X-Hub-Signature-256": sign(body)}).status_code == 200
    assert _held(redis_conn)
    _forget(client, work)
    assert _held(redis_conn) == []
    work()
    assert graph.events == [] and _held(redis_conn) == []


def test_a_submission_in_the_inbox_is_forgotten_by_its_submission_key(client, graph, work, redis_conn):
    body = _typeform("k8sJ2xQ0pLmN")
    answer = client.post("/webhooks/typeform", data=body, headers={"Typeform-Signature": typeform_sig(body)})
    assert answer.get_json()["accepted"] == 1
    export = privacy_api(client, "export", TOKEN, privacy_walks, person_id="typeform:F:k8sJ2xQ0pLmN").get_json()
    assert export["counts"].get("inbox entry") == 1, export
    done = privacy_api(client, "forget", TOKEN, privacy_walks, person_id="typeform:F:k8sJ2xQ0pLmN").get_json()
    assert done["removed"].get("inbox entry") == 1, done
    work()
    assert graph.events == []


def _worker():
    import os
    import subprocess

    from helpers import BIN

    return subprocess.Popen(
        [str(BIN / "leadrelay"), "worker"],
        env=dict(os.environ),
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def test_a_lead_on_the_wire_while_it_is_forgotten_leaves_nothing_behind(client, graph, redis_conn):
    """Meta's answer is held while the forget runs: the worker then writes no ledger entry,
    kept Lead or accuracy flag for the person (a forget that races a lead finishes it)."""
    import threading

    from helpers import kill_tree, wait_for

    _lead(graph)
    held = threading.Event()
    graph.then({"hold": held}, on="events")
    body = leadgen_body(LEAD, created_time=int(time.time()) - 600)
    assert client.post("/webhooks/meta", data=body, headers={"X-Hub-Signature-256": sign(body)}).status_code == 200
    worker = _worker()
    try:
        wait_for(lambda: graph.calls("events"), what="the event on the wire")
        taken = client.post(
            "/api/v1/people/forget",
            json={"email": EMAIL, "lead_id": LEAD},
            headers={"Authorization": f"Bearer {TOKEN}"},
        )
        assert taken.status_code == 202  # suppressed now; the running worker walks after its batch
        held.set()
        wait_for(lambda: not redis_conn.xlen("leadrelay:inbox"), what="the batch finished")
        wait_for(lambda: _held(redis_conn) == [], timeout=5, what="nothing of the person left")
    finally:
        held.set()
        kill_tree(worker.pid)
        worker.wait()
    assert _held(redis_conn) == []


@pytest.mark.parametrize(
    "answer, held_as",
    [
        ({"status": 400, "error": {"code": 100, "message": "Invalid parameter"}}, "leadrelay:dead"),  # dead letter
        ({"status": 500, "error": {"code": 2, "message": "Service temporarily unavailable"}}, "rq:job:"),  # a retry
    ],
    ids=["dead-lettered", "waiting-for-its-retry"],
)
def test_a_lead_that_failed(client, graph, work, redis_conn, answer, held_as):
    _lead(graph)
    graph.then(answer, on="events")
    body = leadgen_body(LEAD, created_time=int(time.time()) - 600)
    client.post("/webhooks/meta", data=body, headers={"X-Hub-Signature-256": sign(body)})
    work()
    assert any(key.startswith(held_as) for key in _held(redis_conn))
    _forget(client, work)
    assert _held(redis_conn) == []
    work()
    assert graph.events == []
