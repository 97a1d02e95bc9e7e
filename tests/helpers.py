"""What several test modules share: the test secrets, signed bodies, fixtures, clean
environments for processes, waiting, the `leadrelay` command run in-process, and
`leadrelay run` and its commands as a person runs them."""

from __future__ import annotations

import base64
import hashlib
import hmac
import inspect
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable

import requests
from click.testing import CliRunner

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parent.parent


def clean_env(**values) -> dict:
    """The test's settings only: no .env, and a data folder of its own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("META_", "LEADRELAY_", "REDIS_URL"))}
    return {**env, "LEADRELAY_ENV_FILE": "", "LEADRELAY_DATA_DIR": tempfile.mkdtemp(prefix="leadrelay-data-"), **values}


# One budget for every wait in the tests: a deadline, never a duration (a wait returns as
# soon as its check holds), scaled by LEADRELAY_TEST_PATIENCE on a machine known to be slow
# (2 doubles every deadline). Nothing else in the tests polls with a clock of its own.
PATIENCE = float(os.environ.get("LEADRELAY_TEST_PATIENCE") or 1)


def wait_for(check, timeout=20.0, what: str | None = None, every: float = 0.2, ignore: tuple = ()):
    """`check()`'s first true answer, polled every `every` s; `ignore` lists exceptions that
    mean "not yet". Out of budget, an AssertionError says what it waited for (`what`, else
    the check's source line), for how long, and its last answer."""
    budget = timeout * PATIENCE
    deadline = time.monotonic() + budget
    result = None
    while True:
        try:
            result = check()
        except ignore as err:
            result = err
        else:
            if result:
                return result
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {budget:g} s for {what or _described(check)}; last answer: {result!r}")
        time.sleep(every)


def _described(check) -> str:
    try:
        return inspect.getsource(check).strip()[:200]
    except (OSError, TypeError):
        return repr(check)


def ready(base: str) -> bool:
    try:
        return requests.get(f"{base}/readyz", timeout=1).status_code == 200
    except requests.RequestException:  # not listening yet, or listening and still booting its workers
        return False


FIXTURES = Path(__file__).parent / "fixtures"
APP_SECRET = "test-app-secret"
OLD_APP_SECRET = "rotated-out-secret"
VERIFY_TOKEN = "test-verify-token"
PAGE_TOKEN = "test-page-token"
CAPI_TOKEN = "test-capi-token"
DATASET_ID = "4242424242"
TYPEFORM_SECRET = "typeform-test-secret"
TALLY_SIGNING_SECRET = TALLY_SECRET = "3f6c2f4e-8a61-4c2b-9d7e-0b1a2c3d4e5f"
OLD_FORM_SECRET = "typeform-rotated-out"


VENDOR_TESTS = Path(__file__).parent / "vendors"


def fixture_dir(source: str) -> Path:
    """Where a source's fixtures are: its vendor's test folder (tests/vendors/<vendor>/fixtures/,
    a folder per channel where one vendor has several), else tests/fixtures/<source>/."""
    from workers.sources.registry import SOURCES

    parts = SOURCES[source].module.__name__.split(".")
    if parts[:2] == ["workers", "vendors"]:
        base = VENDOR_TESTS / parts[2] / "fixtures"
        return base if parts[2] == source else base / source
    return FIXTURES / source


def fixture_paths(source: str) -> list[Path]:
    """A source's fixtures: JSON, or XML for a SOAP sender (Salesforce)."""
    folder = fixture_dir(source)
    return sorted([*folder.glob("*.json"), *folder.glob("*.xml")])


def fixture_bytes(source: str, name: str) -> bytes:
    return (fixture_dir(source) / name).read_bytes()


def sign(body: bytes, secret: str = APP_SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


# The admin token, a Meta lead and the stage API's token several test modules use.
ADMIN = "admin-token-for-tests"
LEAD = "1234567890123456"
API_TOKEN = "crm-api-token"
FIXTURE_SUBMITTED = 1795252443  # the hidden_fields fixtures' submitted_at, 2026-11-21T09:14:03Z
SUBMITTED = int(time.time()) - 3600  # where the tests move it: an hour ago, inside Meta's 7 days


def typeform_sig(body: bytes, secret: str = TYPEFORM_SECRET) -> str:
    return "sha256=" + base64.b64encode(hmac.new(secret.encode(), body, hashlib.sha256).digest()).decode()


def tally_sig(body: bytes, secret: str = TALLY_SECRET) -> str:
    return base64.b64encode(hmac.new(secret.encode(), body, hashlib.sha256).digest()).decode()


def moved(body: bytes, submitted: int = SUBMITTED) -> bytes:
    """The fixture with every timestamp shifted so it was submitted at `submitted`: Meta
    refuses events older than 7 days, and the fixtures' dates stay put. Only the
    timestamps change; the tests sign the bytes they send."""
    delta = timedelta(seconds=submitted - FIXTURE_SUBMITTED)

    def shift(match: re.Match) -> str:
        moment = datetime.fromisoformat(match.group(0)).replace(tzinfo=timezone.utc) + delta
        return moment.strftime("%Y-%m-%dT%H:%M:%S")

    return re.sub(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}", shift, body.decode("utf-8")).encode("utf-8")


def fixture(source: str, name: str, submitted: int = SUBMITTED) -> bytes:
    return moved(fixture_bytes(source, name), submitted)


def invalid_dead_letter(client, graph, work, leadgen_id=LEAD):
    """A lead whose Lead event Meta refuses (2804016): one `invalid` dead letter."""
    graph.add_lead(leadgen_id)
    body = leadgen_body(leadgen_id, created_time=int(time.time()))
    client.post("/webhooks/meta", data=body, headers={"X-Hub-Signature-256": sign(body)})
    graph.then(
        {
            "status": 400,
            "error": {
                "code": 100,
                "error_subcode": 2804016,
                "message": "m",
                "error_user_title": "Invalid parameter",
                "fbtrace_id": "TR",
            },
        },
        on="events",
    )
    work()


def fast_forward(connection) -> int:
    """Let time pass for RQ's scheduler: every scheduled retry becomes due now."""
    from rq.registry import ScheduledJobRegistry

    registry = ScheduledJobRegistry("leadrelay", connection=connection)
    due = {job_id: 0 for job_id in registry.get_job_ids()}
    if due:
        connection.zadd(registry.key, due, xx=True)
    return len(due)


def scheduled_in(connection, job_id: str) -> float:
    """Seconds from now until RQ's scheduler runs this job again."""
    from rq.registry import ScheduledJobRegistry

    score = connection.zscore(ScheduledJobRegistry("leadrelay", connection=connection).key, job_id)
    return score - time.time()


def leadgen_body(*leadgen_ids: str, created_time: int | None = None) -> bytes:
    changes = [
        {
            "field": "leadgen",
            "value": {
                "leadgen_id": lid,
                "page_id": "111",
                "form_id": "555",
                "ad_id": "777",
                "created_time": created_time or 1700000000,
            },
        }
        for lid in leadgen_ids
    ]
    return json.dumps({"object": "page", "entry": [{"id": "111", "time": 1700000001, "changes": changes}]}).encode()


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


def leadrelay(*args: str, clock: Callable[[], float] | None = None) -> Ran:
    """The `leadrelay` command run in this process, with this test's environment; `clock`
    stands for the time where a command judges time (Meta's 7-day window at replay)."""
    from workers.cli import main

    result = CliRunner().invoke(main, list(args), obj={"clock": clock} if clock else None, catch_exceptions=False)
    return Ran(result.exit_code, result.stdout, result.stderr)


# An agency with three clients (and a fourth, Delta, to add later): tests/config/test_routing.py,
# tests/feature/test_agency.py; the `agency` fixture (conftest.py) sets them up.
# page id -> (page token variable, token), dataset name -> (id, CAPI token variable, token)
PAGES = {
    "101": ("ACME_PAGE_TOKEN", "acme-page-token"),
    "202": ("BRANDB_PAGE_TOKEN", "brandb-page-token"),
    "303": ("CEDAR_PAGE_TOKEN", "cedar-page-token"),
    "404": ("DELTA_PAGE_TOKEN", "delta-page-token"),
}
DATASETS = {
    "acme": ("1001", "ACME_CAPI_TOKEN", "acme-capi-token"),
    "acme_b2b": ("1002", "ACME_CAPI_TOKEN", "acme-capi-token"),
    "brandb": ("2001", "BRANDB_CAPI_TOKEN", "brandb-capi-token"),
    "cedar": ("3001", "CEDAR_CAPI_TOKEN", "cedar-capi-token"),
    "delta": ("4001", "DELTA_CAPI_TOKEN", "delta-capi-token"),
}
API = {"acme": "acme-api-token", "brandb": "brandb-api-token"}
B2B_FORM = "9001"  # an Acme Lead Ads form whose leads go to acme_b2b

AGENCY_CONFIG = """
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
AGENCY_DELTA = """
[datasets.delta]
id = "4001"
token_env = "DELTA_CAPI_TOKEN"

[pages.404]
token_env = "DELTA_PAGE_TOKEN"
dataset = "delta"
"""
AGENCY_ENV = {variable: token for variable, token in [*PAGES.values(), *((v, t) for _, v, t in DATASETS.values())]}


def agency_lead(graph, leadgen_id: str, page_id: str, form_id: str | None = None, email: str | None = None):
    form_id = form_id or f"{page_id}555"  # form ids are Graph ids: one Page's only
    graph.add_lead(
        leadgen_id,
        page_id=page_id,
        form_id=form_id,
        created_time=int(time.time()) - 60,
        field_data=[{"name": "email", "values": [email or f"{leadgen_id}@example.com"]}],
    )
    return {
        "field": "leadgen",
        "value": {
            "leadgen_id": leadgen_id,
            "page_id": page_id,
            "form_id": form_id,
            "created_time": int(time.time()) - 60,
        },
    }


def agency_post(web, *changes):
    entries = [{"id": c["value"]["page_id"], "time": int(time.time()), "changes": [c]} for c in changes]
    body = json.dumps({"object": "page", "entry": entries}).encode()
    return web.post(
        "/webhooks/meta", data=body, headers={"X-Hub-Signature-256": sign(body), "Content-Type": "application/json"}
    )


def delivered(graph) -> dict[str, list[str]]:
    """Dataset id -> the lead ids of the Lead events it received."""
    out: dict[str, list[str]] = {}
    for event in graph.events:
        out.setdefault(event["dataset_id"], []).append(str(event["user_data"].get("lead_id")))
    return out


def inbox_entries(connection) -> list[dict]:
    """The leads waiting in the inbox stream, oldest first, as the receiver stored them:
    {"id": job id, "fn": the job function, "arg": its argument, "rid": request id}."""
    from workers.intake import inbox

    return [json.loads(fields[b"e"]) for _, fields in connection.xrange(inbox.STREAM)]


class Service:
    """`leadrelay run` as a person starts it, its output read line by line."""

    def __init__(self, env: dict, cwd: Path, port: int):
        self.base = f"http://127.0.0.1:{port}"
        self.lines: list[str] = []
        self.process = subprocess.Popen(
            [str(BIN / "leadrelay"), "run", "--bind", f"127.0.0.1:{port}"],
            env=env,
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        threading.Thread(target=lambda: self.lines.extend(self.process.stdout), daemon=True).start()

    def banner(self) -> str:
        wait_for(lambda: any("Going live" in line for line in list(self.lines)), timeout=60)
        return "".join(self.lines)

    def stop(self) -> int:
        self.process.send_signal(signal.SIGINT)
        return self.process.wait(timeout=60)


def cli(env: dict, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "leadrelay"), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=60)


def kill_worker_during(graph, redis_conn, kind: str) -> None:
    """Start a worker, hold Meta's answer to its `kind` call, and SIGKILL it there."""
    held = threading.Event()
    before = len(graph.calls(kind))
    graph.then({"hold": held}, on=kind)
    worker = subprocess.Popen(
        [str(BIN / "leadrelay"), "worker"],
        env=dict(os.environ),
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: len(graph.calls(kind)) > before)
        kill_tree(worker.pid)
    finally:
        worker.wait()
        held.set()


def post_signed_meta(base: str, body: bytes, data=None) -> requests.Response:
    """A signed Meta webhook over real HTTP to a running web process; `data`, when given,
    is what goes on the wire instead of `body` (its chunks, say), signed as `body`."""
    return requests.post(
        f"{base}/webhooks/meta",
        data=body if data is None else data,
        timeout=10,
        headers={"X-Hub-Signature-256": sign(body), "Content-Type": "application/json"},
    )


def delivered_lead(graph, post_meta, work, seconds_ago: int) -> int:
    """The Lead Ads lead LEAD, created `seconds_ago`, delivered (its Lead event went out);
    its creation time. Stage events are checked against it."""
    created = int(time.time()) - seconds_ago
    graph.add_lead(LEAD, created_time=created)
    post_meta(leadgen_body(LEAD, created_time=created))
    work()
    return created


def post_signed(client, name: str, body: bytes, env: dict):
    """`body` posted to /webhooks/<name> through a Flask test client, signed as the source
    signs it with its first configured secret."""
    from workers.sources.registry import SOURCES

    secret = env[SOURCES[name].secret_setting].split(",")[0]
    body, headers = SOURCES[name].signed(secret, body, f"http://localhost/webhooks/{name}")
    return client.post(f"/webhooks/{name}", data=body, headers={"Content-Type": "application/json", **headers})


def kill_tree(pid: int) -> None:
    """SIGKILL a process and everything it started (a machine lost, no goodbye), and wait
    until they are all gone."""
    import psutil

    tree = [process := psutil.Process(pid), *process.children(recursive=True)]
    for each in tree:
        each.send_signal(signal.SIGKILL)
    psutil.wait_procs(tree, timeout=5)


def stage_events(graph) -> list[dict]:
    """The events the stand-in received, but the leads' own `Lead` events."""
    return [e for e in graph.events if e["event_name"] != "Lead"]


def hubspot_deal_event(deal_id: str, stage: str = "closedwon", event_id: int = 1964117900, **overrides) -> dict:
    """A deal stage change as HubSpot's legacy format sends it (its Webhooks API page's
    fields), changed now unless `occurredAt` is given."""
    return {
        "eventId": event_id,
        "subscriptionId": 2418761,
        "portalId": 4512345,
        "appId": 3104402,
        "occurredAt": int(time.time() * 1000),
        "subscriptionType": "deal.propertyChange",
        "attemptNumber": 0,
        "objectId": int(deal_id),
        "propertyName": "dealstage",
        "propertyValue": stage,
        "changeSource": "CRM_UI",
        **overrides,
    }


def booking(name: str, fixture_name: str, **payload) -> bytes:
    """A booking tool's fixture, booked a minute ago (after the lead, inside Meta's 7 days),
    its payload updated with `payload`."""
    doc = json.loads(fixture_bytes(name, fixture_name))
    just_now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 60))
    for holder in (doc, doc["payload"]):
        for key in ("created_at", "createdAt"):
            if key in holder:
                holder[key] = just_now
    doc["payload"].update(payload)
    return json.dumps(doc).encode()


