"""A CRM's stage changes end to end: signed webhooks in, the person read back from the
CRM's API (the stand-in, over loopback), the stage events out to Meta for the Lead Ads
lead, with its lead_id, value and currency, once each however often the CRM redelivers."""

from __future__ import annotations

import json
import time

from helpers import LEAD, booking, hubspot_deal_event, leadrelay, stage_events
from workers.sources.registry import SOURCES


def _hubspot_batch(deal_id: str, stages: list[str], first_event: int = 1964117900) -> bytes:
    now = int(time.time() * 1000)
    return json.dumps(
        [
            hubspot_deal_event(deal_id, stage, first_event + n, occurredAt=now - (len(stages) - n) * 1000)
            for n, stage in enumerate(stages)
        ]
    ).encode()


def _pipedrive_won(person_id: str, event_id: str = "9a1d3c7e-52f0-4b8a-b6e4-2d8f0c1a7e93") -> bytes:
    return json.dumps(
        {
            "data": {"id": 1187, "value": 4800, "currency": "EUR", "person_id": int(person_id), "status": "won"},
            "previous": {"status": "open"},
            "meta": {
                "action": "change",
                "entity": "deal",
                "company_id": "11728051",
                "id": event_id,
                "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "version": "2.0",
            },
        }
    ).encode()


def test_hubspot_deal_stages_become_stage_events_for_the_lead_once(graph, lead, post_crm, work):
    body = _hubspot_batch(lead["deal_id"], ["qualifiedtobuy", "appointmentscheduled", "closedwon"])
    first, again = post_crm("hubspot", body), post_crm("hubspot", body)  # HubSpot redelivers
    assert first.get_json()["accepted"] == 3 and again.get_json()["duplicates"] == 3
    work()
    sent = stage_events(graph)
    assert [e["event_name"] for e in sent] == ["QualifiedLead", "Schedule", "Purchase"]
    assert {str(e["user_data"]["lead_id"]) for e in sent} == {LEAD}
    assert {(e["custom_data"]["value"], e["custom_data"]["currency"]) for e in sent} == {(4800.0, "EUR")}
    assert {e["custom_data"]["lead_event_source"] for e in sent} == {"HubSpot"}
    reads = graph.calls("deal_read") + graph.calls("association_read") + graph.calls("contact_read")
    assert len(reads) == 3  # one batch read of each kind for the three changes


def test_pipedrive_won_becomes_one_purchase_for_the_lead(graph, lead, post_crm, work):
    body = _pipedrive_won(lead["person_id"])
    assert post_crm("pipedrive", body).get_json()["accepted"] == 1
    assert post_crm("pipedrive", body).get_json()["duplicates"] == 1
    work()
    [purchase] = stage_events(graph)
    assert purchase["event_name"] == "Purchase" and str(purchase["user_data"]["lead_id"]) == LEAD
    assert (purchase["custom_data"]["value"], purchase["custom_data"]["currency"]) == (4800, "EUR")
    [read] = graph.calls("person_read")
    assert read["headers"]["x-api-token"] == "pipedrive-api-token" and "api_token" not in read["query"]


def test_the_same_stage_twice_from_two_events_is_sent_once(graph, lead, post_crm, work):
    """A deal moved out of a stage and back: Meta counts each stage once per lead."""
    post_crm("hubspot", _hubspot_batch(lead["deal_id"], ["closedwon"], first_event=1))
    post_crm("hubspot", _hubspot_batch(lead["deal_id"], ["closedwon"], first_event=2))
    work()
    assert [e["event_name"] for e in stage_events(graph)] == ["Purchase"]


def test_an_unmapped_stage_is_recorded_with_its_id_never_sent(graph, lead, post_crm, work, redis_conn):
    answer = post_crm("hubspot", _hubspot_batch(lead["deal_id"], ["1289471"])).get_json()
    assert answer["accepted"] == 0 and answer["skipped"][0]["reason"] == "unmapped_stage"
    assert answer["skipped"][0]["stage_id"] == "1289471"
    work()
    assert stage_events(graph) == []
    assert "unmapped_stage" in leadrelay("ignored").stdout


