"""Close's API v1: the contact of each opportunity that changed (its emails and phones), with
an API key sent as HTTP Basic (the key, no password).

Notes: docs/internals/vendors.md
"""

from __future__ import annotations

import base64
from concurrent.futures import ThreadPoolExecutor

from workers.common.policy import INVALID, JobError
from workers.crmapi.http import CrmClient
from workers.sources.contract import PersonReadBack
from workers.sources.ids import mapping

IN_FLIGHT = 4  # a few at a time: Close limits each API key per endpoint group (429 with its wait)


class Close(CrmClient):
    SOURCE, NAME = "close", "Close"

    def __init__(self, settings, pauses=None):
        super().__init__(settings, pauses)
        key = base64.b64encode(f"{self.http.token}:".encode()).decode("ascii")
        self.http.header = {"Authorization": f"Basic {key}"}

    def read(self, items: list[dict]) -> dict[str, PersonReadBack | Exception]:
        """event key -> the contact's emails and phones, with the opportunity's value (or the error).

        Raises:
            JobError, Paused: the key was refused, Close throttled or failed (none is read).
        """
        ids = sorted({i["contact_id"] for i in items if i.get("contact_id")})
        with ThreadPoolExecutor(IN_FLIGHT) as pool:
            answers = dict(zip(ids, pool.map(self._contact, ids)))
        out: dict[str, PersonReadBack | Exception] = {}
        for item in items:
            contact = answers.get(item.get("contact_id") or "")
            if not isinstance(contact, dict):
                out[item["event_key"]] = contact or JobError(
                    INVALID,
                    "the opportunity names no contact",
                    call="contact_read",
                    fix="set the opportunity's contact in Close, then replay",
                )
                continue
            out[item["event_key"]] = {
                "email": _values(contact.get("emails"), "email"),
                "phone": _values(contact.get("phones"), "phone"),
                "first_name": None,
                "last_name": None,
                "value": item.get("value"),
                "currency": item.get("currency"),
            }
        return out

    def _contact(self, contact_id: str) -> dict | JobError:
        """One contact; a contact Close does not have is that item's error alone."""
        try:
            return self.http.call("GET", f"/api/v1/contact/{contact_id}/", operation="contact_read")
        except JobError as err:
            if err.reason != INVALID:
                raise
            err.fix = "check the opportunity's contact in Close (it may be deleted or merged), then replay"
            return err

    def stages(self) -> list[tuple[str, str, str]]:
        """(pipeline, status id, label) for every opportunity status, and the won and lost
        types: what `[crm.close.stages]` maps.

        Raises:
            JobError, Paused: Close refused or failed.
        """
        answer = self.http.call("GET", "/api/v1/status/opportunity/", operation="pipelines")
        rows = [
            (str(s.get("pipeline_id") or "any pipeline"), str(s.get("id")), f"{s.get('label')} ({s.get('type')})")
            for s in answer.get("data") or []
            if isinstance(s, dict) and s.get("type") not in ("won", "lost")
        ]
        return rows + [("any pipeline", "won", "any won status"), ("any pipeline", "lost", "any lost status")]

    def probe(self, fp: str) -> bool | None:
        return self.http.probe(fp, "/api/v1/status/opportunity/")


def _values(entries, field: str) -> list[str]:
    """The addresses or numbers of a contact's `emails` or `phones` list."""
    if not isinstance(entries, list):
        return []
    found = (mapping(entry).get(field) for entry in entries)
    return [value for value in found if isinstance(value, str) and value.strip()]
