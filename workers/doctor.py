"""`leadrelay doctor`: a checklist of what a working setup needs, with the fix for each
failure; and `leadrelay subscribe`: install the app on a Page for `leadgen`."""

from __future__ import annotations

import re
from dataclasses import dataclass

import redis

from .graph import Graph
from .policy import DeliveryError
from .required import WEB, WHERE, WORKER, ConfigError
from .settings import Settings, load


REQUIRED_PERMISSION = "leads_retrieval"
# Marketing API versions (lead reads fall under them) expire about a year after release;
# the oldest still served, per spec/meta.md §6, is v25.0 (v24.0 ended 2026-10-06).
OLDEST_SUPPORTED = (25, 0)


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""


def _graph_check(name: str, call, ok_detail, fix: str) -> Check:
    try:
        return Check(name, True, ok_detail(call()))
    except DeliveryError as err:
        said = f"{err.reason}: code {err.code}/{err.subcode} ({err.detail})" if err.code else err.detail
        return Check(name, False, said, fix)


def run(env=None, page_id: str | None = None) -> list[Check]:
    """Every check, each reported; one that cannot run for lack of a setting says so."""
    checks: list[Check] = []
    problems: list[ConfigError] = []
    settings: Settings = load(env, role=(WEB, WORKER), found=problems)
    for problem in problems:
        name, said = problem.problems[0]
        checks.append(Check(f"setting {name}", False, said, WHERE.get(name, "see README, Configuration")))
    if not problems:
        checks.append(Check("configuration", True, "every required setting is set and well formed"
                            + (" (the local sandbox)" if settings.sandbox else "")))
    if settings.redis_url:
        checks.extend(_redis_checks(settings.redis_url))
    if settings.page_access_token:
        checks.extend(_token_checks(settings))
    if settings.capi_access_token:
        checks.append(_graph_check(
            "dataset", lambda: Graph(settings).call("GET", settings.dataset_id, settings.capi_access_token,
                                                    params={"fields": "id,name"}, probe=True),
            lambda ds: f"{ds.get('name') or ds.get('id')} reachable with the CAPI token",
            "check META_DATASET_ID and that META_CAPI_ACCESS_TOKEN belongs to that dataset"))
    else:
        checks.append(Check("dataset", True, "dry-run: no META_CAPI_ACCESS_TOKEN, events are kept, not sent"))
    if page_id and settings.page_access_token:
        checks.append(_graph_check(
            "page subscription", lambda: _subscribed(Graph(settings), settings.page_access_token, page_id),
            lambda fields: "the app receives leadgen for this Page",
            f"run `leadrelay subscribe --page-id {page_id}`"))
    version = tuple(int(n) for n in re.findall(r"\d+", settings.api_version))
    checks.append(Check("api version", version >= OLDEST_SUPPORTED, settings.api_version,
                        "set META_API_VERSION to a current version (v26.0)"))
    return checks


def _redis_checks(url: str) -> list[Check]:
    checks = []
    connection = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=5)
    try:
        connection.ping()
        checks.append(Check("redis", True, "reachable"))
        try:
            policy = connection.config_get("maxmemory-policy").get("maxmemory-policy")
            aof = connection.config_get("appendonly").get("appendonly")
            checks.append(Check("redis persistence", aof == "yes", f"appendonly {aof}",
                                "set `appendonly yes`: otherwise a restart loses the queue"))
            checks.append(Check("redis eviction", policy == "noeviction", f"maxmemory-policy {policy}",
                                "set `maxmemory-policy noeviction`: an evicted job is a lost lead"))
        except redis.ResponseError:
            checks.append(Check("redis settings", True, "CONFIG is disabled here; check appendonly yes and "
                                                       "maxmemory-policy noeviction with your provider"))
    except redis.RedisError as err:
        checks.append(Check("redis", False, f"unreachable ({type(err).__name__})",
                            "start leadrelay (`make run`), or check REDIS_URL"))
    return checks


def _token_checks(settings: Settings) -> list[Check]:
    graph = Graph(settings)
    token = settings.page_access_token
    checks = [_graph_check(
        "page token", lambda: graph.call("GET", "me", token, params={"fields": "id,name"}, probe=True),
        lambda me: f"valid ({me.get('name') or me.get('id')})",
        "create a new Page or system-user token and set META_PAGE_ACCESS_TOKEN")]
    if checks[-1].ok:
        try:
            granted = {p["permission"] for p in graph.call("GET", "me/permissions", token, probe=True).get("data", [])
                       if p.get("status") == "granted"}
            checks.append(Check(f"permission {REQUIRED_PERMISSION}", REQUIRED_PERMISSION in granted,
                                "granted" if REQUIRED_PERMISSION in granted else f"missing (granted: "
                                f"{', '.join(sorted(granted)) or 'none'})",
                                f"grant {REQUIRED_PERMISSION} to the app and issue a new token"))
        except DeliveryError:
            checks.append(Check(f"permission {REQUIRED_PERMISSION}", True,
                                "not listable with this kind of token; the lead reads will tell"))
    return checks


class NotSubscribed(DeliveryError):
    pass


def _subscribed(graph: Graph, token: str, page_id: str) -> list:
    apps = graph.call("GET", f"{page_id}/subscribed_apps", token, probe=True).get("data", [])
    fields = [f for app in apps for f in app.get("subscribed_fields", [])]
    if "leadgen" not in fields:
        raise NotSubscribed("invalid", "the Page is not subscribed to the app for leadgen")
    return fields


def subscribe(settings: Settings, page_id: str) -> None:
    """Install the app on the Page for `leadgen` (Meta sends no lead webhooks before).

    Raises:
        DeliveryError: Meta refused (a Page token with pages_manage_metadata is needed).
    """
    Graph(settings).call("POST", f"{page_id}/subscribed_apps", settings.page_access_token,
                         params={"subscribed_fields": "leadgen"}, probe=True)
