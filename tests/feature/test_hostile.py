"""Hostile input, correctly signed: no request answers 500, one bad item never costs
another, a worker never crashes on a job's data, and no raw value reaches the logs.

The fuzzers are standing tests (a few hundred cases each, for CI); bench/fuzz.py runs the
same strategies for as long as it is given.
"""

from __future__ import annotations

import itertools
import json
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rq.registry import FailedJobRegistry

from helpers import inbox_entries, leadgen_body, post_signed
from webhook_app import create_app
from workers import jobs
from workers.common.queues import queue
from workers.failures import deadletters
from workers.sources.registry import SOURCES

API_TOKEN = "hostile-api-token"
ANSWERS = {200, 202, 400, 401, 404, 413, 503}
NESTED = b"[" * 10_000 + b"]" * 10_000
# Values seen to break parsers: odd ids, digits that are not ASCII, a lone surrogate, a
# number past what str() will print, NaN and infinities.
RAW_SURROGATE = (
    "<a lone surrogate as raw UTF-8 bytes>"  # written as ED BF BF by _body: JSON's escape is the other way in
)
HOSTILE_TEXT = [
    "",
    " ",
    "a b",
    "r.1",
    "\u00b2",
    "\u0663",
    "\ud800",
    "jane.roe@example.net\udfff",
    "9" * 4400,
    "undefined",
    "{{fbclid}}",
    "<script>",
    "\u202e",
    RAW_SURROGATE,
    f"joe{RAW_SURROGATE}@example.com",
]
HUGE = "<a number of 4,400 digits>"  # written into the JSON text by _body: Python will not print such an int
# Integers no datetime holds: they once stalled a worker's drain for good.
OUT_OF_TIME = [10**19, -(2**63), 2**63, 2**63 - 1, 253402300800]
leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from(OUT_OF_TIME),
    st.just(HUGE),
    st.floats(),
    st.sampled_from(HOSTILE_TEXT),
    st.text(max_size=12),
)
values = st.recursive(
    leaves,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=8,
)
# What each endpoint is sent: its envelope, with hostile values where the parsers look.
META_LEADS = st.fixed_dictionaries(
    {}, optional={"leadgen_id": values, "page_id": values, "form_id": values, "ad_id": values, "created_time": values}
)
TYPEFORM_RESPONSES = st.fixed_dictionaries(
    {"form_id": values, "token": values},
    optional={
        "answers": st.lists(
            st.fixed_dictionaries(
                {"type": values, "field": values},
                optional={"email": values, "text": values, "choice": values, "choices": values},
            ),
            max_size=3,
        ),
        "hidden": values,
        "submitted_at": values,
        "landed_at": values,
    },
)
TALLY_DATA = st.fixed_dictionaries(
    {
        "responseId": values,
        "fields": st.lists(
            st.fixed_dictionaries(
                {
                    "key": values,
                    "label": values,
                    "type": st.one_of(values, st.sampled_from(["MULTIPLE_CHOICE", "INPUT_EMAIL", "HIDDEN_FIELDS"])),
                },
                optional={"value": values, "options": values},
            ),
            max_size=3,
        ),
    },
    optional={"formId": values, "createdAt": values},
)
STAGE_ITEMS = st.lists(
    st.fixed_dictionaries(
        {"stage": st.one_of(values, st.sampled_from(["MQL", "won"]))},
        optional={
            "occurred_at": values,
            "value": values,
            "currency": values,
            "email": values,
            "phone": values,
            "leadgen_id": values,
            "external_id": values,
            "submission_id": values,
            "ldu": values,
        },
    ),
    max_size=4,
)
HUBSPOT_EVENTS = st.lists(
    st.fixed_dictionaries(
        {
            "subscriptionType": st.one_of(values, st.sampled_from(["deal.propertyChange", "contact.propertyChange"])),
            "propertyName": st.one_of(values, st.sampled_from(["dealstage", "lifecyclestage"])),
        },
        optional={
            "eventId": values,
            "objectId": values,
            "portalId": values,
            "propertyValue": st.one_of(values, st.sampled_from(["closedwon", "qualifiedtobuy"])),
            "occurredAt": values,
        },
    ),
    min_size=1,
    max_size=4,
)
PIPEDRIVE_CHANGES = st.fixed_dictionaries(
    {
        "meta": st.fixed_dictionaries(
            {"entity": st.one_of(values, st.just("deal")), "action": st.one_of(values, st.just("change"))},
            optional={"id": values, "company_id": values, "timestamp": values},
        ),
        "data": st.fixed_dictionaries(
            {},
            optional={
                "id": values,
                "stage_id": values,
                "status": st.one_of(values, st.just("won")),
                "value": values,
                "currency": values,
                "person_id": values,
            },
        ),
    },
    optional={"previous": values},
)
BOOKINGS = {
    "calendly": st.fixed_dictionaries(
        {"event": st.one_of(values, st.sampled_from(["invitee.created", "invitee.canceled"]))},
        optional={
            "created_by": values,
            "payload": st.fixed_dictionaries(
                {},
                optional={
                    "email": values,
                    "uri": values,
                    "name": values,
                    "text_reminder_number": values,
                    "questions_and_answers": values,
                    "created_at": values,
                    "rescheduled": values,
                },
            ),
        },
    ),
    "calcom": st.fixed_dictionaries(
        {"triggerEvent": st.one_of(values, st.sampled_from(["BOOKING_CREATED", "BOOKING_CANCELLED"]))},
        optional={
            "createdAt": values,
            "payload": st.fixed_dictionaries(
                {}, optional={"uid": values, "attendees": values, "responses": values, "organizer": values}
            ),
        },
    ),
    "signed": st.dictionaries(
        st.sampled_from(["email", "phone", "stage", "occurred_at", "value", "currency", "leadgen_id"]), values
    ),
    # HighLevel: a timestamp of now half the time, so the body gets past the replay window to parse.
    "highlevel": st.fixed_dictionaries(
        {
            "type": st.one_of(values, st.sampled_from(["OpportunityStageUpdate", "OpportunityStatusUpdate"])),
            "timestamp": st.one_of(values, st.just(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))),
        },
        optional={
            "webhookId": values,
            "id": values,
            "locationId": values,
            "contactId": values,
            "pipelineStageId": values,
            "status": st.one_of(values, st.sampled_from(["won", "lost", "open"])),
            "monetaryValue": values,
        },
    ),
}
# Meta's messaging webhooks: a chat's first message, its referral and ids, every part hostile.
_REFERRAL = st.fixed_dictionaries(
    {}, optional={"ctwa_clid": values, "source_id": values, "source": values, "ad_id": values}
)
CHATS = {
    "whatsapp": st.fixed_dictionaries(
        {
            "object": st.one_of(values, st.just("whatsapp_business_account")),
            "entry": st.lists(
                st.fixed_dictionaries(
                    {"id": values},
                    optional={
                        "changes": st.lists(
                            st.fixed_dictionaries(
                                {"field": st.one_of(values, st.just("messages"))},
                                optional={
                                    "value": st.fixed_dictionaries(
                                        {},
                                        optional={
                                            "messages": st.lists(
                                                st.fixed_dictionaries(
                                                    {},
                                                    optional={
                                                        "from": values,
                                                        "user_id": values,
                                                        "timestamp": values,
                                                        "referral": _REFERRAL,
                                                    },
                                                ),
                                                max_size=3,
                                            ),
                                            "statuses": values,
                                        },
                                    )
                                },
                            ),
                            max_size=2,
                        )
                    },
                ),
                max_size=2,
            ),
        }
    ),
    **{
        name: st.fixed_dictionaries(
            {
                "object": st.one_of(values, st.just(kind)),
                "entry": st.lists(
                    st.fixed_dictionaries(
                        {"id": values},
                        optional={
                            "messaging": st.lists(
                                st.fixed_dictionaries(
                                    {},
                                    optional={
                                        "sender": st.fixed_dictionaries({}, optional={"id": values}),
                                        "recipient": st.fixed_dictionaries({}, optional={"id": values}),
                                        "timestamp": values,
                                        "referral": _REFERRAL,
                                        "postback": st.fixed_dictionaries({}, optional={"referral": _REFERRAL}),
                                        "message": st.fixed_dictionaries({}, optional={"referral": _REFERRAL}),
                                    },
                                ),
                                max_size=3,
                            )
                        },
                    ),
                    max_size=2,
                ),
            }
        )
        for name, kind in (("messenger", "page"), ("instagram", "instagram"))
    },
}
BOOKINGS |= CHATS  # every JSON source beside Meta's leads, the CRMs and the forms: fuzzed alike
FUZZ = settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _body(doc) -> bytes:
    """NaN, Infinity and lone surrogates written as JSON text allows; HUGE as a bare number;
    RAW_SURROGATE as the bytes of an encoded surrogate (Python's JSON reader lets them in)."""
    text = json.dumps(doc).replace(json.dumps(HUGE), "9" * 4400).encode()
    return text.replace(RAW_SURROGATE.encode(), b"\xed\xbf\xbf")


