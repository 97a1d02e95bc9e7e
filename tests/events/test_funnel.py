"""The funnel's counters, kept as events go out, and Meta's gates judged on them."""

import statistics

from hypothesis import given
from hypothesis import strategies as st

from workers.events import accuracy, funnel, gates

NOW = 1_800_000_000.0
DAY = 86400


def lead(n: int, created: float) -> dict:
    return {"event_name": "Lead", "event_id": f"lead-{n}", "event_time": int(created), "user_data": {"lead_id": n}}


def stage(n: int, name: str, at: float) -> dict:
    return {"event_name": name, "event_id": f"{name}-{n}", "event_time": int(at), "user_data": {"lead_id": n}}


def record(redis_conn, events, now=NOW, lead_times=None, dataset="default"):
    with redis_conn.pipeline() as pipe:
        funnel.record(pipe, events, dataset, now, lead_times)
        pipe.execute()


def test_leads_stages_and_days_to_reach_them_are_counted_per_lead_day(redis_conn):
    created = {n: NOW - (n % 40) * DAY for n in range(1, 241)}  # 240 leads, over 40 days
    record(redis_conn, [lead(n, t) for n, t in created.items()])
    qualified = {n: created[n] + (n % 5) * DAY for n in range(1, 241, 4)}  # 60 of them, 0-4 days later
    record(
        redis_conn,
        [stage(n, "QualifiedLead", t) for n, t in qualified.items()],
        lead_times={f"QualifiedLead-{n}": created[n] for n in qualified},
    )
    late = {n: created[n] + 30 * DAY for n in (2, 6)}  # reached it after Meta's 28 days
    record(
        redis_conn,
        [stage(n, "Schedule", t) for n, t in late.items()],
        lead_times={f"Schedule-{n}": created[n] for n in late},
    )
    figures = funnel.read(redis_conn, ["default"], NOW)["default"]
    in_window = [n for n, t in created.items() if t > NOW - 30 * DAY]
    assert figures.leads == len(in_window) == 180  # leads of 30 days, not the 40
    by_name = {s.event_name: s for s in figures.stages}
    reached = [n for n in qualified if n in in_window]
    assert by_name["QualifiedLead"].reached == len(reached)
    assert by_name["QualifiedLead"].share == round(len(reached) / 180, 4)
    assert by_name["QualifiedLead"].median_days == statistics.median(
        (qualified[n] - created[n]) // DAY for n in reached
    )
    assert by_name["Schedule"].reached == 0 and by_name["Schedule"].later == len([n for n in late if n in in_window])
    assert figures.stages_seen == ["Lead", "QualifiedLead", "Schedule"]  # Lead first, as Meta wants it
    assert figures.last_upload == NOW
    assert len(figures.by_day) == 30 and sum(d[1] for d in figures.by_day) == 180


def test_a_lead_that_moved_through_three_stages_between_two_uploads_sent_three_events(redis_conn):
    """Meta's Conversion Leads guide: every status change its own event, not the last one.
    A lead that went QualifiedLead, Schedule, Purchase between two sheet uploads is one stage
    history of three events; a lead with one stage per upload is none."""
    created = NOW - 5 * DAY
    record(redis_conn, [lead(n, created) for n in (1, 2)])
    record(redis_conn, [stage(1, name, created + DAY) for name in ("QualifiedLead", "Schedule", "Purchase")])
    record(redis_conn, [stage(2, "QualifiedLead", created + DAY)])
    record(redis_conn, [stage(2, "Schedule", created + 2 * DAY)])
    figures = funnel.read(redis_conn, ["default"], NOW)["default"]
    assert (figures.histories, figures.history_events) == (1, 3)


def test_events_without_a_lead_id_do_not_count_but_still_upload(redis_conn):
    record(redis_conn, [{"event_name": "Lead", "event_id": "x", "event_time": int(NOW), "user_data": {"em": ["h"]}}])
    figures = funnel.read(redis_conn, ["default"], NOW)["default"]
    assert figures.leads == 0 and figures.stages_seen == [] and figures.last_upload == NOW


def test_each_dataset_counts_its_own(redis_conn):
    record(redis_conn, [lead(1, NOW)], dataset="acme")
    record(redis_conn, [lead(2, NOW), lead(3, NOW)], dataset="brandb")
    found = funnel.read(redis_conn, ["acme", "brandb", "unused"], NOW)
    assert [found[d].leads for d in ("acme", "brandb", "unused")] == [1, 2, 0]


