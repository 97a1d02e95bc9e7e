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
    CRM_STAGE_TABLES,
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
from workers.sources.registry import SOURCES
from workers.standin.server import GraphStandin

# Property tests count examples, not milliseconds: a slow CI machine must not fail them.
settings.register_profile("leadrelay", deadline=None)
settings.load_profile("leadrelay")


# Tests that start processes (web, workers, Redis topologies, a browser, the wheel in a
# venv) or wait on real time: `make test-fast` (pytest -m "not slow") leaves them out for
# the inner loop; `make test` and CI run everything. A module is listed whole: what makes
# it slow is its fixtures, not one test.
SLOW = (
    "tests/feature/",
    "tests/engine/test_recovery.py",
    "tests/engine/test_inboxdrain.py",
    "tests/run/test_worker.py",
    "tests/config/test_redissafety.py",
    "tests/common/test_replication.py",
    "tests/common/test_clock.py",
    "tests/web/test_admin_browser.py",
    "tests/web/test_prometheus.py",
    "tests/failures/test_replay.py",
)


def pytest_collection_modifyitems(items):
    for item in items:
        path = item.nodeid.split("::")[0]
        if path.startswith(SLOW):
            item.add_marker(pytest.mark.slow)


def _become_subreaper() -> None:
    """Make pytest the child subreaper (Linux prctl PR_SET_CHILD_SUBREAPER): a process whose
    parent dies (a worker under `faketime`, a gunicorn a timed-out `subprocess.run` left)
    is then re-parented to pytest, not to init, so it stays among pytest's descendants
    and `processes_die_with_their_test` still finds it."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):  # not Linux: descendants are still found while attached
        pass


_become_subreaper()
LEFT_BEHIND: list[str] = []  # "test id: command" for each process a test left running


def _descendants() -> dict:
    import psutil

    found = {}
    for child in psutil.Process().children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE:
                found[child.pid] = child
        except psutil.Error:
            continue
    return found


@pytest.fixture(autouse=True)
def processes_die_with_their_test(request):
    """Every process a test starts dies with it, whatever it is and however the test ended
    (failed, timed out, or a child's child orphaned): what runs after the test that was not
    running before it is SIGKILLed, and named in the session's summary. A worker a test
    left behind would take the next tests' jobs from the shared Redis, and one failure would
    look like sixty. Session fixtures (Redis) start before this snapshot and are kept."""
    import psutil

    before = set(_descendants())
    yield
    # A child of a process that was already running (the session Redis forking to rewrite
    # its log) is that process's business, not the test's.
    strays = [proc for pid, proc in _descendants().items() if pid not in before and _parent(proc) not in before]
    for stray in strays:
        try:
            LEFT_BEHIND.append(f"{request.node.nodeid}: {' '.join(stray.cmdline())[:160]}")
            stray.kill()
        except psutil.Error:
            continue
    # Their zombies are reaped here (pytest is their parent or subreaper); an orphan that
    # ended by itself stays a zombie until pytest ends, holding nothing but its pid.
    psutil.wait_procs(strays, timeout=5)


def _parent(proc) -> int | None:
    import psutil

    try:
        return proc.ppid()
    except psutil.Error:
        return None


def pytest_terminal_summary(terminalreporter):
    """Listed after every run: the processes tests left behind (and this fixture killed),
    then what is still running under pytest as it ends, which should be only Redis."""
    still = []
    for proc in _descendants().values():
        try:
            still.append(" ".join(proc.cmdline())[:160])
        except Exception:  # noqa: BLE001 - a process may end while listed
            continue
    terminalreporter.section("processes")
    terminalreporter.write_line(f"left behind by a test and killed: {len(LEFT_BEHIND)}")
    for line in LEFT_BEHIND:
        terminalreporter.write_line(f"  {line}")
    terminalreporter.write_line(f"still running under pytest at the end: {len(still)}")
    for line in still:
        terminalreporter.write_line(f"  {line}")


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
    }
    # Every source's settings from the registry: a newly registered source is signed, and its
    # CRM read back from the stand-in (which answers the CRMs' read APIs too), with no line here.
    for source in SOURCES.values():
        # A key's setting holds a signing seed (said so: keys are never read as secrets).
        values.setdefault(
            source.secret_setting, ("seed:" if source.secret_parser else "") + f"{source.name}-test-secret"
        )
        if source.token_setting:
            values[source.token_setting] = f"{source.name}-api-token"
        if source.api_url_setting:
            values[source.api_url_setting] = graph.url
    ours = ("META_", "LEADRELAY_", *{setting.split("_")[0] + "_" for setting in values})
    for name in list(os.environ):
        if name.startswith(ours):
            monkeypatch.delenv(name)
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("LEADRELAY_ENV_FILE", "")
    monkeypatch.setenv("LEADRELAY_DATA_DIR", str(tmp_path / "data"))
    # Pipedrive's stage ids are its account's own: the fixtures' pipeline (tests/vendors/pipedrive/fixtures).
    mapping = tmp_path / "leadrelay.toml"
    mapping.write_text(CRM_STAGE_TABLES)
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
