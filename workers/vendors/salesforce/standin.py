"""Salesforce's REST API as the stand-in answers the reads leadrelay makes of it (the
sandbox's and the tests'; standin/crm.py serves it on the Graph stand-in's loopback server):

Notes: docs/internals/vendors.md
"""

from __future__ import annotations

import itertools
import re

STAGES = {
    "OpportunityStage": [
        {"ApiName": "Qualification", "MasterLabel": "Qualification"},
        {"ApiName": "Proposal/Price Quote", "MasterLabel": "Proposal/Price Quote"},
        {"ApiName": "Closed Won", "MasterLabel": "Closed Won"},
    ],
    "LeadStatus": [
        {"ApiName": "Working - Contacted", "MasterLabel": "Working - Contacted"},
        {"ApiName": "Closed - Converted", "MasterLabel": "Closed - Converted"},
    ],
}
_IDS = re.compile(r"'([A-Za-z0-9]{15,18})'")


class SalesforceStandin:
    def __init__(self) -> None:
        self.contacts: dict[str, dict] = {}  # opportunity id (15) -> its primary Contact
        self.issued = itertools.count(1)

    def add(self, ids, email: str, phone, amount, currency, country, others) -> dict:
        """The same person in Salesforce, an opportunity's primary contact: {"opportunity_id"}."""
        opportunity = f"006{next(ids):012d}"  # 15 characters, as Salesforce ids
        self.contacts[opportunity] = {"Email": email, "Phone": phone, "FirstName": "Sandbox", "LastName": "Lead"}
        return {"opportunity_id": opportunity}

    @staticmethod
    def kind(method: str, parts: list[str]) -> str | None:
        if parts == ["services", "oauth2", "token"]:
            return "oauth_token"
        if parts[:2] == ["services", "data"] and parts[3:4] == ["query"]:
            return "soql_query"
        if parts[:2] == ["services", "data"] and parts[3:4] == ["limits"]:
            return "pipelines"
        return None

    def answer(self, kind: str, query: dict, body: dict | None, parts: list[str] | None = None) -> tuple[int, dict]:
        if kind == "oauth_token":  # the client credentials flow: any id and secret but "wrong"
            form = body or {}
            if form.get("client_secret") in (None, "wrong"):
                return 400, {"error": "invalid_client", "error_description": "invalid client credentials"}
            return 200, {"access_token": f"00D!standin{next(self.issued)}", "token_type": "Bearer", "instance_url": ""}
        soql = " ".join(query.get("q", []))
        for table, rows in STAGES.items():
            if f"FROM {table}" in soql:
                return 200, {"totalSize": len(rows), "done": True, "records": rows}
        wanted = [i[:15] for i in _IDS.findall(soql)]
        found: list[dict] = []
        if "FROM OpportunityContactRole" in soql:
            found = [{"OpportunityId": i, "Contact": self.contacts[i]} for i in wanted if i in self.contacts]
        return 200, {"totalSize": len(found), "done": True, "records": found}


STANDIN = SalesforceStandin  # found by standin/crm.py
