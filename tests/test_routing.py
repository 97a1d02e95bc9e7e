"""An agency with three clients in one leadrelay: each lead read with its own Page's token
and sent to its own client's dataset; an unknown Page held and released; API clients kept
to their own leads; a refused token pausing one client only. Real Redis, the stand-in
enforcing who may read and send what, real signatures."""

from __future__ import annotations

import json
import re
import time

import pytest

from helpers import fixture, leadrelay, sign, typeform_sig
from webhook_app import create_app
from workers import intake, jobs, profiles
from workers.pauses import Pauses
from workers.settings import load

# page id -> (page token variable, token), dataset name -> (id, CAPI token variable, token)
PAGES = {"101": ("ACME_PAGE_TOKEN", "acme-page-token"), "202": ("BRANDB_PAGE_TOKEN", "brandb-page-token"),
         "303": ("CEDAR_PAGE_TOKEN", "cedar-page-token"), "404": ("DELTA_PAGE_TOKEN", "delta-page-token")}
DATASETS = {"acme": ("1001", "ACME_CAPI_TOKEN", "acme-capi-token"),
            "acme_b2b": ("1002", "ACME_CAPI_TOKEN", "acme-capi-token"),
            "brandb": ("2001", "BRANDB_CAPI_TOKEN", "brandb-capi-token"),
            "cedar": ("3001", "CEDAR_CAPI_TOKEN", "cedar-capi-token"),
            "delta": ("4001", "DELTA_CAPI_TOKEN", "delta-capi-token")}
API = {"acme": "acme-api-token", "brandb": "brandb-api-token"}
B2B_FORM = "9001"  # an Acme Lead Ads form whose leads go to acme_b2b

CONFIG = """
[datasets.acme]
id = "1001"
token_env = "ACME_CAPI_TOKEN"
lead_event_source = "Acme CRM"

[datasets.acme_b2b]
id = "1002"
token_env = "ACME_CAPI_TOKEN"

[datasets.brandb]
id = "2001"
token_env = "BRANDB_CAPI_TOKEN"
ldu = true

[datasets.cedar]
id = "3001"
token_env = "CEDAR_CAPI_TOKEN"

[pages.101]
token_env = "ACME_PAGE_TOKEN"
dataset = "acme"

[pages.202]
token_env = "BRANDB_PAGE_TOKEN"
dataset = "brandb"

[pages.303]
token_env = "CEDAR_PAGE_TOKEN"
dataset = "cedar"

[forms.meta.9001]
dataset = "acme_b2b"

[forms.typeform.aBc123Xy]
dataset = "cedar"

[clients.acme]
token_env = "ACME_API_TOKEN"
datasets = ["acme", "acme_b2b"]

[clients.brandb]
token_env = "BRANDB_API_TOKEN"
datasets = ["brandb"]
"""
DELTA = """
[datasets.delta]
id = "4001"
token_env = "DELTA_CAPI_TOKEN"

[pages.404]
token_env = "DELTA_PAGE_TOKEN"
dataset = "delta"
"""


@pytest.fixture
def agency(env, graph, monkeypatch, tmp_path):
    """The three clients' file and tokens, and no single-dataset settings at all."""
    for name in ("META_PAGE_ACCESS_TOKEN", "META_CAPI_ACCESS_TOKEN", "META_DATASET_ID"):
        monkeypatch.delenv(name)
    for variable, token in [*PAGES.values(), *((v, t) for _, v, t in DATASETS.values())]:
        monkeypatch.setenv(variable, token)
    for name, token in API.items():
        monkeypatch.setenv(f"{name.upper()}_API_TOKEN", token)
    path = tmp_path / "leadrelay.toml"
    path.write_text(CONFIG)
    monkeypatch.setenv("LEADRELAY_CONFIG", str(path))
    pages = {"101": ("acme", "acme_b2b"), "202": ("brandb",), "303": ("cedar",), "404": ("delta",)}
    for page_id, names in pages.items():
        graph.add_client(page_id, PAGES[page_id][1], {DATASETS[n][0]: DATASETS[n][2] for n in names},
                         forms=("555", B2B_FORM) if page_id == "101" else ("555",))
    jobs.install(load())
    return path


@pytest.fixture
def web(agency):
    return create_app().test_client()