def known_lead(lead_id: int, user_data: dict, dataset_id: str, created: int | None = None) -> dict:
    """A Lead Ads lead's profile as leadrelay keeps it (leadevents._kept), for tests and
    benches that need known leads without delivering each one."""
    return {
        "source": "meta",
        "key": str(lead_id),
        "lead_id": lead_id,
        "created_time": created or int(time.time()) - 3600,
        "page_id": "111",
        "user_data": user_data,
        "fbc": None,
        "dataset": "default",
        "dataset_id": dataset_id,
    }


# The CRM stage tables every test's mapping file holds (the `env` fixture writes them).
CRM_STAGE_TABLES = '[crm.pipedrive.stages]\n"2" = "QualifiedLead"\n"3" = "Schedule"\nwon = "Purchase"\nlost = "lost"\n'
# HighLevel's stage ids are UUIDs, each location's own (tests/vendors/highlevel/fixtures).
CRM_STAGE_TABLES += (
    '[crm.highlevel.stages]\n"7915dedc-8f18-44d5-8bc3-77c04e994a10" = "QualifiedLead"\nwon = "Purchase"\n'
)
# Close's status ids are each organization's own (tests/vendors/close/fixtures).
CRM_STAGE_TABLES += (
    '[crm.close.stages]\n"stat_1CgBdsQ6zyzR1YiCjAoXxBLnBc2J1RUJ3Tu0Pmr6nQK" = "QualifiedLead"\nwon = "Purchase"\n'
)
# Salesforce's stages are its picklist values (tests/vendors/salesforce/fixtures).
CRM_STAGE_TABLES += '[crm.salesforce.stages]\n"Working - Contacted" = "QualifiedLead"\n"Closed Won" = "Purchase"\n'
# Google lead forms' destination (docs/google.md): in dry run unless a test sets credentials.
CRM_STAGE_TABLES += """
[google.acme]
operating_account = "123-456-7890"
consent = { ad_user_data = "granted", ad_personalization = "denied" }
[google.acme.conversion_actions]
Lead = "1001"
QualifiedLead = "1002"
Schedule = "1003"
Purchase = "1004"
"""


