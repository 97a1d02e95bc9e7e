"""The readiness report through the real pipeline: a Lead Ads lead and its stages go out,
the stage API posts late and too late, and `leadrelay readiness`, the admin page and
/metrics show each gate's figure and verdict, the stage lag and a silent source."""

import json
import time

from helpers import ADMIN, LEAD, delivered_lead, leadrelay
from webhook_app import create_app
from workers.events import stagelag
from workers.graphapi import capi
from workers.reports import readiness

DAY = 86400


def post_stages(client, *items):
    answer = client.post("/api/v1/stage-events", headers={"Authorization": "Bearer crm-token"}, json=list(items))
    assert answer.status_code == 202, answer.get_json()
    return answer.get_json()["results"]


def test_a_lead_and_its_stages_are_judged_against_metas_gates(env, graph, post_meta, work, monkeypatch, redis_conn):
    monkeypatch.setenv("LEADRELAY_API_TOKEN", "crm-token")
    monkeypatch.setenv("LEADRELAY_ADMIN_TOKEN", ADMIN)
    client = create_app().test_client()
    created = delivered_lead(graph, post_meta, work, seconds_ago=int(6.8 * DAY))
    now = time.time()
    results = post_stages(
        client,
        {"leadgen_id": LEAD, "stage": "QualifiedLead", "occurred_at": int(created + 0.5 * DAY)},  # 6.3 days late
        {"leadgen_id": LEAD, "stage": "Schedule", "occurred_at": int(now - 60)},
        {"email": "gone@example.com", "stage": "QualifiedLead", "occurred_at": int(now - 8 * DAY)},  # lost
    )
    assert [r["status"] for r in results] == ["accepted", "accepted", "rejected"]
    work()

    found = readiness.report(redis_conn, client.application.extensions["leadrelay"]["routes"], _settings(client))
    [dataset] = found["datasets"]
    gates = {g["name"]: g for g in dataset["gates"]}
    assert (gates["leads_30d"]["value"], gates["leads_30d"]["passed"]) == (1, False)
    assert gates["lead_coverage"]["figure"] == "100.0% (1 of 1)" and gates["lead_coverage"]["passed"]
    assert gates["funnel_stages"]["figure"] == "Lead, QualifiedLead, Schedule" and gates["funnel_stages"]["passed"]
    assert gates["optimisation_stage"]["passed"] is False  # one lead: every stage is reached by 100%
    assert gates["daily_upload"]["passed"] and gates["daily_upload"]["figure"].endswith("min ago")
    stages = {s["event_name"]: s for s in dataset["stages"]}
    assert (stages["QualifiedLead"]["reached"], stages["QualifiedLead"]["median_days"]) == (1, 0)
    assert (stages["Schedule"]["share"], stages["Schedule"]["median_days"]) == (1.0, 6)
    [source] = found["sources"]
    assert (source["source"], source["arrived"], source["near_edge"], source["too_late"]) == ("api", 2, 1, 1)
    assert source["buckets"]["6-7 days"] == 1 and source["buckets"]["under 1 h"] == 1 and not source["silent"]

    out = leadrelay("readiness")
    assert out.returncode == 1  # gates fail: something to act on
    assert "[FAIL] Lead Ads leads, last 30 days" in out.stdout and "needs >= 200" in out.stdout
    assert "[ok]   Funnel stages sent, last 28 days" in out.stdout and "Lead, QualifiedLead, Schedule" in out.stdout
    assert "api                 2 arrived, median under 1 h, 1 near the 7-day edge, 1 too late" in out.stdout
    as_json = json.loads(leadrelay("readiness", "--json").stdout)
    assert as_json["datasets"][0]["gates"] == dataset["gates"]

    client.post("/admin/login", data={"token": ADMIN})
    page = client.get("/admin").get_data(as_text=True)
    assert 'data-verdict="funnel_stages">pass' in page and 'data-verdict="leads_30d">fail' in page
    assert 'data-chart="funnel-default"' in page and 'data-source="api"' in page
    metrics = client.get("/metrics").get_data(as_text=True)
    assert 'leadrelay_readiness_gate{dataset="default",gate="funnel_stages"} 1.0' in metrics
    assert 'leadrelay_readiness_figure{dataset="default",gate="leads_30d"} 1.0' in metrics
    assert 'leadrelay_readiness_stage_median_days{dataset="default",event_name="Schedule"} 6.0' in metrics
    assert 'leadrelay_stage_lag_seconds_bucket{le="518400",source="api"} 1.0' in metrics
    assert 'leadrelay_stage_lag_seconds_bucket{le="604800",source="api"} 2.0' in metrics
    assert 'leadrelay_stages_too_late_total{source="api"} 1.0' in metrics
    assert 'leadrelay_stage_source_silent{source="api"} 0.0' in metrics


