"""Pipedrive's API v2, read in batches: the persons of the deals that changed (every
email and phone, the primary first), with an API token (sent in a header)."""

from __future__ import annotations

from workers.common.policy import INVALID, JobError
from workers.crmapi.http import CrmClient
from workers.sources.contract import PersonReadBack

BATCH_LIMIT = 100  # ids per GET /api/v2/persons?ids=...


class Pipedrive(CrmClient):
    SOURCE, NAME = "pipedrive", "Pipedrive"
    HEADER = ("x-api-token", "{token}")  # a header, never the URL's api_token

    def read(self, items: list[dict]) -> dict[str, PersonReadBack | Exception]:
        """event key -> the person and the deal's value as the push gave it (or the error).

        Raises:
            JobError, Paused: a call failed for every item of the batch.
        """
        ids = sorted({i["person_id"] for i in items if i.get("person_id")})
        persons: dict[str, dict] = {}
        for start in range(0, len(ids), BATCH_LIMIT):
            answer = self.http.call(
                "GET",
                "/api/v2/persons",
                params={"ids": ",".join(ids[start : start + BATCH_LIMIT])},
                operation="person_read",
            )
            persons.update({str(p.get("id")): p for p in answer.get("data") or [] if isinstance(p, dict)})
        out: dict[str, PersonReadBack | Exception] = {}
        for item in items:
            person = persons.get(item.get("person_id") or "")
            if person is None:
                out[item["event_key"]] = JobError(
                    INVALID,
                    "the deal has no person, or Pipedrive has no such person",
                    call="person_read",
                    fix="link a person to the deal in Pipedrive, then replay",
                )
            else:
                out[item["event_key"]] = {
                    "email": _values(person.get("emails")),
                    "phone": _values(person.get("phones")),
                    "first_name": person.get("first_name"),
                    "last_name": person.get("last_name"),
                    "value": item.get("value"),
                    "currency": item.get("currency"),
                }
        return out

    def stages(self) -> list[tuple[str, str, str]]:
        """(pipeline, stage id, name) for every stage, and the won and lost statuses: what
        `[crm.pipedrive.stages]` maps.

        Raises:
            JobError, Paused: Pipedrive refused or failed.
        """
        pipelines = {
            p.get("id"): p.get("name")
            for p in self.http.call("GET", "/api/v2/pipelines", operation="pipelines").get("data") or []
        }
        rows = [
            (str(pipelines.get(s.get("pipeline_id"), s.get("pipeline_id"))), str(s.get("id")), str(s.get("name")))
            for s in self.http.call("GET", "/api/v2/stages", operation="pipelines").get("data") or []
        ]
        return rows + [("any pipeline", "won", "deal won"), ("any pipeline", "lost", "deal lost")]

    def probe(self, fp: str) -> bool | None:
        return self.http.probe(fp, "/api/v2/persons?limit=1")


def _values(entries) -> list[str]:
    """Every value of Pipedrive's list of {value, primary, label}, the primary first."""
    rows = [e for e in entries or [] if isinstance(e, dict) and isinstance(e.get("value"), str) and e["value"].strip()]
    return [e["value"] for e in sorted(rows, key=lambda e: not e.get("primary"))]
