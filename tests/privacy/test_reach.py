"""Forget and export read a person's records from their ids and the person index
(workers/privacy/reach.py): after a run that writes nearly every kind of record, they find
exactly what reading every key finds (walk.py), for each person of the run; and data kept
before the index is indexed by a backfill in steps, the walk standing in until it is done."""

from __future__ import annotations

import pytest

from helpers import PRIVACY_ADMIN, PRIVACY_API, privacy_run
from workers.privacy.records import RECORDS

PEOPLE = [
    {"email": "kept@example.com"},  # two Lead Ads leads, a stage, a form of theirs
    {"lead_id": "6600000000000003"},  # their older lead alone
    {"lead_id": "6600000000000002"},  # a dead-lettered lead
    {"lead_id": "6600000000000009"},  # a lead held: its Page is not mapped
    {"person_id": "typeform:aBc123Xy:9q3v9bp5alonta6239q3q1rfly2c2ukh"},  # a form's submission
    {"email": "never.a.lead@example.com"},  # a stage of a person never had as a lead
]


@pytest.fixture
def ran(env, monkeypatch, graph, work, redis_conn):
    from webhook_app import create_app

    monkeypatch.setenv("LEADRELAY_ADMIN_TOKEN", PRIVACY_ADMIN)
    monkeypatch.setenv("LEADRELAY_API_TOKEN", PRIVACY_API)
    monkeypatch.setenv("LEADRELAY_ADMIN_COOKIE_SECURE", "false")
    privacy_run(create_app().test_client(), graph, work)
    from workers.config.settings import load
    from workers.jobs import install

    return install(load())


def _both(ctx, given: dict) -> tuple[set, set]:
    """What the walk finds and what reach finds, as (key, entry) pairs."""
    from workers.privacy import reach, walk
    from workers.privacy.person import resolve

    datasets = sorted(ctx.routes.datasets)
    person = resolve(ctx.connection, given, "US", datasets, ctx.routes)
    walked = walk.find(ctx.connection, person.marks(ctx.routes))
    again = resolve(ctx.connection, given, "US", datasets, ctx.routes)
    reached = reach.find(ctx.connection, again, again.marks(ctx.routes))
    return {(f.key, f.member) for f in walked}, {(f.key, f.member) for f in reached}


@pytest.mark.parametrize("given", PEOPLE, ids=lambda g: next(iter(g.values())))
def test_reach_finds_what_reading_every_key_finds(ran, given):
    walked, reached = _both(ran, given)
    assert walked, "the run wrote something of theirs"
    assert reached == walked


def test_every_kind_of_record_that_can_hold_a_person_says_how_reach_finds_it():
    from workers.privacy.reach import REACHED

    assert set(REACHED) == {record.pattern for record in RECORDS if record.person}


def test_every_kind_that_can_hold_a_person_is_reached_in_the_run(ran):
    """The rows that can hold a person, against the kinds the run left and reach found."""
    from workers.privacy.records import record_of

    found = set()
    for given in PEOPLE:
        found |= {record_of(key).kind for key, _ in _both(ran, given)[1]}
    person_rows = {r.kind for r in RECORDS if r.person}
    # Not left by this run: chats, a pause's waiting jobs, a quarantined or ignored entry, a
    # held lead (a mapping file's), the dry-run lists, a recovery claim, an inbox entry (all
    # drained). Forgets elsewhere reach an inbox entry (tests/privacy/test_forget_states.py)
    # and a chat (tests/feature/test_chat_leads.py); the rest are read whole or by job id.
    unwritten = {"chat", "chat lookup", "token pause", "quarantined entry", "dry-run event", "dry-run mark"}
    unwritten |= {"recovery claim", "held lead", "inbox entry", "ignored delivery"}
    assert person_rows - unwritten - found == set()


def test_data_kept_before_the_index_is_indexed_in_steps_and_the_walk_stands_in_until_then(ran):
    from workers.events import personindex

    connection = ran.connection
    for key in connection.scan_iter(match="leadrelay:person*"):
        connection.delete(key)  # as an upgrade finds it: records, no index
    assert not personindex.complete(connection)
    scanned = [0]
    while not personindex.step(connection, steps=1, count=5):
        progress = personindex.progress(connection)
        assert not progress["done"] and progress["scanned"] > scanned[-1]
        scanned.append(progress["scanned"])
    assert len(scanned) > 3  # it went in steps, each from where the last stopped
    assert personindex.progress(connection)["done"]
    for given in PEOPLE:
        walked, reached = _both(ran, given)
        assert reached == walked, given


def test_a_forget_while_the_backfill_runs_reads_every_key_and_says_so(ran, monkeypatch):
    from workers.events import personindex
    from workers.privacy import forget

    connection = ran.connection
    connection.delete(personindex.BACKFILL)  # as an upgrade finds it
    monkeypatch.setattr(forget, "BACKFILL_SECONDS", 0.0)  # and no time to help the backfill
    datasets = sorted(ran.routes.datasets)
    walked = forget.forget(connection, ran.routes, PEOPLE[0], "US", datasets, "test", "test")
    assert walked["read"] == forget.WALKED and walked["removed"]["profile"] == 2
    assert not personindex.complete(connection)
    assert personindex.step(connection, steps=10)
    indexed = forget.forget(connection, ran.routes, PEOPLE[2], "US", datasets, "test", "test")
    assert indexed["read"] == "index" and indexed["removed"]["dead letter"] == 1


def test_metrics_show_how_far_the_backfill_is(ran, env):
    from webhook_app import create_app
    from workers.events import personindex

    ran.connection.hset(personindex.BACKFILL, mapping={"cursor": 17, "scanned": 4000, "done": 0})
    text = create_app().test_client().get("/metrics").get_data(as_text=True)
    assert "leadrelay_person_index_complete 0.0" in text
    assert "leadrelay_person_index_backfill_keys_scanned 4000.0" in text


def test_the_backfill_indexes_a_chat_keyed_by_a_phones_hash(redis_conn):
    """A chat from a number no region reads has no lookup: only the index names it."""
    from workers.events import personindex

    hashed = "6f5f87218b71c93bcba2e851e555d077ae8f2fd560f6b5964ab84c2e828471b2"
    redis_conn.set(f"leadrelay:chat:whatsapp:102290129340398:{hashed}", "{}")
    redis_conn.set("leadrelay:chat:whatsapp:102290129340398:BSUID-1", "{}")  # a lookup names this one
    assert personindex.step(redis_conn)
    assert personindex.entries(redis_conn, ["h:" + hashed[:32]])["c"] == [
        f"leadrelay:chat:whatsapp:102290129340398:{hashed}"
    ]