def test_a_refused_crm_token_makes_the_changes_wait_and_a_replay_after_the_fix_sends_them(
    graph, lead, post_crm, work, redis_conn, monkeypatch
):
    graph.crm_revoked.add("hubspot-api-token")
    post_crm("hubspot", _hubspot_batch(lead["deal_id"], ["qualifiedtobuy", "closedwon"]))
    work()
    assert stage_events(graph) == []
    listing = leadrelay("dead-letters", "list")
    assert "paused: HUBSPOT_ACCESS_TOKEN" in listing.stdout and "1 auth" in listing.stdout
    from webhook_app import create_app

    monkeypatch.setenv("LEADRELAY_ADMIN_TOKEN", "admin-token")
    admin = create_app().test_client()
    admin.post("/admin/login", data={"token": "admin-token"})
    page = admin.get("/admin").get_data(as_text=True)
    assert "HubSpot refused <code>HUBSPOT_ACCESS_TOKEN</code>" in page and "1 job(s) wait for it" in page
    assert "set a HUBSPOT_ACCESS_TOKEN with the scopes its docs page names" in page  # the dead letter's fix
    graph.crm_revoked.clear()  # the operator sets a token with the scopes
    replay = leadrelay("replay", "--reason", "auth")
    assert replay.returncode == 0, replay.stdout + replay.stderr
    work()
    assert sorted(e["event_name"] for e in stage_events(graph)) == ["Purchase", "QualifiedLead"]


def test_a_transient_crm_failure_is_retried_alone(graph, lead, post_crm, work, redis_conn):
    from helpers import fast_forward

    graph.then({"status": 503}, on="crm")
    post_crm("pipedrive", _pipedrive_won(lead["person_id"]))
    work()
    assert stage_events(graph) == []
    assert fast_forward(redis_conn) == 1
    work()
    assert [e["event_name"] for e in stage_events(graph)] == ["Purchase"]


def test_an_account_routed_to_a_dataset_never_reaches_another_clients_lead(agency, graph, work):
    """HubSpot portal 4512345 is acme's; brandb has a lead with the same email: acme's stage
    goes to acme's dataset as an unknown person, and brandb's lead is never touched."""
    from helpers import AGENCY_CONFIG, DATASETS, agency_lead, agency_post
    from webhook_app import create_app
    from workers import jobs
    from workers.config.settings import load

    agency.write_text(AGENCY_CONFIG + '\n[crm.hubspot.accounts]\n"4512345" = "acme"\n')
    jobs.install(load())
    web = create_app().test_client()
    agency_post(web, agency_lead(graph, "8800000000000099", "202", email="shared@example.com"))
    work()
    person = graph.add_crm_person("shared@example.com")
    body = _hubspot_batch(person["deal_id"], ["closedwon"])
    headers = SOURCES["hubspot"].sign("hubspot-test-secret", body, "http://localhost/webhooks/hubspot")
    assert web.post("/webhooks/hubspot", data=body, headers=headers).get_json()["accepted"] == 1
    work()
    [purchase] = stage_events(graph)
    assert purchase["dataset_id"] == DATASETS["acme"][0] and "lead_id" not in purchase["user_data"]


def test_a_calendly_and_a_calcom_booking_for_the_lead_send_one_schedule(graph, lead, post_crm, work):
    """Both carry the person: nothing is read back, and the lead's Schedule goes once."""
    assert post_crm("calendly", booking("calendly", "invitee_created__booking.json")).get_json()["accepted"] == 1
    assert post_crm("calcom", booking("calcom", "booking_created__attendee.json")).get_json()["accepted"] == 1
    work()
    [schedule] = stage_events(graph)
    assert schedule["event_name"] == "Schedule" and str(schedule["user_data"]["lead_id"]) == LEAD
    assert schedule["custom_data"]["lead_event_source"] == "Calendly"
    assert graph.calls("person_read") == graph.calls("contact_read") == []