@pytest.fixture
def deliver(client, env):
    def post(name: str, body: bytes):
        return post_signed(client, name, body, env)

    return post


@pytest.fixture
def stage_api(env, monkeypatch):
    monkeypatch.setenv("LEADRELAY_API_TOKEN", API_TOKEN)
    client = create_app().test_client()

    def post(body: bytes):
        return client.post(
            "/api/v1/stage-events",
            data=body,
            headers={"Authorization": f"Bearer {API_TOKEN}", "Content-Type": "application/json"},
        )

    return post


def _answered(response) -> bool:
    """An answer the receiver meant: never a 500, and never the safety net's
    `unusable_request`, which means an error no check foresaw (logged with where)."""
    return response.status_code in ANSWERS and (response.get_json() or {}).get("error") != "unusable_request"


def _meta(value) -> dict:
    return {"object": "page", "entry": [{"id": "1", "changes": [{"field": "leadgen", "value": value}]}]}


@given(lead=META_LEADS)
@FUZZ
def test_signed_meta_fuzz_never_answers_500(deliver, lead):
    assert _answered(deliver("meta", _body(_meta(lead))))


@given(response=TYPEFORM_RESPONSES)
@FUZZ
def test_signed_typeform_fuzz_never_answers_500(deliver, response):
    body = _body({"event_type": "form_response", "event_id": "e1", "form_response": response})
    assert _answered(deliver("typeform", body))