def answered(response) -> dict:
    """A webhook's answer: its JSON, or for a sender answered in its own format (Salesforce's
    SOAP acknowledgement) the counts the answer's headers carry."""
    if response.mimetype == "application/json":
        return response.get_json()
    return {
        "accepted": int(response.headers["X-Leadrelay-Accepted"]),
        "duplicates": int(response.headers["X-Leadrelay-Duplicates"]),
        "skipped": [],
    }


def app_with_lead(graph, work, monkeypatch, tmp_path, mapping: str = "", **settings):
    """A test client of the app (and the worker's jobs) with these settings (None: unset),
    and the test mapping file with `mapping` added; the Lead Ads lead LEAD delivered through
    it an hour after its creation, so a CRM's stages have a lead to find."""
    from webhook_app import create_app
    from workers import jobs
    from workers.config.settings import load

    for name, value in settings.items():
        monkeypatch.delenv(name) if value is None else monkeypatch.setenv(name, value)
    if mapping:
        path = tmp_path / "leadrelay.toml"
        path.write_text(CRM_STAGE_TABLES + mapping)
        monkeypatch.setenv("LEADRELAY_CONFIG", str(path))
    jobs.install(load())
    client = create_app().test_client()

    def post_meta(body: bytes):
        headers = {"Content-Type": "application/json", "X-Hub-Signature-256": sign(body)}
        return client.post("/webhooks/meta", data=body, headers=headers)

    delivered_lead(graph, post_meta, work, 3600)
    return client


