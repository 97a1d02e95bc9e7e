"""The sandbox's `leadrelay send-test whatsapp|messenger|instagram`.

Notes: docs/internals/vendors.md
"""

from __future__ import annotations

import json
import random
import time

import requests

from workers.run.sendtest import answer_of, post, signed
from workers.vendors.hubspot import samples as hubspot
from workers.vendors.messaging import webhook

WABA, PAGE, IG = "102290129340398", "109876543210987", "17841405793187218"


def send(settings, web: str, name: str, leadgen_id: str | None = None) -> dict:
    digits = "1650555" + f"{random.randrange(10**4):04d}"  # a new person each time
    user = str(random.randrange(10**15, 10**16))
    now = int(time.time())
    body = json.dumps(_chat(name, digits, user, now)).encode()
    url = f"{web}/webhooks/{name}"
    answers = [answer_of(post(url, body, signed(name, settings, body, url))) for _ in range(2)]
    account = {webhook.WHATSAPP: WABA, webhook.MESSENGER: PAGE, webhook.INSTAGRAM: IG}[name]
    who = {"phone": "+" + digits} if name == "whatsapp" else {"conversation": f"{name}:{account}:{user}"}
    stages: list[dict] = [
        {**who, "stage": "QualifiedLead", "occurred_at": now + 1},
        {**who, "stage": "Purchase", "occurred_at": now + 2, "value": 240, "currency": "EUR"},
    ]
    staged = requests.post(
        f"{web}/api/v1/stage-events", json=stages, timeout=10, headers={"Authorization": f"Bearer {settings.api_token}"}
    )
    result = {"source": name, "status": staged.status_code, "chat": answers, "stages": answer_of(staged)}
    if name == "whatsapp":  # the same person's deal, won in HubSpot: a Purchase already sent, so a duplicate
        made = requests.post(
            f"{settings.graph_url}/_standin/crm",
            json={"email": f"chat-{digits}@example.com", "phone": "+" + digits},
            timeout=10,
        ).json()
        deal = json.dumps([hubspot._event(made["deal_id"], "closedwon", now + 3, 0)]).encode()
        hub = f"{web}/webhooks/hubspot"
        result["hubspot"] = answer_of(post(hub, deal, signed("hubspot", settings, deal, hub)))
    ids = " (ctwa_clid and the WABA id)" if name == "whatsapp" else ""
    result["next"] = (
        "`leadrelay dry-run` shows QualifiedLead and Purchase once each, action_source business_messaging, "
        f"messaging_channel {name}, with the chat's ids{ids}"
    )
    return result


CLICK = "ARAkLkA8rmlFeiCktEJQ-QTwRiyYHAFDLMNDBH0CD3qpjd0HR4irJ6LEkR7JwFF4XvnO2E4Nx0-eM-GABDLOPaOdRMv"


def _chat(name: str, digits: str, user: str, now: int) -> dict:
    """The first message of an ad-started chat, as the channel's webhook sends it."""
    if name == "whatsapp":
        referral: dict = {"source_url": "https://fb.me/sandbox", "source_id": "120226305854810726", "source_type": "ad"}
        message: dict = {"from": digits, "id": f"wamid.sandbox{user}", "timestamp": str(now), "type": "text"}
        message |= {"text": {"body": "Hi!"}, "referral": {**referral, "ctwa_clid": CLICK}}
        value: dict = {"messaging_product": "whatsapp", "metadata": {"phone_number_id": "106540352242922"}}
        value |= {"contacts": [{"profile": {"name": "Sam Sample"}, "wa_id": digits}], "messages": [message]}
        entry: dict = {"id": WABA, "changes": [{"field": "messages", "value": value}]}
        return {"object": "whatsapp_business_account", "entry": [entry]}
    account = PAGE if name == "messenger" else IG
    referral = {"ref": "sandbox", "ad_id": "120226305854810888", "source": "ADS", "type": "OPEN_THREAD"}
    event: dict = {"sender": {"id": user}, "recipient": {"id": account}, "timestamp": now * 1000}
    if name == "messenger":  # a new thread: the referral rides on the Get Started postback
        event["postback"] = {"title": "Get Started", "payload": "GET_STARTED", "referral": referral}
    else:
        event["message"] = {"mid": f"sandbox{user}", "text": "Hi!", "referral": referral}
    entry = {"id": account, "time": now * 1000, "messaging": [event]}
    return {"object": "page" if name == "messenger" else "instagram", "entry": [entry]}
