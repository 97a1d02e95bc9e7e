"""The rollups made again after an upgrade, and the window moved on at midnight, in bounded
steps while marks keep landing between them: whatever the interleaving, the figures are
what walking every form says, and no step holds Redis for long."""

from __future__ import annotations

import time

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import accuracy_ranked, accuracy_routes, accuracy_walked
from workers.events import accuracy, accuracymarks, accuracyrebuild, accuracyrollup

NOW = time.time()
ROUTES = accuracy_routes()  # Pages 1-3 to dataset a, Page 4 and Page 1's form 12 to b
DAY = 86400
AGO = (8, 7, 1, 0)  # days: one leaves the window at midnight, one is its first, two are in it


def lead(n: int) -> dict:
    page = n % 5 + 1
    created = NOW - AGO[n % 4] * DAY
    return {"leadgen_id": str(n), "page_id": str(page), "form_id": f"{page}{n % 2 + 1}", "created_time": created}


MARKS = st.lists(st.tuples(st.sampled_from(accuracy.KINDS), st.integers(0, 39)), max_size=40)


@pytest.fixture
def scanned_in_steps(redis_url):
    """Small sorted sets kept as skiplists, so a scan's COUNT is honoured as in a large Redis."""
    connection = redis.Redis.from_url(redis_url)
    before = connection.config_get("zset-max-ziplist-entries")["zset-max-ziplist-entries"]
    connection.config_set("zset-max-ziplist-entries", 0)
    yield connection
    connection.config_set("zset-max-ziplist-entries", before)


def _mark(connection: redis.Redis, marks: list[tuple[str, int]]) -> None:
    with connection.pipeline() as pipe:
        for kind, n in marks:
            accuracymarks.mark(pipe, kind, [lead(n)], NOW, ROUTES)
        pipe.execute()


def _same_as_accuracy_walked(connection: redis.Redis, now: float) -> None:
    """Figures, per dataset and day, and the Pages /metrics names at every bound."""
    pages, daily = accuracy_walked(connection, now)
    assert accuracyrollup.pages(connection, ROUTES, limit=100, now=now) == pages
    assert accuracyrollup.coverage(connection, ROUTES, now=now) == daily
    for limit in range(1, 5):
        bounded = accuracyrollup.pages(connection, ROUTES, limit=limit, now=now)
        expected = accuracy_ranked(pages, limit)
        assert (set(bounded), bounded.get("_other")) == (set(expected), expected.get("_other"))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(MARKS, MARKS, st.integers(1, 3))
def test_marks_between_the_steps_of_a_rebuild_count_once(scanned_in_steps, monkeypatch, before, during, every):
    """An upgrade: the forms' counts, no rollups. The rebuild adds up a pair a step; marks
    land between steps, on pairs it has added up, has not, and never saw."""
    connection = scanned_in_steps
    connection.flushdb()
    monkeypatch.setattr(accuracyrebuild, "PAIRS_PER_STEP", 1)
    _mark(connection, before)
    dates = accuracy.window(accuracy.WINDOW_DAYS, NOW)
    while not accuracyrebuild.rebuild(connection, ROUTES, dates, steps=1):
        _mark(connection, during[:every])
        during = during[every:]
    _mark(connection, during)
    _same_as_accuracy_walked(connection, NOW)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(MARKS, MARKS, st.integers(1, 3))
def test_marks_between_the_steps_of_the_midnight_roll_count_once(scanned_in_steps, monkeypatch, before, during, every):
    """Read yesterday, marked, then today's first read moves the window a Page a step while
    marks land: the day that left takes its leads with it, the others stay counted once."""
    connection = scanned_in_steps
    connection.flushdb()
    monkeypatch.setattr(accuracyrollup, "MEMBERS_PER_STEP", 1)
    accuracyrollup.window_days(connection, ROUTES, NOW - DAY)
    _mark(connection, before)
    dates = accuracy.window(accuracy.WINDOW_DAYS, NOW)
    while not accuracyrollup.roll(connection, dates, steps=1):
        _mark(connection, during[:every])
        during = during[every:]
    _mark(connection, during)
    _same_as_accuracy_walked(connection, NOW)


def test_a_window_days_behind_is_summed_again_whole(redis_conn):
    """Days without a read (a service stopped over a weekend): the window's sums start again
    from the days still in it, not from what a day long gone would take away."""
    accuracyrollup.window_days(redis_conn, ROUTES, NOW - 3 * DAY)
    _mark(redis_conn, [("webhook", n) for n in range(20)] + [("confirmed", n) for n in range(0, 20, 3)])
    gone = {"leadgen_id": "99", "page_id": "7", "form_id": "71", "created_time": NOW - 9 * DAY}
    accuracymarks.mark_now(redis_conn, "webhook", [gone])  # a Page whose leads are all out of today's window
    assert "7" in accuracyrollup.pages(redis_conn, ROUTES, now=NOW - 3 * DAY)
    _same_as_accuracy_walked(redis_conn, NOW)
    assert "7" not in accuracyrollup.pages(redis_conn, ROUTES, now=NOW)
