"""Leads that start in a chat: a Click-to-WhatsApp (Messenger, Instagram) chat arrives on
its signed webhook, and the funnel after it (the stage API, HubSpot) goes back to Meta as
business-messaging events with the chat's own ids, each stage once, whatever is
redelivered; a stage Meta has no messaging name for, and one for a chat no ad started,
are recorded and never sent; no message text is kept or logged."""

from __future__ import annotations

import json
import time

from helpers import fixture_bytes, hubspot_deal_event, leadgen_body, leadrelay, post_signed, privacy_api, sign

PHONE, WABA = "+1 650 555 1234", "102290129340398"
CLICK = "Afe4ie2ba13Mh1Tvnz15ivf5ueBeNDDTlaBFy4pshp3OGeMpBsGwA3ASmbFbDa"
TOKEN = "chat-api-token"


def _now(channel: str, name: str) -> bytes:
    """A fixture as if sent a minute ago (its stages come after it)."""
    doc = json.loads(fixture_bytes(channel, name))
    for entry in doc["entry"]:
        for change in entry.get("changes", []):
            for message in change["value"].get("messages", []):
                message["timestamp"] = str(int(time.time()) - 60)
        for event in entry.get("messaging", []):
            event["timestamp"] = (int(time.time()) - 60) * 1000
    return json.dumps(doc).encode()


def _stages(client, *items):
    now = int(time.time())
    items = [{"occurred_at": now - 10, **item} for item in items]
    return client.post("/api/v1/stage-events", json=items, headers={"Authorization": f"Bearer {TOKEN}"}).get_json()


def _chats(graph) -> list[dict]:
    return [e for e in graph.events if e["action_source"] == "business_messaging"]


def test_a_whatsapp_chat_from_an_ad_then_its_stages_go_back_once_as_messaging_events(
    env, monkeypatch, graph, work, redis_conn, capfd
):
    from webhook_app import create_app

    monkeypatch.setenv("LEADRELAY_API_TOKEN", TOKEN)
    client = create_app().test_client()
    chat = _now("whatsapp", "messages_text__ad_referral.json")
    first, again = post_signed(client, "whatsapp", chat, env), post_signed(client, "whatsapp", chat, env)
    assert (first.get_json()["accepted"], again.get_json()["duplicates"]) == (1, 1)  # WhatsApp redelivers

    answer = _stages(
        client,
        {"phone": PHONE, "stage": "QualifiedLead"},
        {"phone": PHONE, "stage": "Purchase", "value": 240, "currency": "EUR"},
        {"phone": PHONE, "stage": "Schedule"},  # Meta takes no messaging event of that name
    )
    assert [r["status"] for r in answer["results"]] == ["accepted", "accepted", "recorded"]
    assert answer["results"][2]["reason"] == "no_messaging_event_name"
    deal = graph.add_crm_person("sheena@example.com", PHONE, amount=240)["deal_id"]
    won = json.dumps([hubspot_deal_event(deal, "closedwon")]).encode()
    assert post_signed(client, "hubspot", won, env).get_json()["accepted"] == 1
    work()
    assert _stages(client, {"phone": PHONE, "stage": "QualifiedLead"})["duplicate"] == 1
    work()

    sent = _chats(graph)
    assert sorted(e["event_name"] for e in sent) == ["Purchase", "QualifiedLead"]  # HubSpot's won: a duplicate
    for event in sent:
        assert event["messaging_channel"] == "whatsapp"
        assert event["user_data"]["whatsapp_business_account_id"] == WABA
        assert event["user_data"]["ctwa_clid"] == CLICK
        assert (
            "lead_id" not in event["user_data"]
            and "custom_data" not in event
            or "event_source" not in event.get("custom_data", {})
        )
    [row] = json.loads(leadrelay("readiness", "--json").stdout)["chats"]
    assert row == {"channel": "whatsapp", "started": 1, "stages": {"Purchase": 1, "QualifiedLead": 1}}
    assert 'leadrelay_chats_started_total{channel="whatsapp"} 1.0' in client.get("/metrics").get_data(as_text=True)
    purchase = next(e for e in sent if e["event_name"] == "Purchase")
    assert purchase["custom_data"] == {"value": 240, "currency": "EUR"}
    assert [e for e in graph.events if e["action_source"] != "business_messaging"] == []  # no CRM-shaped twin

    text = "Does it come in another color?"
    stored = json.dumps([redis_conn.dump(k).hex() for k in redis_conn.scan_iter("*")])
    assert text.encode().hex() not in stored and "16505551234" not in str(list(redis_conn.scan_iter("*")))
    assert text not in capfd.readouterr().err


