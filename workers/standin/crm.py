"""The CRM side of the stand-in (server.py): HubSpot's and Pipedrive's read APIs, as they
answer the reads leadrelay makes of them, over the same loopback server.

    POST /crm/v3/objects/deals/batch/read        {"inputs": [{"id"}], "properties"}
    POST /crm/v3/objects/contacts/batch/read
    POST /crm/v4/associations/deals/contacts/batch/read
    GET  /api/v2/persons?ids=1,2                 (x-api-token header)
    POST /_standin/crm {"email", "phone", "amount", "currency"}: a HubSpot deal with its
         contact and a Pipedrive person with the same person, for `leadrelay send-test`

A token in `crm_revoked` is refused with 401, as the CRMs refuse a revoked token.
Scripted answers (`then(..., on="crm")`) meet these calls as they meet Graph's.
"""

from __future__ import annotations

import itertools

_IDS = itertools.count(51000001)
# One answer for the four pipeline listings: each reader takes the field it knows.
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
    "data": [
        {"id": 1, "name": "Sales pipeline"},
        {"id": 2, "name": "Qualified", "pipeline_id": 1},
        {"id": 3, "name": "Demo booked", "pipeline_id": 1},
    ],
}


class CrmStandin:
    def crm_init(self) -> None:
        self.hubspot_deals: dict[str, dict] = {}  # deal id -> properties
        self.hubspot_contacts: dict[str, dict] = {}  # contact id -> properties
        self.deal_contacts: dict[str, list[str]] = {}  # deal id -> its contacts, in HubSpot's order
        self.pipedrive_persons: dict[str, dict] = {}  # person id -> the person as API v2 answers it
        self.crm_revoked: set[str] = set()
        self.crm_latency = 0.0  # seconds before each CRM answer (bench/crmstages.py: a CRM at 100 ms)

    def add_crm_person(
        self,
        email: str,
        phone: str | None = None,
        amount: float = 1200,
        currency: str = "EUR",
        country: str | None = None,
        others: list[str] = (),
    ) -> dict:
        """A HubSpot deal whose contact is this person (after contacts with the `others`
        emails, when given: a deal's buyer and decision makers), and the same person in
        Pipedrive: {"deal_id", "contact_id", "person_id"}."""
        deal, contact, person = (str(next(_IDS)) for _ in range(3))
        contacts = []
        for other in others:
            contacts.append(str(next(_IDS)))
            self.hubspot_contacts[contacts[-1]] = {
                "email": other,
                "phone": "",
                "firstname": "Other",
                "lastname": "Contact",
            }
        self.hubspot_contacts[contact] = {
            "email": email,
            "phone": phone or "",
            "firstname": "Sandbox",
            "lastname": "Lead",
            **({"country": country} if country else {}),
        }
        self.hubspot_deals[deal] = {
            "amount": str(amount),
            "deal_currency_code": currency,
            "dealstage": "qualifiedtobuy",
        }
        self.deal_contacts[deal] = [*contacts, contact]
        self.pipedrive_persons[person] = {
            "id": int(person),
            "name": "Sandbox Lead",
            "first_name": "Sandbox",
            "last_name": "Lead",
            "emails": [{"value": email, "primary": True, "label": "work"}] if email else [],
            "phones": [{"value": phone, "primary": True, "label": "mobile"}] if phone else [],
        }
        return {"deal_id": deal, "contact_id": contact, "person_id": person}

    @staticmethod
    def crm_kind(method: str, parts: list[str]) -> str | None:
        """The kind of a CRM call (None: not a CRM path)."""
        if parts[:2] == ["_standin", "crm"]:
            return "standin_crm"
        if parts[:1] == ["crm"] and parts[-2:] == ["batch", "read"]:
            if parts[2] == "associations":
                return "association_read"
            return {"deals": "deal_read", "contacts": "contact_read"}.get(parts[3], "other")
        if parts[:3] == ["api", "v2", "persons"]:
            return "person_read"
        if parts[:3] in (["crm", "v3", "pipelines"], ["crm", "v3", "properties"], ["api", "v2", "stages"]):
            return "pipelines"
        if parts[:3] == ["api", "v2", "pipelines"]:
            return "pipelines"
        return None

    def crm_answer(self, kind: str, headers, query: dict, body: dict | None) -> tuple[int, dict]:
        token = headers.get("x-api-token") or headers.get("Authorization", "").removeprefix("Bearer ")
        if kind == "standin_crm":
            return 200, self.add_crm_person(**(body or {}))
        if token in self.crm_revoked:
            return 401, {"status": "error", "message": "Authentication credentials missing or incorrect"}
        if kind == "pipelines":
            return 200, PIPELINES
        if kind == "person_read":
            ids = ",".join(query.get("ids", [])).split(",")
            return 200, {
                "success": True,
                "data": [self.pipedrive_persons[i] for i in ids if i in self.pipedrive_persons],
            }
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
        store = self.hubspot_deals if kind == "deal_read" else self.hubspot_contacts
        wanted = (body or {}).get("properties") or []
        results = [
            {"id": i, "properties": {k: v for k, v in store[i].items() if k in wanted}} for i in ids if i in store
        ]
        return 207 if len(results) < len(ids) else 200, {"status": "COMPLETE", "results": results}
