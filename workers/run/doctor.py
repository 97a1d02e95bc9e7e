"""`leadrelay doctor`: a checklist of what a working setup needs, with the fix for each
failure; and `leadrelay subscribe`: install the app on a Page for `leadgen`."""

from __future__ import annotations

import time
from dataclasses import dataclass

import redis

from workers.common import redisurl
from workers.common.policy import JobError
from workers.common.queues import connect
from workers.config import environment, mappingfile, redissafety, versions
from workers.config.needed import WEB, WHERE, WORKER, ConfigError
from workers.config.routing import ANY_PAGE, Dataset, Page
from workers.config.settings import DEFAULT_API_VERSION, Settings, load
from workers.googleapi import checks as googlechecks
from workers.googleapi.datamanager import DataManager
from workers.graphapi import versionsignals
from workers.graphapi.graph import Graph

REQUIRED_PERMISSION = "leads_retrieval"


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    client: str = ""  # the dataset (client) whose checklist it belongs to; "" for the installation's


NETWORK = ("timeout", "connection_error", "transport_error")  # graph.py's details when Meta never answered


def _suggested(signal: dict | None) -> str:
    """The version to move to: the one Meta says it served a call on (it works today), else
    the newest one we test against."""
    served = (signal or {}).get("served")
    return served if served and served != "unknown" else DEFAULT_API_VERSION


def _version_signal(settings: Settings) -> dict | None:
    """What Meta said of the version in the last week (a call it auto-upgraded), if Redis answers."""
    if not settings.redis_url:
        return None
    try:
        return versionsignals.read(connect(settings.redis_url))
    except redis.RedisError:
        return None


def _graph_check(graph: Graph, name: str, call, ok_detail, fix: str) -> Check:
    """One call to Meta: its answer's detail, or the failure with the fix; a network
    failure is told apart from a refusal, since the token was never checked then."""
    try:
        return Check(name, True, ok_detail(call()))
    except JobError as err:
        if err.code is None and str(err.detail).startswith(NETWORK):
            return Check(
                name,
                False,
                f"could not reach {graph.settings.graph_url} ({err.detail}); nothing was checked",
                "check this host's network, proxy or firewall towards that address (META_GRAPH_URL), then run "
                "doctor again: the token may well be fine",
            )
        code = f"{err.code}" + (f"/{err.subcode}" if err.subcode else "")
        said = f"{err.reason}: code {code} ({err.detail})" if err.code else err.detail
        return Check(name, False, said, fix)


def run(env=None, page_id: str | None = None) -> list[Check]:
    """Every check, each reported; one that cannot run for lack of a setting says so. With
    datasets and Pages in the mapping file, one checklist per dataset: its CAPI token,
    then each of its Pages' token, permission and subscription."""
    checks: list[Check] = []
    problems: list[ConfigError] = []
    settings: Settings = load(env, role=(WEB, WORKER), found=problems)
    for problem in problems:
        name, said = problem.problems[0]
        checks.append(Check(f"setting {name}", False, said, WHERE.get(name, "see docs/configuration.md")))
    try:
        routes = mappingfile.validate(settings, env)["routes"]
    except ConfigError as err:
        checks.append(Check("mapping file", False, str(err), "fix the entry named, then run `leadrelay check-config`"))
        routes = None
    if not checks:
        checks.append(
            Check(
                "configuration",
                True,
                "every required setting is set and well formed" + (" (the local sandbox)" if settings.sandbox else ""),
            )
        )
    if settings.redis_url:
        checks.extend(_redis_checks(settings.redis_url))
    version = versions.horizon(settings.api_version)
    signal = _version_signal(settings)
    checks.append(
        Check(
            "api version",
            not version.warn and signal is None,
            version.say() + (f"; Meta says: {signal['warning']} (on {signal['served']})" if signal else ""),
            f"set META_API_VERSION to a current version ({_suggested(signal)}), test with "
            f"`leadrelay send-test meta`, then restart: every request to Meta uses it",
        )
    )
    if routes is None:
        return checks
    graph = Graph(settings)
    for dataset in routes.datasets.values():
        group = _dataset_checks(graph, dataset) if dataset.id else []  # a bad id is reported above
        for page in routes.pages.values():
            if page.dataset == dataset.name and page.token:
                group.extend(_token_checks(graph, page))
                wanted = page_id if page.id == ANY_PAGE else page.id
                if wanted and group[-1].ok:
                    group.append(
                        _graph_check(
                            graph,
                            "page subscription" if page.id == ANY_PAGE else f"page {wanted} subscription",
                            lambda p=page, w=wanted: _subscribed(graph, p.token, w),
                            lambda fields: "the app receives leadgen for this Page",
                            f"run `leadrelay subscribe --page-id {wanted}`"
                            if page.id == ANY_PAGE
                            else "run `leadrelay subscribe --all`",
                        )
                    )
        checks.extend(Check(**{**c.__dict__, "client": dataset.name}) for c in group)
    checks.extend(_google_checks(settings, routes))
    return checks


def _google_checks(settings: Settings, routes) -> list[Check]:
    """Each Google destination's credentials and conversion actions, in its dataset's checklist."""
    client = None
    if settings.google_credentials:
        client = DataManager(settings.google_url, settings.google_credentials, settings.graph_timeout_seconds)
    out = []
    for destination in routes.google.values():
        for found in googlechecks.run(client, destination):
            named = found.name if len(routes.google) == 1 else f"{found.name} ({destination.key})"
            out.append(Check(named, found.ok, found.detail, found.fix, client=destination.name))
    return out


