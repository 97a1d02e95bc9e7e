"""GET /metrics: each figure moves as the flow runs (webhooks, jobs, events, match keys,
retries, dead letters, queue depth and age, Graph latency, paused tokens)."""

import json
import re
import shutil
import subprocess
import time

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from helpers import (
    BIN,
    CAPI_TOKEN,
    PAGE_TOKEN,
    ROOT,
    clean_env,
    fast_forward,
    fixture,
    leadgen_body,
    sign,
    typeform_sig,
    wait_for,
)
from webhook_app import create_app
from workers import jobs
from workers.common.queues import queue
from workers.failures import deadletters, replay
from workers.run.embedded_redis import free_port
from workers.sweep import sweeper, watch

LEAD = "1234567890123456"


def scrape(client, headers=None) -> dict:
    answer = client.get("/metrics", headers=headers or {})
    assert answer.status_code == 200, answer.data
    assert answer.mimetype == "text/plain"
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(answer.get_data(as_text=True))
        for s in family.samples
    }


def value(figures: dict, name: str, **labels) -> float:
    return figures.get((name, frozenset(labels.items())), 0.0)


def moved(before: dict, after: dict, name: str, **labels) -> float:
    return value(after, name, **labels) - value(before, name, **labels)


def error(code, subcode=None, status=400):
    body = {"message": "m", "type": "OAuthException", "code": code, "fbtrace_id": "T"}
    if subcode:
        body["error_subcode"] = subcode
    return {"status": status, "error": body}


def test_webhooks_are_counted_by_source_and_outcome(env, graph, monkeypatch):
    monkeypatch.setenv("LEADRELAY_MAX_BODY_BYTES", "4096")
    client = create_app().test_client()

    def meta(body: bytes, signature=None):
        return client.post("/webhooks/meta", data=body, headers={"X-Hub-Signature-256": signature or sign(body)})

    before = scrape(client)
    assert meta(leadgen_body(LEAD, "1234567890123457")).status_code == 200
    assert meta(leadgen_body(LEAD)).status_code == 200
    assert meta(leadgen_body("1"), signature=sign(b"other")).status_code == 401
    assert meta(b"{not json").status_code == 200  # signed: acknowledged, recorded as unusable
    assert meta(b"x" * 5000).status_code == 413
    feed = json.dumps({"object": "page", "entry": [{"id": "1", "changes": [{"field": "feed", "value": {}}]}]})
    assert meta(feed.encode()).status_code == 200
    test_delivery = fixture("typeform", "form_response__test_request.json")
    assert (
        client.post(
            "/webhooks/typeform", data=test_delivery, headers={"Typeform-Signature": typeform_sig(test_delivery)}
        ).status_code
        == 200
    )
    after = scrape(client)

    assert moved(before, after, "leadrelay_webhooks_received_total", source="meta", outcome="accepted") == 2
    assert moved(before, after, "leadrelay_webhooks_received_total", source="meta", outcome="duplicate") == 1
    assert moved(before, after, "leadrelay_webhooks_received_total", source="meta", outcome="bad_signature") == 1
    assert moved(before, after, "leadrelay_webhooks_received_total", source="meta", outcome="malformed") == 1
    assert moved(before, after, "leadrelay_webhooks_received_total", source="meta", outcome="too_large") == 1
    assert moved(before, after, "leadrelay_webhooks_received_total", source="meta", outcome="ignored") == 1
    assert moved(before, after, "leadrelay_webhooks_received_total", source="typeform", outcome="ignored") == 1
    assert moved(before, after, "leadrelay_webhook_duration_seconds_count", source="meta") == 6


