"""An agency's operations across its clients: mistakes in the routing file named at start,
metrics and the admin page per dataset, doctor per client, subscribe and reconcile over
every Page. Real Redis and the stand-in (which enforces each client's tokens)."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from helpers import ADMIN, AGENCY_CONFIG, AGENCY_ENV, API, BIN, DATASETS, agency_lead, agency_post, clean_env, leadrelay
from webhook_app import create_app


@pytest.mark.parametrize(
    "change, named",
    [
        (('id = "2001"', 'id = "20x1"'), "datasets.brandb.id"),
        (('id = "3001"', 'id = "1001"'), "datasets: two datasets have the same id"),
        (
            ('token_env = "CEDAR_PAGE_TOKEN"', 'token_env = "CEDAR_PAGE_TOKN"'),
            "pages.303.token_env: CEDAR_PAGE_TOKN is not set",
        ),
        (
            ('token_env = "ACME_CAPI_TOKEN"\nlead', 'token_env = "acme-capi-token"\nlead'),
            "datasets.acme.token_env: must name",
        ),
        (
            ('dataset = "cedar"\n\n[forms.meta', 'dataset = "cedr"\n\n[forms.meta'),
            "pages.303.dataset: names no dataset",
        ),
        (("[forms.meta.9001]\ndataset", '[forms.meta.9001]\nemail = "x"\ndataset'), "forms.meta.9001: a Lead Ads form"),
        (('datasets = ["brandb"]', 'datasets = ["brandb", "cedar2"]'), "clients.brandb.datasets"),
        (
            ('token_env = "BRANDB_API_TOKEN"', 'token_env = "ACME_API_TOKEN"'),
            "clients: each client needs its own token",
        ),
        (("[pages.303]", "[pages.cedar]"), "pages.cedar: a Page is named by its numeric id"),
        (("[datasets.cedar]\nid", '[datasets.cedar]\npixel = "1"\nid'), "datasets.cedar.pixel: unknown setting"),
    ],
)
def test_a_routing_mistake_is_named_with_its_table_and_key(tmp_path, change, named):
    from workers.config import mappingfile
    from workers.config.needed import ConfigError
    from workers.config.settings import Settings

    path = tmp_path / "leadrelay.toml"
    path.write_text(AGENCY_CONFIG.replace(*change))
    env = {**AGENCY_ENV, **{f"{n.upper()}_API_TOKEN": t for n, t in API.items()}}
    with pytest.raises(ConfigError) as err:
        mappingfile.validate(Settings(config_path=str(path)), env)
    assert named in str(err.value) and len(str(err.value).splitlines()) == 1


def test_an_agency_file_stands_in_for_the_single_dataset_settings_and_its_mistakes_stop_the_worker(tmp_path):
    path = tmp_path / "leadrelay.toml"
    path.write_text(AGENCY_CONFIG)
    env = clean_env(
        META_APP_SECRET="s",
        META_VERIFY_TOKEN="v",
        LEADRELAY_CONFIG=str(path),
        **AGENCY_ENV,
        ACME_API_TOKEN="a",
        BRANDB_API_TOKEN="b",
    )
    ok = subprocess.run(
        [str(BIN / "leadrelay"), "check-config", "--json"], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert ok.returncode == 0, ok.stderr
    routes = json.loads(ok.stdout)["mapping"]["routes"]
    assert routes["pages"]["202"] == {"dataset": "brandb", "token_env": "BRANDB_PAGE_TOKEN"}
    assert routes["datasets"]["acme_b2b"] == {"id": "1002", "token_env": "ACME_CAPI_TOKEN", "sends": "live"}
    assert routes["clients"]["acme"]["datasets"] == ["acme", "acme_b2b"] and "acme-page-token" not in ok.stdout
    del env["CEDAR_PAGE_TOKEN"]
    bad = subprocess.run(
        [str(BIN / "leadrelay"), "worker", "--burst"],
        env={**env, "REDIS_URL": "redis://127.0.0.1:1/0"},
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "pages.303.token_env: CEDAR_PAGE_TOKEN is not set" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1 and "Traceback" not in bad.stderr


def test_metrics_and_the_admin_page_show_each_dataset(agency, graph, work, monkeypatch):
    monkeypatch.setenv("LEADRELAY_ADMIN_TOKEN", ADMIN)
    web = create_app().test_client()
    graph.revoked.add(DATASETS["brandb"][2])
    graph.refuse_event_ids.add("meta:31:Lead")
    agency_post(
        web,
        agency_lead(graph, "11", "101"),
        agency_lead(graph, "12", "101"),
        agency_lead(graph, "21", "202"),
        agency_lead(graph, "31", "303"),
        agency_lead(graph, "41", "404"),
    )
    work()
    metrics = web.get("/metrics").get_data(as_text=True)
    assert 'leadrelay_events_sent_total{dataset="acme",event_name="Lead",outcome="delivered"} 2.0' in metrics
    assert 'leadrelay_dead_letters{dataset="cedar",reason="invalid"} 1.0' in metrics
    assert 'leadrelay_dead_letters{dataset="brandb",reason="auth"} 1.0' in metrics
    assert 'leadrelay_match_key_coverage_ratio{dataset="acme",event_name="Lead",key="em"} 1.0' in metrics
    assert 'dataset="acme"' not in [line for line in metrics.splitlines() if "cedar" in line][0]

    assert web.post("/admin/login", data={"token": ADMIN}).status_code == 303
    page = web.get("/admin").get_data(as_text=True)
    row = lambda name, html: re.search(rf'<tr data-dataset="{name}">(.*?)</tr>', html, re.S).group(1)  # noqa: E731
    assert "token paused" in row("brandb", page) and "live" in row("acme", page)
    assert 'data-figure="delivered">2<' in row("acme", page) and 'data-figure="dead">1<' in row("cedar", page)
    assert "<code>101</code>" in row("acme", page)
    assert "1 lead(s) from Pages not in the mapping file are held" in page and "(404)" in page
    only = web.get("/admin?dataset=cedar").get_data(as_text=True)
    assert 'data-reason="invalid"' in only and 'data-reason="auth"' not in only
    assert 'data-event="meta:11:Lead"' in page and 'data-event="meta:11:Lead"' not in only
    listed = leadrelay("dead-letters", "list", "--dataset", "brandb")
    assert "1 dead letters: 1 auth" in listed.stdout
    replayed = leadrelay("replay", "--dataset", "cedar", "--dry-run")
    assert "1 selected" in replayed.stdout


def test_doctor_prints_a_checklist_per_client_and_subscribe_all_fixes_each_page(agency, graph):
    graph.subscribed_pages.add("101")
    graph.revoked.add(DATASETS["cedar"][2])
    out = leadrelay("doctor")
    assert out.returncode == 1
    acme = out.stdout.split("\nacme:\n")[1].split("\n\n")[0]
    assert "[ok] dataset: stand-in dataset (1001) reachable with ACME_CAPI_TOKEN" in acme
    assert "[ok] page 101 page token: valid" in acme and "[ok] page 101 permission leads_retrieval: granted" in acme
    assert "[ok] page 101 subscription: the app receives leadgen" in acme
    brandb = out.stdout.split("\nbrandb:\n")[1].split("\n\n")[0]
    assert "[FAIL] page 202 subscription" in brandb and "fix: run `leadrelay subscribe --all`" in brandb
    cedar = out.stdout.split("\ncedar:\n")[1].split("\n\n")[0]
    assert (
        "[FAIL] dataset: auth: code 190/463" in cedar and "fix: check the dataset id and that CEDAR_CAPI_TOKEN" in cedar
    )
    assert "acme-capi-token" not in out.stdout and "cedar-page-token" not in out.stdout

    subscribed = leadrelay("subscribe", "--all")
    assert subscribed.returncode == 0
    assert subscribed.stdout.splitlines() == [f"page {p}: subscribed to leadgen" for p in ("101", "202", "303")]
    calls = {
        r["path"].split("/")[-2]: r["headers"]["Authorization"]
        for r in graph.requests
        if r["method"] == "POST" and r["path"].endswith("/subscribed_apps")
    }
    assert calls == {
        "101": "Bearer acme-page-token",
        "202": "Bearer brandb-page-token",
        "303": "Bearer cedar-page-token",
    }
    graph.revoked.discard(DATASETS["cedar"][2])
    assert leadrelay("doctor").returncode == 0


def test_reconcile_all_reads_every_pages_forms_with_its_token_and_routes_what_it_finds(agency, graph, work):
    web = create_app().test_client()
    agency_post(web, agency_lead(graph, "11", "101"))
    for leadgen_id, page_id, form_id in (("12", "101", "9001"), ("21", "202", None), ("31", "303", None)):
        agency_lead(graph, leadgen_id, page_id, form_id)  # leads whose webhook never came
    out = leadrelay("reconcile", "--all", "--since", "1d")
    assert out.returncode == 0, out.stderr
    assert "form 101555 (page 101): 1 leads since 1d, enqueued 0, already known 1" in out.stdout
    assert "form 9001 (page 101): 1 leads since 1d, enqueued 1" in out.stdout
    assert "form 202555 (page 202): 1 leads since 1d, enqueued 1" in out.stdout
    work()
    got = {e["dataset_id"]: str(e["user_data"]["lead_id"]) for e in graph.events}
    assert got == {"1001": "11", "1002": "12", "2001": "21", "3001": "31"}
    assert leadrelay("reconcile", "--form-id", "202555").returncode == 2  # which Page's? the file lists several


def test_a_dataset_without_a_capi_token_keeps_its_events_and_dry_run_shows_them_alone(agency, graph, work):
    from workers import jobs
    from workers.config.settings import load

    agency.write_text(
        AGENCY_CONFIG + '[datasets.trial]\nid = "5001"\n\n[pages.505]\ntoken_env = "CEDAR_PAGE_TOKEN"\n'
        'dataset = "trial"\n'
    )
    jobs.install(load())
    graph.add_client("505", "cedar-page-token", {})
    web = create_app().test_client()
    agency_post(web, agency_lead(graph, "51", "505"), agency_lead(graph, "31", "303"))
    work()
    assert [e["dataset_id"] for e in graph.events] == ["3001"]  # the trial dataset's event was kept, not sent
    kept = leadrelay("dry-run", "--dataset", "trial").stdout.splitlines()
    assert [json.loads(line)["event"]["event_id"] for line in kept] == ["meta:51:Lead"]
    assert json.loads(kept[0])["dataset_id"] == "5001"
    assert leadrelay("dry-run", "--dataset", "cedar").stdout == ""
