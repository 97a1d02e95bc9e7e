"""A lead in flight through a drain job, and what became of it at each step.

Notes: docs/internals/engine.md
"""

from __future__ import annotations

from dataclasses import dataclass, field

from workers import jobnames
from workers.config.routing import Dataset, dataset_of
from workers.engine.jobwork import Work
from workers.events import conversions

# What an inbox entry is comes from the job it names, stated when it was stored
# (inbox.entry), never from the fields its argument happens to carry: a CRM change may
# carry a leadgen_id (a signed tool names the lead), and taken for the lead's own Lead
# it was skipped as already confirmed and never sent.
LEAD_ADS, CRM_CHANGE, FORM = "lead_ads", "crm_change", "form"
KINDS = {
    jobnames.PROCESS_META_LEAD: LEAD_ADS,
    jobnames.READ_CRM_STAGE: CRM_CHANGE,
    jobnames.SEND_FORM_LEAD: FORM,
}


def kind_of(entry: dict) -> str:
    """The kind of an inbox entry, from the job it names.

    Raises:
        KeyError: an entry naming no lead job (set aside by quarantine, never guessed).
    """
    return KINDS[jobnames.current(entry["fn"])]


def _lead_ads(argument: dict) -> tuple[str, str, str, str]:
    """A Lead Ads lead: its event is known from its id alone."""
    key = argument["leadgen_id"]
    return "meta", key, conversions.LEAD, conversions.event_id("meta", key, conversions.LEAD)


def _crm_change(argument: dict) -> tuple[str, str, str, str]:
    """A CRM's stage change: its lead (and the event's final id) is known once read back."""
    source, key, stage = argument["crm"], argument["event_key"], argument["stage"]
    return source, key, stage, f"{source}:{key}:{stage}"


def _form(argument: dict) -> tuple[str, str, str, str]:
    """A form submission, mapped and hashed on arrival."""
    return argument["source"], argument["key"], argument["event_name"], argument["event_id"]


# Each kind's (source, key, event name, event id), read from its entry's argument.
_IDENTITY = {LEAD_ADS: _lead_ads, CRM_CHANGE: _crm_change, FORM: _form}


@dataclass
class Lead(Work):
    """One inbox entry (or a retry batch's entry) a drain job works on."""

    entry_id: str | None = None  # None: it came in a retry batch, not from the inbox
    function: str = ""  # the RQ job it runs when it needs a job of its own (jobnames)
    attempts: int = 0  # tries so far, as part of a batch
    entry: dict = field(default_factory=dict)  # the inbox entry, as stored
    kind: str = ""  # LEAD_ADS, CRM_CHANGE or FORM: from the job the entry names

    @classmethod
    def of_entry(cls, entry_id: str | None, entry: dict) -> Lead:
        argument, kind = entry["arg"], kind_of(entry)
        source, key, event_name, event_id = _IDENTITY[kind](argument)
        return cls(
            job_id=entry["id"],
            source=source,
            key=key,
            event_name=event_name,
            event_id=event_id,
            event_time=None,
            args=argument,
            request_id=entry.get("rid"),
            dataset=dataset_of(argument.get("route")),
            entry_id=entry_id,
            function=entry["fn"],
            attempts=entry.get("n", 0),
            entry=entry,
            kind=kind,
        )

    @property
    def route(self) -> dict | None:
        return self.args.get("route")

    @property
    def crm(self) -> bool:
        """A CRM's stage change, read back from the CRM rather than from Graph."""
        return self.kind == CRM_CHANGE


@dataclass
class Built:
    """A lead whose profile and event are built, ready to send to its dataset."""

    lead: Lead
    profile: dict
    event: dict
    dataset: Dataset
    suppressed: str | None = None  # the forget that keeps this person out (suppression.py)

    @property
    def outcome(self) -> str:
        if self.suppressed:
            return "suppressed"
        return "dry_run" if self.dataset.dry_run else "delivered"


@dataclass
class Failed:
    """A lead that did not reach Meta this time, and why (a JobError, or Paused).
    `profile`: built all the same, and kept (its later stages can still go)."""

    lead: Lead
    error: Exception
    profile: dict | None = None


def failed(lead: Lead, error: Exception, event_time: int | None, profile: dict | None = None) -> Failed:
    """`lead` failed with `error`; `event_time`: what Meta's 7-day window counts from, when known."""
    lead.event_time = event_time
    return Failed(lead, error, profile)