def test_lead_submitted_is_what_a_chats_lead_stage_is_called(env, monkeypatch, graph, work):
    from webhook_app import create_app

    monkeypatch.setenv("LEADRELAY_API_TOKEN", TOKEN)
    client = create_app().test_client()
    post_signed(client, "whatsapp", _now("whatsapp", "messages_text__ad_referral.json"), env)
    assert _stages(client, {"phone": PHONE, "stage": "Lead"})["accepted"] == 1
    work()
    assert [e["event_name"] for e in _chats(graph)] == ["LeadSubmitted"]


def test_messenger_and_instagram_chats_are_named_by_their_conversation(env, monkeypatch, graph, work):
    from webhook_app import create_app

    monkeypatch.setenv("LEADRELAY_API_TOKEN", TOKEN)
    client = create_app().test_client()
    post_signed(client, "messenger", _now("messenger", "messaging_postbacks__ad_referral.json"), env)
    post_signed(client, "instagram", _now("instagram", "messages_text__ad_referral.json"), env)
    answer = _stages(
        client,
        {"conversation": "messenger:109876543210987:6783902176051234", "stage": "QualifiedLead"},
        {"conversation": "instagram:17841405793187218:1254459154682919", "stage": "QualifiedLead"},
    )
    assert answer["accepted"] == 2
    work()
    by_channel = {e["messaging_channel"]: e["user_data"] for e in _chats(graph)}
    assert by_channel["messenger"] == {"page_id": "109876543210987", "page_scoped_user_id": "6783902176051234"}
    assert by_channel["instagram"] == {
        "instagram_business_account_id": "17841405793187218",
        "ig_sid": "1254459154682919",
    }


def test_a_chat_no_ad_started_is_acknowledged_and_its_stage_recorded_never_sent(env, monkeypatch, graph, work):
    from webhook_app import create_app

    monkeypatch.setenv("LEADRELAY_API_TOKEN", TOKEN)
    client = create_app().test_client()
    organic = post_signed(client, "messenger", _now("messenger", "messages_text__ignored.json"), env).get_json()
    assert organic["accepted"] == 0 and organic["skipped"] == [{"reason": "not_from_an_ad"}]
    answer = _stages(client, {"conversation": "messenger:109876543210987:6783902176051234", "stage": "QualifiedLead"})
    assert answer["results"][0]["status"] == "recorded" and answer["results"][0]["reason"] == "unknown_conversation"
    work()
    assert graph.events == []


def test_a_lead_ads_lead_who_also_chatted_from_an_ad_gets_each_origins_event(env, monkeypatch, graph, work):
    from webhook_app import create_app

    monkeypatch.setenv("LEADRELAY_API_TOKEN", TOKEN)
    client = create_app().test_client()
    created = int(time.time()) - 600
    graph.add_lead("7900000000000001", created_time=created, field_data=[{"name": "phone_number", "values": [PHONE]}])
    body = leadgen_body("7900000000000001", created_time=created)
    client.post("/webhooks/meta", data=body, headers={"X-Hub-Signature-256": sign(body)})
    post_signed(client, "whatsapp", _now("whatsapp", "messages_text__ad_referral.json"), env)
    work()
    answer = _stages(client, {"phone": PHONE, "stage": "QualifiedLead"})
    assert answer["accepted"] == 2 and answer["results"][0]["also"][0]["status"] == "accepted"
    work()
    stages = [e for e in graph.events if e["event_name"] == "QualifiedLead"]
    assert sorted(e["action_source"] for e in stages) == ["business_messaging", "system_generated"]
    lead_one = next(e for e in stages if e["action_source"] == "system_generated")
    assert str(lead_one["user_data"]["lead_id"]) == "7900000000000001"


def test_forgetting_a_phone_erases_its_chat_and_keeps_its_next_chat_out(env, monkeypatch, graph, work, redis_conn):
    from webhook_app import create_app

    monkeypatch.setenv("LEADRELAY_API_TOKEN", TOKEN)
    client = create_app().test_client()
    chat = _now("whatsapp", "messages_text__ad_referral.json")
    post_signed(client, "whatsapp", chat, env)
    assert list(redis_conn.scan_iter("leadrelay:chat*"))
    forgot = privacy_api(client, "forget", TOKEN, work, phone=PHONE)
    assert forgot.get_json()["removed"] == {"chat": 1, "chat lookup": 1, "person index entry": 1}
    assert list(redis_conn.scan_iter("leadrelay:chat*")) == [] and CLICK not in str(redis_conn.keys("*"))
    again = post_signed(client, "whatsapp", chat, env).get_json()  # WhatsApp's retry, days later
    assert again["accepted"] == 0 and again["skipped"][0]["reason"] == "suppressed"
    assert _stages(client, {"phone": PHONE, "stage": "QualifiedLead"})["results"][0]["reason"] == "suppressed"
    work()
    assert graph.events == []