def lead(graph, leadgen_id: str, page_id: str, form_id: str = "555", email: str | None = None):
    graph.add_lead(leadgen_id, page_id=page_id, form_id=form_id, created_time=int(time.time()) - 60,
                   field_data=[{"name": "email", "values": [email or f"{leadgen_id}@example.com"]}])
    return {"field": "leadgen", "value": {"leadgen_id": leadgen_id, "page_id": page_id, "form_id": form_id,
                                          "created_time": int(time.time()) - 60}}


def post(web, *changes):
    entries = [{"id": c["value"]["page_id"], "time": int(time.time()), "changes": [c]} for c in changes]
    body = json.dumps({"object": "page", "entry": entries}).encode()
    return web.post("/webhooks/meta", data=body, headers={"X-Hub-Signature-256": sign(body),
                                                          "Content-Type": "application/json"})


def delivered(graph) -> dict[str, list[str]]:
    """Dataset id -> the lead ids of the Lead events it received."""
    out: dict[str, list[str]] = {}
    for event in graph.events:
        out.setdefault(event["dataset_id"], []).append(str(event["user_data"].get("lead_id")))
    return out


def test_leads_from_three_pages_in_one_post_go_to_their_datasets_read_with_their_tokens(web, graph, work,
                                                                                       redis_conn):
    answer = post(web, lead(graph, "11", "101"), lead(graph, "12", "101", B2B_FORM), lead(graph, "21", "202"),
                  lead(graph, "31", "303"))
    assert answer.status_code == 200 and answer.get_json()["accepted"] == 4
    work()
    assert delivered(graph) == {"1001": ["11"], "1002": ["12"], "2001": ["21"], "3001": ["31"]}
    reads = {r["path"].rsplit("/", 1)[-1]: r["headers"]["Authorization"] for r in graph.calls("lead")}
    assert reads == {"11": "Bearer acme-page-token", "12": "Bearer acme-page-token",
                     "21": "Bearer brandb-page-token", "31": "Bearer cedar-page-token"}
    sends = {r["path"].split("/")[-2]: r["headers"]["Authorization"] for r in graph.calls("events")}
    assert sends == {"1001": "Bearer acme-capi-token", "1002": "Bearer acme-capi-token",
                     "2001": "Bearer brandb-capi-token", "3001": "Bearer cedar-capi-token"}
    by_lead = {str(e["user_data"]["lead_id"]): e for e in graph.events}
    assert by_lead["11"]["custom_data"]["lead_event_source"] == "Acme CRM"  # the dataset's own
    assert by_lead["21"]["data_processing_options"] == ["LDU"] and "data_processing_options" not in by_lead["31"]
    assert profiles.load(redis_conn, "meta", "12")["dataset"] == "acme_b2b"
    assert profiles.load(redis_conn, "meta", "21")["dataset_id"] == "2001"


def test_a_form_submission_goes_to_its_forms_dataset(web, graph, work):
    body = fixture("typeform", "form_response__hidden_fields.json")
    assert web.post("/webhooks/typeform", data=body, headers={"Typeform-Signature": typeform_sig(body)}).status_code == 200
    work()
    assert [e["dataset_id"] for e in graph.events] == ["3001"]
    assert graph.calls("events")[0]["headers"]["Authorization"] == "Bearer cedar-capi-token"


def test_a_route_is_kept_in_the_job_so_a_later_file_change_sends_nothing_elsewhere(web, graph, work, agency):
    post(web, lead(graph, "21", "202"))
    agency.write_text(CONFIG.replace('dataset = "brandb"\n\n[pages.303]', 'dataset = "cedar"\n\n[pages.303]'))
    jobs.install(load())  # a worker restarted with the new file
    work()
    assert delivered(graph) == {"2001": ["21"]}


