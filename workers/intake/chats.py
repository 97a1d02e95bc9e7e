"""Chats an ad started: kept when their first message arrives (inside the webhook request,
so an acknowledged chat is never lost), found again when a stage for the person comes.

Notes: docs/internals/intake.md
"""

from __future__ import annotations

import json

import redis

from workers.common import counters
from workers.config.routing import Routes
from workers.events import chatevents, conversions, suppression
from workers.events.chatevents import chat_key as key
from workers.events.chatevents import lookup_key
from workers.identity import phones
from workers.intake import stagereads
from workers.intake.stagescope import Rejected, Scope, Unsendable

KEEP_CLICKS = 20


def record(connection: redis.Redis, chats: list[dict], routes: Routes, region: str, retention_days: int) -> dict:
    """Keep each ad-started chat and its click; counts, and those no route takes."""
    counts, unrouted, people = {"accepted": 0, "duplicates": 0}, [], []
    for chat in chats:
        route, reason = routes.chat(chat["account"])
        if route is None:
            unrouted.append({"reason": reason, "channel": chat["channel"], "account": chat["account"]})
            continue
        hashed = stagereads.given({"phone": "+" + chat["phone"]}, region).get("ph", []) if chat.get("phone") else []
        keyed = phones.key_hash(chat.get("phone") or "")  # hashed even when phonenumbers rejects it
        user = chat["bsuid"] or (keyed if chat["channel"] == "whatsapp" and keyed else chat["user"])
        people.append((chat, route, hashed, user, sorted({*hashed, *([keyed] if keyed else [])})))
    refs = suppression.which(connection, [suppression.fields(r["dataset"], {"ph": k}) for _, r, _, _, k in people])
    forgotten = [{"reason": "suppressed", "ref": ref} for ref in refs if ref]
    for (chat, route, hashed, user, _), ref in zip(people, refs):
        if ref:  # a forgotten person's new chat is not kept (suppression.py)
            continue
        new = _keep(connection, key(chat["channel"], chat["account"], user), chat, user, route, hashed, retention_days)
        counts["accepted" if new else "duplicates"] += 1
        if new:
            counters.count(connection, counters.CHATS, chat["channel"])
    return {**counts, "unrouted": unrouted, "forgotten": forgotten}


def _keep(connection, chat_key: str, chat: dict, user: str, route: dict, hashed: list, days: int) -> bool:
    """Add the click to the chat (made if new), atomically; whether anything was new."""
    click = {"click": chat["click"], "ad_id": chat["ad_id"], "time": chat["time"]}
    ttl = days * 86400

    def change(pipe) -> bool:
        raw = pipe.get(chat_key)
        kept = json.loads(raw) if raw else None
        clicks = (kept or {}).get("clicks", [])
        new = kept is None or click not in clicks
        record = {
            "channel": chat["channel"],
            "account": chat["account"],
            "user": user,
            "dataset": route["dataset"],
            "dataset_id": route["dataset_id"],
            "ph": sorted(set((kept or {}).get("ph", [])) | set(hashed)),
            "clicks": (clicks + ([click] if click not in clicks else []))[-KEEP_CLICKS:],
            "created_time": (kept or {}).get("created_time") or chat["time"],
        }
        pipe.multi()
        pipe.set(chat_key, json.dumps(record, sort_keys=True), ex=ttl)
        for value in record["ph"]:
            pipe.set(lookup_key(route["dataset"], value), chat_key, ex=ttl)
        return new

    return connection.transaction(change, chat_key, value_from_callable=True)


def find(connection, item: dict, given: dict, scope: Scope) -> dict | None:
    """The chat a stage change is about, in the caller's datasets: named by `conversation`
    (`<channel>:<account>:<user>`, as `dry-run` shows it in the event id), or found by the
    person's hashed phone; None when there is none."""
    wanted = []
    if isinstance(item.get("conversation"), str) and item["conversation"].count(":") == 2:
        wanted.append(key(*item["conversation"].split(":")))
    for dataset in scope.datasets:
        for hashed in given.get("ph", []):
            found = connection.get(lookup_key(dataset, hashed))
            if found:
                wanted.append(found.decode() if isinstance(found, bytes) else found)
    for chat_key in wanted:
        raw = connection.get(chat_key)
        chat = json.loads(raw) if raw else None
        if chat and chat["dataset"] in scope.datasets:
            return chat
    return None


def stage(chat: dict, event_name: str, occurred: int, now: float, value, currency) -> dict:
    """A checked business-messaging stage for the chat, as stageitems.check answers.

    Raises:
        Unsendable: `no_messaging_event_name`, a stage Meta takes no messaging event for.
        Rejected: `before_chat`, the stage happened before the chat began.
    """
    name = chatevents.name_for(event_name)
    if name is None:
        raise Unsendable(
            "no_messaging_event_name",
            f"{event_name} has no business-messaging event (Meta takes {', '.join(sorted(chatevents.ALLOWED))})",
        )
    if chat.get("created_time") and occurred < chat["created_time"]:
        raise Rejected("before_chat", "occurred_at is before the chat began")
    last = chat["clicks"][-1] if chat["clicks"] else {}
    user_data = chatevents.user_data({**chat, "click": last.get("click")})
    if chat.get("ph"):  # its phone's hash too, where the channel gave one (Meta's "optional hashed em/ph")
        user_data["ph"] = chat["ph"]
    thread = f"{chat['channel']}:{chat['account']}:{chat['user']}"
    return {
        "source": "chat",
        "key": thread,
        "channel": chat["channel"],
        "event_name": name,
        "event_id": conversions.event_id("chat", thread, name),
        "event_time": min(occurred, int(now)),
        # Its phone's hash too, where the channel gave one (Meta's "optional hashed em/ph").
        "user_data": {
            **chatevents.user_data({**chat, "click": last.get("click")}),
            **({"ph": chat["ph"]} if chat.get("ph") else {}),
        },
        "value": value,
        "currency": currency,
        "lead_event_source": None,
        "route": {"dataset": chat["dataset"], "dataset_id": chat["dataset_id"], "page_id": None},
        "lead_first": None,
        "lead_time": chat.get("created_time"),
        "stage": event_name,
        "processing": None,
    }
