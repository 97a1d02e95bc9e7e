"""The rollups the marks keep (per Page, per dataset, per day) against the report that
walks every form: any marks, on any Pages, forms and days, give the same figures, ranked
the same, whether the rollups were kept as the marks landed or made again from the forms'
counts after an upgrade."""

from __future__ import annotations

import time

import pytest
import redis
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import accuracy_ranked, accuracy_routes, accuracy_walked
from workers.events import accuracy, accuracymarks, accuracyrollup

NOW = time.time()
ROUTES = accuracy_routes()  # Pages 1-3 to dataset a, Page 4 and Page 1's form 12 to b
DAY = 86400


def lead(n: int) -> dict:
    """Lead n: on one of 5 Pages, 2 forms each, created on one of 3 days."""
    page = n % 5 + 1
    return {
        "leadgen_id": str(n),
        "page_id": str(page),
        "form_id": f"{page}{n % 2 + 1}",
        "created_time": NOW - n % 3 * DAY,
    }


MARKS = st.lists(st.tuples(st.sampled_from(accuracy.KINDS), st.integers(0, 29)), max_size=60)


def marked(connection: redis.Redis, marks: list[tuple[str, int]], read_first: bool = False) -> None:
    """`marks` on an empty Redis; `read_first`: after a first read, so each mark adds itself
    to the window's sums as it lands (without, the next read sums the days)."""
    connection.flushdb()
    if read_first:
        accuracyrollup.window_days(connection, ROUTES, NOW)
    with connection.pipeline() as pipe:
        for kind, n in marks:
            accuracymarks.mark(pipe, kind, [lead(n)], NOW, ROUTES)
        pipe.execute()


def marked_now(connection: redis.Redis, kind: str, leads: list[dict], now: float = NOW) -> None:
    with connection.pipeline() as pipe:
        accuracymarks.mark(pipe, kind, leads, now, ROUTES)
        pipe.execute()


@settings(max_examples=60, deadline=None)
@given(MARKS, st.integers(1, 6), st.booleans())
def test_the_rollups_kept_as_marks_land_say_what_walking_every_form_says(redis_url, marks, limit, read_first):
    connection = redis.Redis.from_url(redis_url)
    marked(connection, marks, read_first)
    pages, daily = accuracy_walked(connection, NOW)
    assert accuracyrollup.pages(connection, ROUTES, limit=100, now=NOW) == pages
    assert accuracyrollup.coverage(connection, ROUTES, now=NOW) == daily
    bounded = accuracyrollup.pages(connection, ROUTES, limit=limit, now=NOW)
    assert set(bounded) == set(accuracy_ranked(pages, limit))
    assert bounded.get("_other") == accuracy_ranked(pages, limit).get("_other")


@settings(max_examples=30, deadline=None)
@given(MARKS)
def test_counts_kept_before_the_rollups_existed_are_added_up_once_by_the_first_read(redis_url, marks):
    """An upgrade: the forms' counts are there, the rollups are not (an older version marked
    them). The first read makes them from the forms' counts; later marks add to them."""
    connection = redis.Redis.from_url(redis_url)
    marked(connection, marks)
    kept = [
        key for key in connection.keys("leadrelay:accuracy:*") if not key.endswith((b":leads", b":counts", b":forms"))
    ]
    if kept:
        connection.delete(*kept)  # what an older version left: the forms' flags and counts alone
    pages, daily = accuracy_walked(connection, NOW)
    assert accuracyrollup.pages(connection, ROUTES, limit=100, now=NOW) == pages
    assert accuracyrollup.coverage(connection, ROUTES, now=NOW) == daily
    assert connection.get(accuracyrollup.ROLLED)
    with connection.pipeline() as pipe:
        accuracymarks.mark(pipe, "webhook", [lead(n) for n in range(30)], NOW, ROUTES)
        accuracymarks.mark(pipe, "confirmed", [lead(n) for n in range(0, 30, 2)], NOW, ROUTES)
        pipe.execute()
    assert (
        accuracyrollup.pages(connection, ROUTES, limit=100, now=NOW),
        accuracyrollup.coverage(connection, ROUTES, now=NOW),
    ) == accuracy_walked(connection, NOW)


def test_a_form_counts_in_the_dataset_it_was_first_marked_with_that_day(redis_conn):
    """Routes edited between a lead's webhook and its confirmation: the lead is known and
    done in the same dataset, so a coverage never passes 100% or counts a lead twice."""
    first = {**lead(0), "route": {"dataset": "a"}}
    later = {**lead(0), "route": {"dataset": "b"}}
    accuracymarks.mark_now(redis_conn, "webhook", [first])
    accuracymarks.mark_now(redis_conn, "confirmed", [later])
    assert accuracyrollup.coverage(redis_conn, ROUTES, now=NOW) == {"a": {accuracy.day(NOW): (1, 1)}}


@pytest.mark.parametrize("read_first", [False, True], ids=["summed-by-a-read", "added-as-marked"])
def test_a_page_ranks_by_its_whole_window_not_by_the_day_it_was_last_marked(redis_conn, read_first):
    """Page 2's good day six days ago and bad day today rank it by both, as the report does."""
    if read_first:
        accuracyrollup.window_days(redis_conn, ROUTES, NOW)
    old = [{"leadgen_id": str(n), "page_id": "2", "form_id": "21", "created_time": NOW - 6 * DAY} for n in range(9)]
    new = [{"leadgen_id": "90", "page_id": "2", "form_id": "21", "created_time": NOW}]
    other = [{"leadgen_id": str(100 + n), "page_id": "3", "form_id": "31", "created_time": NOW} for n in range(2)]
    with redis_conn.pipeline() as pipe:
        accuracymarks.mark_all(pipe, [("webhook", old + new + other), ("confirmed", old + other[:1])], NOW, ROUTES)
        pipe.execute()
    pages = accuracyrollup.pages(redis_conn, ROUTES, limit=1, now=NOW)
    assert pages["3"]["accuracy"] == 0.5 and pages["_other"]["accuracy"] == 0.9  # page 2: 9 of 10


def test_a_day_leaves_the_window_at_midnight_and_its_leads_with_it(redis_conn):
    """Leads of 7 days ago are in the window today and out of it tomorrow: the first read of
    the new day sums the window again, and marks after it add to the new sums."""
    old = [{"leadgen_id": str(n), "page_id": "2", "form_id": "21", "created_time": NOW - 7 * DAY} for n in range(3)]
    new = [{"leadgen_id": "9", "page_id": "3", "form_id": "31", "created_time": NOW}]
    accuracyrollup.window_days(redis_conn, ROUTES, NOW)
    marked_now(redis_conn, "webhook", old + new)
    assert set(accuracyrollup.pages(redis_conn, ROUTES, now=NOW)) == {"2", "3"}
    tomorrow = NOW + DAY
    assert set(accuracyrollup.pages(redis_conn, ROUTES, now=tomorrow)) == {"3"}
    marked_now(redis_conn, "confirmed", new)
    assert (
        accuracyrollup.pages(redis_conn, ROUTES, now=tomorrow),
        accuracyrollup.coverage(redis_conn, ROUTES, now=tomorrow),
    ) == accuracy_walked(redis_conn, tomorrow)