def test_a_bookings_person_waits_in_redis_as_hashes_only(post_crm, redis_conn, env):
    """Hashed on arrival, as form answers are: no raw email, phone or name is stored."""
    from helpers import inbox_entries

    post_crm("calendly", booking("calendly", "invitee_created__booking.json"))
    post_crm("calcom", booking("calcom", "booking_created__attendee.json"))
    stored = json.dumps(inbox_entries(redis_conn))
    assert "joe@example.com" not in stored and "612345678" not in stored and "Sample" not in stored
    assert stored.count('"email": ["') == 2


def test_a_calendly_cancel_is_recorded_never_sent(graph, lead, post_crm, work):
    answer = post_crm("calendly", booking("calendly", "invitee_canceled_rescheduled__ignored.json")).get_json()
    assert answer["accepted"] == 0 and answer["skipped"][0]["reason"] == "booking_rescheduled"
    work()
    assert stage_events(graph) == [] and "booking_rescheduled" in leadrelay("ignored").stdout


def test_calcom_unsigned_is_refused_unless_the_operator_allows_it(client, env, monkeypatch):
    from webhook_app import create_app

    body = booking("calcom", "booking_created__attendee.json")
    assert client.post("/webhooks/calcom", data=body).status_code == 401  # a secret is set: the signature is required
    monkeypatch.delenv("CALCOM_WEBHOOK_SECRET")
    refused = create_app().test_client().post("/webhooks/calcom", data=body)
    assert refused.status_code == 401 and refused.get_json()["error"] == "source_disabled"
    monkeypatch.setenv("LEADRELAY_ALLOW_UNSIGNED", "calcom")
    assert create_app().test_client().post("/webhooks/calcom", data=body).status_code == 200


def _signed_post(client, body: bytes, secret: str, **kw):
    headers = SOURCES["signed"].module.sign(secret, body, **kw)
    return client.post("/webhooks/signed", data=body, headers={"Content-Type": "application/json", **headers})


def test_standard_webhooks_rotation_staleness_reuse_and_a_wrong_secret(client, monkeypatch, graph, lead, work):
    import base64

    from webhook_app import create_app

    new, old = (f"whsec_{base64.b64encode(k).decode()}" for k in (b"new-secret-bytes", b"old-secret-bytes"))
    monkeypatch.setenv("SIGNED_WEBHOOK_SECRET", f"{new},{old}")
    web = create_app().test_client()
    item = {"email": "joe@example.com", "stage": "QualifiedLead", "occurred_at": int(time.time())}
    body = json.dumps(item).encode()
    assert _signed_post(web, body, new, msg_id="msg_1").get_json()["accepted"] == 1
    assert _signed_post(web, body, old, msg_id="msg_2").get_json()["accepted"] == 1  # the old secret, in rotation
    assert _signed_post(web, body, new, msg_id="msg_1").get_json()["duplicates"] == 1  # a reused webhook-id
    stale = _signed_post(web, body, new, msg_id="msg_3", now=time.time() - 301)
    assert stale.status_code == 401 and stale.get_json()["error"] == "stale_timestamp"
    wrong = _signed_post(web, body, "whsec_" + base64.b64encode(b"another").decode(), msg_id="msg_4")
    assert wrong.status_code == 401 and wrong.get_json()["error"] == "bad_signature"
    work()
    [qualified] = stage_events(graph)  # msg_2 is the same stage for the same lead: once
    assert qualified["event_name"] == "QualifiedLead" and str(qualified["user_data"]["lead_id"]) == LEAD


