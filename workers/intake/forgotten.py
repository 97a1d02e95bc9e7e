"""A forgotten person at the door (workers/events/suppression.py): what the receiver and
the stage API leave out, each in one round trip for the whole request. Left out means
acknowledged (Meta and the CRM are not made to retry), recorded by the forget's reference
alone (`leadrelay ignored`), never stored or sent."""

from __future__ import annotations

import redis

from workers.common.refusals import QueueUnavailable
from workers.config.routing import dataset_of
from workers.events import suppression


def leads(connection: redis.Redis, jobs: list[tuple[str, dict]]) -> tuple[list, list[dict]]:
    """(the leads to enqueue, a record of each that a forget suppressed): a late webhook
    for a forgotten person is acknowledged and recorded by the forget's reference alone."""
    try:
        refs = suppression.which(
            connection,
            [
                suppression.fields(dataset_of(arg.get("route")), arg.get("user_data"), arg.get("leadgen_id"))
                for _, arg in jobs
            ],
        )
    except redis.RedisError as err:
        raise QueueUnavailable(f"queue unavailable ({type(err).__name__}); retry later") from None
    kept = [job for job, ref in zip(jobs, refs) if not ref]
    return kept, [{"reason": "suppressed", "ref": ref} for ref in refs if ref]


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
