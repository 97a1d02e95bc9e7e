"""A person two ad platforms brought: a stage of theirs goes to each platform that brought
them (their Google lead's destination, their Meta lead's dataset), never to one that did not.

Notes: docs/internals/intake.md
"""

from __future__ import annotations

from workers.events import conversions, personindex, profiles
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
