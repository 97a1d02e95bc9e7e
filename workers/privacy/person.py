"""Who a forget or an export is about: the identifiers a person gave us, hashed as Meta's
are (the same hashes we send), and what their profiles in the caller's datasets add."""

from __future__ import annotations

from dataclasses import dataclass, field

import redis

from workers.config.routing import Routes, dataset_of
from workers.events import profiles, suppression
from workers.intake import stagereads
from workers.privacy.walk import Marks

GIVEN = ("email", "phone", "external_id", "lead_id", "person_id")  # what a caller may name a person by


class NoIdentifier(ValueError):
    """Nothing usable to find a person by."""


@dataclass
class Person:
    hashed: dict[str, list[str]]  # em, ph, external_id: as given
    lead_ids: list[str]
    person_ids: list[str]  # a CRM's or booking tool's own id, as `source:id` or bare
    datasets: list[str]  # the caller's
    profiles: list[dict] = field(default_factory=list)  # theirs, in those datasets

    def marks(self, routes: Routes) -> Marks:
        owned = {p["key"] for p in self.profiles} | {str(p.get("lead_id")) for p in self.profiles if p.get("lead_id")}
        hashes = {h for values in self.hashed.values() for h in values}
        for profile in self.profiles:
            hashes |= {h for k in suppression.KINDS for h in profile.get("user_data", {}).get(k, [])}
        given = set(self.lead_ids) | {p.partition(":")[2] or p for p in self.person_ids}
        return Marks(
            owned=owned,
            hashes=hashes | (given - owned),  # an id no profile of the caller's holds: theirs only in scope
            scope=set(self.datasets),
            names={d.id: d.name for d in routes.datasets.values() if d.id},
        )

    def suppressions(self) -> list[str]:
        """The suppression fields that keep this person forgotten, in each of the caller's datasets."""
        out = set()
        for dataset in self.datasets:
            out.update(suppression.fields(dataset, self.hashed))
        for profile in self.profiles:
            out.update(suppression.fields(dataset_of(profile), profile.get("user_data"), profile.get("lead_id")))
        out.update(suppression.lead_field(lead_id) for lead_id in self.lead_ids)
        return sorted(out)


def resolve(connection: redis.Redis, given: dict, region: str, datasets: list[str]) -> Person:
    """The person these identifiers name, as the caller (who reaches `datasets`) may see them.

    Raises:
        NoIdentifier: none of email, phone, external_id, lead_id, person_id was usable.
    """
    values = {name: _list(given.get(name)) for name in GIVEN}
    hashed = stagereads.given(
        {"email": values["email"], "phone": values["phone"], "external_id": values["external_id"]}, region
    )
    hashed = {k: v for k, v in hashed.items() if k in suppression.KINDS and v}
    if not hashed and not values["lead_id"] and not values["person_id"]:
        raise NoIdentifier("give an email, phone, external_id, lead_id or person_id that can be read")
    person = Person(hashed, values["lead_id"], values["person_id"], sorted(datasets))
    found: dict[str, dict] = {}
    for lead_id in values["lead_id"]:
        _keep(found, profiles.load(connection, "meta", lead_id), datasets)
    for person_id in values["person_id"]:
        source, _, key = person_id.partition(":")
        if key:
            _keep(found, profiles.load(connection, source, key), datasets)
    for dataset in datasets:
        for kind, hashes in hashed.items():
            for value in hashes:
                _keep(found, profiles.find(connection, kind, value, dataset), datasets)
    person.profiles = list(found.values())
    return person


def _keep(found: dict, profile: dict | None, datasets: list[str]) -> None:
    if profile and dataset_of(profile) in datasets:
        found[f"{profile['source']}:{profile['key']}"] = profile


def _list(value) -> list[str]:
    if value is None:
        return []
    values = value if isinstance(value, list) else [value]
    return [str(v).strip() for v in values if isinstance(v, (str, int)) and not isinstance(v, bool) and str(v).strip()]
