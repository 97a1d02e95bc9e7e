"""The sweep against the stand-in's form lead lists (time filter, cursor paging) on real
Redis: it enqueues exactly the leads no webhook brought, remembers where it stopped across
restarts, sweeps once however many workers try, backs off when Meta rate-limits it, flags a
Page whose webhooks stopped, and counts leads too old to send without sending them."""

from __future__ import annotations

import json
import threading
import time

import pytest
from rq.registry import ScheduledJobRegistry

from helpers import agency_lead, inbox_entries, leadgen_body, leadrelay, scheduled_in, wait_for
from workers import jobs
from workers.common.queues import queue
from workers.config.settings import load
from workers.events import accuracy
from workers.sweep import reconcile, sweeper

PAGE, FORM = "111", "555"  # where tests/helpers.leadgen_body's leads come from
HOUR = 3600


@pytest.fixture
def form(graph):
    """The Page's one Lead Ads form, as Graph lists it."""
    graph.page_forms[PAGE] = [FORM]
    return FORM


def leads(graph, count: int, created: int, start: int = 0) -> list[str]:
    ids = [str(7000000000000000 + start + n) for n in range(count)]
    for leadgen_id in ids:
        graph.add_lead(leadgen_id, created_time=created, form_id=FORM)
    return ids


def run(redis_conn, now: float | None = None) -> dict:
    return sweeper.sweep(jobs.context(), queue(redis_conn, "leadrelay"), now=now)


def lead_events(graph) -> list[str]:
    return sorted(str(e["user_data"]["lead_id"]) for e in graph.events if e["event_name"] == "Lead")


def filtering(call) -> dict:
    return {rule["operator"]: rule["value"] for rule in json.loads(call["query"]["filtering"][0])}


def listings(graph) -> list[dict]:
    """The sweep's listings of ids and times (not the one that fetches the answers of the
    leads it recovers)."""
    return [c for c in graph.calls("form_leads") if c["query"]["fields"] == [reconcile.LISTED_FIELDS]]


def test_webhooks_for_8_of_10_leads_then_the_sweep_enqueues_exactly_the_other_2(
    form, graph, post_meta, work, redis_conn
):
    created = int(time.time()) - HOUR
    ids = leads(graph, 10, created)
    post_meta(leadgen_body(*ids[:8], created_time=created))
    work()
    result = run(redis_conn)
    assert result["outcome"] == "swept" and result["forms"][f"{PAGE}/{FORM}"] == {
        "listed": 10,
        "recovered": 2,
        "too_old": 0,
        "known": 8,
    }
    work()
    assert lead_events(graph) == sorted(ids)  # each once
    [row] = accuracy.report(redis_conn)
    assert {k: row[k] for k in ("meta", "webhook", "recovered", "confirmed", "waiting", "dead", "missing")} == {
        "meta": 10,
        "webhook": 8,
        "recovered": 2,
        "confirmed": 10,
        "waiting": 0,
        "dead": 0,
        "missing": 0,
    }
    assert row["accuracy"] == 1.0
    table = leadrelay("accuracy")
    assert table.returncode == 1  # two leads came without a webhook: the Page is flagged
    assert f"{PAGE:<18}{FORM:<18}" in table.stdout and "100.0%" in table.stdout
    assert f"page {PAGE}: webhook_silent" in table.stderr
    assert json.loads(leadrelay("accuracy", "--json").stdout)["pages"][PAGE]["recovered"] == 2


def test_a_restart_between_sweeps_neither_rereads_nor_skips(form, graph, post_meta, work, redis_conn):
    now = time.time()
    first = leads(graph, 3, int(now) - HOUR)
    post_meta(leadgen_body(first[0], created_time=int(now) - HOUR))
    work()  # the Page becomes known once its webhook's lead is taken
    assert run(redis_conn, now)["recovered"] == 2
    jobs.install(load())  # a worker restarted: only Redis remembers
    second = leads(graph, 2, int(now) - 300, start=100)  # inside the grace period at the first sweep
    later = now + 1000
    result = run(redis_conn, later)
    [_, call] = listings(graph)
    assert filtering(call) == {"GREATER_THAN": int(now) - 600, "LESS_THAN": int(later) - 600 + 1}
    assert result["forms"][f"{PAGE}/{FORM}"]["listed"] == 2 and result["recovered"] == 2
    work()
    assert lead_events(graph) == sorted(first + second)


