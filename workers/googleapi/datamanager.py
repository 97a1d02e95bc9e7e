"""One call to Google's Data Manager API with a service account's OAuth token, its failure
classified as a Graph call's is (common/policy.py): quota and Google's passing faults retry,
a refused credential or an account Google will not take conversions for pauses, a request
Google refused for its contents is INVALID (the sender splits it).

Notes: docs/internals/googleapi.md
"""

from __future__ import annotations

import requests
from google.auth import exceptions as auth_errors
from google.auth.transport.requests import Request
from google.oauth2 import service_account

from workers.common import logs
from workers.common.policy import AUTH, INVALID, THROTTLED, TRANSIENT, JobError, Paused
from workers.events import googleevents
from workers.graphapi.pauses import Pauses, fingerprint
from workers.sources.ids import unsigned

SCOPE = "https://www.googleapis.com/auth/datamanager"  # not the Google Ads API's scope
INGEST = "/v1/events:ingest"
STATUS = "/v1/requestStatus:retrieve"
SETTING = "GOOGLE_APPLICATION_CREDENTIALS"
log = logs.get(__name__)

# ErrorInfo reasons that say the account, not the events, is what Google refuses: the
# destination waits (a pause) until a person fixes it, as after a refused token.
ACCOUNT_REASONS = {
    "PERMISSION_DENIED": "give the service account's email access to the Google Ads account (or its manager)",
    "TERMS_AND_CONDITIONS_NOT_SIGNED": "accept the customer data terms in Google Ads (Tools > Conversions > Settings)",
    "DESTINATION_ACCOUNT_NOT_ENABLED_ENHANCED_CONVERSIONS_FOR_LEADS": (
        "turn on enhanced conversions for leads in Google Ads (Goals > Conversions > Settings)"
    ),
    "DESTINATION_ACCOUNT_ENHANCED_CONVERSIONS_TERMS_NOT_SIGNED": "accept the enhanced conversions terms in Google Ads",
    "DESTINATION_ACCOUNT_DATA_POLICY_PROHIBITS_ENHANCED_CONVERSIONS": (
        "Google's policy keeps this account from enhanced conversions: see the account's policy page"
    ),
}
_PASSING = {"UNAVAILABLE", "DEADLINE_EXCEEDED", "INTERNAL", "ABORTED", "INTERNAL_ERROR"}  # states and reasons
# A conversion action made less than 6 hours ago takes nothing yet: it clears with time.
_LATER = {"CONVERSION_ACTION_TOO_RECENTLY_CREATED": "Google takes conversions for an action 6 hours after it is made"}


class DataManager:
    """Google's Data Manager API at `base`, as the service account in `credentials` (a key
    file's path; the token comes from the key file's own `token_uri`)."""

    def __init__(self, base: str, credentials: str, timeout: float, pauses: Pauses | None = None, destinations=()):
        self.base, self.credentials, self.timeout, self.pauses = base.rstrip("/"), credentials, timeout, pauses
        self.destinations = tuple(destinations)  # config.googledest.GoogleDestination: what a probe asks about
        self.session = requests.Session()
        self._creds: service_account.Credentials | None = None

    def call(self, method: str, path: str, *, json=None, params=None, probe: bool = False) -> dict:
        """The parsed JSON answer.

        Raises:
            Paused: these credentials are paused after a refusal (not for a probe).
            JobError: classified; `call` is the path.
        """
        if self.pauses is not None and not probe and self.pauses.get(self.credentials):
            raise Paused(fingerprint(self.credentials))
        try:
            headers = {"Authorization": f"Bearer {self._token()}"}
            response = self.session.request(
                method, self.base + path, json=json, params=params, headers=headers, timeout=self.timeout
            )
            answer = _answer(response)
        except requests.Timeout:
            err = JobError(TRANSIENT, f"Google did not answer in {self.timeout:g} s")
        except requests.RequestException as failure:
            err = JobError(TRANSIENT, f"Google could not be reached ({type(failure).__name__})")
        except JobError as refused:
            err = refused
        else:
            return answer
        err.call = path
        if err.reason == AUTH and self.pauses is not None and not probe:
            self.pauses.pause(self.credentials, err.as_dict(), SETTING, "Google")
        raise err

    def _token(self) -> str:
        """A fresh OAuth token for SCOPE (google-auth signs the service account's assertion).

        Raises:
            JobError: AUTH when Google refuses the key, TRANSIENT when it cannot be reached.
        """
        try:
            if self._creds is None:
                self._creds = service_account.Credentials.from_service_account_file(self.credentials, scopes=[SCOPE])
            if not self._creds.valid:
                self._creds.refresh(Request(self.session))
        except (OSError, ValueError, KeyError) as err:
            raise JobError(AUTH, f"the key file cannot be used ({type(err).__name__})", fix=_KEY_FIX) from None
        except auth_errors.RefreshError:
            raise JobError(AUTH, "Google refused the service account's key", fix=_KEY_FIX) from None
        except auth_errors.TransportError:
            raise JobError(TRANSIENT, "Google's token endpoint could not be reached") from None
        return str(self._creds.token)

    def probe_token(self) -> None:
        """Ask for a fresh token now.

        Raises:
            JobError: as `_token`.
        """
        self._creds = None
        self._token()

    def probe(self, fp: str) -> bool | None:
        """When `fp` is these credentials' pause: True if Google takes them again (None: not
        this client's pause). A token alone proves little (Google refuses an account, not a
        token): each destination's first conversion action is asked about (`validateOnly`:
        nothing is uploaded), and all must pass."""
        if not self.credentials or fingerprint(self.credentials) != fp:
            return None
        try:
            self.probe_token()
            for destination in self.destinations:
                self.call("POST", INGEST, json=validation(destination), probe=True)
            return True
        except JobError:
            return False