@given(data=TALLY_DATA)
@FUZZ
def test_signed_tally_fuzz_never_answers_500(deliver, data):
    assert _answered(deliver("tally", _body({"eventType": "FORM_RESPONSE", "data": data})))


@given(events=HUBSPOT_EVENTS)
@FUZZ
def test_signed_hubspot_fuzz_never_answers_500(deliver, events):
    assert _answered(deliver("hubspot", _body(events)))


@given(change=PIPEDRIVE_CHANGES)
@FUZZ
def test_signed_pipedrive_fuzz_never_answers_500(deliver, change):
    assert _answered(deliver("pipedrive", _body(change)))


@pytest.mark.parametrize("name", sorted(BOOKINGS))
def test_signed_booking_and_standard_webhooks_fuzz_never_answers_500(deliver, name):
    @given(doc=BOOKINGS[name])
    @FUZZ
    def one(doc):
        assert _answered(deliver(name, _body(doc)))

    one()


@given(items=STAGE_ITEMS)
@FUZZ
def test_stage_api_fuzz_never_answers_500(stage_api, items):
    assert _answered(stage_api(_body(items)))


# Google's key travels in the body: a body that is no JSON object we can read carries none,
# and is refused 401 (tests/feature/test_google_ads.py); its near misses are tried there too.
KEYED_IN_HEADERS = sorted(name for name, source in SOURCES.items() if not source.traits.sign_body)


@pytest.mark.parametrize("endpoint", [*KEYED_IN_HEADERS, "stages"])
def test_ten_thousand_nested_brackets_are_unusable(deliver, stage_api, endpoint):
    """Refused by our own API; acknowledged and recorded from a signed webhook."""
    if endpoint == "stages":
        answer = stage_api(NESTED)
        assert answer.status_code == 400 and answer.get_json()["error"] == "malformed_json"
    else:
        answer = deliver(endpoint, NESTED)
        said = answer.get_json(silent=True)  # Salesforce's SOAP Ack: the counts in a header
        assert answer.status_code == 200
        assert (
            said["skipped"][0]["reason"] == "malformed_json" if said else answer.headers["X-Leadrelay-Accepted"] == "0"
        )


