"""The readiness scenario's month of history, counted at fixed hours on both sides of
midnight UTC: the 30-day figure is the plan's leads of those 30 days, at any hour."""

import datetime

import pytest

from workers.config.routing import DEFAULT
from workers.events import accuracy, funnel
from workers.run import scenario

MIDNIGHT = datetime.datetime(2026, 11, 28, tzinfo=datetime.UTC).timestamp()


@pytest.mark.parametrize("now", [MIDNIGHT - 30, MIDNIGHT + 30, MIDNIGHT - 3600 * 2.5, MIDNIGHT + 3600 * 12])
def test_the_history_counts_each_lead_of_the_30_days_once_at_any_hour(redis_conn, now):
    leads = scenario.plan(now)
    counted = scenario.history(redis_conn, leads, now)
    first_day = accuracy.day(now - (funnel.LEAD_DAYS - 1) * scenario.DAY)
    written = [
        lead
        for index, lead in enumerate(leads)
        if lead["created"] < now - scenario.LIVE_SECONDS
        and not (lead["created"] >= now - accuracy.WINDOW_DAYS * scenario.DAY and index % 25 == 0)
    ]
    expected = sum(1 for lead in written if accuracy.day(lead["created"]) >= first_day)
    figures = funnel.read(redis_conn, [DEFAULT], now)[DEFAULT]
    assert figures.leads == expected
    assert counted["leads"] - counted["missing"] == len(written)
    assert 250 <= figures.leads <= scenario.LEADS - counted["missing"]
