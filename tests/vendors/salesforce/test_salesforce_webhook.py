"""Salesforce's Outbound Messages: posted to the endpoint's secret path, the organization's
id checked, each notification stored once by its id and the SOAP acknowledgement sent only
then; a hostile body (a DTD, entities, a billion laughs) refused before any work."""

from __future__ import annotations

import json
import time

import pytest

from helpers import fixture_bytes, inbox_entries
from workers.common.refusals import BadSignature, MalformedBody
from workers.intake import admission
from workers.vendors.salesforce import webhook

ORG, TOKEN = "00Dx0000000BV7zEAG", "k3Xq9vR2pL7tYw"
SECRET = f"{ORG}:{TOKEN}"

LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
<!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">]>
<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>
<notifications xmlns="http://soap.sforce.com/2005/09/outbound"><OrganizationId>&lol9;</OrganizationId>
</notifications></soapenv:Body></soapenv:Envelope>"""
EXTERNAL = b"""<?xml version="1.0"?><!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<notifications xmlns="http://soap.sforce.com/2005/09/outbound"><OrganizationId>&xxe;</OrganizationId></notifications>"""
DTD_ONLY = b"""<?xml version="1.0"?><!DOCTYPE notifications SYSTEM "http://attacker.example/x.dtd">
<notifications xmlns="http://soap.sforce.com/2005/09/outbound"/>"""


@pytest.fixture
def web(env, monkeypatch):
    from webhook_app import create_app

    monkeypatch.setenv("SALESFORCE_OUTBOUND_SECRET", SECRET)
    return create_app().test_client()


def _post(web, body: bytes, token: str = TOKEN):
    return web.post(f"/webhooks/salesforce/{token}", data=body, headers={"Content-Type": "text/xml; charset=utf-8"})


def test_a_message_is_acknowledged_in_soap_once_stored_and_a_redelivery_is_a_duplicate(web, redis_conn):
    body = fixture_bytes("salesforce", "opportunity__closed_won.xml")
    first, again = _post(web, body), _post(web, body)
    assert first.status_code == 200 and first.mimetype == "text/xml"
    assert b"<Ack>true</Ack>" in first.data and b"notificationsResponse" in first.data
    assert (first.headers["X-Leadrelay-Accepted"], again.headers["X-Leadrelay-Duplicates"]) == ("1", "1")
    [entry] = inbox_entries(redis_conn)
    assert entry["arg"]["event_key"] == "04lx00000008s3XAAQ" and entry["arg"]["stage"] == "Purchase"


def test_a_wrong_path_token_or_another_organization_is_refused(web, redis_conn):
    body = fixture_bytes("salesforce", "opportunity__closed_won.xml")
    assert _post(web, body, "guessed").status_code == 401
    other = body.replace(b"00Dx0000000BV7zEAG", b"00Dy0000000XXXXEAG")
    refused = _post(web, other)
    assert refused.status_code == 401 and refused.get_json()["error"] == "bad_signature"
    assert inbox_entries(redis_conn) == []
    # Salesforce shows ids of 15 and 18 characters: the first 15 are the id, case-sensitive.
    webhook.verify(body.replace(b"00Dx0000000BV7zEAG", b"00Dx0000000BV7z"), {webhook.SIGNATURE_HEADER: TOKEN}, [SECRET])
    with pytest.raises(BadSignature):
        webhook.verify(body.replace(b"BV7z", b"bv7z"), {webhook.SIGNATURE_HEADER: TOKEN}, [SECRET])


@pytest.mark.parametrize("hostile", [LAUGHS, EXTERNAL, DTD_ONLY], ids=["billion_laughs", "external_entity", "dtd"])
def test_a_hostile_body_is_refused_before_any_work(web, redis_conn, hostile):
    started = time.perf_counter()
    answer = _post(web, hostile)
    assert answer.status_code == 400 and answer.get_json()["error"] == "forbidden_xml"
    assert time.perf_counter() - started < 1.0 and inbox_entries(redis_conn) == []
    with pytest.raises(MalformedBody):
        webhook.parse(hostile)


def test_a_lead_carries_its_person_and_an_account_is_skipped():
    [lead] = webhook.parse(fixture_bytes("salesforce", "lead__working_contacted.xml"))["items"]
    assert lead["stage_id"] == "Working - Contacted" and lead["person"]["email"] == ["joe@example.com"]
    assert lead["object"] == "lead" and lead["account"] == "00Dx0000000BV7z"  # its 15-character form
    skipped = webhook.parse(fixture_bytes("salesforce", "account__ignored.xml"))["skipped"]
    assert skipped == [{"reason": "not_a_stage_object", "object": "Account", "event_key": "04lx00000008s3ZAAQ"}]


def test_more_than_a_hundred_notifications_is_not_what_salesforce_sends():
    body = fixture_bytes("salesforce", "opportunity__closed_won.xml")
    start, end = body.index(b"<Notification>"), body.index(b"</Notification>") + len(b"</Notification>")
    many = body[:start] + body[start:end] * 101 + body[end:]
    with pytest.raises(MalformedBody) as refused:
        webhook.parse(many)
    assert refused.value.reason == "too_many_items"


HEADER_ORG = b"""<soapenv:Header><OrganizationId xmlns="http://soap.sforce.com/2005/09/outbound">%s</OrganizationId>
</soapenv:Header><soapenv:Body>"""


def _with_header(body: bytes, header_org: bytes, message_org: bytes) -> bytes:
    body = body.replace(b"<soapenv:Body>", HEADER_ORG % header_org, 1)
    return body.replace(
        b"<OrganizationId>00Dx0000000BV7zEAG</OrganizationId>", b"<OrganizationId>%s</OrganizationId>" % message_org
    )


def test_one_element_decides_both_authentication_and_routing(web, redis_conn):
    """The right organization in the SOAP header and another in the message is refused;
    the message's own organization is the one checked and the one routed by."""
    body = fixture_bytes("salesforce", "opportunity__closed_won.xml")
    smuggled = _with_header(body, ORG.encode(), b"00Dy0000000XXXXEAG")
    assert _post(web, smuggled).status_code == 401 and inbox_entries(redis_conn) == []
    honest = _with_header(body, b"00Dy0000000XXXXEAG", ORG.encode())
    assert _post(web, honest).status_code == 200
    [entry] = inbox_entries(redis_conn)
    assert entry["arg"]["account"] == ORG[:15]