def test_two_workers_sweeping_at_once_enqueue_each_lead_once(form, graph, post_meta, work, redis_conn):
    created = int(time.time()) - HOUR
    ids = leads(graph, 4, created)
    post_meta(leadgen_body(ids[0], created_time=created))
    work()
    release = threading.Event()
    graph.then({"hold": release}, on="form_leads")
    outcomes = []
    first = threading.Thread(target=lambda: outcomes.append(run(redis_conn)["outcome"]))
    first.start()
    wait_for(lambda: graph.calls("form_leads"))  # the first sweep is inside Graph's answer
    outcomes.append(run(redis_conn)["outcome"])
    release.set()
    first.join(10)
    assert sorted(outcomes) == ["already_running", "swept"]
    assert len(listings(graph)) == 1
    assert len(inbox_entries(redis_conn)) == 3  # the three recovered, once each


def test_a_rate_limit_stops_the_sweep_keeps_its_place_and_waits_longer_each_time(
    form, graph, post_meta, work, redis_conn, monkeypatch
):
    created = int(time.time()) - HOUR
    ids = leads(graph, 3, created)
    post_meta(leadgen_body(ids[0], created_time=created))
    work()
    monkeypatch.setenv("LEADRELAY_SWEEP_SECONDS", "60")
    jobs.install(load())
    usage = json.dumps({"1": [{"type": "lead_retrieval", "estimated_time_to_regain_access": 5}]})
    graph.then(
        {"status": 400, "error": {"code": 80005}, "headers": {"X-Business-Use-Case-Usage": usage}},
        on="form_leads",
        times=2,
    )
    first = jobs.run_sweep({})
    assert first["outcome"] == "throttled" and first["retry_in"] == 300  # Meta's five minutes
    assert redis_conn.hget(sweeper.CURSORS, FORM) is None  # its place is kept: nothing was read
    [scheduled] = [
        j for j in ScheduledJobRegistry("leadrelay", connection=redis_conn).get_job_ids() if j.startswith("sweep-")
    ]
    assert 235 < scheduled_in(redis_conn, scheduled) <= 300  # the start of the slot five minutes on
    assert jobs.run_sweep({})["retry_in"] == 600  # twice as long
    assert jobs.run_sweep({})["recovered"] == 2  # Meta answers again: from the same place
    assert redis_conn.get(sweeper.BACKOFF) is None
    work()
    assert lead_events(graph) == sorted(ids)


def test_a_page_with_no_webhooks_at_all_is_flagged_webhook_silent_once(agency, graph, work, redis_conn, capfd):
    for n in range(3):
        agency_lead(graph, f"2020{n}", "202")  # Brand B's leads: no webhook ever came
    capfd.readouterr()
    result = run(redis_conn, time.time() + 600)
    assert result["forms"]["202/202555"]["recovered"] == 3 and result["forms"]["101/101555"]["recovered"] == 0
    assert set(accuracy.silent(redis_conn)) == {"202"}
    logged = [json.loads(line) for line in capfd.readouterr().err.splitlines() if '"webhook_silent"' in line]
    assert [(e["level"], e["page_id"]) for e in logged] == [("error", "202")]
    assert "leadrelay doctor --page-id 202" in logged[0]["detail"]
    graph.add_lead("20209", page_id="202", form_id="202555", created_time=int(time.time()) + 100)  # after the cursor
    run(redis_conn, time.time() + 1200)
    assert '"webhook_silent"' not in capfd.readouterr().err  # still silent: said once
    run(redis_conn, time.time() + 1800)  # nothing new only the sweep found: the flag clears
    assert accuracy.silent(redis_conn) == {}
    work()
    assert sorted(e["dataset_id"] for e in graph.events) == ["2001"] * 4


def test_leads_older_than_the_window_are_counted_but_not_sent(form, graph, post_meta, work, redis_conn):
    now = int(time.time())
    fresh = leads(graph, 1, now - HOUR)
    closing = leads(graph, 1, now - 7 * 24 * HOUR + 1800, start=10)  # inside 7 days, past the hour of margin
    leads(graph, 1, now - 8 * 24 * HOUR, start=20)  # past 7 days: never read
    post_meta(leadgen_body(fresh[0], created_time=now - HOUR))
    work()
    result = run(redis_conn, now)
    assert filtering(graph.calls("form_leads")[0])["GREATER_THAN"] == now - 7 * 24 * HOUR
    assert result["forms"][f"{PAGE}/{FORM}"] == {"listed": 2, "recovered": 0, "too_old": 1, "known": 1}
    work()
    assert lead_events(graph) == fresh
    assert closing[0] not in lead_events(graph)
    assert sum(row["too_old"] for row in accuracy.report(redis_conn)) == 1


