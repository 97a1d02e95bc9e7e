"""The routes read from the mapping file's `datasets`, `pages`, `forms` and `clients` tables,
joined to the environment's tokens (what they mean: routing.py).

Notes: docs/internals/config.md
"""

from __future__ import annotations

import os
import re
from typing import Mapping

from workers.config import googledest, ldu
from workers.config.needed import ConfigError, Gather
from workers.config.routing import ANY_PAGE, DEFAULT, Client, Dataset, Page, Routes
from workers.sources.registry import CHAT, LEAD_ADS, SOURCES

SETTING = "LEADRELAY_CONFIG"
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
_VARIABLE = re.compile(r"[A-Z_][A-Z0-9_]*")


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
    return Dataset(
        name,
        raw["id"],
        token,
        variable,
        raw.get("lead_event_source", settings.lead_event_source),
        raw.get("test_event_code", ""),
        processing,
    )


def load(doc: dict, settings, env: Mapping[str, str] | None = None, gather: Gather | None = None) -> Routes:
    """The routes the mapping file and the environment's settings describe. Each entry's
    mistake goes to `gather` and the next entry is checked (the caller raises them all);
    without one, the first is raised.

    Raises:
        ConfigError: a bad entry, named with its table and key.
    """
    env = os.environ if env is None else env
    outer, gather = gather, gather or Gather()
    datasets: dict[str, Dataset] = {}
    # Without datasets in the file the environment's is the one, even where this process
    # lacks its id (the web process does not need it): the worker fills it in.
    if settings.dataset_id or not doc.get("datasets"):
        datasets[DEFAULT] = Dataset(
            DEFAULT,
            settings.dataset_id,
            settings.capi_access_token,
            "META_CAPI_ACCESS_TOKEN",
            settings.lead_event_source,
            settings.test_event_code,
        )
    broken: set[str] = set()  # datasets named with a mistake: said once, not again by what names them
    for name, raw in _table(doc, "datasets").items():
        broken.add(name)
        with gather.entry():
            datasets[name] = _dataset(name, raw, env, settings)
            broken.discard(name)
    ids = [d.id for d in datasets.values() if d.id]
    if len(set(ids)) < len(ids):
        _fail("datasets", "two datasets have the same id")
    default = doc.get("default_dataset")
    named = [*datasets, *sorted(broken)]
    if default is not None and default not in named:
        _fail("default_dataset", f"names no dataset (known: {', '.join(sorted(datasets)) or 'none'})")
    if default is None:
        default = DEFAULT if DEFAULT in datasets else (named[0] if len(named) == 1 else None)

    def dataset_of(where: str, raw: dict) -> str:
        name = raw.get("dataset", default)
        if name is None:
            _fail(f"{where}.dataset", "is required: the file names several datasets and no default_dataset")
        if name not in datasets and name not in broken:
            _fail(f"{where}.dataset", f"names no dataset (known: {', '.join(sorted(datasets)) or 'none'})")
        return name

    pages: dict[str, Page] = {}
    for page_id, raw in _table(doc, "pages").items():
        with gather.entry():
            pages[page_id] = _page(page_id, raw, env, dataset_of)
    if not pages:
        pages[ANY_PAGE] = Page(ANY_PAGE, settings.page_access_token, "META_PAGE_ACCESS_TOKEN", default)

    forms: dict[tuple[str, str], str] = {}
    for source, table in (doc.get("forms") or {}).items():
        for form_id, raw in (table or {}).items():
            with gather.entry():
                if source == "meta" and (not isinstance(raw, dict) or set(raw) != {"dataset"}):
                    _fail(f"forms.meta.{form_id}", "a Lead Ads form takes only `dataset` (its Page decides the rest)")
                if isinstance(raw, dict) and "dataset" in raw:
                    forms[(source, str(form_id))] = dataset_of(f"forms.{source}.{form_id}", raw)

    # A WhatsApp Business Account, Page or Instagram account whose ad-started chats go to a
    # dataset (Meta links one dataset to each); a Page of the file routes its own chats.
    chats: dict[str, str] = {}
    for account, raw in _table(doc, "chats").items():
        with gather.entry():
            _only(f"chats.{account}", raw, {"dataset"})
            if not account.isdigit():
                _fail(f"chats.{account}", "a messaging account is named by its numeric id: [chats.1234567890]")
            chats[account] = dataset_of(f"chats.{account}", raw)

    google: dict[str, googledest.GoogleDestination] = {}
    for key, raw in _table(doc, "google").items():
        with gather.entry():
            google[key] = googledest.load(key, raw, dataset_of, settings.google_credentials)
    if not google and settings.sandbox and default is not None:
        google[SANDBOX_GOOGLE.key] = googledest.GoogleDestination(**{**SANDBOX_GOOGLE.__dict__, "name": default})
    google_forms: dict[str, str] = {}
    with gather.entry():
        google_forms = googledest.by_form(google)

    clients: dict[str, Client] = {}
    for name, raw in _table(doc, "clients").items():
        with gather.entry():
            where = f"clients.{name}"
            _only(where, raw, {"token_env", "datasets", "secrets"})
            if not _NAME.fullmatch(name):
                _fail(where, "a client's name is lowercase letters, digits, - and _ (up to 40)")
            names = raw.get("datasets")
            if not isinstance(names, list) or not names or any(n not in datasets and n not in broken for n in names):
                _fail(f"{where}.datasets", f"must list datasets it may send to (known: {', '.join(sorted(datasets))})")
            token, variable = (
                _token(where, raw, env, "", required=True)
                if "token_env" in raw
                else _fail(f"{where}.token_env", "is required: the variable holding this client's API token")
            )
            clients[name] = Client(name, token, variable, frozenset(names), _secrets(where, raw, env))
    with gather.entry():
        if len({c.token for c in clients.values()}) < len(clients) or (
            settings.api_token and any(c.token == settings.api_token for c in clients.values())
        ):
            _fail("clients", "each client needs its own token, and none may be LEADRELAY_API_TOKEN")
    with gather.entry():
        _one_owner_per_secret(clients, settings)
    if outer is None:  # no caller gathers: its mistakes are raised here, all of them
        gather.done()
    return Routes(datasets, pages, forms, clients, default, chats, google, google_forms)


