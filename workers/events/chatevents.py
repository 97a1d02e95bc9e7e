"""Business-messaging events: the funnel after a chat an ad started, as Meta's Conversions API
for Business Messaging takes it (`action_source: business_messaging`, a `messaging_channel`,
the channel's own ids, unhashed), never the Conversion Leads shape.

Notes: docs/internals/events.md
"""

from __future__ import annotations

from workers.common.queues import redis_key
from workers.events import conversions

ACTION_SOURCE = "business_messaging"
# The names Meta's guide says business messaging takes ("now supports the following types
# of events"); any other (Schedule, custom names) is refused with 2804066, so never sent.
ALLOWED = frozenset(
    {
        "Purchase",
        "LeadSubmitted",
        "InitiateCheckout",
        "AddToCart",
        "ViewContent",
        "OrderCreated",
        "OrderShipped",
        "OrderDelivered",
        "OrderCanceled",
        "OrderReturned",
        "CartAbandoned",
        "QualifiedLead",
        "RatingProvided",
        "ReviewProvided",
    }
)
# Our stage names that have another name here (the guide's `Lead` is `LeadSubmitted`).
TRANSLATED = {conversions.LEAD: "LeadSubmitted"}


def chat_key(channel: str, account: str, user: str) -> str:
    """Where a chat an ad started is kept (intake/chats.py)."""
    return redis_key("chat", channel, account, user)


def lookup_key(dataset: str, hashed_phone: str) -> str:
    """A chat found by the phone a CRM knows, in one dataset."""
    return redis_key("chat-by", dataset, "ph", hashed_phone)


def name_for(event_name: str) -> str | None:
    """The business-messaging name of one of our stages; None when Meta takes none."""
    name = TRANSLATED.get(event_name, event_name)
    return name if name in ALLOWED else None


def user_data(chat: dict) -> dict:
    """What Meta matches a chat by, per channel (never hashed: Meta's parameters page)."""
    channel, account, click, user = chat["channel"], chat["account"], chat.get("click"), chat["user"]
    if channel == "whatsapp":
        return {"whatsapp_business_account_id": account, "ctwa_clid": click}
    if channel == "messenger":
        return {"page_id": account, "page_scoped_user_id": user}
    # Instagram: the guide's sample key (its parameter table names ig_account_id; unconfirmed which).
    return {"instagram_business_account_id": account, "ig_sid": user}


def build(item: dict) -> dict:
    """The event for a checked chat stage (intake/chats.py made it).

    Raises:
        JobError: `expired`, past Meta's 7 days.
    """
    event = conversions.build(
        name=item["event_name"],
        time=conversions.event_time(item["event_time"]),
        event_id=item["event_id"],
        user_data=item["user_data"],
        lead_event_source=None,
        action_source=ACTION_SOURCE,
        value=item.get("value"),
        currency=item.get("currency"),
    )
    event["messaging_channel"] = item["channel"]
    return event
