"""Who a forget or an export is about: the identifiers a person gave us, hashed as Meta's
are (the same hashes we send), and what their profiles in the caller's datasets add."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import redis

from workers.config.routing import Routes, dataset_of
from workers.events import profiles, suppression
from workers.identity import phones
from workers.intake import stagereads
from workers.privacy.walk import Marks
from workers.sources.registry import FORM_SOURCES, SOURCES  # their person id is a submission key (form:token)

GIVEN = ("email", "phone", "external_id", "lead_id", "person_id")  # what a caller may name a person by
# Identifiers, never search words: a Lead Ads lead id is a Graph id of 10 to 20 digits (Meta's
# are 15 to 17); a person id is `source:key`, the key as its source writes profile keys.
LEAD_ID = re.compile(r"[1-9][0-9]{9,19}")
PERSON_KEY = re.compile(r"[A-Za-z0-9_.@+-]{1,128}(?::[A-Za-z0-9_.@+-]{1,128}){0,3}")


class NoIdentifier(ValueError):
    """Nothing usable to find a person by, or something given that is not an identifier."""


@dataclass
class Person:
    hashed: dict[str, list[str]]  # em, ph, external_id: as given
    lead_ids: list[str]
    person_ids: list[str]  # a profile's `source:key` (a CRM's, a form's submission, a chat's)
    datasets: list[str]  # the caller's
    profiles: list[dict] = field(default_factory=list)  # theirs, in those datasets
    read: str = ""  # how their records were found: "index", or every key read (forget.WALKED)

    def marks(self, routes: Routes) -> Marks:
        owned = {p["key"] for p in self.profiles} | {str(p.get("lead_id")) for p in self.profiles if p.get("lead_id")}
        hashes = {h for values in self.hashed.values() for h in values}
        for profile in self.profiles:
            hashes |= {h for k in suppression.KINDS for h in profile.get("user_data", {}).get(k, [])}
        # A form submission still in the inbox has no profile yet: its key (FORM:TOKEN, a token
        # of the form tool's own making) names it whole. A CRM's short id alone never does.
        submissions = {key for source, _, key in (p.partition(":") for p in self.person_ids) if source in FORM_SOURCES}
        return Marks(
            owned=owned,
            # A lead id or submission no profile holds (expired, or still in the inbox): theirs only in scope.
            hashes=hashes | ((set(self.lead_ids) | submissions) - owned),
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
        out.update(suppression.lead_field(lead_id) for lead_id in self.lead_ids)  # the caller's (resolve)
        return sorted(out)

    def others(self, found: list[dict]) -> list[dict]:
        """The profiles among `found` that are someone else's: not named by what was given
        (a lead id, a person id, an identifier) and sharing no email with one that is.
        They were reached through a phone or an external id the person's leads hold."""
        named = [p for p in found if self._named(p)]
        emails = {h for p in named for h in p.get("user_data", {}).get("em", [])}
        return [p for p in found if p not in named and not emails & set(p.get("user_data", {}).get("em", []))]

    def _named(self, profile: dict) -> bool:
        if str(profile.get("lead_id")) in self.lead_ids or f"{profile['source']}:{profile['key']}" in self.person_ids:
            return True
        held = profile.get("user_data", {})
        return any(set(held.get(kind, [])) & set(values) for kind, values in self.hashed.items())


def resolve(
    connection: redis.Redis, given: dict, region: str, datasets: list[str], routes: Routes | None = None
) -> Person:
    """The person these identifiers name, as the caller (who reaches `datasets`) may see them.

    Raises:
        NoIdentifier: none of email, phone, external_id, lead_id, person_id was usable.
    """
    values = {name: _list(given.get(name)) for name in GIVEN}
    _check_ids(values["lead_id"], values["person_id"])
    hashed = stagereads.given(
        {"email": values["email"], "phone": values["phone"], "external_id": values["external_id"]}, region
    )
    hashed = {k: v for k, v in hashed.items() if k in suppression.KINDS and v}
    # A phone no region reads (Meta's +1 555 test numbers): its digits' hash, as a chat is keyed by.
    unread = [p for p in values["phone"] if not stagereads.given({"phone": [p]}, region).get("ph")]
    keyed = {phones.key_hash(p) for p in unread} - {None}
    if keyed:
        hashed["ph"] = sorted({*hashed.get("ph", []), *keyed})
    if not hashed and not values["lead_id"] and not values["person_id"]:
        raise NoIdentifier("give an email, phone, external_id, lead_id or person_id that can be read")
    operator = set(datasets) >= set(routes.datasets) if routes else False
    found: dict[str, dict] = {}
    lead_ids = []
    for lead_id in values["lead_id"]:
        profile = profiles.load(connection, "meta", lead_id)
        # Another client's lead is not the caller's to erase or suppress; one no profile
        # names (expired, still in the inbox) only the operator's.
        if (profile and dataset_of(profile) in datasets) or (profile is None and operator):
            lead_ids.append(lead_id)
        _keep(found, profile, datasets)
    for person_id in values["person_id"]:
        source, _, key = person_id.partition(":")
        _keep(found, profiles.load(connection, source, key), datasets)
    person = Person(hashed, lead_ids, values["person_id"], sorted(datasets))
    for dataset in datasets:
        for kind, hashes in hashed.items():
            for value in hashes:
                _keep(found, profiles.find(connection, kind, value, dataset), datasets)
    person.profiles = list(found.values())
    return person


def _check_ids(lead_ids: list[str], person_ids: list[str]) -> None:
    """Every id given is one, by its source's shape; else the whole request is refused."""
    for lead_id in lead_ids:
        if not LEAD_ID.fullmatch(lead_id):
            raise NoIdentifier("a lead_id given is not a Lead Ads lead id (10 to 20 digits)")
    for person_id in person_ids:
        source, _, key = person_id.partition(":")
        if source not in SOURCES or not PERSON_KEY.fullmatch(key):
            raise NoIdentifier(
                "a person_id given is not source:id with a known source (hubspot:512, typeform:FORM:TOKEN)"
            )


def _keep(found: dict, profile: dict | None, datasets: list[str]) -> None:
    if profile and dataset_of(profile) in datasets:
        found[f"{profile['source']}:{profile['key']}"] = profile


def _list(value) -> list[str]:
    if value is None:
        return []
    values = value if isinstance(value, list) else [value]
    return [str(v).strip() for v in values if isinstance(v, (str, int)) and not isinstance(v, bool) and str(v).strip()]
