"""Forget a person, export what is held about them, and lift a suppression: one lookup
(person.resolve, then walk.find) for all three, from the CLI, the API or the admin page.

Notes: docs/internals/privacy.md
"""

from __future__ import annotations

import json
import secrets
from collections import Counter

import redis
from rq.exceptions import NoSuchJobError
from rq.job import Job
from rq.serializers import JSONSerializer

from workers.config.routing import Routes
from workers.events import personindex, suppression
from workers.privacy import audit, reach
from workers.privacy.person import Person, resolve
from workers.privacy.walk import Found, find

BACKFILL_SECONDS = 1.0  # a forget waiting on the index's backfill helps it this long (0: not), then walks
WALKED = "every key: the person index is still being built (the admin page and /metrics show how far)"

# What a person asking "delete everything" must also be told (docs/privacy.md).
SENT_ALREADY = (
    "Events already sent to Meta cannot be recalled: the Conversions API has no call to delete "
    "one, and Meta keeps what it received under its own terms. The person can clear or disconnect "
    "what businesses shared in their Meta account's 'Your activity off Meta technologies' setting; "
    "from now on leadrelay sends nothing more about them."
)


class SharedIdentifiers(ValueError):
    """The identifiers reach other people's leads too: nothing was changed."""

    def __init__(self, others: int):
        self.others = others
        super().__init__(
            f"{others} lead(s) of other people share a phone or an external id with this person, and nothing "
            "was changed: name what is theirs alone (their email, their lead ids); the operator may erase "
            "every lead those identifiers reach with all_matching (--all-matching)"
        )


def export(
    connection: redis.Redis, routes: Routes, given: dict, region: str, datasets: list[str], all_matching: bool = False
) -> dict:
    """What is held about one person, as hashes and ids (the right of access).

    Raises:
        NoIdentifier: see person.resolve.
        SharedIdentifiers: other people's records would be shown (and all_matching is off).
    """
    person, found = _gather(connection, routes, given, region, datasets)
    _one_person(person, all_matching)
    return {
        "datasets": person.datasets,
        "identifiers": person.hashed,
        "profiles": person.profiles,
        "records": [{"kind": f.kind, "key": f.key, **_member(f), "holds": f.text} for f in found],
        "counts": dict(Counter(f.kind for f in found)),
        "read": person.read,
        "suppressed": any(suppression.which(connection, [person.suppressions()])),
    }


def forget(
    connection: redis.Redis,
    routes: Routes,
    given: dict,
    region: str,
    datasets: list[str],
    who: str,
    where: str,
    audit_days: int = 365,
    all_matching: bool = False,
    ref: str | None = None,
) -> dict:
    """Remove every record of one person the caller may reach, suppress them, audit it.
    `ref`: the request's (requests.py), which suppressed them when it was taken.

    Raises:
        NoIdentifier: see person.resolve.
        SharedIdentifiers: other people's records would go too (and all_matching is off).
    """
    ref = ref or "forget-" + secrets.token_hex(8)
    # Suppressed first: a lead arriving while the records go is refused, not kept again.
    suppress_new(connection, resolve(connection, given, region, datasets, routes), ref)
    person, found = _gather(connection, routes, given, region, datasets)
    try:
        _one_person(person, all_matching)
    except SharedIdentifiers:
        suppression.lift(connection, ref=ref)  # what this forget (or its request) added, only
        raise
    suppression.add(connection, person.suppressions(), ref)  # and every lead of theirs the walk found
    for item in found:
        _remove(connection, item)
    counts = dict(sorted(Counter(item.kind for item in found).items()))
    others = len(person.others(person.profiles))
    audit.record(
        connection, who, where, "forget", audit_days, ref=ref, datasets=person.datasets, removed=counts, others=others
    )
    return {
        "ref": ref,
        "removed": counts,
        "others": others,
        "datasets": person.datasets,
        "read": person.read,
        "sent_already": SENT_ALREADY,
    }


def suppress_new(connection: redis.Redis, person: Person, ref: str) -> int:
    """Suppress the person under `ref` where no earlier forget does already, so a refusal
    lifts exactly what this one added (by `ref`); how many fields were added."""
    wanted = person.suppressions()
    added = [field for field, held in zip(wanted, suppression.which(connection, [[f] for f in wanted])) if not held]
    suppression.add(connection, added, ref)
    return len(added)


def unsuppress(connection: redis.Redis, ref: str, who: str, where: str, audit_days: int = 365) -> int:
    """Lift one forget's suppression (its reference, as forget answered and the audit shows)."""
    lifted = suppression.lift(connection, ref=ref)
    audit.record(connection, who, where, "unsuppress", audit_days, ref=ref, lifted=lifted)
    return lifted


def _gather(connection, routes: Routes, given: dict, region: str, datasets: list[str]) -> tuple[Person, list[Found]]:
    """The person and every record of theirs; their profiles, also those only the walk
    found (a lookup names their newest lead's profile alone)."""
    person = resolve(connection, given, region, datasets, routes)
    marks = person.marks(routes)
    # The index read while it holds every record kept; until its backfill is done, the walk.
    if personindex.complete(connection) or (
        BACKFILL_SECONDS > 0 and personindex.step(connection, seconds=BACKFILL_SECONDS)
    ):
        found, person.read = reach.find(connection, person, marks), "index"
    else:
        found, person.read = find(connection, marks), WALKED
    known = {(p["source"], p["key"]) for p in person.profiles}
    for item in found:
        if item.kind == "profile" and item.member is None:
            profile = json.loads(item.text)
            if (profile["source"], profile["key"]) not in known:
                known.add((profile["source"], profile["key"]))
                person.profiles.append(profile)
    return person, found


def _one_person(person: Person, all_matching: bool) -> None:
    others = person.others(person.profiles)
    if others and not all_matching:
        raise SharedIdentifiers(len(others))


def _remove(connection: redis.Redis, item: Found) -> None:
    if item.type == "job":
        try:
            job = Job.fetch(item.key.split(":", 2)[2], connection=connection, serializer=JSONSerializer)
        except NoSuchJobError:  # gone since it was read: nothing to remove
            return
        if item.rest is not None:
            _ = job.func_name  # its data read first: RQ cannot save a job whose args alone were set
            job.args = item.rest
            job.save()
        else:
            job.delete(remove_from_queue=True)
            connection.delete(item.key)
        return
    if item.member is None:
        connection.delete(item.key)
    elif item.type == "list":
        connection.lrem(item.key, 0, item.member)
    elif item.type == "set":
        connection.srem(item.key, item.member)
    elif item.type == "zset":
        connection.zrem(item.key, item.member)
    elif item.type == "hash":
        connection.hdel(item.key, item.member)
    elif item.type == "stream":
        connection.xdel(item.key, item.member)


def _member(found: Found) -> dict:
    if found.member is None:
        return {}
    member = found.member.decode("utf-8", "replace") if isinstance(found.member, bytes) else found.member
    return {"entry": member}


__all__ = ["Person", "SharedIdentifiers", "export", "forget", "unsuppress", "SENT_ALREADY"]