@dataclass
class Answered:
    """A privacy request's outcome, read as a response is: its status and JSON."""

    status_code: int
    body: dict

    def get_json(self) -> dict:
        return self.body


def privacy_walks() -> None:
    """The privacy requests' walks alone, as their jobs run them, nothing else queued run
    (a lead left in the inbox, a stage left waiting: what a forget must find)."""
    from workers.config.settings import load
    from workers.jobs import install
    from workers.privacy import requests

    ctx = install(load())
    for ref in ctx.connection.zrange(requests.RECENT, 0, -1):
        requests.run(ctx.connection, ctx.routes, ref.decode())


def privacy_api(client, what: str, token: str, work, **given):
    """`POST /api/v1/people/<what>` as a caller makes it, the worker's walk (`work`), then the
    request's state at its status URL: a refusal at the door as answered (400, 403); else 200
    with what a done forget removed or an export's result, 409 with why it was refused."""
    headers = {"Authorization": f"Bearer {token}"}
    taken = client.post(f"/api/v1/people/{what}", json=given, headers=headers)
    if taken.status_code != 202:
        return taken
    assert taken.headers["Location"] == taken.get_json()["status_url"]
    work()
    state = client.get(taken.get_json()["status_url"], headers=headers).get_json()
    if state["state"] == "refused":
        return Answered(409, {"error": state["error"], "detail": state["detail"], "others": state["others"]})
    assert state["state"] == "done", state
    return Answered(200, {**state.pop("result", {}), **state})


