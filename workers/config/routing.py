"""Routing: which dataset (pixel) each lead goes to, which token reads it, and which
datasets each API client may reach. For an agency or a company with several brands:

Notes: docs/internals/config.md
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass, field

from workers.common.policy import INVALID, JobError
from workers.config.googledest import PREFIX, GoogleDestination

DEFAULT = "default"  # the environment's dataset (META_DATASET_ID)


def dataset_of(holder: dict | None) -> str:
    """The dataset a route, a profile or a dead letter names: the environment's when none."""
    return (holder or {}).get("dataset") or DEFAULT


ANY_PAGE = "*"  # the environment's Page token reads every Page


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
    # Per source, this client's own signing secrets (`[clients.NAME.secrets]`): what they
    # sign reaches this client's datasets only.
    secrets: dict[str, tuple[str, ...]] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class Routes:
    datasets: dict[str, Dataset] = field(default_factory=dict)
    pages: dict[str, Page] = field(default_factory=dict)  # by Page id; ANY_PAGE alone without a file's pages
    forms: dict[tuple[str, str], str] = field(default_factory=dict)  # (source, form id) -> dataset name
    clients: dict[str, Client] = field(default_factory=dict)
    default: str | None = None
    chats: dict[str, str] = field(default_factory=dict)  # messaging account id -> dataset name
    google: dict[str, GoogleDestination] = field(default_factory=dict)  # `[google.<key>]`, by key
    google_forms: dict[str, str] = field(default_factory=dict)  # Google lead form id -> destination key

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

    def google_lead(self, form_id: str | None) -> tuple[dict | None, str | None]:
        """A Google lead form's route: its destination, under the dataset that owns it; or
        None with why (`no_google_destination`)."""
        key = self.google_forms.get(form_id or "") or self.google_forms.get("*")
        found = self.google.get(key or "")
        if found is None:
            return None, "no_google_destination"
        return {"dataset": found.name, "dataset_id": found.id, "page_id": None}, None

    def google_of(self, route: dict | None) -> GoogleDestination | None:
        """The Google destination a route names, if it names one."""
        named = str((route or {}).get("dataset_id") or "")
        return self.google.get(named[len(PREFIX) :]) if named.startswith(PREFIX) else None

    def chat(self, account: str) -> tuple[dict | None, str | None]:
        """An ad-started chat's route, by its WhatsApp Business Account, Page or Instagram
        account: `[chats.<id>]`, else that Page's dataset, else the default; or None with
        why (`no_dataset`)."""
        page = self.pages.get(account)
        route = self._route(self.chats.get(account) or (page.dataset if page else None) or self.default)
        return (route, None) if route else (None, "no_dataset")

    def named(self, name: str | None) -> dict | None:
        """The route to a dataset by name (stage events that name their dataset)."""
        return self._route(name)

    def dataset(self, route: dict | None) -> Dataset | GoogleDestination:
        """The dataset a job's route names (by id: names may be edited), or the Google
        destination (its id `google:<key>`); the default dataset for a job queued before
        routes existed.

        Raises:
            JobError: invalid, the dataset is no longer configured (replayable once it is).
        """
        found: Dataset | GoogleDestination | None
        named = str((route or {}).get("dataset_id") or "")
        if named.startswith(PREFIX):
            found = self.google.get(named[len(PREFIX) :])
        elif named:
            found = self.by_id.get(named)
        else:
            found = self.datasets.get((route or {}).get("dataset") or self.default or "")
        if found is None:
            raise JobError(
                INVALID,
                f"dataset {(route or {}).get('dataset_id') or '(default)'} is not in the "
                f"mapping file or the environment; add it, then replay",
            )
        return found

    def page_token(self, route: dict | None) -> str:
        """The token that reads the route's Page's leads.

        Raises:
            JobError: invalid, the Page is no longer configured (replayable once it is).
        """
        page_id = (route or {}).get("page_id")
        page = self.pages.get(page_id or "") or self.pages.get(ANY_PAGE)
        if page is None:
            raise JobError(INVALID, f"page {page_id} is not in the mapping file; add it, then replay")
        return page.token

    def client(self, token: str) -> Client | None:
        """The API client this bearer token belongs to (every client compared in constant time)."""
        found, given = None, token.encode("utf-8")
        for client in self.clients.values():
            if hmac.compare_digest(client.token.encode("utf-8"), given):
                found = client
        return found

    def owners(self, source: str, environment: tuple[str, ...]) -> list[tuple[Client | None, tuple[str, ...]]]:
        """Who may sign `source`'s deliveries, each with its secrets: the operator (None:
        the environment's setting, every dataset), then each client with its own."""
        out: list[tuple[Client | None, tuple[str, ...]]] = [(None, environment)] if environment else []
        return out + [(c, c.secrets[source]) for c in self.clients.values() if c.secrets.get(source)]

    @property
    def several_clients(self) -> bool:
        """More than one client: an account no table lists belongs to nobody."""
        return len(self.clients) > 1

    def labels(self) -> dict[str, str]:
        """Token -> the variable holding it, for logs and pause records (never the token)."""
        out = {p.token: p.token_env for p in self.pages.values() if p.token}
        out.update((d.token, d.token_env) for d in self.datasets.values() if d.token)
        return out
