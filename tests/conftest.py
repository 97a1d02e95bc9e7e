"""Shared fixtures: a real Redis, a real HTTP stand-in for Graph, the app, a worker.

Redis is the server at REDIS_URL when set (its database is flushed before each
test: point it at a disposable one), otherwise an embedded server this session starts.
"""

from __future__ import annotations

import os

import pytest
import redis
from hypothesis import settings

from helpers import (
    AGENCY_CONFIG,
    API,
    APP_SECRET,
    B2B_FORM,
    CAPI_TOKEN,
    DATASET_ID,
    DATASETS,
    OLD_APP_SECRET,
    OLD_FORM_SECRET,
    PAGE_TOKEN,
    PAGES,
    TALLY_SECRET,
    TYPEFORM_SECRET,
    VERIFY_TOKEN,
    sign,
)
from webhook_app import create_app
from workers import jobs
from workers.config.settings import load
from workers.run import worker
from workers.run.embedded_redis import EmbeddedRedis
from workers.sources import SOURCES
from workers.standin.server import GraphStandin

# Property tests count examples, not milliseconds: a slow CI machine must not fail them.
settings.register_profile("leadrelay", deadline=None)
settings.load_profile("leadrelay")


@pytest.fixture(autouse=True)
def no_stray_process():
    """Each test ends with no leadrelay process of its own left running: a worker a failed
    test left behind would take the next tests' jobs from the shared Redis, and one
    failure would look like sixty."""
    yield
    import psutil

    strays = []
    for child in psutil.Process().children(recursive=True):
        try:
            command = " ".join(child.cmdline())
        except psutil.Error:
            continue
        if ("leadrelay" in command or "gunicorn" in command) and "redis-server" not in command:
            strays.append(child)
    for stray in strays:
        stray.kill()
    psutil.wait_procs(strays, timeout=5)


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory):
    if os.environ.get("REDIS_URL"):
        yield os.environ["REDIS_URL"]
        return
    with EmbeddedRedis(tmp_path_factory.mktemp("redis")) as server:
        yield server.url


@pytest.fixture
def redis_conn(redis_url):
    connection = redis.Redis.from_url(redis_url)
    connection.flushdb()
    yield connection
    connection.close()


@pytest.fixture
def graph():
    standin = GraphStandin()
    standin.url = standin.start()
    yield standin
    standin.stop()


PIPEDRIVE_STAGES = '[crm.pipedrive.stages]\n"2" = "QualifiedLead"\n"3" = "Schedule"\nwon = "Purchase"\nlost = "lost"\n'


@pytest.fixture
def env(monkeypatch, redis_url, redis_conn, graph, tmp_path):
    """The environment a deployed leadrelay would have, pointed at the stand-in. No
    `.env` file is read and the data folder is the test's own: a developer's sandbox
    in the work tree must not leak in."""
    values = {
        "REDIS_URL": redis_url,
        "META_APP_SECRET": f"{APP_SECRET},{OLD_APP_SECRET}",
        "META_VERIFY_TOKEN": VERIFY_TOKEN,
        "META_PAGE_ACCESS_TOKEN": PAGE_TOKEN,
        "META_CAPI_ACCESS_TOKEN": CAPI_TOKEN,
        "META_DATASET_ID": DATASET_ID,
        "META_GRAPH_URL": graph.url,
        "LEADRELAY_GRAPH_TIMEOUT_SECONDS": "1",
        # No scheduled sweep among the jobs a test counts; tests/sweep/test_sweeper.py runs sweeps itself.
        "LEADRELAY_SWEEP_SECONDS": "0",
        "LEADRELAY_WATCH_SECONDS": "0",  # nor a scheduled watch: tests/sweep/test_watch.py runs it
        "TYPEFORM_SECRET": f"{TYPEFORM_SECRET},{OLD_FORM_SECRET}",
        "TALLY_SIGNING_SECRET": TALLY_SECRET,
        "HUBSPOT_ACCESS_TOKEN": "hubspot-private-app-token",
        "HUBSPOT_API_URL": graph.url,  # the stand-in answers the CRMs' read APIs too
        "PIPEDRIVE_API_TOKEN": "pipedrive-api-token",
        "PIPEDRIVE_API_URL": graph.url,
    }
    for source in SOURCES.values():  # a newly registered source is signed in tests without another line here
        values.setdefault(source.secret_setting, f"{source.name}-test-secret")
    for name in list(os.environ):
        if name.startswith(("META_", "LEADRELAY_", "TYPEFORM_", "TALLY_", "HUBSPOT_", "PIPEDRIVE_")):
            monkeypatch.delenv(name)
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("LEADRELAY_ENV_FILE", "")
    monkeypatch.setenv("LEADRELAY_DATA_DIR", str(tmp_path / "data"))
    # Pipedrive's stage ids are its account's own: the fixtures' pipeline (tests/fixtures/pipedrive).
    mapping = tmp_path / "leadrelay.toml"
    mapping.write_text(PIPEDRIVE_STAGES)
    monkeypatch.setenv("LEADRELAY_CONFIG", str(mapping))
    jobs.install(load())  # as a worker process does at start: no test runs jobs with another test's settings
    return values


@pytest.fixture
def app(env):
    return create_app()


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def post_meta(client):
    def post(body: bytes, secret: str = APP_SECRET, headers: dict | None = None):
        base = {"Content-Type": "application/json", "X-Hub-Signature-256": sign(body, secret)}
        return client.post("/webhooks/meta", data=body, headers={**base, **(headers or {})})

    return post


@pytest.fixture
def work(env):
    """Run our burst worker (RQ's SimpleWorker: jobs in its own process, as in production) until the
    queue is empty."""

    def run():
        return worker.work(load(), burst=True)

    return run


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
    path.write_text(AGENCY_CONFIG)
    monkeypatch.setenv("LEADRELAY_CONFIG", str(path))
    pages = {"101": ("acme", "acme_b2b"), "202": ("brandb",), "303": ("cedar",), "404": ("delta",)}
    for page_id, names in pages.items():
        graph.add_client(
            page_id,
            PAGES[page_id][1],
            {DATASETS[n][0]: DATASETS[n][2] for n in names},
            forms=(f"{page_id}555", B2B_FORM) if page_id == "101" else (f"{page_id}555",),
        )
    jobs.install(load())
    return path