def test_a_lead_from_an_unknown_page_is_held_counted_and_released_once_the_file_has_it(web, graph, work, agency,
                                                                                        redis_conn):
    answer = post(web, lead(graph, "41", "404"), lead(graph, "11", "101"))
    assert answer.status_code == 200
    body = answer.get_json()
    assert body["accepted"] == 1
    assert {"reason": "unknown_page", "leadgen_id": "41", "page_id": "404", "form_id": "555"} in body["skipped"]
    work()
    assert delivered(graph) == {"1001": ["11"]}
    assert [r for r in graph.calls("lead") if r["path"].endswith("/41")] == []  # never read with a guessed token
    listed = leadrelay("ignored")
    assert "1 leads held for Pages not in the mapping file (404)" in listed.stdout
    assert '"reason": "unknown_page"' in listed.stdout
    metrics = web.get("/metrics").get_data(as_text=True)
    assert 'leadrelay_items_ignored_total{reason="unknown_page",source="meta"} 1.0' in metrics

    assert "still without a route 1" in leadrelay("ignored", "--release").stdout  # not yet in the file
    agency.write_text(CONFIG + DELTA)
    jobs.install(load())  # the worker restarted with the Page added
    released = leadrelay("ignored", "--release")
    assert "1 held: released 1, already known 0, still without a route 0" in released.stdout
    work()
    assert delivered(graph) == {"1001": ["11"], "4001": ["41"]}
    assert intake.held(redis_conn) == []
    post(web, lead(graph, "41", "404"))  # Meta redelivers it: known, not sent again
    work()
    assert delivered(graph)["4001"] == ["41"]


def stage(web, token: str, **item):
    item = {"stage": "QualifiedLead", "occurred_at": int(time.time()) - 10, **item}
    return web.post("/api/v1/stage-events", json=item, headers={"Authorization": f"Bearer {token}"})


def test_an_api_client_reaches_only_its_own_leads_and_datasets(web, graph, work, capfd):
    post(web, lead(graph, "11", "101", email="ann@example.com"), lead(graph, "21", "202", email="bob@example.com"))
    work()
    capfd.readouterr()
    # Acme's token on Brand B's lead answers exactly as a lead that does not exist.
    theirs = stage(web, API["acme"], leadgen_id="21").get_json()
    nobody = stage(web, API["acme"], leadgen_id="99999").get_json()
    assert theirs == nobody and theirs["results"][0]["reason"] == "unknown_person"
    assert "stage_lead_out_of_scope" in capfd.readouterr().err
    # ...and on Brand B's dataset, exactly as a dataset that does not exist.
    other = stage(web, API["acme"], email="bob@example.com", dataset="brandb").get_json()
    made_up = stage(web, API["acme"], email="bob@example.com", dataset="zeta").get_json()
    assert other["results"][0]["reason"] == made_up["results"][0]["reason"] == "unknown_dataset"
    assert other["results"][0]["detail"].replace("brandb", "X") == made_up["results"][0]["detail"].replace("zeta", "X")
    # Bob's email from Acme finds no lead of Acme's: Acme must say which of its datasets.
    assert stage(web, API["acme"], email="bob@example.com").get_json()["results"][0]["reason"] == "no_dataset"
    # Each client's own lead goes where the lead went; a wrong token is refused.
    assert stage(web, API["acme"], leadgen_id="11").get_json()["accepted"] == 1
    assert stage(web, API["brandb"], email="bob@example.com").get_json()["accepted"] == 1
    assert stage(web, "not-a-token", leadgen_id="11").status_code == 401
    work()
    qualified = {e["dataset_id"]: str(e["user_data"].get("lead_id")) for e in graph.events
                 if e["event_name"] == "QualifiedLead"}
    assert qualified == {"1001": "11", "2001": "21"}


def test_import_stages_for_a_client_keeps_to_its_leads(web, graph, work, tmp_path):
    post(web, lead(graph, "11", "101"), lead(graph, "21", "202"))
    work()
    sheet = tmp_path / "stages.csv"
    when = int(time.time()) - 10
    sheet.write_text(f"stage,occurred_at,leadgen_id\nQualifiedLead,{when},11\nQualifiedLead,{when},21\n")
    out = leadrelay("import-stages", str(sheet), "--client", "acme")
    assert out.returncode == 1
    assert "row 2: accepted QualifiedLead" in out.stdout and "row 3: rejected unknown_person" in out.stdout


def test_a_refused_capi_token_pauses_only_its_client(web, graph, work, redis_conn):
    graph.revoked.add(DATASETS["brandb"][2])
    post(web, lead(graph, "11", "101"), lead(graph, "21", "202"), lead(graph, "31", "303"))
    work()
    assert delivered(graph) == {"1001": ["11"], "3001": ["31"]}
    assert [p["token"] for p in Pauses(redis_conn).all()] == ["BRANDB_CAPI_TOKEN"]
    post(web, lead(graph, "13", "101"), lead(graph, "22", "202"))  # Acme keeps delivering; Brand B waits
    work()
    assert delivered(graph) == {"1001": ["11", "13"], "3001": ["31"]}
    assert [(p["token"], p["waiting"]) for p in Pauses(redis_conn).all()] == [("BRANDB_CAPI_TOKEN", 1)]
    assert [r["path"].split("/")[-2] for r in graph.calls("events")].count("2001") == 1  # 22 never tried


