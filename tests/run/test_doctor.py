"""`leadrelay doctor` and `leadrelay subscribe` against the stand-in."""

from helpers import PAGE_TOKEN, leadrelay

PAGE = "111222333"


def test_healthy_setup_passes_every_check(env, graph):
    graph.subscribed_pages.add(PAGE)
    out = leadrelay("doctor", "--page-id", PAGE)
    assert out.returncode == 0, out.stdout
    assert "[FAIL]" not in out.stdout and "[ok] permission leads_retrieval: granted" in out.stdout
    assert "[ok] redis persistence: appendonly yes" in out.stdout


def test_expired_page_token_fails_with_the_fix(env, graph):
    graph.revoked.add(PAGE_TOKEN)
    out = leadrelay("doctor")
    assert out.returncode == 1
    assert "[FAIL] page token: auth: code 190/463" in out.stdout
    assert "fix: create a new Page or system-user token and set META_PAGE_ACCESS_TOKEN" in out.stdout
    assert PAGE_TOKEN not in out.stdout


def test_missing_permission_is_named(env, graph):
    graph.permissions.discard("leads_retrieval")
    out = leadrelay("doctor")
    assert out.returncode == 1 and "[FAIL] permission leads_retrieval: missing" in out.stdout


def test_unsubscribed_page_then_subscribe_fixes_it(env, graph):
    out = leadrelay("doctor", "--page-id", PAGE)
    assert out.returncode == 1
    assert "[FAIL] page subscription: the Page is not subscribed to the app for leadgen" in out.stdout
    assert f"fix: run `leadrelay subscribe --page-id {PAGE}`" in out.stdout
    fixed = leadrelay("subscribe", "--page-id", PAGE)
    assert fixed.returncode == 0 and "subscribed to leadgen" in fixed.stdout
    [call] = [r for r in graph.requests if r["method"] == "POST" and r["path"].endswith("/subscribed_apps")]
    assert call["query"]["subscribed_fields"] == ["leadgen"]
    assert leadrelay("doctor", "--page-id", PAGE).returncode == 0


def test_config_mistakes_are_reported_and_every_other_check_still_runs(env, monkeypatch):
    monkeypatch.setenv("META_DATASET_ID", "pixel")
    monkeypatch.delenv("META_VERIFY_TOKEN")
    out = leadrelay("doctor")
    assert out.returncode == 1
    assert "[FAIL] setting META_DATASET_ID: must be the numeric" in out.stdout
    assert "[FAIL] setting META_VERIFY_TOKEN: must be set" in out.stdout and "fix: any string you choose" in out.stdout
    for still_checked in ("[ok] redis: reachable", "[ok] page token: valid", "[ok] api version"):
        assert still_checked in out.stdout


def test_a_token_expiring_inside_the_warning_is_named_days_ahead_with_the_fix(env, graph):
    import time

    from helpers import CAPI_TOKEN

    graph.subscribed_pages.add(PAGE)
    graph.token_expiry[PAGE_TOKEN] = int(time.time()) + 5 * 86400  # Meta says: gone in 5 days
    out = leadrelay("doctor", "--page-id", PAGE)
    assert out.returncode == 1
    assert "[FAIL] page token expiry: expires in 5.0 days" in out.stdout
    assert "issue a system-user token (it never expires) and set META_PAGE_ACCESS_TOKEN" in out.stdout
    assert "[ok] dataset token expiry: never expires" in out.stdout
    graph.token_expiry[CAPI_TOKEN] = int(time.time()) - 60
    assert "[FAIL] dataset token expiry: expired" in leadrelay("doctor", "--page-id", PAGE).stdout


def test_a_token_further_out_than_the_warning_passes(env, graph, monkeypatch):
    import time

    graph.subscribed_pages.add(PAGE)
    graph.token_expiry[PAGE_TOKEN] = int(time.time()) + 30 * 86400
    monkeypatch.setenv("LEADRELAY_TOKEN_WARN_DAYS", "14")
    out = leadrelay("doctor", "--page-id", PAGE)
    assert out.returncode == 0 and "[ok] page token expiry: expires in 30.0 days" in out.stdout


def test_meta_out_of_reach_is_a_network_failure_not_a_bad_token(env, monkeypatch):
    from workers.run.embedded_redis import free_port

    closed = f"http://127.0.0.1:{free_port()}"  # nothing listens: the connection is refused
    monkeypatch.setenv("META_GRAPH_URL", closed)
    out = leadrelay("doctor")
    assert out.returncode == 1
    assert f"[FAIL] page token: could not reach {closed} (connection_error); nothing was checked" in out.stdout
    assert "fix: check this host's network, proxy or firewall towards that address" in out.stdout
    assert "create a new Page or system-user token" not in out.stdout  # the token may well be fine


def test_a_warning_logged_while_checking_never_reaches_stdout(env, graph):
    """Meta's auto-upgrade header is logged as a warning: stdout stays the answer, and
    `--json` stays one JSON object."""
    import json
    import os
    import subprocess

    from helpers import BIN

    graph.warn_version = True
    command = [str(BIN / "leadrelay"), "doctor", "--json"]  # a process of its own, as a person runs it
    out = subprocess.run(command, env=dict(os.environ), capture_output=True, text=True, timeout=60)
    assert json.loads(out.stdout)["checks"] and "api_version_warning" not in out.stdout


def test_an_unreachable_graph_is_said_as_such_not_as_a_refusal(env, monkeypatch):
    monkeypatch.setenv("META_GRAPH_URL", "http://127.0.0.1:9")  # nothing listens there
    out = leadrelay("subscribe", "--page-id", PAGE)
    assert out.returncode == 1
    assert "Meta could not be reached" in out.stderr and "META_GRAPH_URL" in out.stderr
    assert "pages_manage_metadata" not in out.stderr
