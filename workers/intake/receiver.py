"""What the receiver does with a delivery, for every source alike: verify (whose secret
signed it), parse, and hand the items to their kind's handler (kinds.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

from rq import Queue

from workers.common.refusals import BadSignature, MalformedBody
from workers.config.routing import Client, Routes
from workers.config.settings import Settings
from workers.intake import kinds
from workers.intake.admission import record_ignored
from workers.intake.unusable import item as unusable_item
from workers.sources.registry import Source

if TYPE_CHECKING:
    from workers.intake.requestredis import RequestRedis


def receive(
    source: Source,
    body: bytes,
    headers: Mapping[str, str],
    settings: Settings,
    mapping: dict,
    queue: Queue,
    request_id: str | None = None,
    request_redis: RequestRedis | None = None,
    url: str = "",
    peer: str = "",
) -> dict:
    """Verify, parse, prepare and enqueue one delivery; counts, new job ids and what was skipped.

    `mapping` is the mapping file as `mappingfile.validate` reads it; `request_redis`, the
    receiver's connections for the enqueue (workers/intake/requestredis.py), else the queue's
    client; `url`, the address the sender called (HubSpot signs it); `peer`, the sender's
    address (Source.verify says which sources read them).

    Raises:
        BadSignature: see the source's verify; `source_disabled` when it has no secret and
            unsigned delivery is not allowed for it. A body that authenticates is never
            refused: what parse cannot read is recorded (unusable.py) and answered.
        QueueUnavailable: Redis could not be reached or refused the write.
    """
    owner = _verify(source, body, headers, settings, mapping["routes"], url, peer)
    try:
        parsed = source.parse(body, headers)
    except MalformedBody as err:  # authenticated: acknowledged and recorded, never refused
        record_ignored(queue.connection, source.name, [unusable_item(err.reason, body)])
        return {"accepted": 0, "duplicates": 0, "job_ids": [], "skipped": [unusable_item(err.reason, body)]}
    delivery = kinds.Delivery(source, parsed, owner, settings, mapping, queue, request_id, request_redis)
    return kinds.HANDLERS[source.kind](delivery)


def _verify(
    source: Source,
    body: bytes,
    headers: Mapping[str, str],
    settings: Settings,
    routes: Routes,
    url: str = "",
    peer: str = "",
) -> Client | None:
    """Whose secret signed the delivery: a client (`[clients.NAME.secrets]`), or None for
    the operator's setting (every dataset). Fail closed: a source without a secret
    refuses deliveries, unless the operator allowed unsigned delivery for it
    (LEADRELAY_ALLOW_UNSIGNED: then it is the operator's).

    Raises:
        BadSignature: no one's secret verifies it (the first owner's reason), or none is set.
    """
    owners = routes.owners(source.name, settings.source_secrets.get(source.name, ()))
    if not owners:
        if source.name in settings.allow_unsigned:
            return None
        raise BadSignature(
            f"no secret is configured for {source.name} and unsigned delivery is not allowed", reason="source_disabled"
        )
    refusals = []
    for owner, secrets in owners:
        try:
            source.verify(body, headers, secrets, url, peer)
            return owner
        except BadSignature as err:
            refusals.append(err)
    raise refusals[0]
