"""The admin page in a real headless Chromium (Debian's, driven by Playwright): log in,
see the dead letters grouped by reason, click Replay, see the event go."""

import os
import shutil
import threading
import time

import pytest
from playwright.sync_api import expect, sync_playwright
from werkzeug.serving import make_server

from helpers import ADMIN, ROOT, agency_lead, agency_post, invalid_dead_letter, leadgen_body, sign
from webhook_app import create_app
from workers.common import policy

LEAD = "1234567890123456"
# As the machine's notes say: without these Chromium reaches for Google's hosts.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-sync",
    "--disable-background-networking",
    "--disable-component-update",
]


def chromium() -> str:
    for name in (os.environ.get("LEADRELAY_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        path = name and shutil.which(name)
        if path:
            return path
    if os.environ.get("LEADRELAY_SKIP_BROWSER"):
        pytest.skip("LEADRELAY_SKIP_BROWSER is set")
    pytest.fail(
        "no Chromium: `make test` installs Debian's (tests/install-tools); elsewhere set "
        "LEADRELAY_CHROMIUM to a Chromium or Chrome binary, or LEADRELAY_SKIP_BROWSER=1"
    )


@pytest.fixture
def served(env, monkeypatch):
    """The app on a real port, as a browser needs it."""
    monkeypatch.setenv("LEADRELAY_ADMIN_TOKEN", ADMIN)
    app = create_app()
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield app, f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


@pytest.fixture
def browser():
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
        yield instance
        instance.close()


def test_log_in_and_replay_a_dead_letter_with_a_click(served, browser, graph, work, redis_conn):
    app, base = served
    client = app.test_client()
    invalid_dead_letter(client, graph, work)  # Meta refused the event: dead-lettered `invalid`
    page = browser.new_page()

    page.goto(f"{base}/admin")
    page.fill("#token", "not-it")
    page.click("text=Log in")
    expect(page.get_by_role("alert")).to_contain_text("not the admin token")
    page.fill("#token", ADMIN)
    page.click("text=Log in")

    group = page.locator('section[data-reason="invalid"]')
    expect(group.locator("h3")).to_contain_text("invalid (1)")
    row = group.locator(f'tr[data-job="lead-meta-{LEAD}"]')
    expect(row).to_contain_text("code 100/2804016")
    expect(row).to_contain_text("Invalid parameter")
    expect(row.locator("[data-call]")).to_have_text("event send")
    expect(row.locator("[data-meaning]")).to_contain_text("not hashed as Meta expects")
    expect(row.locator("[data-window]")).to_contain_text(" left")
    expect(page.locator('[data-figure="failed"]')).to_have_text("1")

    row.get_by_role("button", name="Replay").click()  # the cause is fixed: Meta takes it now
    expect(page.get_by_role("status")).to_have_text("Replay: 1 requeued.")
    expect(page.locator('section[data-reason="invalid"]')).to_have_count(0)
    expect(page.locator('[data-figure="inbox"]')).to_have_text("1")  # back in the inbox, for a drain job
    assert redis_conn.llen("rq:queue:leadrelay") == 1

    work()
    page.reload()
    sent = page.locator(f'tr[data-event="meta:{LEAD}:Lead"]')
    expect(sent).to_contain_text("delivered")
    expect(sent.locator(".keys")).to_have_text("emfnlead_idlnph")
    assert [e["event_id"] for e in graph.events] == [f"meta:{LEAD}:Lead"]
    assert "joe@example.com" not in page.content().lower()


def test_replay_a_whole_reason_group_with_a_click(served, browser, graph, work, redis_conn):
    app, base = served
    client = app.test_client()
    for n in range(3):
        invalid_dead_letter(client, graph, work, f"12345678901234{n:02d}")
    page = browser.new_page()
    page.goto(f"{base}/admin")
    page.fill("#token", ADMIN)
    page.press("#token", "Enter")
    page.get_by_role("button", name="Replay all 3").click()
    expect(page.get_by_role("status")).to_have_text("Replay: 3 requeued.")
    expect(page.get_by_text("None. Every event either went or is still being tried.")).to_be_visible()
    work()
    assert len(graph.events) == 3


ARTEFACTS = ROOT / "build" / "screenshots"  # kept after a run: what the page looked like


def _expired_dead_letter(client, graph, work, leadgen_id="1234567890129999"):
    """A lead whose webhook came 8 days late: dead-lettered `expired`, never sendable."""
    created = int(time.time()) - 8 * 86400
    graph.add_lead(leadgen_id, created_time=created)
    body = leadgen_body(leadgen_id, created_time=created)
    client.post("/webhooks/meta", data=body, headers={"X-Hub-Signature-256": sign(body)})
    work()


@pytest.mark.parametrize("width", [375, 1440])
def test_what_is_wrong_and_what_to_do_are_on_screen_on_a_phone_and_a_desktop(served, browser, graph, work, width):
    """Problems first; each dead letter's fix and action inside the screen's width (a card
    on a phone); the page never scrolls sideways; the configuration folded away."""
    app, base = served
    invalid_dead_letter(app.test_client(), graph, work)
    _expired_dead_letter(app.test_client(), graph, work)
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(f"{base}/admin")
    page.fill("#token", ADMIN)
    page.click("text=Log in")
    needs = page.locator("#needs-you")
    expect(needs.locator('[data-needs="invalid"]')).to_contain_text("1 dead letter(s) invalid")
    expect(needs.locator('[data-needs="expired"]')).to_contain_text("Purge them")
    assert needs.bounding_box()["y"] < page.locator("#queue").bounding_box()["y"]  # before everything else
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    for reason, action in (("invalid", "Replay"), ("expired", None)):
        card = page.locator(f'section[data-reason="{reason}"] tr[data-job]').first
        fix = card.locator("[data-fix]")
        expect(fix).not_to_be_empty()
        box = fix.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width, (reason, box)
        if action:
            button = card.get_by_role("button", name=action)
            assert button.bounding_box()["x"] + button.bounding_box()["width"] <= width
    expect(page.get_by_role("button", name="Purge all 1")).to_be_visible()
    gate = page.locator("tr[data-gate]").first  # readiness: each gate's verdict and fix on screen too
    for cell in (gate.locator("[data-verdict]"), gate.locator("[data-gate-fix]")):
        box = cell.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width, box
    expect(page.locator("#config table")).to_be_hidden()  # folded until asked for
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTEFACTS / f"admin-first-screen-{width}.png"))
    page.locator("#dead-letters").scroll_into_view_if_needed()
    page.locator("#dead-letters").evaluate("element => element.scrollIntoView()")
    page.screenshot(path=str(ARTEFACTS / f"admin-dead-letters-{width}.png"))


