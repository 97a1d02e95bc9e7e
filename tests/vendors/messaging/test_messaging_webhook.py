"""The messaging webhooks parsed from Meta's documented examples (tests/vendors/messaging/fixtures/: whatsapp,
messenger, instagram): an ad-started chat keeps its ids and click, nothing of the message;
a chat no ad started, a status ad and a status update are skipped with their reason."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from helpers import fixture_bytes
from workers.vendors.messaging import webhook


def test_a_click_to_whatsapp_chat_keeps_the_waba_the_click_and_the_ad():
    [chat] = webhook.parse(fixture_bytes("whatsapp", "messages_text__ad_referral.json"))["leads"]
    assert chat["channel"] == "whatsapp" and chat["account"] == "102290129340398"
    assert chat["click"].startswith("Afe4ie2ba13Mh1Tvnz15") and chat["ad_id"] == "120226305854810726"
    assert chat["phone"] == "16505551234" and chat["time"] == 1749416383
    assert "color" not in json.dumps(chat) and "Succulents" not in json.dumps(chat)  # no text is kept


def test_what_no_ad_started_or_cannot_be_matched_is_skipped_with_its_reason():
    reasons = {
        ("whatsapp", "messages_text__ignored.json"): "not_from_an_ad",
        ("whatsapp", "messages_status_ad__ignored.json"): "ad_without_click_id",
        ("messenger", "messages_text__ignored.json"): "not_from_an_ad",
        ("instagram", "messages_text__ignored.json"): "not_from_an_ad",
    }
    for (channel, name), reason in reasons.items():
        parsed = webhook.parse(fixture_bytes(channel, name))
        assert parsed["leads"] == [] and [s["reason"] for s in parsed["skipped"]] == [reason], name


def test_messenger_and_instagram_chats_keep_the_account_and_the_persons_id():
    for channel, name, account, user in (
        ("messenger", "messaging_postbacks__ad_referral.json", "109876543210987", "6783902176051234"),
        ("messenger", "messaging_referrals__ad_referral.json", "109876543210987", "6783902176051234"),
        ("instagram", "messages_text__ad_referral.json", "17841405793187218", "1254459154682919"),
    ):
        [chat] = webhook.parse(fixture_bytes(channel, name))["leads"]
        assert (chat["channel"], chat["account"], chat["user"], chat["click"]) == (channel, account, user, None)
        assert chat["ad_id"].startswith("1202263058548") and chat["time"] == 1749416383


def test_a_delivery_status_is_acknowledged_and_skipped():
    doc = {"object": "whatsapp_business_account", "entry": [{"id": "1", "changes": [{"field": "messages", "value": {
        "statuses": [{"id": "wamid.x", "status": "delivered", "timestamp": "1749416383", "recipient_id": "16505551234"}]
    }}]}]}  # fmt: skip
    assert [s["reason"] for s in webhook.parse(json.dumps(doc).encode())["skipped"]] == ["status_update"]


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=8),
        lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=8), c, max_size=3),
        max_leaves=20,
    )
)  # noqa: E501
def test_any_json_in_an_entry_is_parsed_or_skipped_never_a_crash(value):
    for kind in ("whatsapp_business_account", "page", "instagram"):
        changes = [value, {"field": "messages", "value": {"messages": value, "statuses": value}}]
        doc = {"object": kind, "entry": [value, {"id": "1", "changes": changes, "messaging": [value]}]}
        parsed = webhook.parse(json.dumps(doc).encode())
        assert all(chat["account"] and chat["user"] for chat in parsed["leads"])


def test_a_whatsapp_chat_is_known_by_its_business_scoped_user_id():
    """Meta sends the business-scoped user id in `messages[].from_user_id` and `contacts[].user_id`."""
    [chat] = webhook.parse(fixture_bytes("whatsapp", "messages_text__ad_referral_bsuid.json"))["leads"]
    assert (chat["user"], chat["bsuid"], chat["phone"]) == ("IS.1502576394655843", "IS.1502576394655843", "3546991234")
    assert webhook.lead_key(chat) == "whatsapp:102290129340398:IS.1502576394655843"


def test_a_whatsapp_user_who_shares_no_phone_is_kept_by_that_id():
    """A username and no phone: no `wa_id`, no `from`; the ad's click is kept all the same."""
    [chat] = webhook.parse(fixture_bytes("whatsapp", "messages_image__username_no_phone.json"))["leads"]
    assert (chat["user"], chat["phone"]) == ("US.13491208655302741918", None) and chat["click"]


def test_standby_deliveries_are_read_as_the_primary_s_would_be():
    [whatsapp] = webhook.parse(fixture_bytes("whatsapp", "standby_text__ad_referral.json"))["leads"]
    assert whatsapp["bsuid"] == "ES.7712001199887766" and whatsapp["click"]
    [messenger] = webhook.parse(fixture_bytes("messenger", "standby_postback__ad_referral.json"))["leads"]
    assert (messenger["user"], messenger["ad_id"]) == ("8812003355779911", "120210000000000104")
