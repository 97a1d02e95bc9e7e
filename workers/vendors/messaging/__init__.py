"""Meta's business messaging (WhatsApp, Messenger, Instagram Direct): chats started from an ad,
and the funnel after them sent back as business-messaging events.

Notes: docs/internals/vendors.md
"""
