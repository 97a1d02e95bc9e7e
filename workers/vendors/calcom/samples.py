"""The sandbox's `leadrelay send-test calcom`: the sample lead books a meeting, as Cal.com sends it."""

from __future__ import annotations

from workers.run import crmsamples


def send(settings, web: str, name: str, leadgen_id: str) -> dict:
    return crmsamples.booking(settings, web, name, leadgen_id, sample_body)


def sample_body(email: str, when: str, key: str) -> dict:
    """The smallest `BOOKING_CREATED` Cal.com sends, for the sandbox's `send-test calcom`."""
    return {
        "triggerEvent": "BOOKING_CREATED",
        "createdAt": when,
        "payload": {"uid": key, "attendees": [{"email": email, "name": "Sam Sample"}]},
    }
