"""HubSpot's CRM API as the stand-in answers the reads leadrelay makes of it (the sandbox's
and the tests'; standin/crm.py serves it on the Graph stand-in's loopback server):

Notes: docs/internals/vendors.md
"""

from __future__ import annotations

# The default sales pipeline and lifecycle stages, as HubSpot lists them.
PIPELINES = {
    "results": [
        {
            "id": "default",
            "label": "Sales Pipeline",
            "stages": [
                {"id": "appointmentscheduled", "label": "Appointment Scheduled"},
                {"id": "qualifiedtobuy", "label": "Qualified To Buy"},
                {"id": "closedwon", "label": "Closed Won"},
                {"id": "closedlost", "label": "Closed Lost"},
            ],
        }
    ],
    "options": [{"value": "lead", "label": "Lead"}, {"value": "marketingqualifiedlead", "label": "MQL"}],
}


class HubSpotStandin:
    def __init__(self) -> None:
        self.deals: dict[str, dict] = {}  # deal id -> properties
        self.contacts: dict[str, dict] = {}  # contact id -> properties
        self.deal_contacts: dict[str, list[str]] = {}  # deal (or lead) id -> its contacts, in HubSpot's order

    def add(self, ids, email: str, phone, amount, currency, country, others) -> dict:
        """A deal whose contact is this person, after contacts with the `others` emails (a
        deal's buyer and decision makers): {"deal_id", "contact_id"}."""
        deal, contact = str(next(ids)), str(next(ids))
        contacts = []
        for other in others:
            contacts.append(str(next(ids)))
            self.contacts[contacts[-1]] = {"email": other, "phone": "", "firstname": "Other", "lastname": "Contact"}
        self.contacts[contact] = {
            "email": email,
            "phone": phone or "",
            "firstname": "Sandbox",
            "lastname": "Lead",
            **({"country": country} if country else {}),
        }
        self.deals[deal] = {"amount": str(amount), "deal_currency_code": currency, "dealstage": "qualifiedtobuy"}
        self.deal_contacts[deal] = [*contacts, contact]
        return {"deal_id": deal, "contact_id": contact}

    @staticmethod
    def kind(method: str, parts: list[str]) -> str | None:
        if parts[:1] == ["crm"] and parts[-2:] == ["batch", "read"]:
            if parts[2] == "associations":
                return "association_read"
            return {"deals": "deal_read", "contacts": "contact_read"}.get(parts[3], "other")
        if parts[:3] in (["crm", "v3", "pipelines"], ["crm", "v3", "properties"]):
            return "pipelines"
        return None

    def answer(self, kind: str, query: dict, body: dict | None, parts: list[str] | None = None) -> tuple[int, dict]:
        if kind == "pipelines":
            return 200, PIPELINES
        ids = [str(i.get("id")) for i in (body or {}).get("inputs", [])]
        if kind == "association_read":
            # v4 batch read: every associated contact of each deal, in `to`
            # (https://developers.hubspot.com/docs/api-reference/crm-associations-v4/batch/post-crm-v4-associations-fromObjectType-toObjectType-batch-read)
            return 207 if any(i not in self.deal_contacts for i in ids) else 200, {
                "status": "COMPLETE",
                "results": [
                    {
                        "from": {"id": i},
                        "to": [
                            {"toObjectId": int(c), "associationTypes": [{"category": "HUBSPOT_DEFINED", "typeId": 3}]}
                            for c in self.deal_contacts[i]
                        ],
                    }
                    for i in ids
                    if i in self.deal_contacts
                ],
            }
        store = self.deals if kind == "deal_read" else self.contacts
        wanted = (body or {}).get("properties") or []
        results = [
            {"id": i, "properties": {k: v for k, v in store[i].items() if k in wanted}} for i in ids if i in store
        ]
        return 207 if len(results) < len(ids) else 200, {"status": "COMPLETE", "results": results}


STANDIN = HubSpotStandin  # found by standin/crm.py
