"""A person two ad platforms brought: a stage of theirs goes to each platform that brought
them (their Google lead's destination, their Meta lead's dataset), never to one that did not,
unless the mapping says so (a destination's `every_lead`).

Notes: docs/internals/intake.md
"""

from __future__ import annotations

from workers.events import conversions, personindex, profiles
from workers.identity import emails, googlekeys, phones, userdata
from workers.intake import googleleads
from workers.intake.stagescope import Scope

GOOGLE = "googleads"


def others(connection, profile: dict, scope: Scope, occurred: int, now: float) -> list[dict]:
    """The person's newest lead from the other platform than `profile`'s, within the caller's
    scope and able to take this stage (one Meta takes within its 7 days, one Google takes
    within its destination's window): found by the person index, under the hashes both
    leads share. `connection` may be the stage check's prefetched reader."""
    hashes = [h for k in profiles.LOOKUP_KEYS for h in profile.get("user_data", {}).get(k, [])]
    if not hashes:
        return []
    mine = f"{profile['source']}:{profile['key']}"
    wanted_google = profile["source"] != GOOGLE
    refs = [
        ref
        for ref in _members(connection, ["h:" + h[:32] for h in hashes])
        if ref != mine and ref.startswith(GOOGLE + ":") == wanted_google
    ]
    found = []
    for ref in refs:
        source, _, key = ref.partition(":")
        other = profiles.load(connection, source, key)
        if other is None or not set(hashes) & _hashes(other) or not scope.holds(other):
            continue  # gone, no longer theirs (a hash's first half is shared), or another client's
        if occurred < other["created_time"]:
            continue  # before that lead: not its stage
        if not wanted_google and occurred < conversions.oldest_acceptable(now):
            continue  # Meta refuses it: their Google lead's event goes alone
        destination = scope.routes.google_of(other) if wanted_google else None
        if destination is not None and occurred < now - destination.window_days * 86400:
            continue  # past that destination's window: their Meta lead's event goes alone
        found.append(other)
    return sorted(found, key=lambda p: p["created_time"])[-1:]


def _members(connection, owners: list[str]) -> list[str]:
    """The profiles noted under these owners: from the stage check's prefetch, else read."""
    if hasattr(connection, "members"):
        return connection.members(owners)
    return personindex.entries(connection, owners)["p"]


def _hashes(profile: dict) -> set[str]:
    return {h for k in profiles.LOOKUP_KEYS for h in profile.get("user_data", {}).get(k, [])}


def to_google(item: dict, checked: dict, scope: Scope, region: str) -> dict | None:
    """The stage for Google too, where the lead's dataset has a destination that takes every
    lead's stages (`every_lead`) and Google did not bring this one: Google's keys from the
    email and phone the stage itself gives (a profile keeps only Meta's hashes), no click id,
    the destination's consent; an event id of its own. None: no such destination, or
    nothing Google could match on."""
    if checked.get("google") is not None or checked.get("channel"):
        return None
    dataset = checked["route"]["dataset"]
    destination = next((g for g in scope.routes.google.values() if g.every_lead and g.name == dataset), None)
    if destination is None:
        return None
    mails = [v for v in _values(item.get("email"))]
    numbers = [v for v in _values(item.get("phone"))]
    regions = userdata.phone_regions(
        {"country": _values(item.get("country")), "ph": numbers}, region, destination.region
    )
    google = {
        "em": googleleads.hashes(mails, googlekeys.email, emails.NotAnEmail),
        "ph": googleleads.hashes(numbers, lambda v: googlekeys.phone(v, regions), phones.NotAPhone),
        "gclid": None,
        "consent": dict(destination.consent),
    }
    if not google["em"] and not google["ph"]:
        return None
    source = f"{GOOGLE}-{checked['source']}"  # its own event id, claimed apart from Meta's
    return {
        **{k: v for k, v in checked.items() if k != "also"},  # the first item's own: never this one's
        "source": source,
        "event_id": conversions.event_id(source, checked["key"], checked["event_name"]),
        "route": {"dataset": dataset, "dataset_id": destination.id, "page_id": None},
        "google": google,
        "lead_first": None,
    }


def _values(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
