"""The suppression list: hashes only, per dataset; a lead id by its own hash; one round
trip for a batch; lifted only by the forget's reference."""

from __future__ import annotations

import hashlib

from workers.events import suppression

EM = "b" * 64


def test_a_person_is_suppressed_in_the_dataset_they_were_forgotten_in_only(redis_conn):
    suppression.add(redis_conn, suppression.fields("acme", {"em": [EM]}), "forget-1")
    found = suppression.which(
        redis_conn,
        [suppression.fields("acme", {"em": [EM]}), suppression.fields("brandb", {"em": [EM]}), []],
    )
    assert found == ["forget-1", None, None]


def test_a_lead_id_is_kept_as_its_hash_and_found_in_any_dataset(redis_conn):
    suppression.add(redis_conn, [suppression.lead_field("7700000000000001")], "forget-2")
    assert b"7700000000000001" not in b"".join(redis_conn.hkeys(suppression.KEY))
    assert hashlib.sha256(b"7700000000000001").hexdigest() in redis_conn.hkeys(suppression.KEY)[0].decode()
    event_user_data = {"em": ["c" * 64], "lead_id": 7700000000000001}  # as a Lead event carries it
    assert suppression.which(redis_conn, [suppression.fields("brandb", event_user_data)]) == ["forget-2"]


def test_lifting_takes_one_forgets_fields_and_no_others(redis_conn):
    suppression.add(redis_conn, suppression.fields("acme", {"em": [EM]}), "forget-1")
    suppression.add(redis_conn, suppression.fields("acme", {"ph": ["d" * 64]}), "forget-3")
    assert suppression.lift(redis_conn, ref="forget-1") == 1
    assert suppression.which(redis_conn, [suppression.fields("acme", {"em": [EM], "ph": ["d" * 64]})]) == ["forget-3"]
    assert suppression.lift(redis_conn, ref="forget-1") == 0
