"""HighLevel's API v2: the contact of each opportunity that changed (email, phone, the click id
HighLevel recorded), with a location's access token or a Private Integration token.

Notes: docs/internals/vendors.md
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from workers.common.policy import INVALID, JobError
from workers.crmapi.http import CrmClient
from workers.sources.contract import PersonReadBack
from workers.sources.ids import mapping

API_VERSION = "2021-07-28"
IN_FLIGHT = 8  # the `Version` header HighLevel requires; v3 exists, one is pinned


class HighLevel(CrmClient):
    SOURCE, NAME = "highlevel", "HighLevel"

    def __init__(self, settings, pauses=None):
        super().__init__(settings, pauses)
        self.http.header["Version"] = API_VERSION

    def read(self, items: list[dict]) -> dict[str, PersonReadBack | Exception]:
        """event key -> the contact and the opportunity's value as the push gave it (or the error).

        Raises:
            JobError, Paused: a call failed (the batch's others are not read either).
        """
        ids = sorted({i["contact_id"] for i in items if i.get("contact_id")})
        # One GET per contact: a few at a time, well inside HighLevel's burst limit (100 per 10 s).
        with ThreadPoolExecutor(IN_FLIGHT) as pool:
            answers = list(pool.map(lambda c: self.http.call("GET", f"/contacts/{c}", operation="contact_read"), ids))
        contacts = {c: a["contact"] for c, a in zip(ids, answers) if isinstance(a.get("contact"), dict)}
        out: dict[str, PersonReadBack | Exception] = {}
        for item in items:
            contact = contacts.get(item.get("contact_id") or "")
            if contact is None:
                out[item["event_key"]] = JobError(
                    INVALID,
                    "the opportunity has no contact, or HighLevel has no such contact",
                    call="contact_read",
                    fix="link a contact to the opportunity in HighLevel, then replay",
                )
                continue
            source = mapping(contact.get("attributionSource"))
            out[item["event_key"]] = {
                "email": [contact["email"]] if isinstance(contact.get("email"), str) else [],
                "phone": [contact["phone"]] if isinstance(contact.get("phone"), str) else [],
                "first_name": contact.get("firstName"),
                "last_name": contact.get("lastName"),
                "country": contact.get("country"),
                "fbc": source.get("fbc") if isinstance(source.get("fbc"), str) else None,
                "value": item.get("value"),
                "currency": item.get("currency"),
            }
        return out

    def stages(self) -> list[tuple[str, str, str]]:
        """(pipeline, stage id, name) for every stage of the location's pipelines, and the
        won and lost statuses: what `[crm.highlevel.stages]` maps.

        Raises:
            JobError, Paused: HighLevel refused or failed.
        """
        answer = self.http.call("GET", "/opportunities/pipelines", operation="pipelines")
        rows = [
            (str(p.get("name")), str(s.get("id")), str(s.get("name")))
            for p in answer.get("pipelines") or []
            if isinstance(p, dict)
            for s in p.get("stages") or []
            if isinstance(s, dict)
        ]
        return rows + [("any pipeline", "won", "opportunity won"), ("any pipeline", "lost", "opportunity lost")]

    def probe(self, fp: str) -> bool | None:
        return self.http.probe(fp, "/opportunities/pipelines")
