"""The admin page over HTTP without a browser: login, CSRF, headers, what it shows and
what it never shows. The click-through in a real browser is test_admin_browser.py."""

import re
import time

import pytest

from helpers import ADMIN, CAPI_TOKEN, LEAD, PAGE_TOKEN, fast_forward, invalid_dead_letter, leadgen_body, sign
from webhook_app import create_app


@pytest.fixture
def admin(env, monkeypatch):
    monkeypatch.setenv("LEADRELAY_ADMIN_TOKEN", ADMIN)
    return create_app().test_client()


def logged_in(client) -> str:
    """Log in; the page's CSRF token."""
    assert client.post("/admin/login", data={"token": ADMIN}).status_code == 303
    return re.search(r'name="csrf" value="([^"]+)"', client.get("/admin").get_data(as_text=True)).group(1)


def test_the_page_is_off_without_a_token(client):
    assert client.get("/admin").status_code == 404
    assert client.get("/admin").json["error"] == "admin_disabled"


def test_login_is_required_and_a_wrong_token_refused(admin):
    page = admin.get("/admin")
    assert page.status_code == 200 and b'name="token"' in page.data and b"Dead letters" not in page.data
    wrong = admin.post("/admin/login", data={"token": "guess"})
    assert wrong.status_code == 401 and b"not the admin token" in wrong.data
    assert b"Dead letters" not in admin.get("/admin").data
    logged_in(admin)
    assert b"Dead letters" in admin.get("/admin").data


def test_a_new_token_ends_old_sessions(env, admin, monkeypatch):
    logged_in(admin)
    cookie = admin.get_cookie("leadrelay_admin", path="/admin")
    monkeypatch.setenv("LEADRELAY_ADMIN_TOKEN", "rotated")
    other = create_app().test_client()
    other.set_cookie("leadrelay_admin", cookie.value, path="/admin")
    assert b"Dead letters" not in other.get("/admin").data


def test_the_session_cookie_is_strict_and_http_only(admin):
    answer = admin.post("/admin/login", data={"token": ADMIN})
    cookie = answer.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/admin" in cookie


def test_changes_need_a_session_and_its_csrf_token(admin, graph, work):
    invalid_dead_letter(admin, graph, work)
    assert admin.post("/admin/dead-letters/replay", data={"reason": "invalid"}).status_code == 401
    logged_in(admin)
    assert admin.post("/admin/dead-letters/replay", data={"reason": "invalid", "csrf": "forged"}).status_code == 400
    assert b"lead-meta-" + LEAD.encode() in admin.get("/admin").data  # still there


def test_replay_by_reason_requeues_the_group_and_says_so(admin, graph, work, redis_conn):
    invalid_dead_letter(admin, graph, work)
    invalid_dead_letter(admin, graph, work, "1234567890123457")
    csrf = logged_in(admin)
    page = admin.get("/admin").get_data(as_text=True)
    assert 'data-reason="invalid"' in page and "Replay all 2" in page
    answer = admin.post("/admin/dead-letters/replay", data={"reason": "invalid", "csrf": csrf})
    assert answer.status_code == 303
    assert "Replay: 2 requeued." in admin.get("/admin").get_data(as_text=True)
    assert redis_conn.xlen("leadrelay:inbox") == 2  # both back in the inbox...
    assert redis_conn.llen("rq:queue:leadrelay") == 1  # ...and one drain job to take them


def test_security_headers(admin):
    headers = admin.get("/admin").headers
    assert "frame-ancestors 'none'" in headers["Content-Security-Policy"]
    assert headers["X-Frame-Options"] == "DENY" and headers["Cache-Control"] == "no-store"


def test_the_page_shows_key_names_and_masked_settings_never_values(admin, graph, work, env):
    graph.add_lead(LEAD)
    body = leadgen_body(LEAD, created_time=int(time.time()))
    admin.post("/webhooks/meta", data=body, headers={"X-Hub-Signature-256": sign(body)})
    work()
    logged_in(admin)
    page = admin.get("/admin").get_data(as_text=True)
    assert f'data-event="meta:{LEAD}:Lead"' in page
    assert '<span class="key">em</span>' in page and '<span class="key">lead_id</span>' in page
    page = page.replace(logged_in(admin), "")  # a random CSRF token may spell "joe" by chance
    for raw in (
        "Joe",
        "example.com",
        "6505551212",
        CAPI_TOKEN,
        PAGE_TOKEN,
        ADMIN,
        env["TYPEFORM_SECRET"],
        env["META_APP_SECRET"].split(",")[0],
    ):
        assert raw.lower() not in page.lower(), raw


