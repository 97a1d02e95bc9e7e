"""The registry of webhook sources: the whole truth about each.

A source module exposes `NAME`, `SIGNATURE_HEADER`, `sign(secret, body, url)` (the
headers a sender sends), `verify(body, headers, secrets)` (with `url=` too when it sets
`SIGNS_URL`), `parse(body)` and `lead_key(item)` (the lead's key
within its source: the job id, the event ids and the lead's profile are built from it).
Everything else that differs between sources is declared here, and read from here by
the settings (which secret), the receiver (one route for all), the mapping file (which
sources have forms) and the intake (which job). Adding a form tool, or a CRM whose
stage changes become stage events, is one module, one line below, one fixtures folder
(tests/fixtures/<name>/) and one test module (a CRM also needs its read-back client in
workers/crmapi/, since its pushes carry ids, not people, named by its line here). The
sandbox's secrets, the test settings, the CLI's choices, display names and default stages
are all read from here: no other list names the sources.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

from workers import jobnames
from workers.sources import meta, signed, tally, typeform
from workers.vendors.calcom import webhook as calcom
from workers.vendors.calendly import webhook as calendly
from workers.vendors.hubspot import webhook as hubspot
from workers.vendors.pipedrive import webhook as pipedrive

# Lead Ads sources send ids only: the worker reads the lead from the Graph API. Form
# sources send the answers: mapped and hashed on arrival (workers/intake/forms.py).
LEAD_ADS = "lead_ads"
FORM = "form"
# CRM sources send stage changes by id: the worker reads the person (and the deal's value)
# back from the CRM's API with the CRM's token, then sends a stage event for the lead.
CRM_STAGES = "crm_stages"


@dataclass(frozen=True)
class Source:
    name: str
    kind: str  # LEAD_ADS or FORM
    secret_setting: str  # the environment variable holding its signing secret(s)
    module: ModuleType  # signature, verify, parse, lead_key
    job: str  # the RQ job each new lead runs should it need its own (workers/jobnames.py)
    title: str  # how people write its name: the admin page, and `lead_event_source` for a CRM's events
    token_setting: str = ""  # CRM sources: the API token the person is read back with
    client: str = ""  # CRM sources that read back: the client class's dotted path (workers/crmapi)
    sample: str = ""  # the sandbox's `send-test <name>`: the function's dotted path (its samples.py)

    @property
    def api_url_setting(self) -> str:
        """The setting that points its read-back client elsewhere (the sandbox's stand-in)."""
        return f"{self.name.upper()}_API_URL" if self.client else ""

    def verify(self, body: bytes, headers, secrets, url: str = "") -> None:
        if getattr(self.module, "SIGNS_URL", False):  # the signature covers the URL it was sent to
            self.module.verify(body, headers, secrets, url=url)
        else:
            self.module.verify(body, headers, secrets)

    def sign(self, secret: str, body: bytes, url: str = "") -> dict[str, str]:
        """The headers a sender signing `body` with `secret` (posting it to `url`) sends."""
        return self.module.sign(secret, body, url)

    def parse(self, body: bytes, headers=None) -> dict:
        if getattr(self.module, "PARSES_HEADERS", False):  # its idempotency key is a header
            return self.module.parse(body, headers or {})
        return self.module.parse(body)

    def lead_key(self, item: dict) -> str:
        return self.module.lead_key(item)


READ = jobnames.READ_CRM_STAGE  # a CRM stage change read back on its own
_SIGNED_SAMPLE = "workers.run.crmsamples.booking"  # the sample lead's next stage, in the stage API's shape
SOURCES = {
    source.name: source
    for source in (
        Source(meta.NAME, LEAD_ADS, "META_APP_SECRET", meta, jobnames.PROCESS_META_LEAD, "Meta Lead Ads"),
        Source(typeform.NAME, FORM, "TYPEFORM_SECRET", typeform, jobnames.SEND_FORM_LEAD, "Typeform"),
        Source(tally.NAME, FORM, "TALLY_SIGNING_SECRET", tally, jobnames.SEND_FORM_LEAD, "Tally"),
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
    )
}
FORM_SOURCES = tuple(name for name, source in SOURCES.items() if source.kind == FORM)
CRM_SOURCES = tuple(name for name, source in SOURCES.items() if source.kind == CRM_STAGES)
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