def test_a_delivered_lead_moves_queue_job_event_match_key_and_latency_figures(client, graph, post_meta, work):
    graph.add_lead(LEAD)
    post_meta(leadgen_body(LEAD, created_time=int(time.time())))
    time.sleep(0.3)
    waiting = scrape(client)
    # The lead waits in the inbox, and one drain job is queued to take it.
    assert value(waiting, "leadrelay_queue_jobs", queue="leadrelay", state="inbox") == 1
    assert value(waiting, "leadrelay_queue_depth", queue="leadrelay") == 2
    assert value(waiting, "leadrelay_queue_oldest_job_age_seconds", queue="leadrelay") >= 0.25
    assert value(waiting, "leadrelay_last_event_delivered_timestamp_seconds") == 0

    work()
    done = scrape(client)
    assert value(done, "leadrelay_queue_depth", queue="leadrelay") == 0
    assert value(done, "leadrelay_queue_oldest_job_age_seconds", queue="leadrelay") == 0
    assert value(done, "leadrelay_queue_jobs", queue="leadrelay", state="inbox") == 0
    assert value(done, "leadrelay_jobs_total", source="meta", outcome="delivered") == 1
    assert value(done, "leadrelay_events_sent_total", event_name="Lead", outcome="delivered", dataset="default") == 1
    for key in ("lead_id", "em", "ph", "fn", "ln"):
        assert value(done, "leadrelay_event_match_keys_total", event_name="Lead", key=key, dataset="default") == 1
        assert value(done, "leadrelay_match_key_coverage_ratio", event_name="Lead", key=key, dataset="default") == 1.0
    for key in ("fbc", "fbp"):  # Lead Ads leads carry no click or browser id
        assert value(done, "leadrelay_match_key_coverage_ratio", event_name="Lead", key=key, dataset="default") == 0.0
    for operation in ("lead_batch", "events"):  # the lead was read in a Graph batch request
        assert value(done, "leadrelay_graph_request_duration_seconds_count", operation=operation, outcome="ok") == 1
        assert (
            value(done, "leadrelay_graph_request_duration_seconds_bucket", operation=operation, outcome="ok", le="+Inf")
            == 1
        )
        assert value(done, "leadrelay_graph_request_duration_seconds_sum", operation=operation, outcome="ok") > 0
    assert abs(value(done, "leadrelay_last_event_delivered_timestamp_seconds") - time.time()) < 30


def test_coverage_is_a_share_across_sources(client, graph, post_meta, work):
    """A Lead Ads lead (no fbc) and a Typeform lead with fbclid: fbc on half the Lead events."""
    graph.add_lead(LEAD)
    post_meta(leadgen_body(LEAD, created_time=int(time.time())))
    body = fixture("typeform", "form_response__hidden_fields.json", submitted=int(time.time()) - 60)
    assert (
        client.post("/webhooks/typeform", data=body, headers={"Typeform-Signature": typeform_sig(body)}).json[
            "accepted"
        ]
        == 1
    )
    work()
    figures = scrape(client)
    assert value(figures, "leadrelay_jobs_total", source="typeform", outcome="delivered") == 1
    assert value(figures, "leadrelay_events_sent_total", event_name="Lead", outcome="delivered", dataset="default") == 2
    assert value(figures, "leadrelay_match_key_coverage_ratio", event_name="Lead", key="fbc", dataset="default") == 0.5
    assert (
        value(figures, "leadrelay_match_key_coverage_ratio", event_name="Lead", key="lead_id", dataset="default") == 0.5
    )
    assert value(figures, "leadrelay_match_key_coverage_ratio", event_name="Lead", key="em", dataset="default") == 1.0