def test_a_dead_letter_says_which_call_failed_what_the_code_means_and_the_time_left(admin, graph, work):
    invalid_dead_letter(admin, graph, work)  # the event send was refused: 100/2804016
    graph.add_lead("999")
    graph.then({"status": 400, "error": {"code": 100, "error_subcode": 33, "message": "m"}}, on="lead", times=3)
    body = leadgen_body("999", created_time=int(time.time()) - 86400)
    admin.post("/webhooks/meta", data=body, headers={"X-Hub-Signature-256": sign(body)})
    for _ in range(3):  # 100/33 is tried three times, spaced, before it is given up
        work()
        fast_forward(admin.application.extensions["leadrelay"]["redis"])
    work()
    logged_in(admin)
    page = admin.get("/admin").get_data(as_text=True)
    sent = re.search(rf'<tr data-job="lead-meta-{LEAD}">.*?</tr>', page, re.S).group(0)
    read = re.search(r'<tr data-job="lead-meta-999">.*?</tr>', page, re.S).group(0)
    assert "<span data-call>event send</span>" in sent and "not hashed as Meta expects" in sent
    assert "<span data-call>lead read</span>" in read and "this token cannot see it" in read
    assert "leads_retrieval" in re.search(r"<td data-label=\"What to do\" data-fix>(.*?)</td>", read, re.S).group(1)
    assert re.search(r"data-window>6 d \d+ h left</td>", sent)
    assert re.search(r"data-window>5 d \d+ h left</td>", read)  # the lead came a day ago


def test_a_fresh_install_with_one_lead_counts_no_retry_and_one_lead_delivered(admin, graph, work, monkeypatch):
    """The scheduled sweep and token watch are jobs, but no lead waits on them: not retries.
    A lead delivered in a batch has no RQ job to finish: the page counts what Meta confirmed."""
    monkeypatch.setenv("LEADRELAY_SWEEP_SECONDS", "600")
    monkeypatch.setenv("LEADRELAY_WATCH_SECONDS", "3600")
    graph.add_lead(LEAD)
    body = leadgen_body(LEAD, created_time=int(time.time()))
    admin.post("/webhooks/meta", data=body, headers={"X-Hub-Signature-256": sign(body)})
    work()
    logged_in(admin)
    page = admin.get("/admin").get_data(as_text=True)
    assert re.search(r'data-figure="scheduled">0<', page) and re.search(r'data-figure="delivered">1<', page)


def test_jobs_waiting_on_a_refused_token_are_their_own_state(admin, graph, work):
    graph.add_lead(LEAD)
    graph.add_lead("999")
    graph.revoked.add(PAGE_TOKEN)
    for leadgen_id in (LEAD, "999"):
        body = leadgen_body(leadgen_id, created_time=int(time.time()))
        admin.post("/webhooks/meta", data=body, headers={"X-Hub-Signature-256": sign(body)})
    work()  # the first is refused (auth, token paused), the second waits on the token
    logged_in(admin)
    page = admin.get("/admin").get_data(as_text=True)
    assert re.search(r'data-figure="waiting-on-token">1<', page)
    assert re.search(r'data-figure="scheduled">0<', page)
    assert 'data-pause="' in page and "1 job(s) wait for it" in page


def test_signed_deliveries_that_could_not_be_read_are_named_with_their_shape(admin, env):
    from helpers import post_signed

    body = b'{"meta": {"action": "surprise", "email": "ana@example.com"}, "data": "x"}'
    assert post_signed(admin, "pipedrive", body, env).status_code == 200
    logged_in(admin)
    page = admin.get("/admin").get_data(as_text=True)
    banner = re.search(r'<p class="banner warn" data-unreadable="pipedrive">(.*?)</p>', page, re.S).group(1)
    assert "1 signed pipedrive delivery could not be read" in banner and "unexpected_shape" in banner
    assert "<code>{data:str, meta:{action:str, email:str}}</code>" in banner  # the shape: keys and types
    assert "ana@example.com" not in page and 'id="all-well"' not in page


def test_advice_written_for_the_terminal_shows_its_commands_as_code_never_raw_backticks(admin, graph, work):
    invalid_dead_letter(admin, graph, work)
    logged_in(admin)
    page = admin.get("/admin").get_data(as_text=True)
    visible = re.sub(r"<script.*?</script>|<style.*?</style>", "", page, flags=re.S)
    assert "`" not in visible
    assert "<code>leadrelay" in visible
