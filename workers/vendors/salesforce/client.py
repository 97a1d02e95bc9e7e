"""Salesforce's REST API: the person behind each record that changed, in one SOQL query per
object and batch.

Notes: docs/internals/vendors.md
"""

from __future__ import annotations

import re
import time

import requests

from workers.common.policy import AUTH, INVALID, TRANSIENT, JobError
from workers.crmapi.http import CrmClient
from workers.graphapi.pauses import fingerprint
from workers.sources.contract import PersonReadBack
from workers.vendors.salesforce.webhook import OAUTH_TOKEN_PATH

API_VERSION = "v62.0"
BATCH_LIMIT = 100  # ids per query: a message holds at most 100 notifications
_ID = re.compile(r"[A-Za-z0-9]{15,18}")  # a Salesforce record id: nothing else goes into a query


TOKEN_SECONDS = 1800  # a client-credentials token is asked for again well inside a session's timeout


class Salesforce(CrmClient):
    SOURCE, NAME = "salesforce", "Salesforce"

    def __init__(self, settings, pauses=None):
        super().__init__(settings, pauses)
        self.oauth = settings.crm_oauth.get(self.SOURCE, ("", ""))
        self.issued: float | None = None  # monotonic: a machine up for minutes has small values
        self.used: set[str] = set()  # the fingerprints of the tokens issued to this client

    def _fresh(self, force: bool = False) -> None:
        """With a connected app's client credentials (SALESFORCE_OAUTH_CLIENT_ID and _SECRET),
        an access token from the instance's token endpoint, asked for again every half hour:
        Salesforce's access tokens end with the session, and this one never has to be pasted.

        Raises:
            JobError: `auth`, the credentials were refused (the fix names them).
        """
        if not all(self.oauth) or (
            not force and self.issued is not None and time.monotonic() - self.issued < TOKEN_SECONDS
        ):
            return
        client_id, secret = self.oauth
        form = {"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret}
        try:
            answer = self.http.session.post(self.http.base + OAUTH_TOKEN_PATH, data=form, timeout=self.http.timeout)
        except requests.RequestException:
            raise JobError(TRANSIENT, "Salesforce's token endpoint could not be reached", call="oauth_token") from None
        token = answer.json().get("access_token") if answer.status_code == 200 else None
        if not isinstance(token, str) or not token:
            raise JobError(
                AUTH,
                f"Salesforce refused the client credentials (HTTP {answer.status_code})",
                call="oauth_token",
                fix="check SALESFORCE_OAUTH_CLIENT_ID and _SECRET and the connected app's client credentials flow",
            )
        self.http.token, self.issued = token, time.monotonic()
        self.http.header["Authorization"] = f"Bearer {token}"
        self.used.add(fingerprint(token))

    def read(self, items: list[dict]) -> dict[str, PersonReadBack | Exception]:
        """event key -> the person and the record's amount as the message gave it (or the error).

        Raises:
            JobError, Paused: a query failed (the batch's others are not read either).
        """
        self._fresh()
        people: dict[str, dict] = {}
        for kind, soql in (
            (
                "opportunity",
                "SELECT OpportunityId, Contact.Email, Contact.Phone, Contact.MobilePhone, Contact.FirstName, "
                "Contact.LastName FROM OpportunityContactRole WHERE IsPrimary = true AND OpportunityId IN ({})",
            ),
            ("lead", "SELECT Id, Email, Phone, MobilePhone, FirstName, LastName FROM Lead WHERE Id IN ({})"),
        ):
            ids = sorted({i["object_id"] for i in items if i.get("object") == kind and _ID.fullmatch(i["object_id"])})
            for start in range(0, len(ids), BATCH_LIMIT):
                quoted = ", ".join(f"'{record_id}'" for record_id in ids[start : start + BATCH_LIMIT])
                path = f"/services/data/{API_VERSION}/query"
                answer = self.http.call("GET", path, params={"q": soql.format(quoted)}, operation="person_read")
                for row in answer.get("records") or []:
                    if isinstance(row, dict):
                        record = row.get("Contact") if kind == "opportunity" else row
                        key = row.get("OpportunityId") if kind == "opportunity" else row.get("Id")
                        if isinstance(record, dict) and isinstance(key, str):
                            people[key[:15]] = record
        out: dict[str, PersonReadBack | Exception] = {}
        for item in items:
            person = people.get(str(item.get("object_id"))[:15])
            if person is None:
                out[item["event_key"]] = JobError(
                    INVALID,
                    f"Salesforce has no contact for {item.get('object', 'record')} {item.get('object_id')}",
                    call="person_read",
                    fix="give the opportunity a primary contact role (or the lead an email), then replay",
                )
                continue
            out[item["event_key"]] = {
                "email": [person["Email"]] if isinstance(person.get("Email"), str) else [],
                "phone": [p for p in (person.get("Phone"), person.get("MobilePhone")) if isinstance(p, str)],
                "first_name": person.get("FirstName"),
                "last_name": person.get("LastName"),
                "value": item.get("value"),
                "currency": item.get("currency"),
            }
        return out

    def stages(self) -> list[tuple[str, str, str]]:
        """(object, stage value, label) of every Opportunity stage and Lead status: what
        `[crm.salesforce.stages]` maps (a stage is named by its value, as messages carry it).

        Raises:
            JobError, Paused: Salesforce refused or failed.
        """
        self._fresh()
        rows = []
        for soql, kind in (
            ("SELECT ApiName, MasterLabel FROM OpportunityStage WHERE IsActive = true", "Opportunity"),
            ("SELECT ApiName, MasterLabel FROM LeadStatus", "Lead"),
        ):
            answer = self.http.call(
                "GET", f"/services/data/{API_VERSION}/query", params={"q": soql}, operation="pipelines"
            )
            rows += [(kind, str(r.get("ApiName")), str(r.get("MasterLabel"))) for r in answer.get("records") or []]
        return rows

    def probe(self, fp: str) -> bool | None:
        """A paused token of ours: with client credentials, a new token is asked for and
        tested (the paused one has simply ended)."""
        if all(self.oauth) and fp in self.used:
            try:
                self._fresh(force=True)
            except JobError:
                return False
            fp = fingerprint(self.http.token)
        return self.http.probe(fp, f"/services/data/{API_VERSION}/limits")
