"""The accuracy figures, kept as counts per flag combination by a Lua script, against a
plain model of sets of lead ids: any sequence of marks gives the same report."""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from workers.events import accuracy, accuracymarks

NOW = time.time()
LEADS = [{"leadgen_id": str(n), "page_id": "1", "form_id": "2", "created_time": NOW} for n in range(6)]


def model(marks: list[tuple[str, int]]) -> dict:
    sets = {kind: set() for kind in accuracy.KINDS}
    for kind, n in marks:
        sets[kind].add(n)
    known = sets["meta"] | sets["webhook"] | sets["recovered"]
    sent = (sets["confirmed"] | sets["kept"]) & known
    dead = (sets["dead"] & known) - sent
    return {
        "known": len(known),
        "meta": len(sets["meta"]),
        "webhook": len(sets["webhook"]),
        "recovered": len(sets["recovered"] - sets["webhook"]),
        "confirmed": len(sets["confirmed"] & known),
        "kept": len((sets["kept"] & known) - sets["confirmed"]),
        "dead": len(dead),
        "too_old": len((sets["too_old"] & known) - sent),
        "waiting": len((sets["webhook"] | sets["recovered"]) - sent - dead),
        "missing": len(sets["meta"] - sets["webhook"] - sets["recovered"] - sets["too_old"]),
    }


@settings(max_examples=60)
@given(st.lists(st.tuples(st.sampled_from(accuracy.KINDS), st.integers(0, 5)), max_size=30))
def test_any_sequence_of_marks_reports_what_the_sets_say(redis_url, marks):
    import redis

    connection = redis.Redis.from_url(redis_url)
    connection.flushdb()
    with connection.pipeline() as pipe:
        for kind, n in marks:
            accuracymarks.mark(pipe, kind, [LEADS[n]], NOW)
        pipe.execute()
    rows = accuracy.report(connection, now=NOW)
    expected = model(marks)
    if not expected["known"]:
        assert rows == []
        return
    [row] = rows
    assert {k: row[k] for k in expected} == expected


def test_a_batch_of_leads_is_marked_in_one_call_per_form_and_day_and_counts_each_once(redis_conn):
    from workers.events import accuracymarks

    now = time.time()
    lead = {"page_id": "1", "form_id": "2", "created_time": now, "route": {"dataset": "acme"}}
    leads = [{**lead, "leadgen_id": str(9100000000000000 + n)} for n in range(300)]
    redis_conn.set(accuracy.ROLLED, 1)  # as after the first read: the marks keep the rollups
    redis_conn.config_resetstat()
    with redis_conn.pipeline(transaction=False) as pipe:
        accuracymarks.mark_all(pipe, [("webhook", leads), ("confirmed", leads[:200])], now)
        pipe.execute()
    calls = redis_conn.info("commandstats")
    assert sum(v["calls"] for k, v in calls.items() if k.startswith("cmdstat_eval")) == 1  # one script call
    # HMGET, HSET, the pin's HGET and HSET, 2 combinations x 3 counts (the form's, the Page's,
    # the day's), the dataset's leads known and done: the same for 3 leads or 3,000.
    assert sum(v["calls"] for k, v in calls.items() if k.startswith("cmdstat_h")) == 12
    accuracymarks.mark_now(redis_conn, "confirmed", leads[:250])  # a replay marks some again, and 50 more
    [row] = accuracy.report(redis_conn, now=now)
    assert (row["webhook"], row["confirmed"]) == (300, 250)
