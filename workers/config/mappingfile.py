"""The form mapping file (LEADRELAY_CONFIG, TOML): which answer is which match key, per form.

Notes: docs/internals/config.md
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import phonenumbers
import pycountry

from workers.config import crmmap, ldu, routesfile
from workers.config.needed import ConfigError, Gather
from workers.config.stagemap import StageMap
from workers.identity import matchkeys
from workers.sources.registry import CRM_SOURCES, FORM_SOURCES, GOOGLE_SOURCES, LDU_SOURCES

SETTING = "LEADRELAY_CONFIG"
HIDDEN_FIELDS = ("fbclid", "fbc", "fbp", "event_id", "user_agent", "page_url", "client_ip")
ACTION_SOURCES = ("auto", "website", "system_generated")


def _fail(where: str, problem: str):
    raise ConfigError(SETTING, f"{where}: {problem}")


def _form(where: str, raw) -> dict:
    if not isinstance(raw, dict):
        _fail(where, "must be a table")
    allowed = set(matchkeys.SETTINGS) | {
        "consent",
        "consent_option",
        "event_name",
        "value",
        "currency",
        "action_source",
        "hidden",
        "region",
        "ldu",
        "dataset",
    }
    for name, value in raw.items():
        if name not in allowed:
            _fail(f"{where}.{name}", f"unknown setting (known: {', '.join(sorted(allowed))})")
        if name in matchkeys.SETTINGS or name in ("consent", "consent_option", "event_name"):
            if not isinstance(value, str) or not value:
                _fail(f"{where}.{name}", "must be a non-empty string")
    if "consent_option" in raw and "consent" not in raw:
        _fail(f"{where}.consent_option", "names an option of the `consent` question: set `consent` too")
    hidden = raw.get("hidden", {})
    if not isinstance(hidden, dict) or any(k not in HIDDEN_FIELDS or not isinstance(v, str) for k, v in hidden.items()):
        _fail(f"{where}.hidden", f"keys must be among {', '.join(HIDDEN_FIELDS)}, values strings")
    if "value" in raw and (isinstance(raw["value"], bool) or not isinstance(raw["value"], (int, float))):
        _fail(f"{where}.value", "must be a number")
    if "currency" in raw and (
        not isinstance(raw["currency"], str) or pycountry.currencies.get(alpha_3=raw["currency"].upper()) is None
    ):
        _fail(f"{where}.currency", "must be an ISO 4217 code such as EUR")
    if "value" in raw and "currency" not in raw:
        _fail(f"{where}.currency", "is required with value")
    if raw.get("action_source", "auto") not in ACTION_SOURCES:
        _fail(f"{where}.action_source", f"must be one of {', '.join(ACTION_SOURCES)}")
    if "region" in raw and (
        not isinstance(raw["region"], str) or raw["region"].upper() not in phonenumbers.SUPPORTED_REGIONS
    ):
        _fail(f"{where}.region", "must be a two-letter country code such as FR")
    return {**raw, "region": raw["region"].upper()} if "region" in raw else raw


def _ldu(where: str, value) -> dict | None:
    try:
        return ldu.fields(value)
    except ldu.BadLdu as err:
        _fail(f"{where}.ldu", str(err))


def read(path: str) -> dict:
    """The whole mapping file as a dict (forms and stages); empty without a path.

    Raises:
        ConfigError: unreadable file or bad TOML.
    """
    if not path:
        return {}
    try:
        return tomllib.loads(Path(path).read_text())
    except OSError as err:
        _fail(path, f"cannot read it ({err.strerror})")
    except tomllib.TOMLDecodeError as err:
        _fail(path, f"not valid TOML ({err})")


def load(doc: dict, gather: Gather | None = None) -> dict:
    """`{"typeform": {form_id: settings}, "tally": {...}}` from the file's `forms`; each
    form's mistake goes to `gather` (then the next form is checked), else is raised.

    Raises:
        ConfigError: a bad setting (named with its path).
    """
    forms = doc.get("forms", {})
    # [forms.meta.ID] only routes a Lead Ads form to a dataset: routing.py reads it.
    if (
        not isinstance(forms, dict)
        or any(s not in (*FORM_SOURCES, *GOOGLE_SOURCES, "meta") for s in forms)
        or any(not isinstance(table, dict) for table in forms.values())
    ):
        _fail("forms", f"sources must be among meta, {', '.join(FORM_SOURCES + GOOGLE_SOURCES)}, each a table of forms")
    gather = gather or Gather()
    loaded: dict[str, dict] = {source: {} for source in FORM_SOURCES + GOOGLE_SOURCES}
    for source in FORM_SOURCES + GOOGLE_SOURCES:
        for form_id, raw in forms.get(source, {}).items():
            with gather.entry():
                form = _form(f"forms.{source}.{form_id}", raw)
                if "ldu" in form:
                    form["processing"] = _ldu(f"forms.{source}.{form_id}", form["ldu"])
                loaded[source][str(form_id)] = form
    return loaded


def processing(doc: dict) -> dict:
    """Limited Data Use fields per source of events, from `[sources.<name>] ldu`.

    Raises:
        ConfigError: an unknown source or setting, or a bad `ldu` (named with its path).
    """
    sources = doc.get("sources", {})
    if not isinstance(sources, dict) or any(s not in LDU_SOURCES for s in sources):
        _fail("sources", f"must be among {', '.join(LDU_SOURCES)} (a CRM's stage events are crm's)")
    out = {}
    for name, raw in sources.items():
        if not isinstance(raw, dict) or set(raw) - {"ldu"}:
            _fail(f"sources.{name}", "may only set ldu")
        out[name] = _ldu(f"sources.{name}", raw.get("ldu"))
    return out


def validate(settings, env=None) -> dict:
    """The whole mapping file (settings.config_path) read and checked, as every process and
    `check-config` use it: `{"forms", "processing", "stages", "routes", "crm"}` (crmmap.py). The routes join
    the file's datasets, Pages and clients to the environment's settings and tokens.

    Raises:
        ConfigError: every bad entry, each named with its path in the file (one line each;
            an entry that depends on a bad one may be named too).
    """
    doc = read(settings.config_path)  # a file that is no TOML at all is one mistake
    gather = Gather()
    forms = load(doc, gather)
    by_source, stages, routes, crm = {}, StageMap(), None, None
    with gather.entry():
        by_source = processing(doc)
    with gather.entry():
        stages = StageMap.load(doc.get("stages", {}), by_source.get("crm"))
    with gather.entry():
        routes = routesfile.load(doc, settings, env, gather)
    if routes is not None:  # the CRM tables name datasets: judged against the routes that loaded
        with gather.entry():
            crm = crmmap.load(doc, CRM_SOURCES, stages, routes.datasets, settings.sandbox, gather)
        for destination in routes.google.values():  # each conversion action's key: an event a stage sends
            for event in destination.conversion_actions:
                with gather.entry():
                    if not stages.sends(event):
                        near = stages.suggest(event)
                        _fail(
                            f"google.{destination.key}.conversion_actions.{event}",
                            "is no event a stage sends (Lead, QualifiedLead, Schedule, Purchase...)"
                            + (f"; did you mean {near}?" if near else ""),
                        )
    gather.done()
    return {"forms": forms, "processing": by_source, "stages": stages, "routes": routes, "crm": crm}
