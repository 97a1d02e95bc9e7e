"""Chats an ad started: kept when their first message arrives (inside the webhook request,
so an acknowledged chat is never lost), found again when a stage for the person comes.

Notes: docs/internals/intake.md
"""

from __future__ import annotations

import json

import redis

from workers.common import counters
from workers.config.routing import Routes
from workers.events import chatevents, conversions, personindex, suppression
from workers.events.chatevents import chat_key as key
from workers.events.chatevents import lookup_key
from workers.identity import phones, userdata
from workers.intake.stagescope import Rejected, Scope, Unsendable

KEEP_CLICKS = 20


def record(connection: redis.Redis, chats: list[dict], routes: Routes, region: str, retention_days: int) -> dict:
    """Keep each ad-started chat and its click in one round trip (one script call; several
    chats, pipelined): counts, and those no route takes or whose person is forgotten."""
    counts, unrouted, people = {"accepted": 0, "duplicates": 0}, [], []
    for chat in chats:
        route, reason = routes.chat(chat["account"])
        if route is None:
            unrouted.append({"reason": reason, "channel": chat["channel"], "account": chat["account"]})
            continue
        keyed = phones.key_hash(chat.get("phone") or "")  # hashed even when phonenumbers rejects it
        hashed = _phone_hash(chat.get("phone")) if keyed else []
        user = chat["bsuid"] or (keyed if chat["channel"] == "whatsapp" and keyed else chat["user"])
        people.append((chat, route, hashed, user, sorted({*hashed, *([keyed] if keyed else [])})))
    calls = [
        (chat, route, hashed, user, suppression.fields(route["dataset"], {"ph": phones_of}))
        for chat, route, hashed, user, phones_of in people
    ]
    if len(calls) == 1:  # the usual delivery: one round trip (a pipeline first asks if the script is loaded)
        answers = [_keep(connection, *calls[0], retention_days)]
    else:
        with connection.pipeline(transaction=False) as pipe:
            for call in calls:
                _keep(pipe, *call, retention_days)
            answers = pipe.execute() if calls else []
    forgotten = []
    for kind, detail in answers:
        if kind == b"suppressed":  # a forgotten person's new chat is not kept (suppression.py)
            forgotten.append({"reason": "suppressed", "ref": json.loads(detail)["ref"]})
        else:
            counts["accepted" if detail else "duplicates"] += 1
    return {**counts, "unrouted": unrouted, "forgotten": forgotten}


def _phone_hash(digits: str | None) -> list[str]:
    """The phone's match key (`ph`): an international number valid for its country, hashed."""
    try:
        return [userdata.hash_value("ph", "+" + (digits or ""))]
    except userdata.Unusable:
        return []


def _keep(client, chat: dict, route: dict, hashed: list, user: str, fields: list[str], days: int):
    """The chat's script (_KEEP): its suppression checked, its click added, made if new."""
    static = {"account": chat["account"], "channel": chat["channel"], "dataset": route["dataset"]}
    static |= {"dataset_id": route["dataset_id"], "user": user}
    click = {"click": chat["click"], "ad_id": chat["ad_id"], "time": chat["time"]}
    return _KEEP(
        keys=[suppression.KEY, key(chat["channel"], chat["account"], user), counters.HASH],
        args=[
            days * 86400,
            lookup_key(route["dataset"], ""),
            json.dumps(static, sort_keys=True),
            json.dumps(click, sort_keys=True),
            json.dumps(chat["time"]),
            counters.field(counters.CHATS, chat["channel"]),
            KEEP_CLICKS,
            personindex.KEY + "h:",
            max(days * 86400, personindex.LIFE),
            len(fields),
            *fields,
            *hashed,
        ],
        client=client,
    )


# KEYS: the suppression hash, the chat, the metrics hash. ARGV: the ttl, the lookups' prefix,
# the chat's fixed fields (JSON), the click (JSON), the chat's time (JSON), the counter's
# field, the clicks kept, the person index's prefix for hashes and its life (the chat under
# its phone's hashes and a user that is one), how many suppression fields, those fields, the
# phone's match keys.
# A forgotten person's chat is not kept ({"suppressed", the forget's record}); else the chat
# is made or its click added, its lookups set, a new chat counted ({"kept", 1 if new}). The
# record is the JSON chats.find reads; its arrays are written out here (cjson writes an empty
# one as an object).
_KEEP = redis.Redis().register_script("""
local fixed = 10 + tonumber(ARGV[10])
for i = 11, fixed do
  local held = redis.call('HGET', KEYS[1], ARGV[i])
  if held then return {'suppressed', held} end
end
local raw = redis.call('GET', KEYS[2])
local kept = raw and cjson.decode(raw) or nil
local click = cjson.decode(ARGV[4])
local clicks, phones, created = {}, {}, ARGV[5]
if kept then
  if type(kept.clicks) == 'table' then clicks = kept.clicks end
  if type(kept.ph) == 'table' then for _, v in ipairs(kept.ph) do phones[v] = true end end
  if kept.created_time and kept.created_time ~= cjson.null and kept.created_time ~= 0 then
    created = cjson.encode(kept.created_time)
  end
end
local new = kept == nil
local known = false
for _, c in ipairs(clicks) do
  if c.click == click.click and c.ad_id == click.ad_id and c.time == click.time then known = true end
end
if not known then clicks[#clicks + 1] = click new = true end
while #clicks > tonumber(ARGV[7]) do table.remove(clicks, 1) end
for i = fixed + 1, #ARGV do phones[ARGV[i]] = true end
local ph = {}
for v in pairs(phones) do ph[#ph + 1] = v end
table.sort(ph)
local written = {}
for i, c in ipairs(clicks) do written[i] = cjson.encode(c) end
local quoted = {}
for i, v in ipairs(ph) do quoted[i] = cjson.encode(v) end
local record = string.sub(ARGV[3], 1, -2) .. ', "clicks": [' .. table.concat(written, ', ') .. '], "created_time": '
  .. created .. ', "ph": [' .. table.concat(quoted, ', ') .. ']}'
redis.call('SET', KEYS[2], record, 'EX', ARGV[1])
for _, v in ipairs(ph) do redis.call('SET', ARGV[2] .. v, KEYS[2], 'EX', ARGV[1]) end
local user = cjson.decode(ARGV[3]).user
if #user == 64 and string.match(user, '^%x+$') then ph[#ph + 1] = user end
for _, v in ipairs(ph) do
  local index = ARGV[8] .. string.sub(v, 1, 32)
  redis.call('SADD', index, 'c ' .. KEYS[2])
  if redis.call('TTL', index) < tonumber(ARGV[9]) then redis.call('EXPIRE', index, ARGV[9]) end
end
if new then redis.call('HINCRBY', KEYS[3], ARGV[6], 1) end
return {'kept', new and 1 or 0}
""")


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
