"""The messaging webhooks of a Meta app: WhatsApp Cloud API `messages` (object
`whatsapp_business_account`), Messenger (object `page`, `messaging` events) and Instagram
(object `instagram`).

Notes: docs/internals/vendors.md
"""

from __future__ import annotations

import re

from workers.common import jsonbody
from workers.common.refusals import MalformedBody
from workers.common.times import unix_time
from workers.sources.ids import graph_id, mapping
from workers.sources.meta import SIGNATURE_HEADER, sign, verify  # noqa: F401 (the source's surface)

NAME = "messaging"  # the module's; the registry names a source after each channel below
# Meta's `messaging_channel` values; the registry names a source after each.
WHATSAPP = "whatsapp"
MESSENGER = "messenger"
INSTAGRAM = "instagram"
OBJECTS = {"whatsapp_business_account": WHATSAPP, "page": MESSENGER, "instagram": INSTAGRAM}
_CLICK = re.compile(r"[A-Za-z0-9_.-]{1,512}")  # a ctwa_clid: opaque, plain (it becomes part of a key)
_USER = re.compile(r"[A-Za-z0-9_.-]{1,64}")  # a wa_id, BSUID, PSID or IGSID


def parse(body: bytes) -> dict:
    """Every ad-started conversation in a notification: `{"object", "leads": [chat], "skipped"}`.

    A chat is `{"channel", "account", "user", "click", "ad_id", "time", "message_id", "phone",
    "bsuid"}` (`click` the ctwa_clid, WhatsApp only; `phone` the wa_id digits, WhatsApp only).

    Raises:
        MalformedBody: not JSON, or not an object with an `entry` list.
    """
    doc = jsonbody.load(body)
    if not isinstance(doc, dict) or not isinstance(doc.get("entry"), list):
        raise MalformedBody("expected an object with an `entry` list", reason="unexpected_shape")
    named = doc.get("object")
    kind = named if isinstance(named, str) else None
    channel = OBJECTS.get(kind or "")
    if channel is None:
        return {"object": kind, "leads": [], "skipped": [{"reason": "not_messaging"}]}
    leads: list[dict] = []
    skipped: list[dict] = []
    for entry in doc["entry"]:
        if not isinstance(entry, dict):
            skipped.append({"reason": "unexpected_entry"})
            continue
        found = _whatsapp(entry) if channel == WHATSAPP else _messaging(entry, channel)
        for item in found:
            (leads if "reason" not in item else skipped).append(item)
    return {"object": kind, "leads": leads, "skipped": skipped}


def lead_key(item: dict) -> str:
    """The conversation: channel, business account and the person there."""
    return f"{item['channel']}:{item['account']}:{item['user']}"


def _whatsapp(entry: dict) -> list[dict]:
    waba = graph_id(entry.get("id"))
    out: list[dict] = []
    for change in _list(entry.get("changes")):
        value = change.get("value") if isinstance(change, dict) else None
        # `standby`: while Meta's business agent handles the conversation, the messages come
        # here instead, in the same shape (the ad's click included).
        if not isinstance(value, dict) or change.get("field") not in ("messages", "standby"):
            out.append({"reason": "not_messages"})
            continue
        contacts = [c for c in _list(value.get("contacts")) if isinstance(c, dict)]
        for message in _list(value.get("messages")):
            if isinstance(message, dict):
                out.append(_whatsapp_message(waba, message, contacts))
        if value.get("statuses"):
            out.append({"reason": "status_update"})
    return out


def _whatsapp_message(waba: str | None, message: dict, contacts: list[dict]) -> dict:
    """The person is their business-scoped user id (`from_user_id`, `contacts[].user_id`),
    else their phone (`from`): a user with a username may share no phone at all.
    https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids/"""
    referral = message.get("referral")
    if not isinstance(referral, dict):
        return {"reason": "not_from_an_ad"}
    phone = str(message.get("from") or "")
    bsuid = _plain(_USER, message.get("from_user_id")) or _plain(_USER, message.get("user_id"))
    if bsuid is None:
        mine = [c for c in contacts if c.get("wa_id") == phone] if phone else contacts[:1] if len(contacts) == 1 else []
        bsuid = _plain(_USER, mine[0].get("user_id")) if mine else None
    user = bsuid or (phone if phone.isdigit() and 6 <= len(phone) <= 15 else None)
    if waba is None or user is None:
        return {"reason": "chat_without_ids"}
    click = _plain(_CLICK, referral.get("ctwa_clid"))
    if click is None:  # an ad in WhatsApp Status: ad-started, but nothing Meta can match
        return {"reason": "ad_without_click_id", "ad_id": graph_id(referral.get("source_id"))}
    return {
        "channel": WHATSAPP,
        "account": waba,
        "user": user,
        "click": click,
        "ad_id": graph_id(referral.get("source_id")),
        "time": unix_time(str(message.get("timestamp") or "")),
        "message_id": _plain(_CLICK, message.get("id")),
        "phone": phone if phone.isdigit() else None,
        "bsuid": bsuid,
    }


def _messaging(entry: dict, channel: str) -> list[dict]:
    """Messenger and Instagram: a referral on a postback (a new thread), on its own (a
    thread reopened from an ad) or on a message (Instagram's Click to Direct)."""
    out: list[dict] = []
    # `standby`: another app owns the thread; the ad's referral still comes, read the same way.
    for event in [*_list(entry.get("messaging")), *_list(entry.get("standby"))]:
        if not isinstance(event, dict):
            continue
        referral = _referral(event)
        sender = mapping(event.get("sender"))
        recipient = mapping(event.get("recipient"))
        if referral is None or str(referral.get("source", "")).upper() != "ADS":
            out.append({"reason": "not_from_an_ad"})
            continue
        account, user = graph_id(recipient.get("id")) or graph_id(entry.get("id")), _plain(_USER, sender.get("id"))
        if account is None or user is None:
            out.append({"reason": "chat_without_ids"})
            continue
        stamp = event.get("timestamp")
        out.append(
            {
                "channel": channel,
                "account": account,
                "user": user,
                "click": None,
                "ad_id": graph_id(referral.get("ad_id")),
                "time": unix_time(stamp // 1000) if isinstance(stamp, int) and not isinstance(stamp, bool) else None,
                "message_id": None,
                "phone": None,
                "bsuid": None,
            }
        )
    return out


def _referral(event: dict) -> dict | None:
    for holder in (event, event.get("postback"), event.get("message")):
        if isinstance(holder, dict) and isinstance(holder.get("referral"), dict):
            return holder["referral"]
    return None


def _list(value) -> list:
    return value if isinstance(value, list) else []


def _plain(pattern: re.Pattern, value) -> str | None:
    text = value.strip() if isinstance(value, str) else None
    return text if text and pattern.fullmatch(text) else None
