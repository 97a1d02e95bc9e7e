"""Reconcile: enqueue the leads whose webhook never came (Meta drops undelivered
webhooks after 36 hours), read from the form's lead list, deduped like the webhooks."""

from __future__ import annotations

import json
from typing import Callable, Iterable, Iterator

from . import intake, times
from .sources import SOURCES, meta
from .graph import LEAD_FIELDS, Graph

PAGE_SIZE = 100


def form_leads(graph: Graph, form_id: str, since: int) -> Iterator[dict]:
    """Every lead of the form created after `since`, following Graph's cursor paging.

    Raises:
        DeliveryError: a Graph call failed (classified as everywhere else).
    """
    filtering = json.dumps([{"field": "time_created", "operator": "GREATER_THAN", "value": since}])
    after = None
    while True:
        params = {"fields": LEAD_FIELDS, "filtering": filtering, "limit": PAGE_SIZE}
        if after:
            params["after"] = after
        page = graph.call("GET", f"{form_id}/leads", graph.settings.page_access_token, params=params)
        yield from page.get("data") or []
        paging = page.get("paging") or {}
        if not paging.get("next") or not page.get("data"):
            return
        after = (paging.get("cursors") or {}).get("after")


def reconcile(graph: Graph, queue, form_id: str, since: int, processing: dict | None = None,
              watch: Callable[[Iterator[dict]], Iterable[dict]] = iter) -> dict:
    """Enqueue a job for each lead not already known; counts of found, enqueued, known.
    `processing`: the Lead Ads source's Limited Data Use fields, as the receiver adds them.
    `watch` wraps the lead stream (the CLI's progress bar)."""
    changes = [{"source": meta.NAME, "leadgen_id": str(lead["id"]), "page_id": None, "form_id": form_id,
                "ad_id": lead.get("ad_id"), "adgroup_id": lead.get("ad_id"),
                "created_time": times.unix_time(lead.get("created_time"))}
               | ({"processing": processing} if processing else {})
               for lead in watch(form_leads(graph, form_id, since))]
    counts = intake.enqueue_new(queue, SOURCES[meta.NAME], [(meta.lead_key(c), c) for c in changes])
    return {"found": len(changes), "enqueued": counts["accepted"], "already_known": counts["duplicates"]}
