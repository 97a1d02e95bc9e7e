"""The scheduled watch of tokens and Page subscriptions: what it finds, said once, shown
on the admin page and in /metrics, scheduled one job per slot."""

import time

from helpers import CAPI_TOKEN, PAGE_TOKEN, leadgen_body
from workers import jobs
from workers.common.queues import queue
from workers.reports import watched
from workers.sweep import watch


def test_an_expiring_token_and_an_unsubscribed_page_are_found_with_their_fixes(
    graph, post_meta, work, redis_conn, monkeypatch, capfd
):
    graph.add_lead("8900000000000002")
    post_meta(leadgen_body("8900000000000002", created_time=int(time.time())))  # Page 111 is seen
    work()
    graph.token_expiry[PAGE_TOKEN] = int(time.time()) + 5 * 86400
    assert watch.run(jobs.context())["pages"] == 1
    found = watched.read(redis_conn)
    assert {t["token"]: t["days_left"] for t in found["tokens"]} == {
        "META_PAGE_ACCESS_TOKEN": 5.0,
        "META_CAPI_ACCESS_TOKEN": None,
    }
    assert [p["page"] for p in found["pages"]] == ["111"] and found["pages"][0]["subscribed"] is False
    problems = {p["event"]: p for p in watched.problems(found)}
    assert problems["page_unsubscribed"]["fix"].startswith("`leadrelay subscribe --page-id 111`")
    assert "set META_PAGE_ACCESS_TOKEN" in problems["token_expiring"]["fix"]
    watch.run(jobs.context())  # said once a day, not at every check
    logged = capfd.readouterr().err
    assert logged.count('"token_expiring"') == 1 and logged.count('"page_unsubscribed"') == 1
    assert PAGE_TOKEN not in logged and CAPI_TOKEN not in logged

    from webhook_app import create_app

    monkeypatch.setenv("LEADRELAY_ADMIN_TOKEN", "admin-token")
    admin = create_app().test_client()
    admin.post("/admin/login", data={"token": "admin-token"})
    page = admin.get("/admin").get_data(as_text=True)
    assert "<code>META_PAGE_ACCESS_TOKEN</code> ends in 5.0 days" in page
    assert "Page 111 is not subscribed" in page and "leadrelay subscribe --page-id 111" in page
    metrics = admin.get("/metrics").get_data(as_text=True)
    assert 'leadrelay_page_unsubscribed{page="111"} 1.0' in metrics
    assert 'leadrelay_token_days_left{token="META_PAGE_ACCESS_TOKEN"} 5.0' in metrics


def test_a_subscribed_page_and_a_lasting_token_are_no_problem(graph, post_meta, work, redis_conn):
    graph.add_lead("8900000000000003")
    post_meta(leadgen_body("8900000000000003", created_time=int(time.time())))
    work()
    graph.subscribed_pages.add("111")
    graph.token_expiry[PAGE_TOKEN] = int(time.time()) + 60 * 86400
    watch.run(jobs.context())
    assert watched.problems(watched.read(redis_conn)) == []


def test_the_watch_is_scheduled_once_per_slot_and_not_at_all_when_off(redis_conn, env):
    q = queue(redis_conn, "leadrelay")
    first = watch.schedule(q, 3600, now=1_800_000_000)
    assert first == watch.schedule(q, 3600, now=1_800_000_100) and len(q.scheduled_job_registry) == 1
    assert watch.schedule(q, 0) is None


def test_a_token_meta_refuses_is_named_with_its_fix(graph, post_meta, work, redis_conn):
    graph.add_lead("8900000000000004")
    post_meta(leadgen_body("8900000000000004", created_time=int(time.time())))
    work()
    graph.subscribed_pages.add("111")
    graph.revoked.add(PAGE_TOKEN)  # a password change, a removed admin: Meta refuses the token (190)
    watch.run(jobs.context())
    [problem] = watched.problems(watched.read(redis_conn))
    assert (problem["event"], problem["token"]) == ("token_invalid", "META_PAGE_ACCESS_TOKEN")
    assert "issue a new (system-user) token and set META_PAGE_ACCESS_TOKEN" in problem["fix"]


def test_a_page_its_token_was_not_granted_is_named_with_its_fix(agency, graph, redis_conn):
    from helpers import PAGES

    graph.subscribed_pages.update(PAGES)
    graph.page_tokens[PAGES["202"][1]].discard("202")  # re-authorised without Brand B's Page selected
    watch.run(jobs.context())
    found = watched.read(redis_conn)
    assert {p["page"]: p["reached"] for p in found["pages"]} == {"101": True, "202": False, "303": True}  # the file's
    [problem] = watched.problems(found)
    assert (problem["event"], problem["page"], problem["token"]) == ("page_unreachable", "202", "BRANDB_PAGE_TOKEN")
    assert "not granted leads_retrieval on this Page" in problem["fix"]


def test_a_dataset_changed_after_setup_is_flagged_with_metas_warning(env, redis_conn, monkeypatch):
    """Meta's Conversion Leads guide: moving a Page's leads to another dataset after setup
    restarts training. The watch keeps each Page's dataset at setup and says when it moved."""
    from workers.config.settings import load
    from workers.reports import readiness

    watch.run(jobs.context())
    assert watched.read(redis_conn)["dataset_changes"] == []
    monkeypatch.setenv("META_DATASET_ID", "5151515151")  # the operator points the leads elsewhere
    ctx = jobs.install(load())
    watch.run(ctx)
    [change] = watched.read(redis_conn)["dataset_changes"]
    assert (change["first"], change["now"]) == ("4242424242", "5151515151")
    [problem] = [p for p in watched.problems(watched.read(redis_conn)) if p["event"] == "dataset_changed"]
    assert "restarts Conversion Leads training" in problem["fix"] and "go back to 4242424242" in problem["fix"]
    lines = readiness.problems(readiness.report(redis_conn, ctx.routes, ctx.settings))
    assert any("restarts Conversion Leads training" in line for line in lines)
    # Thirty days on, the new dataset is the setup: training restarted on it long ago.
    watch.run(ctx, now=time.time() + 31 * 86400)
    assert watched.read(redis_conn)["dataset_changes"] == []
