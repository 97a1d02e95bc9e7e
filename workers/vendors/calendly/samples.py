"""The sandbox's `leadrelay send-test calendly`: the sample lead books a meeting, as Calendly sends it."""

from __future__ import annotations

from workers.run import crmsamples


def send(settings, web: str, name: str, leadgen_id: str) -> dict:
    return crmsamples.booking(settings, web, name, leadgen_id, sample_body)


def sample_body(email: str, when: str, key: str) -> dict:
    """The smallest `invitee.created` Calendly sends, for the sandbox's `send-test calendly`."""
    uri = f"https://api.calendly.com/scheduled_events/SANDBOX/invitees/{key}"
    return {
        "event": "invitee.created",
        "created_at": when,
        "payload": {"email": email, "name": "Sam Sample", "created_at": when, "uri": uri},
    }