def test_a_retry_then_delivery_is_counted(client, graph, post_meta, work, redis_conn):
    graph.add_lead(LEAD)
    post_meta(leadgen_body(LEAD, created_time=int(time.time())))
    graph.then({"status": 500}, on="events")
    work()
    retried = scrape(client)
    assert value(retried, "leadrelay_retries_total", source="meta", reason="transient") == 1
    assert value(retried, "leadrelay_jobs_total", source="meta", outcome="retry") == 1
    assert value(retried, "leadrelay_events_sent_total", event_name="Lead", outcome="transient", dataset="default") == 1
    assert (
        value(retried, "leadrelay_graph_request_duration_seconds_count", operation="events", outcome="transient") == 1
    )
    assert value(retried, "leadrelay_queue_jobs", queue="leadrelay", state="scheduled") == 1
    fast_forward(redis_conn)
    work()
    done = scrape(client)
    assert value(done, "leadrelay_jobs_total", source="meta", outcome="delivered") == 1
    assert value(done, "leadrelay_retries_total", source="meta", reason="transient") == 1
    assert value(done, "leadrelay_queue_jobs", queue="leadrelay", state="scheduled") == 0


def test_dead_letters_are_counted_by_reason_and_leave_the_gauge_when_replayed(
    client, graph, post_meta, work, redis_conn
):
    graph.add_lead(LEAD)
    post_meta(leadgen_body(LEAD, created_time=int(time.time())))
    graph.then(error(100, 2804016), on="events")
    work()
    dead = scrape(client)
    assert value(dead, "leadrelay_dead_letters_recorded_total", reason="invalid", dataset="default") == 1
    assert value(dead, "leadrelay_dead_letters", reason="invalid", dataset="default") == 1
    assert value(dead, "leadrelay_jobs_total", source="meta", outcome="dead_letter") == 1
    assert value(dead, "leadrelay_events_sent_total", event_name="Lead", outcome="invalid", dataset="default") == 1
    assert value(dead, "leadrelay_queue_jobs", queue="leadrelay", state="failed") == 1

    q = queue(redis_conn, "leadrelay")
    assert replay.run_replay(redis_conn, q, deadletters.Filter(reason="invalid"))["counts"]["requeued"] == 1
    work()
    replayed = scrape(client)
    assert value(replayed, "leadrelay_dead_letters", reason="invalid", dataset="default") == 0
    assert (
        value(replayed, "leadrelay_dead_letters_recorded_total", reason="invalid", dataset="default") == 1
    )  # a counter stays
    assert value(replayed, "leadrelay_jobs_total", source="meta", outcome="delivered") == 1


def test_a_refused_token_shows_as_paused_and_as_an_auth_dead_letter(client, graph, post_meta, work):
    graph.add_lead(LEAD)
    graph.revoked.add(CAPI_TOKEN)
    post_meta(leadgen_body(LEAD, created_time=int(time.time())))
    work()
    figures = scrape(client)
    assert value(figures, "leadrelay_tokens_paused") == 1
    assert value(figures, "leadrelay_workers", queue="leadrelay") == 0  # the burst worker has gone
    assert value(figures, "leadrelay_dead_letters", reason="auth", dataset="default") == 1
    assert value(figures, "leadrelay_graph_request_duration_seconds_count", operation="events", outcome="auth") == 1


def test_stage_events_are_counted_by_outcome_and_their_job_by_source(env, graph, work, monkeypatch):
    monkeypatch.setenv("LEADRELAY_API_TOKEN", "crm-token")
    client = create_app().test_client()
    now = int(time.time())
    before = scrape(client)
    answer = client.post(
        "/api/v1/stage-events",
        headers={"Authorization": "Bearer crm-token"},
        json=[
            {"email": "ana@example.com", "stage": "QualifiedLead", "occurred_at": now - 60},
            {"email": "ana@example.com", "stage": "QUALIFIED_LEAD", "occurred_at": now - 60},
        ],
    )
    assert answer.status_code == 202
    work()
    after = scrape(client)
    assert moved(before, after, "leadrelay_stage_events_received_total", outcome="accepted") == 1
    assert moved(before, after, "leadrelay_stage_events_received_total", outcome="rejected") == 1
    assert value(after, "leadrelay_jobs_total", source="crm", outcome="delivered") == 1
    assert (
        value(after, "leadrelay_events_sent_total", event_name="QualifiedLead", outcome="delivered", dataset="default")
        == 1
    )