def _dataset_checks(graph: Graph, dataset: Dataset) -> list[Check]:
    checks = [_dataset_check(graph, dataset)]
    if checks[0].ok and not dataset.dry_run:
        checks.append(expiry_check(graph, dataset.token, "dataset token expiry", dataset.token_env))
    return checks


def _dataset_check(graph: Graph, dataset: Dataset) -> Check:
    if dataset.dry_run:
        return Check("dataset", True, f"{dataset.id}: dry-run, no {dataset.token_env}: events are kept, not sent")
    return _graph_check(
        graph,
        "dataset",
        lambda: graph.call("GET", dataset.id, dataset.token, params={"fields": "id,name"}, probe=True),
        lambda ds: f"{ds.get('name') or ds.get('id')} ({dataset.id}) reachable with {dataset.token_env}",
        f"check the dataset id and that {dataset.token_env} belongs to that dataset",
    )


def _redis_checks(url: str) -> list[Check]:
    checks = []
    connection = redisurl.client(url, socket_connect_timeout=2, socket_timeout=5)
    try:
        connection.ping()
        checks.append(Check("redis", True, f"reachable: {redisurl.topology(connection, url)}"))
        aof, policy = redissafety.state(connection)
        refused = f"; until then web and worker refuse to start (unless {redissafety.ALLOW}=1)"
        checks.append(
            Check(
                "redis persistence",
                aof,
                f"appendonly {'yes' if aof else 'no'}",
                "set `appendonly yes`: otherwise a restart loses the queue" + refused,
            )
        )
        checks.append(
            Check(
                "redis eviction",
                policy == "noeviction",
                f"maxmemory-policy {policy}",
                "set `maxmemory-policy noeviction`: an evicted job is a lost lead" + refused,
            )
        )
    except redis.RedisError as err:
        checks.append(
            Check(
                "redis",
                False,
                f"unreachable ({type(err).__name__})",
                f"start leadrelay (`{environment.start_command()}`), or check REDIS_URL",
            )
        )
    return checks


def _token_checks(graph: Graph, page: Page) -> list[Check]:
    token, where = page.token, "" if page.id == ANY_PAGE else f"page {page.id} "
    checks = [
        _graph_check(
            graph,
            f"{where}page token",
            lambda: graph.call("GET", "me", token, params={"fields": "id,name"}, probe=True),
            lambda me: f"valid ({me.get('name') or me.get('id')}, {page.token_env})",
            f"create a new Page or system-user token and set {page.token_env}",
        )
    ]
    if checks[-1].ok:
        name = f"{where}permission {REQUIRED_PERMISSION}"
        try:
            granted = {
                p["permission"]
                for p in graph.call("GET", "me/permissions", token, probe=True).get("data", [])
                if p.get("status") == "granted"
            }
            checks.append(
                Check(
                    name,
                    REQUIRED_PERMISSION in granted,
                    "granted"
                    if REQUIRED_PERMISSION in granted
                    else f"missing (granted: {', '.join(sorted(granted)) or 'none'})",
                    f"grant {REQUIRED_PERMISSION} to the app and issue a new token",
                )
            )
        except JobError:
            checks.append(Check(name, True, "not listable with this kind of token; the lead reads will tell"))
        checks.append(expiry_check(graph, token, f"{where}page token expiry", page.token_env))
    return checks


def expiry_check(graph: Graph, token: str, name: str, setting: str, now: float | None = None) -> Check:
    """When Meta says the token (or its data access) ends: failing inside
    LEADRELAY_TOKEN_WARN_DAYS, since Meta warns no one and jobs then stop at once."""
    try:
        data = graph.call("GET", "debug_token", token, params={"input_token": token}, probe=True).get("data") or {}
    except JobError:
        return Check(name, True, "not inspectable with this token; the calls will tell")
    now = time.time() if now is None else now
    ends = [t for t in (data.get("expires_at"), data.get("data_access_expires_at")) if isinstance(t, int) and t > 0]
    if not ends:
        return Check(name, True, "never expires")
    days = (min(ends) - now) / 86400
    soon = days <= graph.settings.token_warn_days
    said = "expired" if days <= 0 else f"expires in {days:.1f} days"
    return Check(name, not soon, said, f"issue a system-user token (it never expires) and set {setting}")


class NotSubscribed(JobError):
    pass


def _subscribed(graph: Graph, token: str, page_id: str) -> list:
    apps = graph.call("GET", f"{page_id}/subscribed_apps", token, probe=True).get("data", [])
    fields = [f for app in apps for f in app.get("subscribed_fields", [])]
    if "leadgen" not in fields:
        raise NotSubscribed("invalid", "the Page is not subscribed to the app for leadgen")
    return fields


def subscribe(settings: Settings, page_id: str, token: str | None = None) -> None:
    """Install the app on the Page for `leadgen` (Meta sends no lead webhooks before),
    with the Page's token (the environment's unless given).

    Raises:
        JobError: Meta refused (a Page token with pages_manage_metadata is needed).
    """
    Graph(settings).call(
        "POST",
        f"{page_id}/subscribed_apps",
        token or settings.page_access_token,
        params={"subscribed_fields": "leadgen"},
        probe=True,
    )
