"""A request of stage changes reads Redis in a few round trips, whatever its size, and
finds each item's lead exactly as checking it one key at a time would."""

import time

import redis
from redis.connection import Connection

from helpers import LEAD, delivered_lead, known_lead
from workers.common.queues import queue
from workers.config.stagemap import StageMap
from workers.intake import stageitems
from workers.intake.stagescope import Scope


class Counting(Connection):
    """A connection that counts what it sends: one pipeline is one send, one round trip."""

    sends = 0

    def send_packed_command(self, command, check_health=True):
        Counting.sends += 1
        return super().send_packed_command(command, check_health)


def test_a_thousand_items_cost_a_few_round_trips_and_find_their_leads(env, graph, post_meta, work, redis_url):
    from workers.engine.context import context

    delivered_lead(graph, post_meta, work, seconds_ago=3600)
    pool = redis.ConnectionPool.from_url(redis_url, connection_class=Counting)
    connection = redis.Redis(connection_pool=pool)
    now = int(time.time())
    items = [{"leadgen_id": LEAD, "stage": "QualifiedLead", "occurred_at": now - 60}]
    items += [
        {"email": f"person{n}@example.com", "stage": "QualifiedLead", "occurred_at": now - 60} for n in range(999)
    ]
    items.append({"leadgen_id": LEAD, "stage": "QualifiedLead", "occurred_at": now - 30})  # a repeat: duplicate
    ctx = context()
    Counting.sends = 0
    results = stageitems.accept(connection, queue(connection, "leadrelay"), items, StageMap(), "US", Scope(ctx.routes))
    # One at a time, a few per item: thousands (one: suppression); two of these read the person
    # index for a person two platforms brought, as the test mapping names a Google destination.
    assert Counting.sends <= 15, Counting.sends
    assert [r["status"] for r in results].count("accepted") == 1000
    assert results[-1]["status"] == "duplicate"
    assert results[0]["event_id"] == f"meta:{LEAD}:QualifiedLead"  # its lead found among the prefetched profiles


def test_stages_for_leads_already_known_cost_a_few_round_trips_too(env, redis_url, redis_conn):
    """The common case: a CRM moving leads we delivered, found by their hashed email."""
    from workers.engine.context import context
    from workers.events import profiles
    from workers.identity.userdata import sha256

    now = int(time.time())
    with redis_conn.pipeline() as pipe:
        for n in range(500):
            user_data = {"em": [sha256(f"known{n}@example.com")]}
            profiles.write(pipe, known_lead(9100000000000000 + n, user_data, env["META_DATASET_ID"]), 90)
        pipe.execute()
    pool = redis.ConnectionPool.from_url(redis_url, connection_class=Counting)
    connection = redis.Redis(connection_pool=pool)
    items = [{"email": f"known{n}@example.com", "stage": "QualifiedLead", "occurred_at": now - 60} for n in range(500)]
    ctx = context()
    Counting.sends = 0
    results = stageitems.accept(connection, queue(connection, "leadrelay"), items, StageMap(), "US", Scope(ctx.routes))
    assert Counting.sends <= 16, Counting.sends  # 13; each known lead read back one by one: 513
    assert {r["event_id"] for r in results} == {f"meta:{9100000000000000 + n}:QualifiedLead" for n in range(500)}