def test_a_poison_lead_in_a_batch_costs_no_other_lead(deliver, redis_conn):
    body = json.loads(leadgen_body("111", "222"))
    changes = body["entry"][0]["changes"]
    changes.insert(1, {"field": "leadgen", "value": {"leadgen_id": "\u0663", "page_id": "1"}})
    changes.append({"field": "leadgen", "value": {"leadgen_id": HUGE}})
    answer = deliver("meta", _body(body))
    assert answer.status_code == 200
    assert answer.get_json()["accepted"] == 2
    assert sorted(s["reason"] for s in answer.get_json()["skipped"]) == ["leadgen_without_id"] * 2
    assert len(inbox_entries(redis_conn)) == 2


@pytest.mark.parametrize(
    "name, doc",
    [
        (
            "typeform",
            {"event_type": "form_response", "form_response": {"form_id": "a b", "token": "t1", "answers": []}},
        ),
        ("tally", {"eventType": "FORM_RESPONSE", "data": {"responseId": "r.1", "formId": "f", "fields": []}}),
    ],
)
def test_ids_that_cannot_be_job_ids_are_recorded_with_a_reason(deliver, name, doc):
    answer = deliver(name, _body(doc))
    assert answer.status_code == 200 and answer.get_json()["skipped"][0]["reason"] == "bad_id"


def test_odd_answer_shapes_are_read_as_nothing_not_a_crash(deliver, redis_conn):
    typeform = {
        "event_type": "form_response",
        "event_id": "e",
        "form_response": {
            "form_id": "F1",
            "token": "tok1",
            "submitted_at": "2026-11-20T09:00:00Z",
            "answers": [
                {"type": ["email"], "field": {"id": "x", "ref": ["email"]}, "email": "a@b.co"},
                {"type": "email", "field": {"id": "em", "ref": "email"}, "email": "ada@example.com"},
            ],
        },
    }
    tally = {
        "eventType": "FORM_RESPONSE",
        "data": {
            "responseId": "r1",
            "formId": "f1",
            "fields": [
                {"key": "a", "label": "Pick", "type": "MULTIPLE_CHOICE", "value": [{}], "options": 1.5},
                {"key": "b", "label": "Kind", "type": {}, "value": "x"},
                {"key": "c", "label": "Email", "type": "INPUT_EMAIL", "value": "ada@example.com"},
            ],
        },
    }
    assert deliver("typeform", _body(typeform)).get_json()["accepted"] == 1
    assert deliver("tally", _body(tally)).get_json()["accepted"] == 1


def test_a_non_finite_stage_value_is_rejected_alone(stage_api, redis_conn):
    now = int(time.time())
    items = [
        {"stage": "MQL", "email": "one@example.com", "occurred_at": now},
        {"stage": "won", "email": "two@example.com", "occurred_at": now, "value": float("inf"), "currency": "EUR"},
        {"stage": "MQL", "email": "three@example.com", "occurred_at": float("nan")},
        {"stage": "MQL", "email": "four@example.com", "occurred_at": now},
    ]
    answer = stage_api(_body(items))
    assert answer.status_code == 202
    assert [r["status"] for r in answer.get_json()["results"]] == ["accepted", "rejected", "rejected", "accepted"]
    assert [r.get("reason") for r in answer.get_json()["results"]][1:3] == ["bad_value", "missing_time"]


def test_a_lone_surrogate_in_an_email_refuses_that_item_alone_and_is_never_logged(stage_api, capfd):
    """Not a 400 for the request: that would cost the batch's other items."""
    now = int(time.time())
    answer = stage_api(
        _body(
            [
                {"stage": "MQL", "email": "jane.roe@example.net\udfff", "occurred_at": now},
                {"stage": "MQL", "email": "ok@example.com", "occurred_at": now},
            ]
        )
    )
    assert answer.status_code == 202
    assert [(r["status"], r.get("reason")) for r in answer.get_json()["results"]] == [
        ("rejected", "unknown_person"),
        ("accepted", None),
    ]
    out, err = capfd.readouterr()
    assert "jane.roe" not in out + err


def test_a_job_whose_data_cannot_be_used_is_dead_lettered_not_crashed(env, redis_conn, work):
    q = queue(redis_conn, "leadrelay")
    q.enqueue(
        jobs.send_form_lead,
        {
            "source": "typeform",
            "key": "F-T",
            "event_name": "Lead",
            "event_id": "e:1",
            "submitted_at": int(time.time()),
            "user_data": [],
            "form_id": "F",
            "submission_id": "T",
        },
        job_id="lead-typeform-F-T",
    )
    work()
    entry = deadletters.get(redis_conn, "lead-typeform-F-T")
    assert entry["reason"] == "invalid" and "could not be used" in entry["detail"]
    assert "lead-typeform-F-T" in FailedJobRegistry(queue=q)


