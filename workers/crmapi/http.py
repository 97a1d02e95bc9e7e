"""One CRM HTTP call, classified as a Graph call is (common/policy.py).

Notes: docs/internals/crmapi.md
"""

from __future__ import annotations

import requests

from workers.common import logs
from workers.common.policy import AUTH, INVALID, THROTTLED, TRANSIENT, JobError, Paused
from workers.graphapi.pauses import Pauses, fingerprint
from workers.sources.ids import unsigned
from workers.sources.registry import SOURCES

log = logs.get(__name__)


class CrmHttp:
    """`name`'s API at `base` with `token` (sent in a header, never in a URL)."""

    def __init__(
        self, name: str, base: str, token: str, header: tuple[str, str], label: str, timeout: float, pauses=None
    ):
        self.name, self.base, self.token, self.label, self.timeout = name, base.rstrip("/"), token, label, timeout
        self.header = {header[0]: header[1].format(token=token)}
        self.pauses: Pauses | None = pauses
        self.session = requests.Session()

    def call(self, method: str, path: str, *, params=None, json=None, operation: str, probe: bool = False) -> dict:
        """The parsed JSON answer.

        Raises:
            Paused: the token is paused after a refusal (not raised for a probe).
            JobError: the call failed, classified; `call` names the operation.
        """
        if not self.token:
            raise JobError(AUTH, f"no {self.label} is set: {self.name} cannot be read", call=operation)
        if self.pauses is not None and not probe and self.pauses.get(self.token):
            raise Paused(fingerprint(self.token))
        try:
            answer = self._call(method, path, params, json)
        except JobError as err:
            err.call = operation
            if err.reason == AUTH and self.pauses is not None and not probe:
                self.pauses.pause(self.token, err.as_dict(), self.label, self.name)
            raise
        return answer

    def _call(self, method, path, params, json) -> dict:
        try:
            response = self.session.request(
                method, f"{self.base}{path}", params=params, json=json, headers=self.header, timeout=self.timeout
            )
        except requests.Timeout:
            raise JobError(TRANSIENT, f"{self.name} did not answer in {self.timeout:g} s") from None
        except requests.ConnectionError:
            raise JobError(TRANSIENT, f"{self.name} could not be reached") from None
        status = response.status_code
        if status < 300:
            try:
                return response.json()
            except ValueError:
                raise JobError(TRANSIENT, f"{self.name} answered HTTP {status} without JSON") from None
        fix = None
        if status in (401, 403):
            reason, detail = AUTH, f"{self.name} refused {self.label} (HTTP {status})"
            fix = f"set a {self.label} with the scopes its docs page names, then replay the auth group"
        elif status == 429:
            reason, detail = THROTTLED, f"{self.name} rate limit (HTTP 429)"
        elif status >= 500:
            reason, detail = TRANSIENT, f"{self.name} answered HTTP {status}"
        else:
            reason, detail = INVALID, f"{self.name} answered HTTP {status}" + (": not found" if status == 404 else "")
            fix = f"check the object in {self.name}, then replay"
        raise JobError(reason, detail, http_status=status, retry_after=_retry_after(response), fix=fix)

    def probe(self, fp: str, path: str) -> bool | None:
        """One cheap call when `fp` is this token's pause: True if the CRM takes it again;
        None when the pause is not this client's."""
        if not self.token or fingerprint(self.token) != fp:
            return None
        try:
            self.call("GET", path, operation="probe", probe=True)
            return True
        except JobError:
            return False


def _retry_after(response) -> int | None:
    return unsigned(response.headers.get("Retry-After"), 6)  # seconds; a date or nonsense: our own backoff


class CrmClient:
    """A CRM's read-back client: its name, and where its token goes (the setting that
    holds it is the source registry's)."""

    SOURCE = ""  # the source's name in workers/sources
    NAME = ""  # as people write it, in errors and logs
    HEADER = ("Authorization", "Bearer {token}")

    def __init__(self, settings, pauses=None):
        self.http = CrmHttp(
            self.NAME,
            settings.crm_urls[self.SOURCE],
            settings.crm_tokens[self.SOURCE],
            self.HEADER,
            SOURCES[self.SOURCE].token_setting,
            settings.graph_timeout_seconds,
            pauses,
        )