def test_dry_run_events_are_counted_as_dry_run(env, graph, post_meta, work, monkeypatch):
    monkeypatch.delenv("META_CAPI_ACCESS_TOKEN")
    client = create_app().test_client()
    graph.add_lead(LEAD)
    post_meta(leadgen_body(LEAD, created_time=int(time.time())))
    work()
    figures = scrape(client)
    assert value(figures, "leadrelay_events_sent_total", event_name="Lead", outcome="dry_run", dataset="default") == 1
    assert value(figures, "leadrelay_match_key_coverage_ratio", event_name="Lead", key="em", dataset="default") == 1.0
    assert value(figures, "leadrelay_last_event_delivered_timestamp_seconds") == 0  # nothing reached Meta


def test_metrics_token_guards_the_endpoint_when_set(env, monkeypatch):
    monkeypatch.setenv("LEADRELAY_METRICS_TOKEN", "scrape-me")
    client = create_app().test_client()
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert value(scrape(client, {"Authorization": "Bearer scrape-me"}), "leadrelay_redis_up") == 1


def test_without_redis_the_receivers_figures_still_answer(env, monkeypatch):
    monkeypatch.setenv("REDIS_URL", f"redis://127.0.0.1:{free_port()}/0")
    figures = scrape(create_app().test_client())
    assert value(figures, "leadrelay_redis_up") == 0
    assert not any(name == "leadrelay_queue_depth" for name, _ in figures)


def test_metrics_carry_no_personal_data_or_secrets(client, graph, post_meta, work, env):
    graph.add_lead(LEAD)
    post_meta(leadgen_body(LEAD, created_time=int(time.time())))
    work()
    text = client.get("/metrics").get_data(as_text=True).lower()
    assert value(scrape(client), "leadrelay_jobs_total", source="meta", outcome="delivered") == 1
    for raw in ("joe", "example.com", "6505551212", CAPI_TOKEN, env["META_PAGE_ACCESS_TOKEN"]):
        assert raw.lower() not in text


@pytest.fixture
def busy(graph, post_meta, work, redis_conn, monkeypatch):
    """/metrics after every kind of thing has happened once: a stage posted, leads
    delivered and refused, a sweep that recovered one, a watch, a wrong admin token."""
    monkeypatch.setenv("META_API_VERSION", "v25.0")  # an end announced: its days left are served
    monkeypatch.setenv("LEADRELAY_API_TOKEN", "crm-token")
    client = create_app().test_client()
    answer = client.post(
        "/api/v1/stage-events",
        headers={"Authorization": "Bearer crm-token"},
        json={"email": "ana@example.com", "stage": "QualifiedLead", "occurred_at": int(time.time())},
    )
    assert answer.status_code == 202  # a stage source: its lag, edge, lateness and silence are served
    client.post("/api/v1/stage-events", headers={"Authorization": "Bearer wrong"}, json={})
    graph.add_lead(LEAD)
    graph.add_lead("1234567890123457")
    post_meta(leadgen_body(LEAD, created_time=int(time.time())))
    work()
    post_meta(leadgen_body("1234567890123457", created_time=int(time.time())))
    graph.then(error(100, 2804016), on="events")
    work()
    graph.page_forms["111"] = ["555"]
    graph.add_lead("1234567890123458")  # no webhook: the sweep finds it and flags the Page silent
    sweeper.sweep(jobs.context(), queue(redis_conn, "leadrelay"), now=time.time() + 700)
    graph.token_expiry[PAGE_TOKEN] = int(time.time()) + 100 * 86400
    watch.run(jobs.context())  # Page 111, seen above, is not subscribed in the stand-in
    return client.get("/metrics").get_data(as_text=True)


