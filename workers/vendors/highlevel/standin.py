"""HighLevel's API v2 as the stand-in answers the reads leadrelay makes of it (the sandbox's
and the tests'; standin/crm.py serves it on the Graph stand-in's loopback server):

Notes: docs/internals/vendors.md
"""

from __future__ import annotations

PIPELINES: dict = {
    "pipelines": [
        {
            "id": "VDm7RPYC2GLUvdpKmBfC",
            "name": "Sales pipeline",
            "stages": [
                {"id": "7915dedc-8f18-44d5-8bc3-77c04e994a10", "name": "Qualified"},
                {"id": "339a8fa4-8e24-4e7b-a7e8-1e1d2b0e5b55", "name": "Demo booked"},
            ],
        }
    ]
}


class HighLevelStandin:
    def __init__(self) -> None:
        self.contacts: dict[str, dict] = {}

    def add(self, ids, email: str, phone, amount, currency, country, others) -> dict:
        """The same person in HighLevel: {"highlevel_contact_id"}."""
        contact = f"hl{next(ids)}"
        self.contacts[contact] = {
            "id": contact,
            "firstName": "Sandbox",
            "lastName": "Lead",
            "email": email,
            "phone": phone,
            "country": country,
        }
        return {"highlevel_contact_id": contact}

    @staticmethod
    def kind(method: str, parts: list[str]) -> str | None:
        if parts[:1] == ["contacts"] and len(parts) == 2:
            return "highlevel_contact"
        if parts[:2] == ["opportunities", "pipelines"]:
            return "pipelines"
        return None

    def answer(self, kind: str, query: dict, body: dict | None, parts: list[str] | None = None) -> tuple[int, dict]:
        if kind == "pipelines":
            return 200, PIPELINES
        contact = self.contacts.get((parts or ["", ""])[1])
        return (200, {"contact": contact}) if contact else (400, {"statusCode": 400, "message": "Contact not found"})


STANDIN = HighLevelStandin  # found by standin/crm.py