def test_a_group_that_can_never_be_sent_is_purged_with_a_click(served, browser, graph, work, redis_conn):
    app, base = served
    _expired_dead_letter(app.test_client(), graph, work)
    page = browser.new_page()
    page.goto(f"{base}/admin")
    page.fill("#token", ADMIN)
    page.press("#token", "Enter")
    group = page.locator('section[data-reason="expired"]')
    expect(group.locator("[data-action]")).to_contain_text("cannot be sent")
    expect(group.get_by_role("button", name="Replay")).to_have_count(0)
    group.get_by_role("button", name="Purge all 1").click()
    expect(page.get_by_role("status")).to_have_text("Purged 1 expired dead letter(s): they could never be sent.")
    expect(page.locator('section[data-reason="expired"]')).to_have_count(0)
    expect(page.locator("#all-well")).to_be_visible()


def test_leads_kept_in_dry_run_are_never_shown_as_confirmed(served, browser, graph, post_meta, work, monkeypatch):
    monkeypatch.delenv("META_CAPI_ACCESS_TOKEN")
    app = create_app()  # no CAPI token now: dry run
    graph.add_lead(LEAD)
    body = leadgen_body(LEAD, created_time=int(time.time()))
    app.test_client().post("/webhooks/meta", data=body, headers={"X-Hub-Signature-256": sign(body)})
    work()
    client = app.test_client()
    client.post("/admin/login", data={"token": ADMIN})
    html = client.get("/admin").get_data(as_text=True)
    row = html[html.index('<tr data-form="111/555">') :]
    assert (
        '<td class="num" data-figure="confirmed">0</td>' in row and '<td class="num" data-figure="kept">1</td>' in row
    )
    assert "none: dry run, events are kept, not sent" in html