# The accuracy figures the rollups must agree with, by walking every form: tests/events/
# test_accuracyrollup.py and test_accuracyrebuild.py.


def accuracy_routes():
    """Pages 1-3 go to dataset a, Page 4 to b, and Page 1's form 12 to b; Page 5 is not routed."""
    from workers.config.routing import Dataset, Page, Routes

    return Routes(
        datasets={"a": Dataset("a", "100"), "b": Dataset("b", "200")},
        pages={str(p): Page(str(p), "token", "", "b" if p == 4 else "a") for p in range(1, 5)},
        forms={("meta", "12"): "b"},
    )


def accuracy_walked(connection, now: float) -> tuple[dict, dict]:
    """What the report that reads every form says: per Page, and per dataset and day."""
    from workers.events import accuracy

    routes = accuracy_routes()
    rows = accuracy.report(connection, now=now)
    daily: dict[str, dict[str, tuple[int, int]]] = {}
    for row in rows:
        route, _ = routes.lead(row["page_id"], row["form_id"])
        for figures in row["days"] if route else []:
            if figures["known"]:
                done, known = daily.setdefault(route["dataset"], {}).get(figures["day"], (0, 0))
                done, known = done + figures["confirmed"] + figures["kept"], known + figures["known"]
                daily[route["dataset"]][figures["day"]] = (done, known)
    return accuracy.by_page(rows), daily


