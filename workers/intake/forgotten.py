"""A forgotten person's stage changes at the stage API (workers/events/suppression.py), in one
round trip for the whole request: answered `recorded`, kept by the forget's reference alone
(`leadrelay ignored`), never sent.

Notes: docs/internals/intake.md
"""

from __future__ import annotations

import redis

from workers.events import suppression


def stages(connection: redis.Redis, to_claim: list, results: list, recorded: list) -> list:
    """The checked items to claim, less those of a forgotten person: answered `recorded`
    and kept by the forget's reference alone (suppression.py), in one round trip."""
    refs = suppression.which(
        connection, [suppression.fields(c["route"]["dataset"], c["user_data"]) for _, c in to_claim]
    )
    for (index, _), ref in zip(to_claim, refs):
        if ref:
            results[index] = {"index": index, "status": "recorded", "reason": "suppressed"}
            recorded.append({"reason": "suppressed", "ref": ref})
    return [pair for pair, ref in zip(to_claim, refs) if not ref]