def test_every_series_the_alerting_example_uses_exists(busy):
    """docs/prometheus-alerts.yml must not drift from what /metrics serves."""
    served = {s.name for family in text_string_to_metric_families(busy) for s in family.samples}
    rules = (ROOT / "docs" / "prometheus-alerts.yml").read_text()
    used = set(re.findall(r"\bleadrelay_[a-z_]+", rules))
    assert used and used <= served, used - served


def test_the_metrics_table_in_the_docs_is_what_metrics_serves(busy):
    """docs/operating.md's table names every family /metrics serves, and nothing else."""
    # prometheus-client adds a `_created` timestamp beside each counter: not a series of ours.
    served = {f.name for f in text_string_to_metric_families(busy) if not f.name.endswith("_created")}
    table = [line for line in (ROOT / "docs" / "operating.md").read_text().splitlines() if line.startswith("| `")]
    documented = {name.removesuffix("_total") for line in table for name in re.findall(r"`(leadrelay_[a-z_]+)`", line)}
    assert served - documented == set(), "served but not in docs/operating.md's metrics table"
    assert documented - served == set(), "in docs/operating.md's metrics table but not served"


def test_every_alert_rule_parses_and_says_what_it_means_and_what_to_do():
    """The rules file is YAML Prometheus can load; each rule has a summary and a runbook."""
    path = ROOT / "docs" / "prometheus-alerts.yml"
    [group] = yaml.safe_load(path.read_text())["groups"]
    names = [rule["alert"] for rule in group["rules"]]
    assert len(names) == len(set(names)) >= 20
    for rule in group["rules"]:
        assert rule["expr"].strip() and rule["labels"]["severity"] in ("page", "ticket", "warn"), rule["alert"]
        assert {"summary", "runbook"} <= set(rule.get("annotations", {})), rule["alert"]
    promtool = shutil.which("promtool")
    if promtool:  # Prometheus's own check, where it is installed
        checked = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True)
        assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_running_worker_is_counted(client, env):
    worker = subprocess.Popen(
        [str(BIN / "leadrelay"), "worker"], env=clean_env(**env), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_for(lambda: value(scrape(client), "leadrelay_workers", queue="leadrelay") == 1)
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    wait_for(lambda: value(scrape(client), "leadrelay_workers", queue="leadrelay") == 0)  # it says goodbye


def test_a_job_popped_by_a_worker_that_died_shows_as_intermediate(client, graph, post_meta, redis_conn):
    post_meta(leadgen_body(LEAD, created_time=int(time.time())))
    redis_conn.lmove("rq:queue:leadrelay", "rq:queue:leadrelay:intermediate")  # as a worker's dequeue does
    figures = scrape(client)
    assert value(figures, "leadrelay_queue_jobs", queue="leadrelay", state="intermediate") == 1
    assert value(figures, "leadrelay_queue_depth", queue="leadrelay") == 1  # the lead, still in the inbox


def test_an_agencys_many_pages_are_fifty_series_and_the_rest_summed_with_the_worst_always_named(client, redis_conn):
    """Per-Page series are bounded (accuracyrollup.pages): the 50 least accurate Pages by name,
    the others under page="_other"; a Page in trouble is never summed away."""
    from workers.events import accuracymarks

    now = time.time()
    for page in range(120):
        lead = {"leadgen_id": f"{page}-1", "page_id": str(1000 + page), "form_id": str(5000 + page)}
        lead["created_time"] = now
        kinds = ["meta"] if page == 77 else ["webhook", "confirmed"]  # one Page whose lead never reached Meta
        for kind in kinds:
            accuracymarks.mark_now(redis_conn, kind, [lead])
    figures = scrape(client)
    ratio = "leadrelay_lead_accuracy_ratio"
    ratios = {dict(labels)["page"]: v for (name, labels), v in figures.items() if name == ratio}
    assert len(ratios) == 51 and ratios["1077"] == 0.0 and ratios["_other"] == 1.0
    assert value(figures, "leadrelay_leads", page="_other", state="confirmed") == 120 - 50
