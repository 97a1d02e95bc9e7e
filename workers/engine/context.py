"""What every job of a worker process shares (settings, Redis, the Graph client, routes),
set once when the worker starts (`install`) and read by each job (`context`)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import redis

from workers.common import counters, replication
from workers.common.queues import connect
from workers.config.mappingfile import validate
from workers.config.routing import Routes
from workers.config.settings import Settings
from workers.config.stagemap import StageMap
from workers.crmapi.clients import clients
from workers.googleapi.datamanager import DataManager
from workers.graphapi.graph import Graph
from workers.graphapi.pauses import Pauses


@dataclass(frozen=True)
class Context:
    """What every job of this worker process shares."""

    settings: Settings
    connection: redis.Redis
    graph: Graph
    routes: Routes
    processing: dict | None = None  # the Lead Ads source's Limited Data Use fields ([sources.meta] ldu)
    stages: StageMap | None = None  # stage names to events ([stages])
    crm: dict = field(default_factory=dict)  # each CRM source's read-back client (workers/crmapi)
    google: DataManager | None = None  # Google's Data Manager API, when credentials are set


_context: Context | None = None


def install(settings: Settings, routes: Routes | None = None) -> Context:
    """Set the settings and routes this process's jobs run with (the routes from the
    mapping file unless given), and their Redis and Graph clients.

    Raises:
        ConfigError: the mapping file has a mistake.
    """
    global _context
    mapping = validate(settings)
    routes = mapping["routes"] if routes is None else routes
    connection = connect(settings.redis_url)
    replication.configure(settings.replica_acks, settings.replica_ack_timeout_ms)
    pauses = Pauses(connection)
    graph = Graph(
        settings,
        pauses=pauses,
        labels=routes.labels(),
        observe=functools.partial(counters.observe_graph, connection),
    )
    crm = clients(settings, pauses)
    graph.probes.extend(client.probe for client in crm.values())  # a waiting job tests a CRM token too
    google = None
    if settings.google_credentials:
        google = DataManager(
            settings.google_url,
            settings.google_credentials,
            settings.graph_timeout_seconds,
            pauses,
            routes.google.values(),
        )
        graph.probes.append(google.probe)
    _context = Context(
        settings, connection, graph, routes, mapping["processing"].get("meta"), mapping["stages"], crm, google
    )
    return _context


def context() -> Context:
    """This process's context; a plain `rq worker` (not `leadrelay worker`) reads the
    environment once, at its first job.

    Raises:
        ConfigError: a setting the worker needs is missing or malformed.
    """
    if _context is None:
        from workers.config.needed import WORKER
        from workers.config.settings import load

        install(load(role=WORKER))
    return _context
