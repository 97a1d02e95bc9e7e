"""HTTP to Meta's Graph API: lead reads, and the transport the Conversions API sender uses."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Callable

import requests
from requests.structures import CaseInsensitiveDict

from workers.common import logs
from workers.common.policy import AUTH, THROTTLED, TRANSIENT, JobError, Paused, classify
from workers.config.settings import Settings
from workers.graphapi import versionsignals
from workers.graphapi.pauses import Pauses, fingerprint

# Always ask for the fields: without them Meta returns a minimal set (Meta's lead retrieval docs).
BATCH_LIMIT = 50  # Graph's most requests in one batch
LEAD_FIELDS = (
    "id,created_time,ad_id,ad_name,adset_id,adset_name,campaign_id,campaign_name,form_id,"
    "field_data,custom_disclaimer_responses,is_organic,platform,partner_name"
)

log = logs.get(__name__)


def usage_percent(headers) -> float:
    """The highest share of a rate limit Meta says is used (0-100), from `X-App-Usage`
    ({"call_count", "total_cputime", "total_time"}) and `X-Business-Use-Case-Usage`
    ({id: [{...the same, per use case}]}); 0 when neither header is there."""
    found = [0.0]
    for name in ("X-App-Usage", "X-Business-Use-Case-Usage"):
        try:
            usage = json.loads(headers.get(name) or "{}")
            parts = [usage] if "call_count" in usage else [item for items in usage.values() for item in items]
            found += [
                float(part.get(key) or 0) for part in parts for key in ("call_count", "total_cputime", "total_time")
            ]
        except (ValueError, TypeError, AttributeError):
            continue
    return max(found)


def regain_access_seconds(headers) -> int | None:
    """Meta's `estimated_time_to_regain_access` (minutes) from the usage header, in seconds."""
    raw = headers.get("X-Business-Use-Case-Usage")
    try:
        usage = json.loads(raw) if raw else {}
        minutes = max((item.get("estimated_time_to_regain_access") or 0) for items in usage.values() for item in items)
    except (ValueError, TypeError, AttributeError):
        return None
    return int(minutes * 60) or None