# With no `[google.*]` table, the sandbox's own destination (dry run: its events are kept,
# shown by `leadrelay dry-run` beside Meta's), so `send-test google` shows the whole funnel.
SANDBOX_GOOGLE = googledest.GoogleDestination(
    key="sandbox",
    name=DEFAULT,
    operating_account="1234567890",
    conversion_actions={"Lead": "1001", "QualifiedLead": "1002", "Schedule": "1003", "Purchase": "1004"},
    forms=frozenset({googledest.ANY_FORM}),
)


def _page(page_id: str, raw: dict, env: Mapping[str, str], dataset_of) -> Page:
    where = f"pages.{page_id}"
    _only(where, raw, {"token_env", "dataset"})
    if not page_id.isdigit():
        _fail(where, "a Page is named by its numeric id: [pages.1234567890]")
    token, variable = _token(where, raw, env, "META_PAGE_ACCESS_TOKEN", required=True)
    return Page(page_id, token, variable, dataset_of(where, raw))


def _secrets(where: str, raw: dict, env: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
    """`[clients.NAME.secrets]`: per source, the variable holding this client's own
    signing secret or credentials (comma-separated while they rotate). What a delivery
    signed with one of them carries reaches only this client's datasets."""
    table = raw.get("secrets", {})
    allowed = sorted(
        name for name, source in SOURCES.items() if source.kind not in (LEAD_ADS, CHAT)
    )  # Meta's app secret
    if not isinstance(table, dict):
        _fail(f"{where}.secrets", f"must be a table: source = VARIABLE, sources among {', '.join(allowed)}")
    out = {}
    for source, variable in table.items():
        if source not in allowed:
            _fail(
                f"{where}.secrets.{source}", f"names no source with a secret of a client's own ({', '.join(allowed)})"
            )
        if not isinstance(variable, str) or not _VARIABLE.fullmatch(variable):
            _fail(f"{where}.secrets.{source}", "must name an environment variable, such as ACME_CALENDLY_KEY")
        values = tuple(v.strip() for v in env.get(variable, "").split(",") if v.strip())
        if not values:
            _fail(f"{where}.secrets.{source}", f"{variable} is not set")
        for problem in SOURCES[source].secret_problems(values)[:1]:
            _fail(f"{where}.secrets.{source}", f"{variable} {problem}")
        out[source] = values
    return out


def _one_owner_per_secret(clients: dict[str, Client], settings) -> None:
    """A secret decides whose a delivery is: it must belong to one client, or be the
    operator's setting (every client's), never both."""
    for source in {s for c in clients.values() for s in c.secrets}:
        owners: dict[str, str] = {value: "the environment's" for value in settings.source_secrets.get(source, ())}
        for client in clients.values():
            for value in client.secrets.get(source, ()):
                if value in owners:
                    _fail(
                        f"clients.{client.name}.secrets.{source}", f"is also {owners[value]} secret: each is one's own"
                    )
                owners[value] = f"clients.{client.name}'s"


def routed_settings(doc: dict) -> tuple[str, ...]:
    """The environment settings the file stands in for, so no process requires them."""
    return (("META_DATASET_ID",) if doc.get("datasets") else ()) + (
        ("META_PAGE_ACCESS_TOKEN",) if doc.get("pages") else ()
    )
