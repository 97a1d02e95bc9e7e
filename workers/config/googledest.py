"""Google Ads destinations, the mapping file's `[google.<name>]` tables: the account that owns
the conversion actions, one conversion action per funnel stage, the Google lead forms that
feed it, and the consent said for leads whose form says none (docs/google.md).

Notes: docs/internals/config.md
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from workers.config.needed import ConfigError

SETTING = "LEADRELAY_CONFIG"
PREFIX = "google:"  # a destination's id among the datasets' (routing.Routes.dataset)
ANY_FORM = "*"
CONSENT_WORDS = {"granted": "CONSENT_GRANTED", "denied": "CONSENT_DENIED"}
_ACCOUNT = re.compile(r"\d{10}")
_ACTION = re.compile(r"\d{1,20}")
_EVENT = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,49}")  # what a stage resolves to ([stages])
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
MAX_WINDOW_DAYS = 90  # the longest click-through window a conversion action takes


@dataclass(frozen=True)
class GoogleDestination:
    """Where a Google lead's funnel goes. `name` is the Meta dataset it shares its leads'
    scope with (an API client's datasets, forget, the stage lookups); `key` its own name."""

    key: str
    name: str  # the dataset (routing.Dataset.name) whose client owns it
    operating_account: str  # the Google Ads account that owns the conversion actions (10 digits)
    conversion_actions: dict[str, str] = field(default_factory=dict, hash=False)  # event name -> action id
    login_account: str | None = None  # a manager account the credential reaches it through
    forms: frozenset[str] = frozenset()  # Google lead form ids; ANY_FORM: every form
    consent: dict[str, str] = field(default_factory=dict, hash=False)  # adUserData / adPersonalization
    window_days: int = MAX_WINDOW_DAYS  # older events are dead-lettered `expired`, never sent
    credentials: str = ""  # the service account key file; empty: dry run (events kept)
    region: str | None = None  # how its forms' phones without a country code are read
    every_lead: bool = False  # its dataset's other leads' stages go to Google too (unattributed, by email and phone)

    @property
    def id(self) -> str:
        return PREFIX + self.key

    @property
    def token(self) -> str:
        """What a pause is keyed by: the credentials file that Google refused."""
        return self.credentials

    @property
    def dry_run(self) -> bool:
        return not self.credentials

    @property
    def label(self) -> str:
        return self.id  # metrics and logs


def _fail(where: str, problem: str):
    raise ConfigError(SETTING, f"{where}: {problem}")


_KNOWN = {
    "operating_account",
    "login_account",
    "conversion_actions",
    "forms",
    "dataset",
    "consent",
    "window_days",
    "region",
    "every_lead",
}


def load(key: str, raw: dict, dataset_of, credentials: str) -> GoogleDestination:
    """One `[google.<key>]` table. `dataset_of(where, raw)` names its dataset (routesfile).

    Raises:
        ConfigError: a bad entry, named with its path.
    """
    where = f"google.{key}"
    for name in raw:
        if name not in _KNOWN:
            _fail(f"{where}.{name}", f"unknown setting (known: {', '.join(sorted(_KNOWN))})")
    if not _NAME.fullmatch(key):
        _fail(where, "a destination's name is lowercase letters, digits, - and _ (up to 40)")
    accounts = {}
    for name in ("operating_account", "login_account"):
        value = raw.get(name)
        if value is None and name == "login_account":
            continue
        if value is None:
            _fail(
                f"{where}.{name}",
                'is required: the Google Ads customer id that owns the conversion actions, "123-456-7890"',
            )
        text = value.replace("-", "") if isinstance(value, str) else None
        if text is None or not _ACCOUNT.fullmatch(text):
            _fail(f"{where}.{name}", 'must be a Google Ads customer id, as a string: "123-456-7890"')
        accounts[name] = text
    actions = raw.get("conversion_actions")
    if not isinstance(actions, dict) or not actions:
        _fail(
            f"{where}.conversion_actions", 'must be a table: event name = "conversion action id", such as Lead = "123"'
        )
    for event_name, action in actions.items():
        if not _EVENT.fullmatch(event_name):
            _fail(f"{where}.conversion_actions.{event_name}", "is no event name (Lead, QualifiedLead, Purchase...)")
        if not isinstance(action, str) or not _ACTION.fullmatch(action):
            _fail(f"{where}.conversion_actions.{event_name}", "must be the conversion action's numeric id, as a string")
    forms = raw.get("forms", [ANY_FORM])
    if not isinstance(forms, list) or not forms or any(not isinstance(f, str) or not f.strip() for f in forms):
        _fail(f"{where}.forms", 'must list Google lead form ids as strings (["*"]: every form)')
    consent = raw.get("consent", {})
    if not isinstance(consent, dict) or any(
        k not in ("ad_user_data", "ad_personalization") or v not in CONSENT_WORDS for k, v in consent.items()
    ):
        _fail(f"{where}.consent", 'takes ad_user_data and ad_personalization, each "granted" or "denied"')
    window = raw.get("window_days", MAX_WINDOW_DAYS)
    if isinstance(window, bool) or not isinstance(window, int) or not 1 <= window <= MAX_WINDOW_DAYS:
        _fail(f"{where}.window_days", f"must be the conversion actions' click-through window: 1 to {MAX_WINDOW_DAYS}")
    if not isinstance(raw.get("every_lead", False), bool):
        _fail(f"{where}.every_lead", "must be true or false")
    region = raw.get("region")
    if region is not None and (not isinstance(region, str) or len(region) != 2 or not region.isalpha()):
        _fail(f"{where}.region", "must be a two-letter country code such as FR")
    return GoogleDestination(
        key=key,
        name=dataset_of(where, raw),
        operating_account=accounts["operating_account"],
        conversion_actions=dict(actions),
        login_account=accounts.get("login_account"),
        forms=frozenset(f.strip() for f in forms),
        consent={
            {"ad_user_data": "adUserData", "ad_personalization": "adPersonalization"}[k]: CONSENT_WORDS[v]
            for k, v in consent.items()
        },
        window_days=window,
        credentials=credentials,
        region=region.upper() if region else None,
        every_lead=raw.get("every_lead", False),
    )


def by_form(destinations: dict[str, GoogleDestination]) -> dict[str, str]:
    """Form id -> destination key; two destinations naming one form is a mistake.

    Raises:
        ConfigError: a form named twice.
    """
    out: dict[str, str] = {}
    for destination in destinations.values():
        for form in sorted(destination.forms):
            if form in out:
                _fail(f"google.{destination.key}.forms", f"{form} is also google.{out[form]}'s: a form feeds one")
            out[form] = destination.key
    return out