def test_a_source_silent_while_leads_keep_coming_is_flagged_with_its_fix(
    env, graph, post_meta, work, monkeypatch, redis_conn
):
    monkeypatch.setenv("LEADRELAY_API_TOKEN", "crm-token")
    client = create_app().test_client()
    post_stages(client, {"email": "ana@example.com", "stage": "QualifiedLead", "occurred_at": int(time.time())})
    work()
    # Three days pass without a post from the CRM (its last post moved back), while a lead comes.
    redis_conn.hset(stagelag.LAST, "api", time.time() - 3 * DAY)
    assert not _sources(client, redis_conn)["api"]["silent"]  # no lead came since: a quiet week, not a failure
    delivered_lead(graph, post_meta, work, seconds_ago=60)
    source = _sources(client, redis_conn)["api"]
    assert source["silent"] and source["quiet_hours"] >= 72 and "/api/v1/stage-events stopped" in source["fix"]
    out = leadrelay("readiness")
    assert "(SILENT)" in out.stdout and "source api: silent for 72" in out.stdout and out.returncode == 1
    monkeypatch.setenv("LEADRELAY_SOURCE_SILENT_HOURS", "96")  # the team's own threshold
    assert "(SILENT)" not in leadrelay("readiness").stdout


def _settings(client):
    return client.application.extensions["leadrelay"]["settings"]


def _sources(client, redis_conn) -> dict:
    ext = client.application.extensions["leadrelay"]
    return {s["source"]: s for s in readiness.report(redis_conn, ext["routes"], ext["settings"])["sources"]}


def test_match_quality_is_shown_per_dataset_and_event_name(env, graph, post_meta, work, redis_conn):
    """Meta shows no match quality for CRM events: the report does, per event name."""
    client = create_app().test_client()
    delivered_lead(graph, post_meta, work, seconds_ago=600)
    found = readiness.report(redis_conn, client.application.extensions["leadrelay"]["routes"], _settings(client))
    [dataset] = found["datasets"]
    [lead] = dataset["match"]
    assert (lead["event_name"], lead["events"]) == ("Lead", 1)
    assert lead["shares"]["lead_id"] == lead["shares"]["em"] == lead["shares"]["ph"] == 1.0
    assert lead["keys_per_event"] >= 4  # lead_id, em, ph, fn, ln of the stand-in's sample lead
    shown = leadrelay("readiness").stdout
    assert "match quality" in shown and "keys/event" in shown


def test_the_admin_page_shows_match_quality_beside_the_gates(env, graph, post_meta, work, monkeypatch):
    monkeypatch.setenv("LEADRELAY_ADMIN_TOKEN", ADMIN)
    client = create_app().test_client()
    delivered_lead(graph, post_meta, work, seconds_ago=600)
    client.post("/admin/login", data={"token": ADMIN})
    page = client.get("/admin").get_data(as_text=True)
    assert 'data-match="default"' in page and '<th class="num">lead_id</th>' in page


def test_metas_match_quality_shows_beside_ours_for_web_events_and_not_available_otherwise(
    graph, post_meta, work, redis_conn, env
):
    """The Dataset Quality API's figures, as its reference shapes them (web[]: event_name,
    event_match_quality.composite_score, event_coverage.percentage;
    https://developers.facebook.com/documentation/ads-commerce/conversions-api/dataset-quality-api),
    asked with our agent_name; a dataset Meta gives none for says so, never 0."""
    from workers import jobs
    from workers.cli.readiness import render
    from workers.config.routing import DEFAULT
    from workers.sweep import watch

    watch.run(jobs.context())
    ctx = jobs.context()
    none = readiness.report(redis_conn, ctx.routes, ctx.settings)["datasets"][0]["meta_quality"]
    assert none["available"] is False and "no figures" in none["reason"]
    [asked] = graph.calls("dataset_quality")
    assert asked["query"]["dataset_id"] == [env["META_DATASET_ID"]] and asked["query"]["agent_name"] == ["leadrelay"]
    graph.dataset_quality[env["META_DATASET_ID"]] = [
        {"event_name": "Lead", "event_match_quality": {"composite_score": 7.4}, "event_coverage": {"percentage": 82}}
    ]
    watch.run(jobs.context())
    found = readiness.report(redis_conn, ctx.routes, ctx.settings)
    [dataset] = [d for d in found["datasets"] if d["dataset"] == DEFAULT]
    assert dataset["meta_quality"] == {
        "available": True,
        "web": [{"event_name": "Lead", "composite_score": 7.4, "coverage": 82}],
    }
    assert "Meta's event match quality (web events): Lead 7.4/10" in "\n".join(render(found))


def test_a_dry_run_lead_kept_again_ahead_of_its_stage_counts_once(env, graph, post_meta, work, monkeypatch, redis_conn):
    """In dry run Meta never confirms a Lead, so it is kept again ahead of each later stage
    (`leadrelay dry-run` says why): the funnel still counts the lead once, not per stage."""
    monkeypatch.delenv("META_CAPI_ACCESS_TOKEN")
    monkeypatch.setenv("LEADRELAY_API_TOKEN", "crm-token")
    client = create_app().test_client()
    created = delivered_lead(graph, post_meta, work, seconds_ago=3600)
    post_stages(client, {"leadgen_id": LEAD, "stage": "QualifiedLead", "occurred_at": int(created + 600)})
    work()
    post_stages(client, {"leadgen_id": LEAD, "stage": "Schedule", "occurred_at": int(created + 1200)})
    work()
    kept = [item["event"]["event_name"] for item in capi.last_dry_run(redis_conn, 10)][::-1]
    assert kept == ["Lead", "Lead", "QualifiedLead", "Lead", "Schedule"]
    [dataset] = readiness.report(redis_conn, client.application.extensions["leadrelay"]["routes"], _settings(client))[
        "datasets"
    ]
    gates = {g["name"]: g for g in dataset["gates"]}
    assert gates["leads_30d"]["value"] == 1
    assert sum(day["leads"] for day in dataset["by_day"]) == 1
