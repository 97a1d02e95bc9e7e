"""The CRM side of the stand-in (server.py): each CRM vendor's read API (its folder's
standin.py), over the same loopback server, and what they share:

Notes: docs/internals/standin.md
"""

from __future__ import annotations

import importlib
import itertools
import pkgutil

import workers.vendors

_IDS = itertools.count(51000001)


def vendor_standins() -> dict[str, type]:
    """Each vendor folder's stand-in (workers/vendors/<vendor>/standin.py, its `STANDIN`
    class), found by convention, as Zulip finds an integration's view: no list to keep."""
    found = {}
    for info in pkgutil.iter_modules(workers.vendors.__path__):
        name = f"workers.vendors.{info.name}.standin"
        try:
            found[info.name] = importlib.import_module(name).STANDIN
        except ModuleNotFoundError as err:
            if err.name != name:
                raise
    return found


class CrmStandin:
    def crm_init(self) -> None:
        self.crm_vendors = {name: standin() for name, standin in vendor_standins().items()}
        self.crm_revoked: set[str] = set()
        self.crm_latency = 0.0  # seconds before each CRM answer (bench/crmstages.py: a CRM at 100 ms)

    @property
    def _vendors(self) -> tuple:
        return tuple(self.crm_vendors.values())

    def add_crm_person(
        self,
        email: str,
        phone: str | None = None,
        amount: float = 1200,
        currency: str = "EUR",
        country: str | None = None,
        others: list[str] = (),
    ) -> dict:
        """This person in every CRM: {"deal_id", "contact_id", "person_id"}."""
        made: dict = {}
        for vendor in self._vendors:
            made.update(vendor.add(_IDS, email, phone, amount, currency, country, others))
        return made

    def crm_kind(self, method: str, parts: list[str]) -> str | None:
        """The kind of a CRM call (None: not a CRM path)."""
        if parts[:2] == ["_standin", "crm"]:
            return "standin_crm"
        return next(filter(None, (vendor.kind(method, parts) for vendor in self._vendors)), None)

    def crm_answer(self, kind: str, headers, query: dict, body: dict | None, method: str, parts: list[str]):
        token = headers.get("x-api-token") or headers.get("Authorization", "").removeprefix("Bearer ")
        if kind == "standin_crm":
            return 200, self.add_crm_person(**(body or {}))
        if token in self.crm_revoked:
            return 401, {"status": "error", "message": "Authentication credentials missing or incorrect"}
        vendor = next(v for v in self._vendors if v.kind(method, parts))
        return vendor.answer(kind, query, body, parts)  # parts: the path, for a vendor that reads ids from it
