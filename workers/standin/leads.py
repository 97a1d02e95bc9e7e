"""The Lead Ads side of the Graph stand-in (standin.py): its leads, how their reads fail,
test leads and a form's lead list, answered as Graph answers them."""

from __future__ import annotations

import io
import json
import random
import time
from datetime import datetime, timezone

from workers.common.times import unix_time

SAMPLE_FIELDS = [
    {"name": "full_name", "values": ["Joe Example"]},
    {"name": "email", "values": ["Joe@Example.com"]},
    {"name": "phone_number", "values": ["+16505551212"]},
]


# How a lead's reads fail, for trying leadrelay's failure paths by hand (send-test --fail).
# Each is (times, answer): the first `times` reads of the lead get `answer`, later ones succeed.
# An auth failure also refuses the token on every call for AUTH_REFUSED_SECONDS, as while
# a person re-grants a permission: long enough to see the pause, short enough to fix.
AUTH_REFUSED_SECONDS = 10
VERSION_WARNING = "version_warning"
VERSION_HEADER = "X-Ad-Api-Version-Warning"


def auto_upgraded(called: str) -> str:
    """The header of a call Meta auto-upgraded, as the Marketing API's versioning FAQ words
    it: the version called (`v26.0`) served as the next one."""
    major = int(called.lstrip("v").split(".")[0])
    return f"The call has been auto-upgraded to v{major + 1}.0 as {called} has been deprecated."


FAILURES = {
    "auth": (
        1,
        (
            401,
            {
                "message": "Error validating access token: Session has expired",
                "type": "OAuthException",
                "code": 190,
                "error_subcode": 463,
                "fbtrace_id": "standin-auth",
            },
        ),
    ),
    "invalid": (
        1,
        (
            400,
            {
                "message": "(#100) Tried accessing nonexisting field (lead)",
                "type": "OAuthException",
                "code": 100,
                "fbtrace_id": "standin-invalid",
            },
        ),
    ),
    # The version we call has ended: Meta's answer to every call (the Marketing API's
    # versioning FAQ quotes it), a configuration error, never retried.
    "version_ended": (
        1,
        (
            400,
            {
                "message": "(#2635) You are calling a deprecated version of the Ads API. Please update to "
                "the latest version: v26.0.",
                "type": "OAuthException",
                "code": 2635,
                "fbtrace_id": "standin-version-ended",
            },
        ),
    ),
    "transient": (
        1,
        (
            500,
            {
                "message": "An unexpected error has occurred. Please retry your request later.",
                "type": "OAuthException",
                "code": 2,
                "is_transient": True,
                "fbtrace_id": "standin-transient",
            },
        ),
    ),
}