def test_the_safety_net_answers_400_and_logs_where_never_the_message(app, capfd):
    """An error no check foresaw, raised by a route added here for the purpose."""

    def broken():
        raise ValueError("could not hash jane.roe@example.net")

    app.add_url_rule("/webhooks/_broken", "broken", broken, methods=["POST"])
    answer = app.test_client().post("/webhooks/_broken")
    assert answer.status_code == 400 and answer.get_json()["error"] == "unusable_request"
    out, err = capfd.readouterr()
    [line] = [json.loads(line) for line in (out + err).splitlines() if '"request_failed"' in line]
    assert line["error"] == "ValueError" and any("broken" in frame for frame in line["where"])
    assert "jane.roe" not in out + err


@pytest.mark.parametrize(
    "given, kept", [("req-123.abc", True), ("x" * 65, False), ("a b", False), ("\u202eevil", False), ("", False)]
)
def test_request_ids_are_bounded_and_plain(post_meta, redis_conn, given, kept):
    post_meta(leadgen_body("333"), headers={"X-Request-Id": given})
    [entry] = inbox_entries(redis_conn)
    request_id = entry["rid"] or ""
    assert (request_id == given) is kept and len(request_id) <= 64


def test_the_handshake_echo_is_never_sniffed_and_metrics_name_their_charset_once(client, env):
    echo = client.get(
        "/webhooks/meta",
        query_string={
            "hub.mode": "subscribe",
            "hub.challenge": "<b>hi</b>",
            "hub.verify_token": env["META_VERIFY_TOKEN"],
        },
    )
    assert echo.headers["X-Content-Type-Options"] == "nosniff" and echo.mimetype == "text/plain"
    assert client.get("/metrics").headers["Content-Type"].count("charset") == 1


def _url(name: str) -> str:
    return f"http://localhost/webhooks/{name}"  # what the test client calls: HubSpot signs it


def _bypasses(name: str, body: bytes, secret: str) -> list[dict]:
    """Header sets that must never pass for `body`: near misses of the right signature
    (with the rest of the right headers, such as HubSpot's timestamp)."""
    source = SOURCES[name]
    header, signed = source.module.SIGNATURE_HEADER, source.sign(secret, body, _url(name))
    rest = {k: v for k, v in signed.items() if k != header}
    right = signed[header]

    def signature(key: str, text: bytes, url: str = _url(name)) -> str:
        if source.secret_parser and not key.startswith("seed:"):  # a key signs only as a seed of its own
            key = "seed:" + key
        return source.sign(key, text, url)[header]

    digest = right.removeprefix("sha256=")
    prefix = "sha256=" if right.startswith("sha256=") else ""
    near = [
        "",
        " ",
        "sha256=",
        "sha1=" + "0" * 40,
        prefix + "0" * len(digest),
        prefix + digest[:-1],
        # Two characters changed in value, never in case alone: a hex signature read without
        # regard to case (Close's) is the same signature in capitals (1 body in 256 ends in "aa").
        prefix + digest[:-2] + ("00" if digest[-2:].lower() != "00" else "11"),
        prefix + digest + "0",
        right * 2,
        signature("", body),
        signature(secret + " ", body),
        signature(secret, body + b" "),
        signature(secret, body.strip() + b"\n"),
        signature(secret, b""),
        signature(secret.upper(), body),
        signature(secret, body, _url(name) + "?x=1"),
        signature(secret, body, _url(name).replace("http:", "https:")),
        "md5=" + digest,
        prefix + digest.encode().hex()[: len(digest)],
        right.replace("=", "%3D"),
        "\u0000" + right[1:],
    ]
    sets = [{**rest, header: value} for value in near if value != right]
    sets += [{"X-Hub-Signature": "sha1=" + "0" * 40}, {**rest, header.lower() + "-x": right}, {}]
    return sets


