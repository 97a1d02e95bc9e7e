"""The registry of webhook sources: the whole truth about each (docs/sources.md).

Notes: docs/internals/sources.md
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass
from types import ModuleType
from typing import Callable

from workers import jobnames
from workers.sources import googleads, meta, signed, tally, typeform
from workers.sources import keys as signing_keys
from workers.sources.contract import Traits, Vendor
from workers.vendors.calcom import webhook as calcom
from workers.vendors.calendly import webhook as calendly
from workers.vendors.close import webhook as close
from workers.vendors.highlevel import webhook as highlevel
from workers.vendors.hubspot import webhook as hubspot
from workers.vendors.messaging import webhook as messaging
from workers.vendors.pipedrive import webhook as pipedrive
from workers.vendors.salesforce import webhook as salesforce

# Lead Ads sources send ids only: the worker reads the lead from the Graph API. Form
# sources send the answers: mapped and hashed on arrival (workers/intake/forms.py).
LEAD_ADS = "lead_ads"
FORM = "form"
# CRM sources send stage changes by id: the worker reads the person (and the deal's value)
# back from the CRM's API with the CRM's token, then sends a stage event for the lead.
CRM_STAGES = "crm_stages"
# Chat sources send the first message of a conversation an ad started: kept in the request
# (workers/intake/chats.py), for the funnel after it to go back as business-messaging events.
CHAT = "chat"
# Google Ads lead forms send the answers, as forms do, but their funnel goes to Google
# (workers/intake/googleleads.py): never to Meta, and with Google's own hashing.
GOOGLE_LEAD = "google_lead"


@dataclass(frozen=True)
class Source:
    name: str
    kind: str  # LEAD_ADS, FORM, CRM_STAGES, CHAT or GOOGLE_LEAD
    secret_setting: str  # the environment variable holding its signing secret(s)
    module: ModuleType  # signature, verify, parse, lead_key
    job: str  # the RQ job each new lead runs should it need its own (workers/jobnames.py)
    title: str  # how people write its name: the admin page, and `lead_event_source` for a CRM's events
    token_setting: str = ""  # CRM sources: the API token the person is read back with
    client: str = ""  # CRM sources that read back: the client class's dotted path (workers/crmapi)
    sample: str = ""  # the sandbox's `send-test <name>`: the function's dotted path (its samples.py)
    # A secret that is a key: read in its documented forms or refused at start (ValueError
    # says why); None: any text is a shared secret.
    secret_parser: Callable[[str], object] | None = None
    # An account id as the mapping file's `[crm.<name>.accounts]` and the parser both write it
    # (Salesforce's organization ids in 15 characters, whether 15 or 18 are given).
    account_id: Callable[[str], str] = str.strip

    @property
    def api_url_setting(self) -> str:
        """The setting that points its read-back client elsewhere (the sandbox's stand-in)."""
        return f"{self.name.upper()}_API_URL" if self.client else ""

    def secret_problems(self, values) -> list[str]:
        """Why each of these values of its secret setting cannot be used (none: all can)."""
        out: list[str] = []
        parser = self.secret_parser
        if parser is None:
            return out
        for value in values:
            try:
                parser(value)
            except ValueError as err:
                out.append(str(err))
        return out

    def verify(self, body: bytes, headers, secrets, url: str = "", peer: str = "") -> None:
        """Raise BadSignature unless the delivery authenticates as its vendor does. A source
        module's `verify(body, headers, secrets)` is given, when it names them, `url` (the
        address the sender called: HubSpot signs it) and `peer` (the sender's address as
        the proxy settings give it: an allowlist). So a vendor may sign in a header, send a
        token in the body or as Basic credentials, or be known by where it posts from; a
        client certificate is checked at the TLS front end, which passes what it found in
        a header the module reads."""
        wanted = _parameters(self.module.verify)
        extra = {name: value for name, value in (("url", url), ("peer", peer)) if name in wanted}
        self.module.verify(body, headers, secrets, **extra)

    @property
    def reads_url(self) -> bool:
        """Its verify reads the called URL: only then is it worth building (every request)."""
        return "url" in _parameters(self.module.verify)

    def sign(self, secret: str, body: bytes, url: str = "") -> dict[str, str]:
        """The headers a sender signing `body` with `secret` (posting it to `url`) sends."""
        return self.module.sign(secret, body, url)

    def signed(self, secret: str, body: bytes, url: str = "") -> tuple[bytes, dict[str, str]]:
        """The body and headers a sender posts: a vendor that puts its token in the body
        gives `sign_body(secret, body, url)`; the others sign in headers alone."""
        if self.traits.sign_body:
            return self.traits.sign_body(secret, body, url)
        return body, self.sign(secret, body, url)

    def parse(self, body: bytes, headers=None) -> dict:
        if self.traits.parses_headers:  # its idempotency key is a header
            return self.module.parse(body, headers or {})
        return self.module.parse(body)

    @property
    def traits(self) -> Traits:
        """What its module declares beyond the contract (contract.py)."""
        return _traits(self.module)

    def lead_key(self, item: dict) -> str:
        return self.module.lead_key(item)


_TRAITS: dict[int, Traits] = {}  # by the module's id: read once per module


def _traits(module: ModuleType) -> Traits:
    found = _TRAITS.get(id(module))
    if found is None:
        if not isinstance(module, Vendor):
            name = getattr(module, "__name__", module)
            raise TypeError(f"{name} does not keep the vendor contract (workers/sources/contract.py)")
        found = _TRAITS[id(module)] = Traits.of(module)
    return found


@functools.cache
def _parameters(function) -> frozenset[str]:
    return frozenset(inspect.signature(function).parameters)


READ = jobnames.READ_CRM_STAGE  # a CRM stage change read back on its own
_SIGNED_SAMPLE = "workers.run.crmsamples.booking"  # the sample lead's next stage, in the stage API's shape
_CHAT_SAMPLE = "workers.vendors.messaging.samples.send"
SOURCES = {
    source.name: source
    for source in (
        Source(meta.NAME, LEAD_ADS, "META_APP_SECRET", meta, jobnames.PROCESS_META_LEAD, "Meta Lead Ads"),
        Source(typeform.NAME, FORM, "TYPEFORM_SECRET", typeform, jobnames.SEND_FORM_LEAD, "Typeform"),
        Source(tally.NAME, FORM, "TALLY_SIGNING_SECRET", tally, jobnames.SEND_FORM_LEAD, "Tally"),
        Source(
            googleads.NAME,
            GOOGLE_LEAD,
            "GOOGLE_ADS_WEBHOOK_KEY",
            googleads,
            jobnames.SEND_FORM_LEAD,
            "Google Ads lead forms",
            sample="workers.run.googlesample.send",
        ),
        Source(
            hubspot.NAME,
            CRM_STAGES,
            "HUBSPOT_CLIENT_SECRET",
            hubspot,
            READ,
            "HubSpot",
            "HUBSPOT_ACCESS_TOKEN",
            "workers.vendors.hubspot.client.HubSpot",
            "workers.vendors.hubspot.samples.send",
        ),
        Source(
            pipedrive.NAME,
            CRM_STAGES,
            "PIPEDRIVE_WEBHOOK_CREDENTIALS",
            pipedrive,
            READ,
            "Pipedrive",
            "PIPEDRIVE_API_TOKEN",
            "workers.vendors.pipedrive.client.Pipedrive",
            "workers.vendors.pipedrive.samples.send",
        ),
        Source(
            highlevel.NAME,
            CRM_STAGES,
            "HIGHLEVEL_WEBHOOK_PUBLIC_KEY",
            highlevel,
            READ,
            "HighLevel",
            "HIGHLEVEL_ACCESS_TOKEN",
            "workers.vendors.highlevel.client.HighLevel",
            "workers.vendors.highlevel.samples.send",
            secret_parser=signing_keys.parse,
        ),
        Source(
            salesforce.NAME,
            CRM_STAGES,
            "SALESFORCE_OUTBOUND_SECRET",
            salesforce,
            READ,
            "Salesforce",
            "SALESFORCE_ACCESS_TOKEN",
            "workers.vendors.salesforce.client.Salesforce",
            "workers.vendors.salesforce.samples.send",
            account_id=salesforce.account_id,
        ),
        Source(
            close.NAME,
            CRM_STAGES,
            "CLOSE_WEBHOOK_SIGNATURE_KEY",
            close,
            READ,
            "Close",
            "CLOSE_API_KEY",
            "workers.vendors.close.client.Close",
            "workers.vendors.close.samples.send",
            secret_parser=close.signature_key,
        ),
        # Booking tools and any signing tool put the person in the push: nothing is read back.
        Source(
            calendly.NAME,
            CRM_STAGES,
            "CALENDLY_SIGNING_KEY",
            calendly,
            READ,
            "Calendly",
            sample="workers.vendors.calendly.samples.send",
        ),
        Source(
            calcom.NAME,
            CRM_STAGES,
            "CALCOM_WEBHOOK_SECRET",
            calcom,
            READ,
            "Cal.com",
            sample="workers.vendors.calcom.samples.send",
        ),
        # Any tool: its events' lead_event_source is the source's name, as before (no one tool to name).
        Source(signed.NAME, CRM_STAGES, "SIGNED_WEBHOOK_SECRET", signed, READ, "signed", sample=_SIGNED_SAMPLE),
        # Meta's messaging webhooks, signed with the app secret as leadgen's; no job: kept in the request.
        *(
            Source(channel, CHAT, "META_APP_SECRET", messaging, "", title, sample=_CHAT_SAMPLE)
            for channel, title in (
                (messaging.WHATSAPP, "WhatsApp"),
                (messaging.MESSENGER, "Messenger"),
                (messaging.INSTAGRAM, "Instagram Direct"),
            )
        ),
    )
}
FORM_SOURCES = tuple(name for name, source in SOURCES.items() if source.kind == FORM)
GOOGLE_SOURCES = tuple(name for name, source in SOURCES.items() if source.kind == GOOGLE_LEAD)
CRM_SOURCES = tuple(name for name, source in SOURCES.items() if source.kind == CRM_STAGES)
CHAT_SOURCES = tuple(name for name, source in SOURCES.items() if source.kind == CHAT)
READ_BACK = tuple(name for name, source in SOURCES.items() if source.client)  # CRMs read with their token
# Every setting a source brings (secrets, tokens, API addresses): the sandbox generates the
# secrets and tokens, and tests set them all, from this list.
SECRET_SETTINGS = tuple(
    dict.fromkeys(s for source in SOURCES.values() for s in (source.secret_setting, source.token_setting) if s)
)
# Sources whose senders may be set up without a secret: LEADRELAY_ALLOW_UNSIGNED may name them.
UNSIGNED_ALLOWED = (*FORM_SOURCES, calcom.NAME)
# Stage changes from a CRM or a sheet come through the stage API, not a webhook.
CRM = "crm"
EVENT_SOURCES = (*SOURCES, CRM)
# Whose events `[sources.<name>] ldu` applies to: a CRM source's events are stage events ([sources.crm]).
LDU_SOURCES = (*(name for name in SOURCES if name not in CRM_SOURCES), CRM)
