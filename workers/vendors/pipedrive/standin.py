"""Pipedrive's API v2 as the stand-in answers the reads leadrelay makes of it (the sandbox's
and the tests'; standin/crm.py serves it on the Graph stand-in's loopback server):

Notes: docs/internals/vendors.md
"""

from __future__ import annotations

# One pipeline and its stages, each list as Pipedrive's own endpoint answers it (`data`):
# GET /api/v2/pipelines and GET /api/v2/stages.
PIPELINES = {"data": [{"id": 1, "name": "Sales pipeline"}]}
STAGES = {
    "data": [
        {"id": 2, "name": "Qualified", "pipeline_id": 1},
        {"id": 3, "name": "Demo booked", "pipeline_id": 1},
    ],
}


class PipedriveStandin:
    def __init__(self) -> None:
        self.persons: dict[str, dict] = {}  # person id -> the person as API v2 answers it

    def add(self, ids, email: str, phone, amount, currency, country, others) -> dict:
        """The same person in Pipedrive: {"person_id"}."""
        person = str(next(ids))
        self.persons[person] = {
            "id": int(person),
            "name": "Sandbox Lead",
            "first_name": "Sandbox",
            "last_name": "Lead",
            "emails": [{"value": email, "primary": True, "label": "work"}] if email else [],
            "phones": [{"value": phone, "primary": True, "label": "mobile"}] if phone else [],
        }
        return {"person_id": person}

    @staticmethod
    def kind(method: str, parts: list[str]) -> str | None:
        if parts[:3] == ["api", "v2", "persons"]:
            return "person_read"
        if parts[:3] in (["api", "v2", "stages"], ["api", "v2", "pipelines"]):
            return "pipelines"
        return None

    def answer(self, kind: str, query: dict, body: dict | None, parts: list[str] | None = None) -> tuple[int, dict]:
        if kind == "pipelines":
            return 200, STAGES if (parts or [])[2:3] == ["stages"] else PIPELINES
        ids = ",".join(query.get("ids", [])).split(",")
        return 200, {"success": True, "data": [self.persons[i] for i in ids if i in self.persons]}


STANDIN = PipedriveStandin  # found by standin/crm.py