def test_a_chat_from_a_number_phonenumbers_rejects_is_keyed_by_its_hash_and_forgotten_by_its_digits(
    env, monkeypatch, graph, work, redis_conn
):
    """Meta's own WhatsApp test numbers (+1 555 ...) are no valid number to phonenumbers: the
    chat is still keyed by the phone's hash, never the digits, and `forget --phone` finds it."""
    from webhook_app import create_app

    monkeypatch.setenv("LEADRELAY_API_TOKEN", TOKEN)
    client = create_app().test_client()
    chat = _now("whatsapp", "messages_text__ad_referral.json").replace(b"16505551234", b"15550101234")
    assert post_signed(client, "whatsapp", chat, env).get_json()["accepted"] == 1
    assert "5550101234" not in str(redis_conn.keys("*"))
    assert all(b"5550101234" not in (redis_conn.get(k) or b"") for k in redis_conn.scan_iter("leadrelay:chat*"))
    forgot = privacy_api(client, "forget", TOKEN, work, phone="+1 555 010 1234")
    assert forgot.status_code == 200 and forgot.get_json()["removed"].get("chat") == 1, forgot.get_json()
    assert list(redis_conn.scan_iter("leadrelay:chat:*")) == []
    again = post_signed(client, "whatsapp", chat, env).get_json()
    assert again["accepted"] == 0 and again["skipped"][0]["reason"] == "suppressed"
    assert leadrelay("forget", "--phone", "1-555-010-1234", "--json").returncode == 0


def test_forgetting_a_phone_after_its_chats_stage_went_leaves_no_claim_or_ledger_entry(
    env, monkeypatch, graph, work, redis_conn
):
    from webhook_app import create_app
    from workers.identity import phones

    monkeypatch.setenv("LEADRELAY_API_TOKEN", TOKEN)
    client = create_app().test_client()
    post_signed(client, "whatsapp", _now("whatsapp", "messages_text__ad_referral.json"), env)
    assert _stages(client, {"phone": PHONE, "stage": "QualifiedLead"})["results"][0]["status"] == "accepted"
    work()
    assert _chats(graph)
    ph = phones.key_hash(PHONE)
    forgot = privacy_api(client, "forget", TOKEN, work, phone=PHONE)
    assert forgot.status_code == 200, forgot.get_json()
    left = [
        key.decode()
        for key in redis_conn.scan_iter(match="leadrelay:*", count=1000)
        if key != b"leadrelay:suppressed"
        and (ph in key.decode() or ph[:32] in key.decode() or ph.encode() in (_raw(redis_conn, key) or b""))
    ]
    assert left == []


def _raw(redis_conn, key) -> bytes:
    kind = redis_conn.type(key).decode()
    if kind == "string":
        return redis_conn.get(key)
    if kind == "list":
        return b" ".join(redis_conn.lrange(key, 0, -1))
    if kind == "hash":
        return b" ".join(k + b" " + v for k, v in redis_conn.hgetall(key).items())
    return b""


def test_a_whatsapp_user_known_by_a_username_alone_gets_its_stage(env, monkeypatch, graph, work):
    """No phone shared: the chat is kept by the business-scoped user id, and a stage naming it
    (`whatsapp:<WABA>:<id>`, as docs/whatsapp.md says) goes back with the ad's click."""
    from webhook_app import create_app

    monkeypatch.setenv("LEADRELAY_API_TOKEN", TOKEN)
    client = create_app().test_client()
    assert (
        post_signed(client, "whatsapp", _now("whatsapp", "messages_image__username_no_phone.json"), env).status_code
        == 200
    )
    answer = _stages(client, {"conversation": f"whatsapp:{WABA}:US.13491208655302741918", "stage": "QualifiedLead"})
    assert answer["accepted"] == 1, answer
    work()
    [event] = _chats(graph)
    assert event["user_data"]["ctwa_clid"].startswith("AfhQ7Gx9vC2Lq")
