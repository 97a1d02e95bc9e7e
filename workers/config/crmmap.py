"""Which CRM stage ids become which stage events, and which dataset each CRM account's
stages go to when the lead is unknown: the mapping file's `[crm.<source>]` tables.

Notes: docs/internals/config.md
"""

from __future__ import annotations

import pycountry

from workers.config.needed import ConfigError, Gather
from workers.config.stagemap import StageMap
from workers.sources.registry import SOURCES

SETTING = "LEADRELAY_CONFIG"
# Each source's stage ids that mean the same in every account (its module's DEFAULT_STAGES).
DEFAULTS = {name: source.traits.default_stages for name, source in SOURCES.items() if source.traits.default_stages}
# Where a Standard Webhooks body holds each part of a stage change (dotted paths): by
# default the stage API's own item, so a sender that posts that shape needs no table.
FIELDS = ("email", "phone", "stage", "occurred_at", "value", "currency", "leadgen_id")
DEFAULT_FIELDS = {name: name for name in FIELDS}
# The sandbox's stand-in pipelines (a vendor module's SANDBOX_STAGES): mapped with no table.
SANDBOX = {name: s.traits.sandbox_stages for name, s in SOURCES.items() if s.traits.sandbox_stages}
SANDBOX_CURRENCY = {name: "USD" for name, s in SOURCES.items() if s.traits.names_no_currency}


def load(
    doc: dict, sources: tuple[str, ...], stage_map: StageMap, datasets, sandbox: bool = False, gather=None
) -> dict:
    """`{source: {"stages": {id: stage}, "accounts": {account: dataset}}}` for every CRM
    source; with `gather` (config/needed.Gather), each source's mistake is added to it and
    the next source is checked.

    Raises:
        ConfigError: a table or entry that is not understood, named with its path.
    """
    outer, gather = gather, gather or Gather()
    tables = doc.get("crm", {})
    if not isinstance(tables, dict) or any(name not in sources for name in tables):
        raise ConfigError(SETTING, f"crm: sources must be among {', '.join(sources)}")
    out = {}
    for name in sources:
        with gather.entry():
            out[name] = _source(name, tables.get(name, {}), stage_map, datasets, sandbox)
    if outer is None:  # no caller gathers: its mistakes are raised here, all of them
        gather.done()
    return out


def _source(name: str, raw, stage_map: StageMap, datasets, sandbox: bool) -> dict:
    if not isinstance(raw, dict) or set(raw) - {"stages", "accounts", "fields", "currency"}:
        raise ConfigError(SETTING, f"crm.{name}: may only hold the tables stages, accounts and fields, and currency")
    currency = raw.get("currency", SANDBOX_CURRENCY.get(name) if sandbox else None)
    if currency is not None and (not isinstance(currency, str) or pycountry.currencies.get(alpha_3=currency) is None):
        raise ConfigError(SETTING, f"crm.{name}.currency: must be an ISO 4217 code such as EUR")
    stages = raw.get("stages")
    if stages is None:
        stages = {**DEFAULTS.get(name, {}), **(SANDBOX.get(name, {}) if sandbox else {})}
    return {
        "currency": currency,  # for a CRM whose pushes name none (HighLevel): the account's
        # No table and no defaults: the stage the sender names is taken as a stage name.
        "passthrough": name not in DEFAULTS and raw.get("stages") is None,
        "fields": _fields(name, raw.get("fields")),
        "stages": {str(k): _stage(f"crm.{name}.stages.{k}", v, stage_map) for k, v in _table(name, stages).items()},
        "accounts": {
            SOURCES[name].account_id(str(k)): _dataset(f"crm.{name}.accounts.{k}", v, datasets)
            for k, v in _table(name, raw.get("accounts", {})).items()
        },
    }


def _fields(name: str, raw) -> dict:
    if raw is None:
        return dict(DEFAULT_FIELDS)
    if not isinstance(raw, dict) or set(raw) - set(FIELDS):
        raise ConfigError(SETTING, f"crm.{name}.fields: keys must be among {', '.join(FIELDS)}")
    for key, path in raw.items():
        if not isinstance(path, str) or not all(part.strip() for part in path.split(".")):
            raise ConfigError(SETTING, f"crm.{name}.fields.{key}: must be a dotted path such as data.contact.email")
    return {**DEFAULT_FIELDS, **raw}


def extract(fields: dict, doc) -> dict:
    """Each field's value found at its dotted path in `doc` (None where there is none)."""
    out = {}
    for name, path in fields.items():
        value = doc
        for part in path.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        out[name] = value
    return out


def _table(name: str, raw) -> dict:
    if not isinstance(raw, dict):
        raise ConfigError(SETTING, f"crm.{name}: stages and accounts must be tables")
    return raw


def _stage(where: str, value, stage_map: StageMap) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(SETTING, f"{where}: must be a stage or Meta event name")
    _, problem = stage_map.resolve(value)
    if problem and problem != "negative_stage":
        raise ConfigError(SETTING, f"{where}: {problem.partition(': ')[2] or problem}")
    return value


def _dataset(where: str, value, datasets) -> str:
    if not isinstance(value, str) or value not in datasets:
        raise ConfigError(SETTING, f"{where}: must name a dataset of the file ({', '.join(sorted(datasets))})")
    return value
