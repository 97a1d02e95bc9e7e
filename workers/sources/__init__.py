"""The registry of webhook sources: the whole truth about each.

A source module exposes `NAME`, `SIGNATURE_HEADER`, `signature(secret, body)`,
`verify(body, headers, secrets)`, `parse(body)` and `lead_key(item)` (the lead's key
within its source: the job id, the event ids and the lead's profile are built from it).
Everything else that differs between sources is declared here, and read from here by
the settings (which secret), the receiver (one route for all), the mapping file (which
sources have forms) and the intake (which job). Adding a form tool is one module, one
line below, one fixtures folder (tests/fixtures/<name>/) and one test module.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

from workers import jobnames
from workers.sources import meta, tally, typeform

# Lead Ads sources send ids only: the worker reads the lead from the Graph API. Form
# sources send the answers: mapped and hashed on arrival (workers/intake/forms.py).
LEAD_ADS = "lead_ads"
FORM = "form"


@dataclass(frozen=True)
class Source:
    name: str
    kind: str  # LEAD_ADS or FORM
    secret_setting: str  # the environment variable holding its signing secret(s)
    module: ModuleType  # signature, verify, parse, lead_key
    job: str  # the RQ job each new lead runs should it need its own (workers/jobnames.py)

    def verify(self, body: bytes, headers, secrets) -> None:
        self.module.verify(body, headers, secrets)

    def parse(self, body: bytes) -> dict:
        return self.module.parse(body)

    def lead_key(self, item: dict) -> str:
        return self.module.lead_key(item)


SOURCES = {
    source.name: source
    for source in (
        Source(meta.NAME, LEAD_ADS, "META_APP_SECRET", meta, jobnames.PROCESS_META_LEAD),
        Source(typeform.NAME, FORM, "TYPEFORM_SECRET", typeform, jobnames.SEND_FORM_LEAD),
        Source(tally.NAME, FORM, "TALLY_SIGNING_SECRET", tally, jobnames.SEND_FORM_LEAD),
    )
}
FORM_SOURCES = tuple(name for name, source in SOURCES.items() if source.kind == FORM)
# Stage changes from a CRM or a sheet come through the stage API, not a webhook.
CRM = "crm"
EVENT_SOURCES = (*SOURCES, CRM)