def validation(destination, action: str | None = None) -> dict:
    """A request Google validates and never processes: one made-up conversion for `action`
    (the destination's first, by event name, when none is named)."""
    import time

    action = action or destination.conversion_actions[sorted(destination.conversion_actions)[0]]
    target = googleevents.Destination(destination.operating_account, action, destination.login_account)
    probe = googleevents.event(transaction="leadrelay-probe", occurred=int(time.time()), emails=[PROBE_EMAIL])
    return googleevents.requests(target, [probe], validate_only=True)[0]


PROBE_EMAIL = "probe@leadrelay.invalid"  # validated only, never uploaded (validateOnly)
_KEY_FIX = f"set {SETTING} to a valid service account key file of a project with the Data Manager API enabled"


def _answer(response: requests.Response) -> dict:
    status = response.status_code
    try:
        body = response.json()
    except ValueError:
        body = None
    if status < 300:
        if not isinstance(body, dict):
            raise JobError(TRANSIENT, f"Google answered HTTP {status} without a JSON object", http_status=status)
        return body
    error = (body or {}).get("error") if isinstance(body, dict) else None
    error = error if isinstance(error, dict) else {}
    state, reasons = str(error.get("status") or ""), _reasons(error)
    named = ", ".join(reasons) or state or f"HTTP {status}"
    account = next((r for r in reasons if r in ACCOUNT_REASONS), None)
    later = next((r for r in reasons if r in _LATER), None)
    if status == 429 or "RESOURCE_EXHAUSTED" in (state, *reasons):
        reason, fix = THROTTLED, None
    elif status >= 500 or state in _PASSING or _PASSING & set(reasons) or later:
        reason, fix = TRANSIENT, _LATER.get(later or "")
    elif status in (401, 403) or account or state in ("UNAUTHENTICATED", "PERMISSION_DENIED"):
        reason, fix = AUTH, ACCOUNT_REASONS.get(account or "PERMISSION_DENIED")
    else:
        reason, fix = INVALID, "fix what Google names, then replay"
    retry_after = unsigned(response.headers.get("Retry-After"), 6)
    raise JobError(reason, f"Google refused the request: {named}", http_status=status, retry_after=retry_after, fix=fix)


def _reasons(error: dict) -> list[str]:
    """Google's machine-readable reasons: each ErrorInfo's, then each field violation's."""
    out = []
    for detail in error.get("details") or []:
        if not isinstance(detail, dict):
            continue
        if isinstance(detail.get("reason"), str):
            out.append(detail["reason"])
        for violation in detail.get("fieldViolations") or []:
            if isinstance(violation, dict) and isinstance(violation.get("reason"), str):
                out.append(violation["reason"])
    return list(dict.fromkeys(out))[:5]