AGENCY_ENV = {variable: token for variable, token in [*PAGES.values(), *((v, t) for _, v, t in DATASETS.values())]}


@pytest.mark.parametrize("change, named", [
    (('id = "2001"', 'id = "20x1"'), "datasets.brandb.id"),
    (('id = "3001"', 'id = "1001"'), "datasets: two datasets have the same id"),
    (('token_env = "CEDAR_PAGE_TOKEN"', 'token_env = "CEDAR_PAGE_TOKN"'), "pages.303.token_env: CEDAR_PAGE_TOKN is not set"),
    (('token_env = "ACME_CAPI_TOKEN"\nlead', 'token_env = "acme-capi-token"\nlead'), "datasets.acme.token_env: must name"),
    (('dataset = "cedar"\n\n[forms.meta', 'dataset = "cedr"\n\n[forms.meta'), "pages.303.dataset: names no dataset"),
    (('[forms.meta.9001]\ndataset', '[forms.meta.9001]\nemail = "x"\ndataset'), "forms.meta.9001: a Lead Ads form"),
    (('datasets = ["brandb"]', 'datasets = ["brandb", "cedar2"]'), "clients.brandb.datasets"),
    (('token_env = "BRANDB_API_TOKEN"', 'token_env = "ACME_API_TOKEN"'), "clients: each client needs its own token"),
    (('[pages.303]', '[pages.cedar]'), "pages.cedar: a Page is named by its numeric id"),
    (('[datasets.cedar]\nid', '[datasets.cedar]\npixel = "1"\nid'), "datasets.cedar.pixel: unknown setting"),
])
def test_a_routing_mistake_is_named_with_its_table_and_key(tmp_path, change, named):
    from workers import mappingfile
    from workers.required import ConfigError
    from workers.settings import Settings

    path = tmp_path / "leadrelay.toml"
    path.write_text(CONFIG.replace(*change))
    env = {**AGENCY_ENV, **{f"{n.upper()}_API_TOKEN": t for n, t in API.items()}}
    with pytest.raises(ConfigError) as err:
        mappingfile.validate(Settings(config_path=str(path)), env)
    assert named in str(err.value) and len(str(err.value).splitlines()) == 1


def test_an_agency_file_stands_in_for_the_single_dataset_settings_and_its_mistakes_stop_the_worker(tmp_path):
    import subprocess

    from helpers import BIN, ROOT, clean_env

    path = tmp_path / "leadrelay.toml"
    path.write_text(CONFIG)
    env = clean_env(META_APP_SECRET="s", META_VERIFY_TOKEN="v", LEADRELAY_CONFIG=str(path), **AGENCY_ENV,
                    ACME_API_TOKEN="a", BRANDB_API_TOKEN="b")
    ok = subprocess.run([str(BIN / "leadrelay"), "check-config"], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    del env["CEDAR_PAGE_TOKEN"]
    bad = subprocess.run([str(BIN / "leadrelay"), "worker", "--burst"], env={**env, "REDIS_URL": "redis://127.0.0.1:1/0"},
                         cwd=tmp_path, capture_output=True, text=True)
    assert bad.returncode == 2 and "pages.303.token_env: CEDAR_PAGE_TOKEN is not set" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1 and "Traceback" not in bad.stderr


def test_metrics_and_the_admin_page_show_each_dataset(agency, graph, work, monkeypatch):
    from helpers import ADMIN

    monkeypatch.setenv("LEADRELAY_ADMIN_TOKEN", ADMIN)
    web = create_app().test_client()
    graph.revoked.add(DATASETS["brandb"][2])
    graph.refuse_event_ids.add("meta:31:Lead")
    post(web, lead(graph, "11", "101"), lead(graph, "12", "101"), lead(graph, "21", "202"), lead(graph, "31", "303"),
         lead(graph, "41", "404"))
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
