"""An agency with three clients in one leadrelay: each lead read with its own Page's token
and sent to its own client's dataset; an unknown Page held and released; API clients kept
to their own leads; a refused token pausing one client only. Real Redis, the stand-in
enforcing who may read and send what, real signatures."""

from __future__ import annotations

import time

import pytest

from helpers import (
    AGENCY_CONFIG,
    AGENCY_DELTA,
    API,
    B2B_FORM,
    DATASETS,
    agency_lead,
    agency_post,
    delivered,
    fixture,
    leadrelay,
    typeform_sig,
)
from webhook_app import create_app
from workers import jobs
from workers.config.settings import load
from workers.events import profiles
from workers.graphapi.pauses import Pauses
from workers.intake import admission


@pytest.fixture
def web(agency):
    return create_app().test_client()


def test_leads_from_three_pages_in_one_post_go_to_their_datasets_read_with_their_tokens(web, graph, work, redis_conn):
    answer = agency_post(
        web,
        agency_lead(graph, "11", "101"),
        agency_lead(graph, "12", "101", B2B_FORM),
        agency_lead(graph, "21", "202"),
        agency_lead(graph, "31", "303"),
    )
    assert answer.status_code == 200 and answer.get_json()["accepted"] == 4
    work()
    assert delivered(graph) == {"1001": ["11"], "1002": ["12"], "2001": ["21"], "3001": ["31"]}
    reads = {r["path"].rsplit("/", 1)[-1]: r["headers"]["Authorization"] for r in graph.calls("lead")}
    assert reads == {
        "11": "Bearer acme-page-token",
        "12": "Bearer acme-page-token",
        "21": "Bearer brandb-page-token",
        "31": "Bearer cedar-page-token",
    }
    sends = {r["path"].split("/")[-2]: r["headers"]["Authorization"] for r in graph.calls("events")}
    assert sends == {
        "1001": "Bearer acme-capi-token",
        "1002": "Bearer acme-capi-token",
        "2001": "Bearer brandb-capi-token",
        "3001": "Bearer cedar-capi-token",
    }
    by_lead = {str(e["user_data"]["lead_id"]): e for e in graph.events}
    assert by_lead["11"]["custom_data"]["lead_event_source"] == "Acme CRM"  # the dataset's own
    assert by_lead["21"]["data_processing_options"] == ["LDU"] and "data_processing_options" not in by_lead["31"]
    assert profiles.load(redis_conn, "meta", "12")["dataset"] == "acme_b2b"
    assert profiles.load(redis_conn, "meta", "21")["dataset_id"] == "2001"


def test_a_form_submission_goes_to_its_forms_dataset(web, graph, work):
    body = fixture("typeform", "form_response__hidden_fields.json")
    assert (
        web.post("/webhooks/typeform", data=body, headers={"Typeform-Signature": typeform_sig(body)}).status_code == 200
    )
    work()
    assert [e["dataset_id"] for e in graph.events] == ["3001"]
    assert graph.calls("events")[0]["headers"]["Authorization"] == "Bearer cedar-capi-token"


def test_a_route_is_kept_in_the_job_so_a_later_file_change_sends_nothing_elsewhere(web, graph, work, agency):
    agency_post(web, agency_lead(graph, "21", "202"))
    agency.write_text(AGENCY_CONFIG.replace('dataset = "brandb"\n\n[pages.303]', 'dataset = "cedar"\n\n[pages.303]'))
    jobs.install(load())  # a worker restarted with the new file
    work()
    assert delivered(graph) == {"2001": ["21"]}


def test_a_lead_from_an_unknown_page_is_held_counted_and_released_once_the_file_has_it(
    web, graph, work, agency, redis_conn
):
    answer = agency_post(web, agency_lead(graph, "41", "404"), agency_lead(graph, "11", "101"))
    assert answer.status_code == 200
    body = answer.get_json()
    assert body["accepted"] == 1
    assert {"reason": "unknown_page", "leadgen_id": "41", "page_id": "404", "form_id": "404555"} in body["skipped"]
    work()
    assert delivered(graph) == {"1001": ["11"]}
    assert [r for r in graph.calls("lead") if r["path"].endswith("/41")] == []  # never read with a guessed token
    listed = leadrelay("ignored")
    assert "1 leads held for Pages not in the mapping file (404)" in listed.stdout
    assert '"reason": "unknown_page"' in listed.stdout
    metrics = web.get("/metrics").get_data(as_text=True)
    assert 'leadrelay_items_ignored_total{reason="unknown_page",source="meta"} 1.0' in metrics

    assert "still without a route 1" in leadrelay("ignored", "--release").stdout  # not yet in the file
    agency.write_text(AGENCY_CONFIG + AGENCY_DELTA)
    jobs.install(load())  # the worker restarted with the Page added
    released = leadrelay("ignored", "--release")
    assert "1 held: released 1, already known 0, still without a route 0" in released.stdout
    work()
    assert delivered(graph) == {"1001": ["11"], "4001": ["41"]}
    assert admission.held(redis_conn) == []
    agency_post(web, agency_lead(graph, "41", "404"))  # Meta redelivers it: known, not sent again
    work()
    assert delivered(graph)["4001"] == ["41"]


def stage(web, token: str, **item):
    item = {"stage": "QualifiedLead", "occurred_at": int(time.time()) - 10, **item}
    return web.post("/api/v1/stage-events", json=item, headers={"Authorization": f"Bearer {token}"})


def test_an_api_client_reaches_only_its_own_leads_and_datasets(web, graph, work, capfd):
    agency_post(
        web,
        agency_lead(graph, "11", "101", email="ann@example.com"),
        agency_lead(graph, "21", "202", email="bob@example.com"),
    )
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
    qualified = {
        e["dataset_id"]: str(e["user_data"].get("lead_id")) for e in graph.events if e["event_name"] == "QualifiedLead"
    }
    assert qualified == {"1001": "11", "2001": "21"}


def test_import_stages_for_a_client_keeps_to_its_leads(web, graph, work, tmp_path):
    agency_post(web, agency_lead(graph, "11", "101"), agency_lead(graph, "21", "202"))
    work()
    sheet = tmp_path / "stages.csv"
    when = int(time.time()) - 10
    sheet.write_text(f"stage,occurred_at,leadgen_id\nQualifiedLead,{when},11\nQualifiedLead,{when},21\n")
    out = leadrelay("import-stages", str(sheet), "--client", "acme")
    assert out.returncode == 1
    assert "row 2: accepted QualifiedLead" in out.stdout and "row 3: rejected unknown_person" in out.stdout


def test_a_refused_capi_token_pauses_only_its_client(web, graph, work, redis_conn):
    graph.revoked.add(DATASETS["brandb"][2])
    agency_post(web, agency_lead(graph, "11", "101"), agency_lead(graph, "21", "202"), agency_lead(graph, "31", "303"))
    work()
    assert delivered(graph) == {"1001": ["11"], "3001": ["31"]}
    assert [p["token"] for p in Pauses(redis_conn).all()] == ["BRANDB_CAPI_TOKEN"]
    agency_post(
        web, agency_lead(graph, "13", "101"), agency_lead(graph, "22", "202")
    )  # Acme keeps delivering; Brand B waits
    work()
    assert delivered(graph) == {"1001": ["11", "13"], "3001": ["31"]}
    assert [(p["token"], p["waiting"]) for p in Pauses(redis_conn).all()] == [("BRANDB_CAPI_TOKEN", 1)]
    assert [r["path"].split("/")[-2] for r in graph.calls("events")].count("2001") == 1  # 22 never tried
