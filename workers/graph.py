"""HTTP to Meta's Graph API: lead reads, and the transport the Conversions API sender uses."""

from __future__ import annotations

import hashlib
import hmac

import requests

from webhook_app import logs
from webhook_app.config import Settings

from .policy import TRANSIENT, DeliveryError, classify

# Always ask for the fields: without them Meta returns a minimal set (spec §2).
LEAD_FIELDS = ("id,created_time,ad_id,ad_name,adset_id,adset_name,campaign_id,campaign_name,form_id,"
               "field_data,custom_disclaimer_responses,is_organic,platform,partner_name")

log = logs.get(__name__)


class Graph:
    """A small Graph API client; tokens go in the Authorization header, never in URLs."""

    def __init__(self, settings: Settings, session: requests.Session | None = None):
        self.settings = settings
        self.session = session or requests.Session()
        self.base = f"{settings.graph_url}/{settings.api_version}"

    def _proof(self, token: str) -> dict:
        # With "Require App Secret" on, Meta wants HMAC-SHA256(app_secret, token); it
        # accepts the proof when the setting is off, so we always send it when we can.
        if not self.settings.app_secrets:
            return {}
        secret = self.settings.app_secrets[0].encode("utf-8")
        return {"appsecret_proof": hmac.new(secret, token.encode("utf-8"), hashlib.sha256).hexdigest()}

    def call(self, method: str, path: str, token: str, *, params: dict | None = None,
             json: dict | None = None) -> dict:
        """One Graph call; the parsed JSON body on success.

        Raises:
            DeliveryError: classified by policy.classify (timeouts and connection
                errors are transient).
        """
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
            raise DeliveryError(TRANSIENT, "timeout") from None
        except requests.ConnectionError:
            raise DeliveryError(TRANSIENT, "connection_error") from None
        warning = response.headers.get("x-ad-api-version-warning")
        if warning:
            log.warning("graph_version_warning", api_version=self.settings.api_version, warning=warning)
        try:
            body = response.json()
        except ValueError:
            body = None
        if response.status_code == 200 and isinstance(body, dict):
            return body
        error = body.get("error") if isinstance(body, dict) else None
        error = error if isinstance(error, dict) else None
        reason = classify(response.status_code, error)
        error = error or {}
        raise DeliveryError(
            reason,
            f"HTTP {response.status_code}" + (f" code {error.get('code')}" if error.get("code") else ""),
            code=error.get("code"),
            subcode=error.get("error_subcode"),
            fbtrace_id=error.get("fbtrace_id"),
            user_title=error.get("error_user_title"),
            http_status=response.status_code,
        )

    def read_lead(self, leadgen_id: str) -> dict:
        """The lead with its answers (`field_data`).

        Raises:
            DeliveryError: see `call`.
        """
        return self.call("GET", leadgen_id, self.settings.page_access_token, params={"fields": LEAD_FIELDS})
