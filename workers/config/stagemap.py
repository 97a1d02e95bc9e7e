"""Which Meta event a CRM stage name stands for (Meta's Conversion Leads integration guide), with the mapping
file's `[stages]` table on top of the defaults:

Notes: docs/internals/config.md
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

import pycountry

from workers.config.needed import ConfigError

STANDARD_EVENTS = (
    "AddPaymentInfo AddToCart AddToWishlist CompleteRegistration Contact CustomizeProduct Donate "
    "FindLocation InitiateCheckout Lead Purchase Schedule Search StartTrial SubmitApplication "
    "Subscribe ViewContent QualifiedLead"
).split()
DEFAULT_MAP = {
    "new": "Lead",
    "lead": "Lead",
    "new inquiry": "Lead",
    "form fill": "Lead",
    "mql": "QualifiedLead",
    "marketing qualified": "QualifiedLead",
    "marketing qualified lead": "QualifiedLead",
    "sql": "Schedule",
    "sales qualified": "Schedule",
    "sales qualified lead": "Schedule",
    "meeting booked": "Schedule",
    "demo booked": "Schedule",
    "opportunity": "StartTrial",
    "proposal": "StartTrial",
    "customer": "Purchase",
    "won": "Purchase",
    "closed won": "Purchase",
}
DEFAULT_NEGATIVE = ("disqualified", "junk", "unqualified", "spam", "lost", "closed lost")


def _norm(text: str) -> str:
    return re.sub(r"[\s_\-]+", " ", str(text).strip().lower())


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", str(text).lower())


@dataclass(frozen=True)
class StageMap:
    names: dict = field(default_factory=lambda: dict(DEFAULT_MAP))
    negative: frozenset = frozenset(DEFAULT_NEGATIVE)
    values: dict = field(default_factory=dict)
    currency: str | None = None
    allow_custom: bool = False
    processing: dict | None = None  # Limited Data Use by default ([sources.crm] ldu)

    @classmethod
    def load(cls, raw: dict, processing: dict | None = None) -> "StageMap":
        """From the mapping file's `[stages]` table, and the default LDU fields.

        Raises:
            ConfigError: a bad entry, named with its path.
        """

        def fail(where, problem):
            raise ConfigError("LEADRELAY_CONFIG", f"stages.{where}: {problem}")

        names = dict(DEFAULT_MAP)
        for stage, event in (raw.get("map") or {}).items():
            if event not in STANDARD_EVENTS and not raw.get("allow_custom"):
                suggestion = _suggest(event)
                fail(
                    f"map.{stage}",
                    f"{event!r} is not an event Meta optimises on"
                    + (f"; did you mean {suggestion}?" if suggestion else ""),
                )
            names[_norm(stage)] = event
        values = dict(raw.get("values") or {})
        currency = values.pop("currency", None)
        if currency and pycountry.currencies.get(alpha_3=str(currency).upper()) is None:
            fail("values.currency", "must be an ISO 4217 code such as EUR")
        for event, value in values.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                fail(f"values.{event}", "must be a number")
        if values and not currency:
            fail("values.currency", "is required with values")
        return cls(
            names=names,
            negative=frozenset(_norm(n) for n in raw.get("negative", DEFAULT_NEGATIVE)),
            values=values,
            currency=currency.upper() if currency else None,
            allow_custom=bool(raw.get("allow_custom", False)),
            processing=processing,
        )

    def sends(self, event: str) -> bool:
        """Whether a stage can come out as this event name (a Google conversion action's key)."""
        return event in STANDARD_EVENTS or event in self.names.values() or self.allow_custom

    def suggest(self, name: str) -> str | None:
        """The event a near miss meant."""
        return _suggest(name)

    def resolve(self, stage: str) -> tuple[str | None, str | None]:
        """(event name, None), or (None, reason) with the reason a person can act on."""
        if stage in STANDARD_EVENTS:
            return stage, None
        normal = _norm(stage)
        if normal in self.names:
            return self.names[normal], None
        if normal in self.negative:
            return None, "negative_stage"
        if self.allow_custom:
            return stage, None
        suggestion = _suggest(stage)
        return None, f"unknown_stage: {stage!r} is not a stage or event Meta knows" + (
            f"; did you mean {suggestion}?" if suggestion else ""
        )


def _suggest(name: str) -> str | None:
    """The Meta event a near miss meant (QUALIFIED_LEAD, qualified, Qualified Lead...)."""
    squashed = _squash(name)
    for event in STANDARD_EVENTS:
        if _squash(event) == squashed:
            return event
    if _norm(name) in DEFAULT_MAP:
        return DEFAULT_MAP[_norm(name)]
    close = difflib.get_close_matches(squashed, [_squash(e) for e in STANDARD_EVENTS], n=1, cutoff=0.6)
    if close:
        return next(e for e in STANDARD_EVENTS if _squash(e) == close[0])
    for stage, event in DEFAULT_MAP.items():
        if squashed and squashed in _squash(stage):
            return event
    return None
