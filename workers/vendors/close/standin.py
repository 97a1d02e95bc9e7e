"""Close's API v1 as the stand-in answers the reads leadrelay makes of it (the sandbox's and
the tests'; standin/crm.py serves it on the Graph stand-in's loopback server):

Notes: docs/internals/vendors.md
"""

from __future__ import annotations

QUALIFIED = "stat_sandboxQualified0000000000000000000000000"
PIPELINE = "pipe_sandboxSales"
ACTIVE, WON, LOST = (f"stat_sandbox{name}".ljust(47, "0") for name in ("Active", "Won", "Lost"))
STATUSES: dict = {
    "data": [
        {"id": status, "label": label, "type": kind, "pipeline_id": PIPELINE}
        for status, label, kind in (
            (ACTIVE, "Active", "active"),
            (QUALIFIED, "Qualified", "active"),
            (WON, "Won", "won"),
            (LOST, "Lost", "lost"),
        )
    ],
    "has_more": False,
}


class CloseStandin:
    def __init__(self) -> None:
        self.contacts: dict[str, dict] = {}

    def add(self, ids, email: str, phone, amount, currency, country, others) -> dict:
        """The same person in Close: {"close_contact_id"}."""
        contact = f"cont_sandbox{next(ids)}"
        self.contacts[contact] = {
            "id": contact,
            "lead_id": f"lead_{contact[5:]}",
            "name": "Sandbox Lead",
            "emails": [{"type": "office", "email": email}] if email else [],
            "phones": [{"type": "mobile", "phone": phone}] if phone else [],
        }
        return {"close_contact_id": contact}

    @staticmethod
    def kind(method: str, parts: list[str]) -> str | None:
        if parts[:3] == ["api", "v1", "contact"] and len(parts) >= 4:
            return "close_contact"
        if parts[:4] == ["api", "v1", "status", "opportunity"]:
            return "pipelines"
        return None

    def answer(self, kind: str, query: dict, body: dict | None, parts: list[str] | None = None) -> tuple[int, dict]:
        if kind == "pipelines":
            return 200, STATUSES
        contact = self.contacts.get((parts or [""] * 4)[3])
        return (200, contact) if contact else (404, {"error": "Empty query: Contact matching query does not exist."})


STANDIN = CloseStandin  # found by standin/crm.py