def test_a_ready_funnel_passes_every_gate(redis_conn):
    record(redis_conn, [lead(n, NOW - (n % 30) * DAY) for n in range(1, 301)], now=NOW - 3600)
    qualified = {n: NOW - (n % 30) * DAY + 2 * DAY for n in range(1, 301, 3) if n % 30 >= 2}
    for n, t in sorted(qualified.items(), key=lambda item: item[1]):  # each uploaded on its own day, as a CRM does
        record(
            redis_conn,
            [stage(n, "QualifiedLead", t)],
            now=min(t, NOW - 600),
            lead_times={f"QualifiedLead-{n}": NOW - (n % 30) * DAY},
        )
    record(redis_conn, [stage(0, "QualifiedLead", NOW - 600)], now=NOW - 600)  # and one today
    figures = funnel.read(redis_conn, ["default"], NOW)["default"]
    daily = {accuracy.day(NOW - n * DAY): (10, 10) for n in range(1, 8)}  # every lead of each past day
    judged = {g.name: g for g in gates.judge(figures, (290, 300), NOW, daily)}
    assert all(g.passed and g.fix is None for g in judged.values()), [g for g in judged.values() if not g.passed]
    assert judged["leads_30d"].value == 300
    assert judged["lead_coverage"].figure == "96.7% (290 of 300)"
    assert judged["funnel_stages"].figure == "Lead, QualifiedLead"
    assert judged["optimisation_stage"].figure == f"QualifiedLead {len(qualified) / 300:.1%}"
    assert judged["daily_upload"].figure == "10 min ago"
    assert judged["crm_days"].value >= 7  # Meta's FAQ: seven days with CRM events, not necessarily in a row


def test_a_new_dataset_fails_each_gate_with_what_to_do(redis_conn):
    record(redis_conn, [lead(1, NOW - DAY)], now=NOW - 2 * DAY)
    record(redis_conn, [stage(1, "Purchase", NOW - DAY)], now=NOW - 2 * DAY, lead_times={"Purchase-1": NOW - DAY})
    figures = funnel.read(redis_conn, ["default"], NOW)["default"]
    judged = {g.name: g for g in gates.judge(figures, (1, 3), NOW)}
    assert [name for name, g in judged.items() if g.passed] == ["funnel_stages"]
    assert judged["leads_30d"].figure == "1" and "200 leads a month" in judged["leads_30d"].fix
    assert judged["lead_coverage"].value == round(1 / 3, 4) and "leadrelay accuracy" in judged["lead_coverage"].fix
    assert judged["funnel_stages"].figure == "Lead, Purchase"
    # A stage every lead reaches teaches Meta nothing more than Lead: outside 1-40%.
    assert judged["optimisation_stage"].figure == "Purchase 100.0%" and "1%" in judged["optimisation_stage"].fix
    assert judged["daily_upload"].figure == "2.0 days ago" and "leadrelay doctor" in judged["daily_upload"].fix
    assert judged["crm_days"].figure == "1" and "seven days with CRM events" in judged["crm_days"].fix


def test_nothing_sent_yet_is_judged_without_figures(redis_conn):
    judged = {g.name: g for g in gates.judge(funnel.read(redis_conn, ["default"], NOW)["default"], None, NOW)}
    assert judged["lead_coverage"].figure == "no Lead Ads lead known" and judged["lead_coverage"].value is None
    assert judged["optimisation_stage"].figure == "no stage reached"
    assert judged["daily_upload"].figure == "never" and not judged["daily_upload"].passed


@given(st.dictionaries(st.integers(0, 29), st.integers(0, 50), max_size=12))
def test_the_median_from_counts_is_the_median_of_the_values(counts):
    values = [value for value, n in counts.items() for _ in range(n)]
    assert funnel._median(counts) == (statistics.median(values) if values else None)


def test_recording_costs_the_same_whatever_was_recorded_before(redis_conn):
    record(redis_conn, [lead(n, NOW) for n in range(2000)])
    assert redis_conn.hlen(funnel._key("default", "2027-01-15")) == 2  # leads, sent Lead: never a field per lead


def test_the_worst_day_decides_whether_every_lead_had_its_lead_event():
    """Meta's guide: "100 leads, 100 raw Lead events". Today is not judged (leads on their way)."""
    figures = funnel.Figures("default", 0, [], [], [], None)
    daily = {accuracy.day(NOW - 2 * DAY): (100, 100), accuracy.day(NOW - DAY): (97, 100), accuracy.day(NOW): (1, 9)}
    [worst] = [g for g in gates.judge(figures, None, NOW, daily) if g.name == "daily_lead_events"]
    assert not worst.passed and worst.figure == f"{accuracy.day(NOW - DAY)}: 97 of 100" and "3 lead(s)" in worst.fix
    daily[accuracy.day(NOW - DAY)] = (100, 100)
    [worst] = [g for g in gates.judge(figures, None, NOW, daily) if g.name == "daily_lead_events"]
    assert worst.passed and worst.value == 1.0
