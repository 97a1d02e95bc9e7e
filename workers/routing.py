"""Routing: which dataset (pixel) each lead goes to, which token reads it, and which
datasets each API client may reach. For an agency or a company with several brands:

    default_dataset = "acme"           # forms without a dataset of their own go here

    [datasets.acme]                    # a name, used in filters, metrics and logs
    id = "111111111111"                # the numeric dataset (pixel) id
    token_env = "ACME_CAPI_TOKEN"      # the variable holding its CAPI token; omitted:
                                       # META_CAPI_ACCESS_TOKEN, or dry-run when that is unset
    lead_event_source = "Acme CRM"     # optional; test_event_code and ldu too

    [pages.1234567890]                 # a Facebook Page whose Lead Ads leads we read
    token_env = "ACME_PAGE_TOKEN"      # omitted: META_PAGE_ACCESS_TOKEN
    dataset = "acme"                   # omitted: default_dataset

    [forms.meta.5555]                  # one Lead Ads form to another dataset
    dataset = "acme_b2b"               # ([forms.typeform.X] and [forms.tally.X] take it too)

    [clients.acme]                     # a CRM posting stage events with its own token
    token_env = "ACME_API_TOKEN"
    datasets = ["acme", "acme_b2b"]

Tokens are never in the file, only the names of the variables that hold them. Without
`datasets` the environment's META_DATASET_ID is the one dataset, named `default`;
without `pages` every Page is read with META_PAGE_ACCESS_TOKEN. Once the file lists
Pages, a lead from another Page is acknowledged and kept as `unknown_page`, never read
with a guessed token.

A route is decided once, when a lead arrives, and travels in its job and profile as
`{"dataset", "dataset_id", "page_id"}`; the worker finds the tokens by those ids.
"""

from __future__ import annotations

import hmac
import os
import re
from dataclasses import dataclass, field
from typing import Mapping

from . import ldu
from .policy import INVALID, DeliveryError
from .required import ConfigError

SETTING = "LEADRELAY_CONFIG"
DEFAULT = "default"  # the environment's dataset (META_DATASET_ID)
ANY_PAGE = "*"  # the environment's Page token reads every Page
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
_VARIABLE = re.compile(r"[A-Z_][A-Z0-9_]*")


@dataclass(frozen=True)
class Dataset:
    name: str
    id: str
    token: str = ""  # the CAPI token; empty: events are kept (dry-run), not sent
    token_env: str = ""
    lead_event_source: str = "leadrelay"
    test_event_code: str = ""
    processing: dict | None = None  # Limited Data Use fields for its events

    @property
    def dry_run(self) -> bool:
        return not self.token


@dataclass(frozen=True)
class Page:
    id: str
    token: str
    token_env: str
    dataset: str | None


@dataclass(frozen=True)
class Client:
    name: str
    token: str
    token_env: str
    datasets: frozenset[str]


