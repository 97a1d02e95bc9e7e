"""Who may move which leads, and why an item is refused: the stage API's scope (an API
client's datasets, or every one) and the two ways a stage change is not sent."""

from __future__ import annotations

from workers.common import logs
from workers.config.routing import Client, Routes, dataset_of

log = logs.get(__name__)


class Rejected(Exception):
    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason, self.detail = reason, detail


class Unsendable(Exception):
    """A stage that can never be sent (a chat's stage with no business-messaging name, a
    conversation we never held): answered `recorded` with its reason, kept for reporting."""

    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason, self.detail = reason, detail


class Negative(Exception):
    """A negative stage (disqualified, junk...): recorded for reporting, never sent."""

    def __init__(self, stage: str, lead: str | None):
        super().__init__(stage)
        self.stage, self.lead = stage, lead


class Scope:
    """Which datasets a caller of the stage API may reach: an API client's, or every one
    (the operator's LEADRELAY_API_TOKEN, the CLI). A lead outside it is treated as unknown,
    so a client learns nothing about another's leads; the attempt is logged."""

    def __init__(self, routes: Routes, client: Client | None = None):
        self.routes, self.client = routes, client
        self.datasets = sorted(client.datasets if client else routes.datasets)

    def holds(self, profile: dict) -> bool:
        if dataset_of(profile) in self.datasets:
            return True
        log.warning(
            "stage_lead_out_of_scope",
            client=self.client.name if self.client else None,
            source=profile.get("source"),
            dataset=dataset_of(profile),
        )
        return False

    def route(self, item: dict, profile: dict | None) -> dict:
        """Where the stage event goes: where its lead went, else the dataset the item names,
        else the caller's only (or default) dataset.

        Raises:
            Rejected: `unknown_dataset` (also for another client's), `no_dataset`.
        """
        if profile:
            return {
                "dataset": dataset_of(profile),
                "dataset_id": profile.get("dataset_id"),
                "page_id": profile.get("page_id"),
            }
        name = item.get("dataset")
        if name is not None and (not isinstance(name, str) or name not in self.datasets):
            if self.client:
                log.warning("stage_dataset_out_of_scope", client=self.client.name)
            raise Rejected("unknown_dataset", f"no dataset named {str(name)[:40]!r}")
        if name is None:
            name = (
                self.datasets[0]
                if len(self.datasets) == 1
                else (self.routes.default if self.routes.default in self.datasets else None)
            )
        route = self.routes.named(name)
        if route is None:
            raise Rejected("no_dataset", f"give `dataset`: one of {', '.join(self.datasets)}")
        return route
