"""Every item an answer accepted ends in exactly one place, per source: sent (or found
confirmed earlier for its event id), recorded with a reason, dead-lettered, or still
waiting. A fuzz of signed deliveries (stage changes that name a delivered lead, a
stranger, nothing; Lead Ads leads new and redelivered) checks the identity
accepted = finished + waiting from the worker's own counters, so an item that vanished
(skipped under another source's name, say) fails it."""

from __future__ import annotations

import itertools
import json
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rq import Queue
from rq.registry import ScheduledJobRegistry

from helpers import LEAD, delivered_lead, leadgen_body, post_signed
from workers.common import counters
from workers.intake import inbox

# The outcomes that end an item's life, per kind (a retry or a wait for a token does not).
FINISHED = {
    "meta": ("delivered", "dry_run", "already_confirmed", "dead_letter"),
    "signed": ("stage_accepted", "stage_duplicate", "stage_rejected", "stage_recorded", "dead_letter"),
}
_IDS = itertools.count(1)
_LEADS = itertools.count(1234567890300000)

STAGE_ITEMS = st.fixed_dictionaries(
    {"stage": st.sampled_from(["QualifiedLead", "Schedule", "Purchase", "lost", "Demo booked", ""])},
    optional={
        "leadgen_id": st.sampled_from([LEAD, "1234567890999999", "not-an-id", 7]),
        "email": st.sampled_from(["joe@example.com", "stranger@example.com", "no at sign"]),
        "value": st.sampled_from([0, 120.5, -1, "12"]),
        "currency": st.sampled_from(["EUR", "usd", "XXXX"]),
        "occurred_at": st.sampled_from(["now", "old", "garbage"]),
    },
)
DELIVERIES = st.lists(st.one_of(STAGE_ITEMS, st.sampled_from(["new lead", "redelivery"])), min_size=1, max_size=12)


@pytest.fixture
def fuzz(graph, post_meta, work):
    """The lead the stage changes may name, delivered once before the examples."""
    delivered_lead(graph, post_meta, work, 600)


def _finished(figures: dict, source: str) -> float:
    return sum(figures.get(("leadrelay_jobs", source, outcome), 0) for outcome in FINISHED[source])


def _waiting(connection) -> int:
    scheduled = ScheduledJobRegistry("leadrelay", connection=connection).count
    return connection.xlen(inbox.STREAM) + len(Queue("leadrelay", connection=connection)) + scheduled


@given(deliveries=DELIVERIES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_every_accepted_item_is_finished_or_waiting_per_source(
    client, env, graph, post_meta, work, redis_conn, fuzz, deliveries
):
    before = counters.read(redis_conn)
    accepted = {"meta": 0, "signed": 0}
    for delivery in deliveries:
        if delivery in ("new lead", "redelivery"):
            lead_id = LEAD if delivery == "redelivery" else str(next(_LEADS))
            graph.add_lead(lead_id)
            answer = post_meta(leadgen_body(lead_id, created_time=int(time.time()) - 60))
            accepted["meta"] += answer.get_json()["accepted"]
            continue
        item = dict(delivery)
        if "occurred_at" in item:
            item["occurred_at"] = {"now": int(time.time()), "old": int(time.time()) - 30 * 86400}.get(
                item["occurred_at"], item["occurred_at"]
            )
        body = json.dumps({**item, "ref": next(_IDS)}).encode()  # one message, one webhook-id
        answer = post_signed(client, "signed", body, env)
        assert answer.status_code == 200, answer.get_json()
        accepted["signed"] += answer.get_json()["accepted"]
    work()
    after = counters.read(redis_conn)
    waiting = _waiting(redis_conn)
    finished = {source: _finished(after, source) - _finished(before, source) for source in accepted}
    assert sum(accepted.values()) == sum(finished.values()) + waiting, (accepted, finished, waiting)
    if not waiting:  # nothing left over: each source's own items, under its own name
        assert finished == accepted, (accepted, finished)


def test_the_identity_holds_for_the_stage_that_names_a_delivered_lead(client, env, graph, post_meta, work, redis_conn):
    delivered_lead(graph, post_meta, work, 600)
    before = counters.read(redis_conn)
    body = json.dumps({"leadgen_id": LEAD, "stage": "QualifiedLead", "occurred_at": int(time.time())}).encode()
    assert post_signed(client, "signed", body, env).get_json()["accepted"] == 1
    work()
    after = counters.read(redis_conn)
    assert _finished(after, "signed") - _finished(before, "signed") == 1
    assert _finished(after, "meta") == _finished(before, "meta")
