"""HubSpot's CRM API, read in batches: the deals (amount, currency), their associated
contacts, and the contacts (email, phones, name), with a private app's token (scopes
crm.objects.deals.read and crm.objects.contacts.read)."""

from __future__ import annotations

from workers.common.policy import INVALID, JobError
from workers.crmapi.http import CrmClient
from workers.sources.contract import PersonReadBack

BATCH_LIMIT = 100  # HubSpot's batch read takes up to 100 ids
DEAL_PROPERTIES = ["amount", "deal_currency_code", "dealstage", "pipeline"]
# `country` places a phone written in national form ("030 12345678" from Germany).
# `hs_additional_emails`: the addresses a contact holds besides `email`, `;`-separated (a
# merged contact keeps the other's there): https://knowledge.hubspot.com/records/merge-records
CONTACT_PROPERTIES = ["email", "hs_additional_emails", "phone", "mobilephone", "firstname", "lastname", "country"]


class HubSpot(CrmClient):
    SOURCE, NAME = "hubspot", "HubSpot"

    def read(self, items: list[dict]) -> dict[str, PersonReadBack | Exception]:
        """event key -> the person and the deal's value (or the error for that item).

        Raises:
            JobError, Paused: a call failed for every item of the batch.
        """
        out: dict[str, PersonReadBack | Exception] = {}
        for start in range(0, len(items), BATCH_LIMIT):
            out.update(self._read(items[start : start + BATCH_LIMIT]))
        return out

    def _read(self, items: list[dict]) -> dict[str, PersonReadBack | Exception]:
        deals = sorted({i["object_id"] for i in items if i["object"] == "deal"})
        leads = sorted({i["object_id"] for i in items if i["object"] == "lead"})
        found_deals = self._objects("deals", deals, DEAL_PROPERTIES) if deals else {}
        contacts_of = self._contacts_of("deals", deals) if deals else {}
        contacts_of |= self._contacts_of("leads", leads) if leads else {}
        contact_ids = {i["object_id"] for i in items if i["object"] == "contact"}
        contact_ids |= {c for ids in contacts_of.values() for c in ids}
        contacts = self._objects("contacts", sorted(contact_ids), CONTACT_PROPERTIES) if contact_ids else {}
        out: dict[str, PersonReadBack | Exception] = {}
        for item in items:
            deal = found_deals.get(item["object_id"]) if item["object"] == "deal" else None
            ids = contacts_of.get(item["object_id"], []) if item["object"] != "contact" else [item["object_id"]]
            people = [_person(contacts[c], deal) for c in ids if c in contacts]
            if item["object"] == "deal" and deal is None:
                out[item["event_key"]] = JobError(
                    INVALID, "HubSpot has no such deal (deleted?)", call="deal_read", fix="nothing, if it was deleted"
                )
            elif not people:
                out[item["event_key"]] = JobError(
                    INVALID,
                    "no contact is associated with it",
                    call="contact_read",
                    fix="associate a contact with the deal in HubSpot, then replay",
                )
            else:
                # A deal with a buyer and a decision maker: every contact is a candidate;
                # the stage goes to the one who is a lead (engine/crmreads.py), never the first listed.
                person = people[0] if len(people) == 1 else PersonReadBack(**people[0], candidates=people)
                out[item["event_key"]] = person
        return out

    def _objects(self, kind: str, ids: list[str], properties: list[str]) -> dict[str, dict]:
        answer = self.http.call(
            "POST",
            f"/crm/v3/objects/{kind}/batch/read",
            json={"properties": properties, "inputs": [{"id": i} for i in ids]},
            operation=f"{kind[:-1]}_read",
        )
        return {str(r.get("id")): r.get("properties") or {} for r in answer.get("results") or [] if isinstance(r, dict)}

    def _contacts_of(self, kind: str, ids: list[str]) -> dict[str, list[str]]:
        """deal (or lead) id -> every associated contact's id, in HubSpot's order."""
        answer = self.http.call(
            "POST",
            f"/crm/v4/associations/{kind}/contacts/batch/read",
            json={"inputs": [{"id": d} for d in ids]},
            operation="association_read",
        )
        out: dict[str, list[str]] = {}
        for row in answer.get("results") or []:
            targets = row.get("to") or [] if isinstance(row, dict) else []
            ids = [str(t["toObjectId"]) for t in targets if isinstance(t, dict) and t.get("toObjectId") is not None]
            if ids:
                out[str((row.get("from") or {}).get("id"))] = list(dict.fromkeys(ids))
        return out

    def stages(self) -> list[tuple[str, str, str]]:
        """(pipeline or property, stage id, label) for every deal pipeline's stages and the
        contact lifecycle stages: what `[crm.hubspot.stages]` maps.

        Raises:
            JobError, Paused: HubSpot refused or failed.
        """
        rows = []
        for pipeline in self.http.call("GET", "/crm/v3/pipelines/deals", operation="pipelines").get("results") or []:
            for stage in pipeline.get("stages") or []:
                rows.append((f"deals: {pipeline.get('label')}", str(stage.get("id")), str(stage.get("label"))))
        lifecycle = self.http.call("GET", "/crm/v3/properties/contacts/lifecyclestage", operation="pipelines")
        for option in lifecycle.get("options") or []:
            rows.append(("contacts: lifecycle stage", str(option.get("value")), str(option.get("label"))))
        return rows

    def probe(self, fp: str) -> bool | None:
        return self.http.probe(fp, "/crm/v3/objects/contacts?limit=1")


def _person(contact: dict, deal: dict | None) -> PersonReadBack:
    amount = (deal or {}).get("amount")
    try:
        value = float(amount) if amount not in (None, "") else None
    except (TypeError, ValueError):
        value = None
    phones = [p for p in (contact.get("phone"), contact.get("mobilephone")) if p]
    listed = contact.get("hs_additional_emails")
    extra = listed.split(";") if isinstance(listed, str) else []
    emails = [e.strip() for e in [contact.get("email") or "", *extra] if isinstance(e, str) and e.strip()]
    return {
        "email": list(dict.fromkeys(emails)),
        "phone": phones,
        "first_name": contact.get("firstname"),
        "last_name": contact.get("lastname"),
        "country": contact.get("country") or None,
        "value": value,
        "currency": (deal or {}).get("deal_currency_code") or None,
    }