def graph_time(unix: int) -> str:
    return datetime.fromtimestamp(unix, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S+0000")


class LeadAds:
    """Mixed into GraphStandin, which holds the state these methods use (leads, failing,
    test_leads, refused_until, any_lead) and answers with `_reply`."""

    def add_lead(
        self, leadgen_id: str, field_data=None, created_time: int | None = None, page_id: str | None = None, **extra
    ) -> dict:
        if page_id:
            self.lead_pages[str(leadgen_id)] = str(page_id)
        lead = {
            "id": str(leadgen_id),
            "created_time": graph_time(created_time or int(time.time())),
            "form_id": "555",
            "ad_id": "777",
            "adset_id": "888",
            "campaign_id": "999",
            "platform": "fb",
            "is_organic": False,
            "field_data": SAMPLE_FIELDS if field_data is None else field_data,
            **extra,
        }
        self.leads[str(leadgen_id)] = lead
        return lead

    def add_failing_lead(self, fail: str | None = None, **lead) -> dict:
        """A lead whose first reads fail as FAILURES[fail] says (send-test --fail); with
        `version_warning`, a lead read as usual while every answer from then on carries
        Meta's auto-upgrade header, as Meta sends it while the version called is ending."""
        made = self.add_lead(str(lead.pop("id", None) or self._new_id()), **lead)
        if fail == VERSION_WARNING:
            self.warn_version = True  # each answer from now on names the version it was called with
        elif fail:
            times, answer = FAILURES[fail]
            self.failing[made["id"]] = [times, answer]
        return made

    def _new_id(self) -> str:
        return str(10**15 + random.SystemRandom().randrange(9 * 10**15))  # unique across restarts

    def _read_lead(self, handler, leadgen_id: str, token: str) -> None:
        lead = self.leads.get(leadgen_id)
        if lead is None and self.any_lead and leadgen_id.isdigit():
            lead = self.add_lead(leadgen_id)
        if lead is None:
            return self._not_found(handler)
        failing = self.failing.get(lead["id"])
        if failing and failing[0] > 0:
            failing[0] -= 1
            if failing[1][1].get("code") == 190:
                self.refused_until[token] = time.time() + AUTH_REFUSED_SECONDS
            return self._reply(handler, failing[1][0], {"error": failing[1][1]})
        return self._reply(handler, 200, lead)

    def _batch_item(self, version: str, item: dict, headers) -> dict | None:
        """One request of a Graph batch, answered as if it came alone (recorded, scripted
        and refused the same way), in Graph's batch shape; None when it was dropped."""
        capture = _Capture(f"/{version}/{item['relative_url']}", {"Authorization": headers.get("Authorization", "")})
        self._handle(capture, item.get("method", "GET"))
        if capture.status is None:
            return None
        return {
            "code": capture.status,
            "body": capture.wfile.getvalue().decode(),
            "headers": [{"name": name, "value": value} for name, value in capture.sent_headers],
        }

    def _not_found(self, handler) -> None:
        self._reply(
            handler,
            400,
            {
                "error": {
                    "message": "Unsupported get request.",
                    "type": "GraphMethodException",
                    "code": 100,
                    "error_subcode": 33,
                    "fbtrace_id": "standin",
                }
            },
        )

    def _test_leads(self, handler, method: str, form_id: str, record: dict) -> None:
        """Lead Ads test leads: one per form; POST makes it (field_data as a JSON string)."""
        current = self.test_leads.get(form_id)
        if method == "GET":
            return self._reply(handler, 200, {"data": [self.leads[current]] if current in self.leads else []})
        if current in self.leads:
            return self._reply(
                handler,
                400,
                {
                    "error": {
                        "message": "Only one test lead can be created per form; delete the existing one first.",
                        "type": "OAuthException",
                        "code": 100,
                        "fbtrace_id": "standin-test-lead",
                    }
                },
            )
        fields = record["query"].get("field_data") or [json.dumps((record["body"] or {}).get("field_data") or [])]
        lead = self.add_lead(self._new_id(), field_data=json.loads(fields[0]) or None, form_id=form_id, is_organic=True)
        self.test_leads[form_id] = lead["id"]
        return self._reply(handler, 200, {"id": lead["id"]})

    def _form_leads(self, form_id: str, query: dict) -> dict:
        """GET /{form_id}/leads: newest first, `time_created` filtering, cursor paging."""
        since, before = 0, float("inf")
        for rule in json.loads(query.get("filtering", ["[]"])[0]):
            if rule.get("field") == "time_created" and rule.get("operator") == "GREATER_THAN":
                since = int(rule["value"])
            if rule.get("field") == "time_created" and rule.get("operator") == "LESS_THAN":
                before = int(rule["value"])
        leads = sorted(
            (
                lead
                for lead in list(self.leads.values())
                if lead["form_id"] == form_id and since < unix_time(lead["created_time"]) < before
            ),
            key=lambda lead: lead["created_time"],
            reverse=True,
        )
        start = int(query.get("after", ["0"])[0])
        limit = int(query.get("limit", ["25"])[0])
        page = leads[start : start + limit]
        paging = {"cursors": {"before": str(start), "after": str(start + len(page))}}
        if start + limit < len(leads):
            paging["next"] = "next-page"
        return {"data": page, "paging": paging}


class _Capture:
    """What `_handle` needs of a request handler, for one request inside a batch."""

    def __init__(self, path: str, headers):
        self.path, self.headers, self.rfile, self.wfile = path, headers, io.BytesIO(), io.BytesIO()
        self.status, self.close_connection, self.sent_headers, self.inner = None, False, [], True
        self.connection = self

    def close(self):
        self.status = None

    def send_response(self, status):
        self.status = status

    def send_header(self, name, value):
        self.sent_headers.append((name, value))

    def end_headers(self):
        pass