def test_a_signed_body_of_any_shape_is_read_through_the_mapping_files_fields(
    env, graph, lead, work, tmp_path, monkeypatch
):
    from webhook_app import create_app
    from workers import jobs
    from workers.config.settings import load

    mapping = tmp_path / "leadrelay.toml"
    mapping.write_text(
        '[crm.signed.fields]\nemail = "data.contact.email"\nstage = "data.stage"\n'
        'occurred_at = "data.changed_at"\nvalue = "data.amount"\ncurrency = "data.currency"\n'
    )
    monkeypatch.setenv("LEADRELAY_CONFIG", str(mapping))
    jobs.install(load())
    web = create_app().test_client()
    doc = {
        "type": "opportunity.stage_changed",
        "data": {
            "contact": {"email": "joe@example.com"},
            "stage": "Demo booked",
            "changed_at": int(time.time()),
            "amount": 900,
            "currency": "EUR",
        },
    }
    assert _signed_post(web, json.dumps(doc).encode(), env["SIGNED_WEBHOOK_SECRET"]).get_json()["accepted"] == 1
    work()
    [schedule] = stage_events(graph)
    assert schedule["event_name"] == "Schedule" and schedule["custom_data"]["value"] == 900
    assert str(schedule["user_data"]["lead_id"]) == LEAD


def test_a_booking_links_click_id_reaches_meta_as_fbc(graph, post_crm, work, env):
    """An unknown person (no lead to lend its fbc): the booking's own click id is the fbc."""
    doc = json.loads(booking("calendly", "invitee_created__booking.json"))
    doc["payload"]["email"] = "stranger@example.com"
    doc["payload"]["tracking"] = {"utm_source": "facebook", "utm_content": "IwAR2Fclick"}
    assert post_crm("calendly", json.dumps(doc).encode()).get_json()["accepted"] == 1
    work()
    [schedule] = stage_events(graph)
    assert schedule["user_data"]["fbc"].startswith("fb.1.") and schedule["user_data"]["fbc"].endswith(".IwAR2Fclick")


def test_a_signed_stage_naming_a_delivered_leads_leadgen_id_is_sent_not_taken_for_its_lead(
    client, env, graph, lead, work, redis_conn
):
    """The body docs/signed.md gives by default names the lead by its leadgen_id: the entry
    is a stage change because of the job it names, whatever fields it carries."""
    body = json.dumps({"leadgen_id": LEAD, "stage": "QualifiedLead", "occurred_at": int(time.time())}).encode()
    answer = _signed_post(client, body, env["SIGNED_WEBHOOK_SECRET"]).get_json()
    assert answer["accepted"] == 1
    work()
    [qualified] = stage_events(graph)
    assert qualified["event_name"] == "QualifiedLead" and str(qualified["user_data"]["lead_id"]) == LEAD
    assert qualified["custom_data"]["lead_event_source"] != "meta"


def test_a_merged_hubspot_contact_is_matched_by_its_additional_email(graph, lead, post_crm, work):
    """A merge keeps the lead's address in `hs_additional_emails` and the survivor's work
    address in `email`: the stage still reaches the lead, with its lead_id."""
    contact = graph.crm_vendors["hubspot"].contacts[lead["contact_id"]]
    contact.update({"email": "joe.work@acme.example", "hs_additional_emails": "joe@example.com;j@acme.example"})
    assert post_crm("hubspot", _hubspot_batch(lead["deal_id"], ["qualifiedtobuy"])).get_json()["accepted"] == 1
    work()
    [event] = stage_events(graph)
    assert str(event["user_data"]["lead_id"]) == LEAD


def test_a_hubspot_lead_object_moving_stage_reaches_the_lead_through_its_contact(graph, lead, post_crm, work):
    """HubSpot's Lead object (`objectTypeId` 0-136, `hs_pipeline_stage`), sent by a generic
    subscription: its person is the contact associated with it."""
    graph.crm_vendors["hubspot"].deal_contacts["3301"] = [lead["contact_id"]]
    event = hubspot_deal_event("3301", "qualifiedtobuy", subscriptionType="object.propertyChange")
    event |= {"objectTypeId": "0-136", "propertyName": "hs_pipeline_stage"}
    assert post_crm("hubspot", json.dumps([event]).encode()).get_json()["accepted"] == 1
    work()
    [sent] = stage_events(graph)
    assert sent["event_name"] == "QualifiedLead" and str(sent["user_data"]["lead_id"]) == LEAD
    [read] = graph.calls("association_read")
    assert read["path"].endswith("/leads/contacts/batch/read")
