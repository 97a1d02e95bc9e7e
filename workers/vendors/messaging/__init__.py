"""Meta's business messaging (WhatsApp, Messenger, Instagram Direct): chats started from
an ad, and the funnel after them sent back as business-messaging events. Imports nothing:
each role module is imported where its layer needs it (workers/vendors/__init__.py)."""