def test_logging_out_ends_the_session_for_a_copied_cookie_and_wrong_tokens_are_throttled(served, browser):
    app, base = served
    mine = browser.new_context()
    page = mine.new_page()
    page.goto(f"{base}/admin")
    page.fill("#token", ADMIN)
    page.click("text=Log in")
    expect(page.get_by_role("button", name="Log out")).to_be_visible()
    [cookie] = [c for c in mine.cookies() if c["name"] == "leadrelay_admin"]
    assert cookie["httpOnly"] and cookie["secure"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/admin"

    stolen = browser.new_context()  # someone who copied the cookie
    stolen.add_cookies([cookie])
    other = stolen.new_page()
    other.goto(f"{base}/admin")
    expect(other.get_by_role("button", name="Log out")).to_be_visible()
    page.get_by_role("button", name="Log out").click()
    expect(page.locator("#token")).to_be_visible()
    other.reload()
    expect(other.locator("#token")).to_be_visible()  # the copy ended with the session

    for _ in range(policy.AUTH_FAILURES_ALLOWED + 1):
        page.fill("#token", "guess")
        page.click("text=Log in")
    expect(page.get_by_role("alert")).to_contain_text("too many wrong tokens")
    page.fill("#token", ADMIN)  # the right token is never locked out
    page.click("text=Log in")
    expect(page.get_by_role("button", name="Log out")).to_be_visible()


@pytest.fixture
def served_agency(agency, monkeypatch):
    """The app of an agency with three clients (conftest's `agency`), on a real port."""
    monkeypatch.setenv("LEADRELAY_ADMIN_TOKEN", ADMIN)
    app = create_app()
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield app, f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


def test_pick_one_dataset_and_replay_only_its_dead_letters(served_agency, browser, graph, work, redis_conn):
    app, base = served_agency
    graph.refuse_event_ids.update({"meta:21:Lead", "meta:31:Lead"})
    agency_post(app.test_client(), agency_lead(graph, "21", "202"), agency_lead(graph, "31", "303"))
    work()
    graph.refuse_event_ids.clear()
    page = browser.new_page()
    page.goto(f"{base}/admin")
    page.fill("#token", ADMIN)
    page.press("#token", "Enter")
    expect(page.locator('tr[data-dataset="cedar"] [data-figure="dead"]')).to_have_text("1")
    page.select_option("#dataset-filter select", "cedar")
    page.get_by_role("button", name="Show").click()
    expect(page.get_by_role("heading", name="Dead letters of cedar")).to_be_visible()
    page.get_by_role("button", name="Replay all 1").click()
    expect(page.get_by_role("status")).to_have_text("Replay: 1 requeued.")
    work()
    assert [e["dataset_id"] for e in graph.events] == ["3001"]  # Brand B's dead letter stays where it was
    expect(page.locator('tr[data-dataset="brandb"] [data-figure="dead"]')).to_have_text("1")


def test_the_accuracy_table_and_chart_after_a_sweep_recovered_two_leads(
    served, browser, graph, work, redis_conn, tmp_path
):
    from helpers import leadgen_body, sign
    from workers import jobs
    from workers.common.queues import queue
    from workers.sweep import sweeper

    app, base = served
    created = int(time.time()) - 3600
    ids = [str(7100000000000000 + n) for n in range(10)]
    for leadgen_id in ids:
        graph.add_lead(leadgen_id, created_time=created, form_id="555")
    graph.page_forms["111"] = ["555"]
    body = leadgen_body(*ids[:8], created_time=created)
    app.test_client().post("/webhooks/meta", data=body, headers={"X-Hub-Signature-256": sign(body)})
    work()
    sweeper.sweep(jobs.context(), queue(redis_conn, "leadrelay"))
    work()
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.goto(f"{base}/admin")
    page.fill("#token", ADMIN)
    page.press("#token", "Enter")
    row = page.locator('tr[data-form="111/555"]')
    for figure, shown in (
        ("meta", "10"),
        ("webhook", "8"),
        ("recovered", "2"),
        ("confirmed", "10"),
        ("waiting", "0"),
        ("accuracy", "100.0%"),
    ):
        expect(row.locator(f'[data-figure="{figure}"]')).to_have_text(shown)
    expect(page.locator('[data-silent="111"]')).to_contain_text("webhook_silent")
    chart = page.locator('figure[data-chart="111"]')
    expect(chart).to_be_visible()
    today = time.strftime("%Y-%m-%d", time.gmtime(created))
    heights = {
        s: float(chart.locator(f'rect[data-series="{s}"][data-day="{today}"]').get_attribute("height"))
        for s in ("webhook", "recovered", "confirmed")
    }
    assert heights["confirmed"] == 80 and heights["webhook"] == 64 and heights["recovered"] == 16  # 10, 8, 2 of 10
    chart.screenshot(path=str(tmp_path / "accuracy-chart.png"))
    if os.environ.get("SAVE_ADMIN_SCREENSHOT"):
        shutil.copy(tmp_path / "accuracy-chart.png", os.environ["SAVE_ADMIN_SCREENSHOT"])
