"""Admin sessions end when they end, the cookie is Secure by default, and wrong tokens
from one address are throttled (admin login, admin API, stage API, /metrics)."""

from __future__ import annotations

import re

import pytest

from helpers import ADMIN, API_TOKEN
from webhook_app import create_app
from workers.common import policy
from workers.config.needed import ConfigError
from workers.config.settings import load


@pytest.fixture
def app(env, monkeypatch):
    monkeypatch.setenv("LEADRELAY_ADMIN_TOKEN", ADMIN)
    monkeypatch.setenv("LEADRELAY_API_TOKEN", API_TOKEN)
    return create_app()


def _csrf(client) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', client.get("/admin").get_data(as_text=True)).group(1)


def test_logout_ends_the_session_for_every_copy_of_the_cookie(app):
    client = app.test_client()
    client.post("/admin/login", data={"token": ADMIN})
    csrf = _csrf(client)
    saved = client.get_cookie("leadrelay_admin", path="/admin").value
    copy = app.test_client()
    copy.set_cookie("leadrelay_admin", saved, path="/admin")
    assert 'name="csrf"' in copy.get("/admin").get_data(as_text=True)  # the copy works while logged in
    assert client.post("/admin/logout", data={"csrf": csrf}).status_code == 303
    assert "admin token" in copy.get("/admin").get_data(as_text=True).lower()  # the login form again
    assert copy.post("/admin/dead-letters/replay", data={"csrf": csrf, "reason": "invalid"}).status_code == 401


def test_the_admin_cookie_is_secure_unless_switched_off(env, monkeypatch):
    monkeypatch.setenv("LEADRELAY_ADMIN_TOKEN", ADMIN)
    secure = create_app().test_client().post("/admin/login", data={"token": ADMIN})
    assert "Secure" in secure.headers["Set-Cookie"] and "HttpOnly" in secure.headers["Set-Cookie"]
    monkeypatch.setenv("LEADRELAY_ADMIN_COOKIE_SECURE", "0")
    plain = create_app().test_client().post("/admin/login", data={"token": ADMIN})
    assert "Secure" not in plain.headers["Set-Cookie"]


def test_the_sandbox_serves_plain_http_so_its_cookie_is_not_secure_by_default():
    assert load({"LEADRELAY_SANDBOX": "1", "META_GRAPH_URL": "http://127.0.0.1:9"}).admin_cookie_secure is False
    assert load({}).admin_cookie_secure is True
    with pytest.raises(ConfigError, match="LEADRELAY_ADMIN_COOKIE_SECURE"):
        load({"LEADRELAY_ADMIN_COOKIE_SECURE": "maybe"})


def _refused(client, outcome: str) -> float:
    """The web process's count of refusals on the admin login so far (counters are per process)."""
    pattern = rf'leadrelay_auth_refused_total{{outcome="{outcome}",surface="admin_login"}} ([0-9.]+)'
    found = re.search(pattern, client.get("/metrics").get_data(as_text=True))
    return float(found.group(1)) if found else 0.0


def test_wrong_admin_logins_are_throttled_per_address(app):
    client = app.test_client()
    wrong, throttled_before = _refused(client, "wrong_token"), _refused(client, "throttled")
    for _ in range(policy.AUTH_FAILURES_ALLOWED):
        assert client.post("/admin/login", data={"token": "guess"}).status_code == 401
    throttled = client.post("/admin/login", data={"token": "another guess"})
    assert throttled.status_code == 429 and "try again in" in throttled.get_data(as_text=True)
    # The right token is never refused: behind a balancer everyone shares one address, and
    # a lock-out of the right token would let anyone lock the operator out.
    assert client.post("/admin/login", data={"token": ADMIN}).status_code == 303
    assert _refused(client, "wrong_token") - wrong == policy.AUTH_FAILURES_ALLOWED
    assert _refused(client, "throttled") - throttled_before == 1


@pytest.mark.parametrize(
    "path, token, method", [("/admin/dead-letters", ADMIN, "get"), ("/api/v1/stage-events", API_TOKEN, "post")]
)
def test_wrong_bearer_tokens_are_throttled_with_a_429(app, path, token, method):
    client = app.test_client()
    call = getattr(client, method)
    for _ in range(policy.AUTH_FAILURES_ALLOWED):
        assert call(path, headers={"Authorization": "Bearer nope"}, json=[]).status_code == 401
    answer = call(path, headers={"Authorization": "Bearer nope"}, json=[])
    assert answer.status_code == 429 and answer.get_json()["error"] == "too_many_attempts"
    assert call(path, headers={"Authorization": f"Bearer {token}"}, json=[]).status_code in (200, 202)


def test_behind_a_trusted_proxy_the_client_address_is_the_forwarded_one(env, monkeypatch):
    monkeypatch.setenv("LEADRELAY_ADMIN_TOKEN", ADMIN)
    monkeypatch.setenv("LEADRELAY_TRUSTED_PROXIES", "1")
    client = create_app().test_client()
    for _ in range(policy.AUTH_FAILURES_ALLOWED):
        client.post("/admin/login", data={"token": "guess"}, headers={"X-Forwarded-For": "198.51.100.1"})
    assert (
        client.post("/admin/login", data={"token": "guess"}, headers={"X-Forwarded-For": "198.51.100.1"}).status_code
        == 429
    )
    assert (
        client.post("/admin/login", data={"token": "guess"}, headers={"X-Forwarded-For": "198.51.100.2"}).status_code
        == 401
    )


def test_without_trusted_proxies_a_forwarded_request_is_said_once(env, monkeypatch, capfd):
    from webhook_app import guard

    monkeypatch.setattr(guard, "_proxy_said", False)  # once per process: this test's process
    monkeypatch.setenv("LEADRELAY_ADMIN_TOKEN", ADMIN)
    client = create_app().test_client()
    for _ in range(2):
        client.post("/admin/login", data={"token": "guess"}, headers={"X-Forwarded-For": "198.51.100.1"})
    said = [line for line in capfd.readouterr().err.splitlines() if "client_address_is_a_proxy" in line]
    assert len(said) == 1 and "LEADRELAY_TRUSTED_PROXIES" in said[0]