@dataclass(frozen=True)
class Routes:
    datasets: dict[str, Dataset] = field(default_factory=dict)
    pages: dict[str, Page] = field(default_factory=dict)  # by Page id; ANY_PAGE alone without a file's pages
    forms: dict[tuple[str, str], str] = field(default_factory=dict)  # (source, form id) -> dataset name
    clients: dict[str, Client] = field(default_factory=dict)
    default: str | None = None

    @property
    def by_id(self) -> dict[str, Dataset]:
        return {d.id: d for d in self.datasets.values()}

    def _route(self, dataset: str | None, page_id: str | None = None) -> dict | None:
        found = self.datasets.get(dataset) if dataset else None
        return {"dataset": found.name, "dataset_id": found.id, "page_id": page_id} if found else None

    def lead(self, page_id: str | None, form_id: str | None) -> tuple[dict | None, str | None]:
        """A Lead Ads lead's route, or None with why: `unknown_page`, `no_dataset`."""
        page = self.pages.get(page_id or "") or self.pages.get(ANY_PAGE)
        if page is None:
            return None, "unknown_page"
        route = self._route(self.forms.get(("meta", form_id or "")) or page.dataset, page_id)
        return (route, None) if route else (None, "no_dataset")

    def form(self, source: str, form_id: str) -> tuple[dict | None, str | None]:
        """A form submission's route, or None with why (`no_dataset`)."""
        route = self._route(self.forms.get((source, form_id)) or self.default)
        return (route, None) if route else (None, "no_dataset")

    def named(self, name: str | None) -> dict | None:
        """The route to a dataset by name (stage events that name their dataset)."""
        return self._route(name)

    def dataset(self, route: dict | None) -> Dataset:
        """The dataset a job's route names (by id: names may be edited); the default
        dataset for a job queued before routes existed.

        Raises:
            DeliveryError: invalid, the dataset is no longer configured (replayable once it is).
        """
        if route and route.get("dataset_id"):
            found = self.by_id.get(str(route["dataset_id"]))
        else:
            found = self.datasets.get((route or {}).get("dataset") or self.default or "")
        if found is None:
            raise DeliveryError(INVALID, f"dataset {(route or {}).get('dataset_id') or '(default)'} is not in the "
                                         f"mapping file or the environment; add it, then replay")
        return found

    def page_token(self, route: dict | None) -> str:
        """The token that reads the route's Page's leads.

        Raises:
            DeliveryError: invalid, the Page is no longer configured (replayable once it is).
        """
        page_id = (route or {}).get("page_id")
        page = self.pages.get(page_id or "") or self.pages.get(ANY_PAGE)
        if page is None:
            raise DeliveryError(INVALID, f"page {page_id} is not in the mapping file; add it, then replay")
        return page.token

    def client(self, token: str) -> Client | None:
        """The API client this bearer token belongs to (every client compared in constant time)."""
        found, given = None, token.encode("utf-8")
        for client in self.clients.values():
            if hmac.compare_digest(client.token.encode("utf-8"), given):
                found = client
        return found

    def labels(self) -> dict[str, str]:
        """Token -> the variable holding it, for logs and pause records (never the token)."""
        out = {p.token: p.token_env for p in self.pages.values() if p.token}
        out.update((d.token, d.token_env) for d in self.datasets.values() if d.token)
        return out


def _fail(where: str, problem: str):
    raise ConfigError(SETTING, f"{where}: {problem}")


def _table(doc: dict, name: str) -> dict:
    value = doc.get(name, {})
    if not isinstance(value, dict) or any(not isinstance(v, dict) for v in value.values()):
        _fail(name, "must be tables, one per entry")
    return value


def _only(where: str, raw: dict, allowed: set[str]) -> None:
    for name in raw:
        if name not in allowed:
            _fail(f"{where}.{name}", f"unknown setting (known: {', '.join(sorted(allowed))})")


def _token(where: str, raw: dict, env: Mapping[str, str], fallback: str, required: bool) -> tuple[str, str]:
    variable = raw.get("token_env", fallback)
    if not isinstance(variable, str) or not _VARIABLE.fullmatch(variable):
        _fail(f"{where}.token_env", "must name an environment variable, such as ACME_CAPI_TOKEN (never the token)")
    token = env.get(variable, "").strip()
    if not token and (required or "token_env" in raw):
        _fail(f"{where}.token_env", f"{variable} is not set")
    return token, variable


def _dataset(name: str, raw: dict, env: Mapping[str, str], settings) -> Dataset:
    where = f"datasets.{name}"
    _only(where, raw, {"id", "token_env", "lead_event_source", "test_event_code", "ldu"})
    if not _NAME.fullmatch(name) or name == DEFAULT:
        _fail(where, "a dataset's name is lowercase letters, digits, - and _ (up to 40), and not `default`")
    if not isinstance(raw.get("id"), str) or not raw["id"].isdigit():
        _fail(f"{where}.id", 'must be the numeric dataset (pixel) id, as a string: id = "1234"')
    for text in ("lead_event_source", "test_event_code"):
        if not isinstance(raw.get(text, ""), str):
            _fail(f"{where}.{text}", "must be a string")
    token, variable = _token(where, raw, env, "META_CAPI_ACCESS_TOKEN", required=False)
    try:
        processing = ldu.fields(raw.get("ldu"))
    except ldu.BadLdu as err:
        _fail(f"{where}.ldu", str(err))
    return Dataset(name, raw["id"], token, variable, raw.get("lead_event_source", settings.lead_event_source),
                   raw.get("test_event_code", ""), processing)