class Graph:
    """A small Graph API client; tokens go in the Authorization header, never in URLs.

    With a Pauses store, a call with a paused token raises Paused without reaching
    Meta, and an auth failure pauses the token it used. With an `observe` callback,
    each call that reached the network reports (operation, outcome, seconds).
    """

    def __init__(
        self,
        settings: Settings,
        session: requests.Session | None = None,
        pauses: Pauses | None = None,
        observe: Callable[[str, str, float], None] | None = None,
        labels: dict[str, str] | None = None,
    ):
        self.settings = settings
        self.session = session or requests.Session()
        self.base = f"{settings.graph_url}/{settings.api_version}"
        self.pauses = pauses
        self.observe = observe
        # Names for logs and pause records: which setting holds the token, never the token.
        self.usage = 0.0  # usage_percent of Meta's last answer: batch sizes and pacing follow it
        # Other APIs' probes (CRM tokens share the pauses): each answers None for a token not its own.
        self.probes: list[Callable[[str], bool | None]] = []
        self.labels = {
            settings.page_access_token: "META_PAGE_ACCESS_TOKEN",
            settings.capi_access_token: "META_CAPI_ACCESS_TOKEN",
            **(labels or {}),
        }

    def _proof(self, token: str) -> dict:
        # With "Require App Secret" on, Meta wants HMAC-SHA256(app_secret, token); it
        # accepts the proof when the setting is off, so we always send it when we can.
        if not self.settings.app_secrets:
            return {}
        secret = self.settings.app_secrets[0].encode("utf-8")
        return {"appsecret_proof": hmac.new(secret, token.encode("utf-8"), hashlib.sha256).hexdigest()}

    def call(
        self,
        method: str,
        path: str,
        token: str,
        *,
        params: dict | None = None,
        json: dict | None = None,
        probe: bool = False,
        operation: str = "other",
    ) -> dict:
        """One Graph call; the parsed JSON body on success. `operation` names it in metrics.

        Raises:
            Paused: the token is paused (not raised for a `probe` call).
            JobError: classified by policy.classify (timeouts and connection
                errors are transient).
        """
        if self.pauses is not None and not probe and self.pauses.get(token):
            raise Paused(fingerprint(token))
        started = time.monotonic()
        try:
            body = self._call(method, path, token, params, json)
        except JobError as err:
            err.call = operation
            self._observe(operation, err.reason, started)
            if err.reason == AUTH and self.pauses is not None and not probe:
                self.pauses.pause(token, err.as_dict(), self.labels.get(token, "token"))
            raise
        self._observe(operation, "ok", started)
        return body

    def _observe(self, operation: str, outcome: str, started: float) -> None:
        if self.observe is not None:
            self.observe(operation, outcome, time.monotonic() - started)

    def _call(self, method, path, token, params, json) -> dict:
        try:
            response = self.session.request(
                method,
                f"{self.base}/{path}",
                params={**(params or {}), **self._proof(token)},
                json=json,
                headers={"Authorization": f"Bearer {token}"},
                timeout=self.settings.graph_timeout_seconds,
            )
        except requests.Timeout:
            raise JobError(TRANSIENT, "timeout") from None
        except requests.ConnectionError:
            raise JobError(TRANSIENT, "connection_error") from None
        except requests.RequestException as err:  # a body cut short, one not the gzip it claims, ...
            raise JobError(TRANSIENT, f"transport_error ({type(err).__name__})") from None
        self.usage = usage_percent(response.headers)
        warning = response.headers.get("x-ad-api-version-warning")
        if warning:  # Meta auto-upgraded the call: our version is ending, whatever our table says
            versionsignals.record(self.pauses.connection if self.pauses else None, self.settings.api_version, warning)
        try:
            body = response.json()
        except ValueError:
            body = None
        if response.status_code == 200 and isinstance(body, (dict, list)):  # a list: a batch's answers
            return body
        error = body.get("error") if isinstance(body, dict) else None
        error = error if isinstance(error, dict) else None
        reason = classify(response.status_code, error)
        error = error or {}
        retry_after = regain_access_seconds(response.headers) if reason == THROTTLED else None
        raise JobError(
            reason,
            f"HTTP {response.status_code}" + (f" code {error.get('code')}" if error.get("code") else ""),
            code=error.get("code"),
            subcode=error.get("error_subcode"),
            fbtrace_id=error.get("fbtrace_id"),
            user_title=error.get("error_user_title"),
            http_status=response.status_code,
            retry_after=retry_after,
        )

    def read_lead(self, leadgen_id: str, token: str) -> dict:
        """The lead with its answers (`field_data`), read with its Page's token.

        Raises:
            JobError: see `call`.
        """
        return self.call("GET", leadgen_id, token, params={"fields": LEAD_FIELDS}, operation="lead_read")

    def read_leads(self, leadgen_ids: list[str], token: str) -> dict[str, dict | JobError]:
        """Many leads in one Graph batch request (at most BATCH_LIMIT), read with one Page
        token; each lead's answer on its own: the lead, or its classified JobError.
        An item Meta did not finish (null) is transient; an item refused for the token
        pauses the token, as a single read would.

        Raises:
            Paused, JobError: the batch request itself failed (see `call`).
        """
        batch = [{"method": "GET", "relative_url": f"{lead_id}?fields={LEAD_FIELDS}"} for lead_id in leadgen_ids]
        answers = self.call("POST", "", token, json={"batch": batch}, operation="lead_batch")
        out: dict[str, dict | JobError] = {}
        for lead_id, answer in zip(leadgen_ids, answers if isinstance(answers, list) else []):
            out[lead_id] = self._batch_item(answer, token)
        for lead_id in leadgen_ids[len(out) :]:
            out[lead_id] = JobError(TRANSIENT, "missing from Meta's batch answer", call="lead_read")
        return out

    def _batch_item(self, answer: dict | None, token: str) -> dict | JobError:
        if not isinstance(answer, dict):
            return JobError(TRANSIENT, "Meta did not finish this batch item", call="lead_read")
        text = answer.get("body")  # Meta sends each item's body as JSON text
        try:
            body = json.loads(text) if isinstance(text, (str, bytes)) else None
        except ValueError:
            body = None
        status = answer.get("code") if isinstance(answer.get("code"), int) else 500
        if status == 200 and isinstance(body, dict):
            return body
        error = body.get("error") if isinstance(body, dict) and isinstance(body.get("error"), dict) else {}
        reason = classify(status, error)
        headers = CaseInsensitiveDict(
            {
                h.get("name"): h.get("value")
                for h in answer.get("headers") or []
                if isinstance(h, dict) and isinstance(h.get("name"), str)
            }
        )
        err = JobError(
            reason,
            f"HTTP {status}" + (f" code {error['code']}" if error.get("code") else ""),
            code=error.get("code"),
            subcode=error.get("error_subcode"),
            fbtrace_id=error.get("fbtrace_id"),
            user_title=error.get("error_user_title"),
            http_status=status,
            call="lead_read",
            retry_after=regain_access_seconds(headers) if reason == THROTTLED else None,
        )
        if err.reason == AUTH and self.pauses is not None:
            self.pauses.pause(token, err.as_dict(), self.labels.get(token, "token"))
        return err

    def probe(self, fp: str) -> bool:
        """One cheap call with the token behind a pause fingerprint; True if Meta takes it."""
        for token in self.labels:
            if token and fingerprint(token) == fp:
                try:
                    self.call("GET", "me", token, params={"fields": "id"}, probe=True, operation="probe")
                    return True
                except JobError:
                    return False
        for other in self.probes:
            answer = other(fp)
            if answer is not None:
                return answer
        return False