def test_a_wrong_token_and_a_wrong_organization_get_the_same_answer(web):
    body = fixture_bytes("salesforce", "opportunity__closed_won.xml")
    wrong_token = _post(web, body, "guessed")
    wrong_org = _post(web, body.replace(ORG.encode(), b"00Dy0000000XXXXEAG"))
    assert (wrong_token.status_code, wrong_token.get_json()) == (wrong_org.status_code, wrong_org.get_json())


def test_an_unknown_xml_encoding_is_recorded_unread_and_the_path_token_never_logged(web, redis_conn, capfd):
    body = fixture_bytes("salesforce", "opportunity__closed_won.xml").replace(
        b'encoding="UTF-8"', b'encoding="x-no-such-encoding"', 1
    )
    assert b"x-no-such-encoding" in body
    answer = _post(web, body)
    assert answer.status_code == 200 and answer.headers["X-Leadrelay-Accepted"] == "0"
    [recorded] = [json.loads(item) for item in redis_conn.lrange(admission.IGNORED, 0, -1)]
    assert recorded["reason"] in ("unexpected_shape", "malformed_json")
    out, err = capfd.readouterr()
    assert TOKEN not in out + err


@pytest.mark.parametrize("written", ["00Dx0000000BV7z", "00Dx0000000BV7zEAG", " 00Dx0000000BV7zEAG "])
@pytest.mark.parametrize("sent", [b"00Dx0000000BV7zEAG", b"00Dx0000000BV7z"])
def test_an_organization_written_in_15_or_18_characters_routes_one_sent_in_either(written, sent):
    from workers.config import crmmap
    from workers.config.stagemap import StageMap
    from workers.sources.registry import CRM_SOURCES

    doc = {"crm": {"salesforce": {"accounts": {written: "acme"}}}}
    accounts = crmmap.load(doc, CRM_SOURCES, StageMap(), {"default", "acme"})["salesforce"]["accounts"]
    body = fixture_bytes("salesforce", "opportunity__closed_won.xml").replace(b"00Dx0000000BV7zEAG", sent)
    [item] = webhook.parse(body)["items"]
    assert accounts[item["account"]] == "acme"