def load(doc: dict, settings, env: Mapping[str, str] | None = None) -> Routes:
    """The routes the mapping file and the environment's settings describe.

    Raises:
        ConfigError: the first bad entry, named with its table and key.
    """
    env = os.environ if env is None else env
    datasets: dict[str, Dataset] = {}
    # Without datasets in the file the environment's is the one, even where this process
    # lacks its id (the web process does not need it): the worker fills it in.
    if settings.dataset_id or not doc.get("datasets"):
        datasets[DEFAULT] = Dataset(DEFAULT, settings.dataset_id, settings.capi_access_token,
                                    "META_CAPI_ACCESS_TOKEN", settings.lead_event_source, settings.test_event_code)
    for name, raw in _table(doc, "datasets").items():
        datasets[name] = _dataset(name, raw, env, settings)
    ids = [d.id for d in datasets.values() if d.id]
    if len(set(ids)) < len(ids):
        _fail("datasets", "two datasets have the same id")
    default = doc.get("default_dataset")
    if default is not None and default not in datasets:
        _fail("default_dataset", f"names no dataset (known: {', '.join(sorted(datasets)) or 'none'})")
    if default is None:
        default = DEFAULT if DEFAULT in datasets else (next(iter(datasets)) if len(datasets) == 1 else None)

    def dataset_of(where: str, raw: dict) -> str:
        name = raw.get("dataset", default)
        if name is None:
            _fail(f"{where}.dataset", "is required: the file names several datasets and no default_dataset")
        if name not in datasets:
            _fail(f"{where}.dataset", f"names no dataset (known: {', '.join(sorted(datasets)) or 'none'})")
        return name

    pages: dict[str, Page] = {}
    for page_id, raw in _table(doc, "pages").items():
        where = f"pages.{page_id}"
        _only(where, raw, {"token_env", "dataset"})
        if not page_id.isdigit():
            _fail(where, "a Page is named by its numeric id: [pages.1234567890]")
        token, variable = _token(where, raw, env, "META_PAGE_ACCESS_TOKEN", required=True)
        pages[page_id] = Page(page_id, token, variable, dataset_of(where, raw))
    if not pages:
        pages[ANY_PAGE] = Page(ANY_PAGE, settings.page_access_token, "META_PAGE_ACCESS_TOKEN", default)

    forms: dict[tuple[str, str], str] = {}
    for source, table in (doc.get("forms") or {}).items():
        for form_id, raw in (table or {}).items():
            if source == "meta" and (not isinstance(raw, dict) or set(raw) != {"dataset"}):
                _fail(f"forms.meta.{form_id}", "a Lead Ads form takes only `dataset` (its Page decides the rest)")
            if isinstance(raw, dict) and "dataset" in raw:
                forms[(source, str(form_id))] = dataset_of(f"forms.{source}.{form_id}", raw)

    clients: dict[str, Client] = {}
    for name, raw in _table(doc, "clients").items():
        where = f"clients.{name}"
        _only(where, raw, {"token_env", "datasets"})
        if not _NAME.fullmatch(name):
            _fail(where, "a client's name is lowercase letters, digits, - and _ (up to 40)")
        names = raw.get("datasets")
        if not isinstance(names, list) or not names or any(n not in datasets for n in names):
            _fail(f"{where}.datasets", f"must list datasets it may send to (known: {', '.join(sorted(datasets))})")
        token, variable = _token(where, raw, env, "", required=True) if "token_env" in raw else _fail(
            f"{where}.token_env", "is required: the variable holding this client's API token")
        clients[name] = Client(name, token, variable, frozenset(names))
    if len({c.token for c in clients.values()}) < len(clients) or (
            settings.api_token and any(c.token == settings.api_token for c in clients.values())):
        _fail("clients", "each client needs its own token, and none may be LEADRELAY_API_TOKEN")
    return Routes(datasets, pages, forms, clients, default)


def routed_settings(doc: dict) -> tuple[str, ...]:
    """The environment settings the file stands in for, so no process requires them."""
    return (("META_DATASET_ID",) if doc.get("datasets") else ()) + (
        ("META_PAGE_ACCESS_TOKEN",) if doc.get("pages") else ())