def accuracy_ranked(pages: dict[str, dict], limit: int) -> dict[str, dict]:
    """`pages` bounded as /metrics shows them: the `limit` least accurate, the rest summed."""
    from fractions import Fraction

    from workers.events import accuracy

    if len(pages) <= limit:
        return pages

    def exact(page: str) -> tuple[Fraction, str]:  # done over known unrounded, then the Page's id
        return Fraction(pages[page]["confirmed"] + pages[page]["kept"], pages[page]["known"]), page

    order = sorted(pages, key=exact)
    rest = {name: sum(pages[page][name] for page in order[limit:]) for name in pages[order[0]] if name != "accuracy"}
    return {**{page: pages[page] for page in order[:limit]}, "_other": {**rest, "accuracy": accuracy.share(rest)}}


PRIVACY_ADMIN, PRIVACY_API = "admin-token-value", "api-token-value"


def privacy_run(client, graph, work) -> None:
    """A run that writes nearly every kind of record that can hold a person (the admin and
    API tokens above set): a Lead Ads lead and its stage, a second lead of the same person,
    a held and a dead-lettered lead, a form, a stage of a person never had, a forget."""
    created = int(time.time()) - 600
    answers = [{"name": "email", "values": ["kept@example.com"]}]
    graph.add_lead("6600000000000003", created_time=created - 600, field_data=answers)  # their older lead
    graph.add_lead("6600000000000001", created_time=created, field_data=answers)
    for lead in ("6600000000000003", "6600000000000001"):
        body = leadgen_body(lead, created_time=int(time.time()) - 60)
        client.post("/webhooks/meta", data=body, headers={"X-Hub-Signature-256": sign(body)})
        work()
    unmapped = leadgen_body("6600000000000009", created_time=int(time.time()) - 60).replace(b'"111"', b'"999"')
    client.post("/webhooks/meta", data=unmapped, headers={"X-Hub-Signature-256": sign(unmapped)})
    work()
    stage = {"email": "kept@example.com", "stage": "QualifiedLead", "occurred_at": int(time.time()) - 30}
    never = {"email": "never.a.lead@example.com", "stage": "QualifiedLead", "occurred_at": int(time.time()) - 30}
    answer = client.post(
        "/api/v1/stage-events", json=[stage, never], headers={"Authorization": f"Bearer {PRIVACY_API}"}
    )
    assert answer.get_json()["accepted"] == 2, answer.get_json()
    form = fixture("typeform", "form_response__hidden_fields.json", int(time.time()) - 30)
    client.post("/webhooks/typeform", data=form, headers={"Typeform-Signature": typeform_sig(form)})
    work()
    invalid_dead_letter(client, graph, work, "6600000000000002")
    client.get("/admin/dead-letters", headers={"Authorization": "Bearer wrong"})
    client.post("/admin/login", data={"token": PRIVACY_ADMIN})
    client.get("/metrics")
    assert leadrelay("forget", "--email", "gone@example.com").returncode == 0


def judge_google_case(case: dict) -> list[str]:
    """What is wrong with what the service would send for an unseen Google lead case
    (tests/fixtures/unseen/google-r1.jsonl): the email's and phone's hashes and the click id
    against the normalised values the case expects (none: nothing may be sent). The body is
    read as the webhook reads it and hashed as the worker sends it."""
    import hashlib

    from workers.config.googledest import GoogleDestination
    from workers.intake import googleleads
    from workers.sources import googleads

    [item] = googleads.parse(json.dumps(case["body"]).encode())["leads"]
    region = (case.get("region") or "").upper() or None
    destination = GoogleDestination("unseen", "default", "1234567890", {"Lead": "1"}, region=region)
    # No default region beyond the destination's: a case without one reads international numbers only.
    found = googleleads.prepare(item, None, destination, "", googleads.lead_key(item))["google"]
    expect, wrong = case["expect"], []
    for field, key in (("email", "em"), ("phone", "ph")):
        wanted = [hashlib.sha256(expect[field].encode()).hexdigest()] if expect.get(field) else []
        if found.get(key, []) != wanted:
            wrong.append(f"{field}: expected {expect.get(field)!r}, sent {len(found.get(key, []))} hash(es)")
    if (found.get("gclid") or None) != (expect.get("gclid") or None):
        wrong.append(f"gclid: expected {expect.get('gclid')!r}, got {found.get('gclid')!r}")
    return wrong
