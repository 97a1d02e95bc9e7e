"""Reconcile: enqueue the leads whose webhook never came (Meta drops undelivered
webhooks after 36 hours), read from the form's lead list, deduped like the webhooks and
routed like them."""

from __future__ import annotations

import json
from typing import Callable, Iterable, Iterator

from workers.common import times
from workers.config.routing import ANY_PAGE, Routes
from workers.graphapi.graph import Graph
from workers.intake import admission, kinds
from workers.sources import meta
from workers.sources.registry import SOURCES

PAGE_SIZE = 100
# What a listing needs to tell a lead no webhook brought: no answer, no personal data.
LISTED_FIELDS = "id,created_time,ad_id"


def pages_of(
    graph: Graph, path: str, token: str, params: dict, after: str | None = None
) -> Iterator[tuple[list[dict], str | None]]:
    """A Graph list page by page, following its cursor paging: (items, the cursor that
    continues after them; None after the last page). Starts after `after` if given.

    Raises:
        JobError: a Graph call failed (classified as everywhere else).
    """
    while True:
        page = graph.call(
            "GET", path, token, params={**params, **({"after": after} if after else {})}, operation="form_leads"
        )
        paging = page.get("paging") or {}
        after = (paging.get("cursors") or {}).get("after") if paging.get("next") and page.get("data") else None
        yield page.get("data") or [], after
        if after is None:
            return


def _pages(graph: Graph, path: str, token: str, params: dict) -> Iterator[dict]:
    for items, _ in pages_of(graph, path, token, params):
        yield from items


def lead_list(form_id: str, since: int, until: int | None = None, fields: str = LISTED_FIELDS) -> tuple[str, dict]:
    """The path and parameters that list a form's leads created after `since` (and, with
    `until`, not after it): their ids and times, or `fields`."""
    rules = [{"field": "time_created", "operator": "GREATER_THAN", "value": since}]
    if until is not None:
        rules.append({"field": "time_created", "operator": "LESS_THAN", "value": until + 1})
    return f"{form_id}/leads", {"fields": fields, "filtering": json.dumps(rules), "limit": PAGE_SIZE}


def form_leads(graph: Graph, form_id: str, since: int, token: str, until: int | None = None) -> Iterator[dict]:
    """Every lead of the form created after `since` (and, with `until`, not after it)."""
    path, params = lead_list(form_id, since, until)
    return _pages(graph, path, token, params)


def as_change(lead: dict, page_id: str | None, form_id: str) -> dict:
    """A lead from a form's lead list, shaped as the webhook's change for it (ids only)."""
    return {
        "source": meta.NAME,
        "leadgen_id": str(lead["id"]),
        "page_id": page_id,
        "form_id": form_id,
        "ad_id": lead.get("ad_id"),
        "adgroup_id": lead.get("ad_id"),
        "created_time": times.unix_time(lead.get("created_time")),
    }


def page_forms(graph: Graph, page_id: str, token: str) -> list[str]:
    """The ids of a Page's Lead Ads forms."""
    return [
        str(form["id"])
        for form in _pages(graph, f"{page_id}/leadgen_forms", token, {"fields": "id", "limit": PAGE_SIZE})
    ]


def reconcile(
    graph: Graph,
    queue,
    routes: Routes,
    form_id: str,
    since: int,
    page_id: str | None = None,
    processing: dict | None = None,
    watch: Callable[[Iterator[dict]], Iterable[dict]] = iter,
) -> dict:
    """Enqueue a job for each lead not already known, routed as its webhook would have
    been; counts of found, enqueued, known. `processing`: the Lead Ads source's Limited
    Data Use fields. `watch` wraps the lead stream (the CLI's progress bar)."""
    token = routes.page_token({"page_id": page_id})
    changes = [as_change(lead, page_id, form_id) for lead in watch(form_leads(graph, form_id, since, token))]
    jobs, held = kinds.lead_jobs(SOURCES[meta.NAME], changes, routes, processing)
    counts = admission.enqueue_new(queue, SOURCES[meta.NAME], jobs)
    return {
        "found": len(changes),
        "enqueued": counts["accepted"],
        "already_known": counts["duplicates"],
        "not_routed": len(held),
    }


def reconcile_all(
    graph: Graph,
    queue,
    routes: Routes,
    since: int,
    processing: dict | None = None,
    watch_factory: Callable[[str], Callable] = lambda label: iter,
) -> dict[str, dict]:
    """`reconcile` over every form of every Page in the mapping file, by "page/form".

    Raises:
        JobError: a Page's form list or a form's lead list could not be read.
    """
    out = {}
    for page in routes.pages.values():
        if page.id == ANY_PAGE:
            continue
        for form_id in page_forms(graph, page.id, page.token):
            out[f"{page.id}/{form_id}"] = reconcile(
                graph,
                queue,
                routes,
                form_id,
                since,
                page.id,
                processing,
                watch_factory(f"page {page.id} form {form_id}"),
            )
    return out