def test_a_page_whose_token_is_refused_does_not_stop_the_sweep_of_the_others(agency, graph, redis_conn, capfd):
    from helpers import PAGES

    agency_lead(graph, "30301", "303")
    graph.revoked.add(PAGES["202"][1])
    result = run(redis_conn, time.time() + 600)
    assert result["outcome"] == "swept" and result["failed_pages"] == ["202"]
    assert result["forms"]["303/303555"]["recovered"] == 1
    failed = [json.loads(line) for line in capfd.readouterr().err.splitlines() if '"sweep_page_failed"' in line]
    assert [(e["level"], e["page_id"], e["code"]) for e in failed] == [("error", "202", 190)]


def test_an_interrupted_read_goes_on_from_the_page_it_reached(form, graph, post_meta, work, redis_conn):
    created = int(time.time()) - HOUR
    ids = leads(graph, 250, created)  # three pages of Graph's list
    post_meta(leadgen_body(ids[0], created_time=created))
    work()
    graph.then({"status": 500, "error": {"code": 2, "is_transient": True}}, on="form_leads")  # before any page
    graph.then({}, on="form_leads", times=2)  # page 1 answers (and its leads' answers)...
    graph.then({"status": 400, "error": {"code": 613}}, on="form_leads")  # ...then Meta rate-limits page 2
    assert run(redis_conn)["failed_pages"] == [PAGE]  # a 5xx: this Page waits for the next sweep
    interrupted = run(redis_conn)
    assert interrupted["outcome"] == "throttled" and interrupted["forms"][f"{PAGE}/{FORM}"]["listed"] == 100
    assert json.loads(redis_conn.hget(sweeper.PROGRESS, FORM))["after"] == "100"
    finished = run(redis_conn)
    assert finished["forms"][f"{PAGE}/{FORM}"]["listed"] == 150  # pages 2 and 3, not page 1 again
    assert [c["query"].get("after") for c in listings(graph)][-2:] == [["100"], ["200"]]
    assert len(inbox_entries(redis_conn)) == 249 and redis_conn.hget(sweeper.PROGRESS, FORM) is None


def test_a_recovered_lead_is_read_once_and_a_sweep_of_known_leads_reads_no_answers(
    form, graph, post_meta, work, redis_conn
):
    created = int(time.time()) - HOUR
    ids = [str(7100000000000000 + n) for n in range(120)]  # two pages of Graph's list, a second apart
    for n, leadgen_id in enumerate(ids):
        graph.add_lead(leadgen_id, created_time=created - n, form_id=FORM)
    post_meta(leadgen_body(ids[0], created_time=created))  # no webhook for the other 119
    work()
    reads_before = len(graph.calls("lead")) + len(graph.calls("batch"))
    assert run(redis_conn)["recovered"] == 119
    work()
    assert len(graph.calls("lead")) + len(graph.calls("batch")) == reads_before  # no lead read again
    assert lead_events(graph) == sorted(ids)
    sent = {str(e["user_data"]["lead_id"]): e for e in graph.events}
    assert {"em", "ph", "fn", "ln"} <= set(sent[ids[-1]]["user_data"])  # its answers, from the listing
    answers = [c for c in graph.calls("form_leads") if c not in listings(graph)]
    assert len(listings(graph)) == 2 and len(answers) == 2  # one for each page of leads recovered
    assert all("field_data" in c["query"]["fields"][0] for c in answers)
    # A later sweep whose leads all came by webhook lists ids and times, and no answer.
    more = leads(graph, 5, int(time.time()) - 700, start=500)
    post_meta(leadgen_body(*more, created_time=int(time.time()) - 700))
    work()
    graph.requests.clear()
    assert run(redis_conn, time.time() + 10)["recovered"] == 0
    assert [c["query"]["fields"] for c in graph.calls("form_leads")] == [[reconcile.LISTED_FIELDS]]


def test_one_in_ten_missing_reads_only_the_missing_leads_never_a_delivered_ones_answers(
    form, graph, post_meta, work, redis_conn
):
    """A partial outage: the answers listing over their minutes would read the delivered
    leads' answers too (personal data already sent); each missing lead is read by id
    instead, as its webhook's would have been."""
    created = int(time.time()) - HOUR
    ids = [str(7300000000000000 + n) for n in range(60)]
    for n, leadgen_id in enumerate(ids):
        graph.add_lead(leadgen_id, created_time=created - n, form_id=FORM)
    missing = ids[::10]
    post_meta(leadgen_body(*[i for i in ids if i not in missing], created_time=created))
    work()
    graph.requests.clear()
    assert run(redis_conn)["recovered"] == len(missing)
    work()
    assert [c["query"]["fields"] for c in graph.calls("form_leads")] == [[reconcile.LISTED_FIELDS]]  # ids only
    read = {c["path"].rsplit("/", 1)[-1] for c in graph.calls("lead")}
    assert read == set(missing)  # by id, each of them, and nothing delivered
    assert lead_events(graph) == sorted(ids)