@pytest.mark.parametrize("name", KEYED_IN_HEADERS)
def test_no_near_miss_of_the_signature_gets_in(client, env, redis_conn, name):
    body = _body({"object": "page", "entry": []} if name == "meta" else {"event_type": "form_response"})
    secret = env[SOURCES[name].secret_setting].split(",")[0]
    attempts = _bypasses(name, body, secret)
    answers = [
        client.post(f"/webhooks/{name}", data=body, headers={"Content-Type": "application/json", **h}) for h in attempts
    ]
    assert [a.status_code for a in answers] == [401] * len(attempts)
    assert queue(redis_conn, "leadrelay").count == 0 and inbox_entries(redis_conn) == []


_VALID_IDS = itertools.count(7700000000000000)


@given(hostile=st.lists(META_LEADS, min_size=10, max_size=10))
@settings(max_examples=5, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_mixed_meta_batches_queue_and_deliver_every_valid_lead_without_a_crash(
    deliver, graph, work, redis_conn, hostile
):
    redis_conn.flushdb()
    graph.any_lead = True
    valid = [str(next(_VALID_IDS)) for _ in hostile]  # new ids each example: earlier events cannot count
    changes = [
        change
        for lead, good in zip(hostile, valid)
        for change in (
            {"field": "leadgen", "value": {"leadgen_id": good, "created_time": int(time.time())}},
            {"field": "leadgen", "value": lead},
        )
    ]
    doc = {"object": "page", "entry": [{"id": "1", "changes": changes}]}
    assert _answered(deliver("meta", _body(doc)))
    assert {entry["id"] for entry in inbox_entries(redis_conn)} >= {f"lead-meta-{good}" for good in valid}
    work()
    delivered = {event["event_id"] for event in graph.events}
    assert {f"meta:{good}:Lead" for good in valid} <= delivered
    failed = FailedJobRegistry(queue=queue(redis_conn, "leadrelay")).get_job_ids()
    assert [job_id for job_id in failed if deadletters.get(redis_conn, job_id) is None] == []  # no crash


@pytest.mark.parametrize("stamp", ["²³", "٣٣٣", "9" * 5000, "-5", "1e9", " ", "+1795000000"])
@pytest.mark.parametrize("name", ["hubspot", "signed", "calendly"])
def test_a_timestamp_that_is_not_plain_digits_is_a_401_and_no_error_log(client, env, capfd, name, stamp):
    """Unsigned requests reach the timestamp check first: read strictly (ASCII digits,
    bounded) before any arithmetic, so no value raises inside it."""
    header = {"hubspot": "X-HubSpot-Request-Timestamp", "signed": "webhook-timestamp"}.get(name)
    headers = {header: stamp, "webhook-id": "msg_1", "webhook-signature": "v1,AAAA"} if header else {}
    if name == "hubspot":
        headers["X-HubSpot-Signature-v3"] = "AAAA"
    if name == "calendly":
        headers = {"Calendly-Webhook-Signature": f"t={stamp},v1={'0' * 64}"}
    answer = client.post(f"/webhooks/{name}", data=b"[]", headers={"Content-Type": "application/json", **headers})
    assert answer.status_code == 401 and answer.get_json()["error"] in ("missing_signature", "bad_signature")
    assert '"level": "error"' not in capfd.readouterr().err


def test_a_hubspot_request_with_more_events_than_hubspot_sends_is_recorded_unread(deliver):
    event = {"eventId": 1, "portalId": 1, "objectId": 1, "subscriptionType": "deal.propertyChange"}
    answer = deliver("hubspot", json.dumps([{**event, "eventId": n + 1} for n in range(101)]).encode())
    assert answer.status_code == 200 and answer.get_json()["accepted"] == 0
    assert answer.get_json()["skipped"][0]["reason"] == "too_many_events"
    assert deliver("hubspot", json.dumps([event] * 100).encode()).status_code == 200


def test_a_negative_stage_value_is_rejected_alone(stage_api):
    now = int(time.time())
    items = [
        {"stage": "won", "email": "one@example.com", "occurred_at": now, "value": -1, "currency": "EUR"},
        {"stage": "won", "email": "two@example.com", "occurred_at": now, "value": 0, "currency": "EUR"},
    ]
    answer = stage_api(_body(items)).get_json()
    assert [(r["status"], r.get("reason")) for r in answer["results"]] == [
        ("rejected", "bad_value"),
        ("accepted", None),
    ]
