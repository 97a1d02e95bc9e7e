"""gunicorn settings for the leadrelay receiver, shipped in the package.

Notes: docs/internals/webhook_app.md
"""

import logging
import multiprocessing
import os
import resource
import shutil
import sys
import tempfile

# gevent's workers patch the standard library when they start; the settings checks below
# import ssl (through requests) before that, so patch first, here, as gevent asks. Only in
# gunicorn itself: a test that imports this module to call its hooks must stay unpatched.
if os.path.basename(sys.argv[0]) == "gunicorn":
    from gevent import monkey

    monkey.patch_all()

from workers.config import environment  # noqa: E402  (.env and the sandbox's settings, as the CLI reads them)

environment.apply()

bind = environment.web_bind()
workers = int(os.environ.get("WEB_CONCURRENCY", multiprocessing.cpu_count() * 2))
# A public webhook endpoint meets slow clients. gevent's workers hold each connection in
# a greenlet (a few KB), so hundreds sending a byte a second cost little and block no one;
# gunicorn gives each request's headers `keepalive` seconds to arrive, then drops the
# connection. Threads (gthread) were pinned by a handful of such clients (docs/deploying.md).
worker_class = "gevent"
# Per process. A body gets LEADRELAY_BODY_TIMEOUT_SECONDS to arrive (webhook_app/bodies.py),
# but a client that keeps reopening slow connections holds that many all the time: 4,200
# from one client against 4 x 1000 left 58% of probes unanswered within a second; with
# 4 x 5000, see docs/deploying.md. Each costs a greenlet and a file descriptor.
worker_connections = int(os.environ.get("LEADRELAY_WEB_CONNECTIONS", 5000))

# As many open files as the host allows: each connection is one, and the usual soft limit
# (1024) is below worker_connections.
_soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if _soft != resource.RLIM_INFINITY and (_hard == resource.RLIM_INFINITY or _soft < _hard):
    resource.setrlimit(resource.RLIMIT_NOFILE, (_hard if _hard != resource.RLIM_INFINITY else 65536, _hard))
timeout = 30
graceful_timeout = 20
keepalive = 5  # also the time a request's headers have to arrive
accesslog = None  # the app logs one structured line per webhook
errorlog = "-"


class JsonLogger(__import__("gunicorn.glogging", fromlist=["Logger"]).Logger):
    """gunicorn's own lines ("Booting worker", errors) as JSON, like every other line."""

    def setup(self, cfg):
        super().setup(cfg)
        from workers.common import logs

        level = os.environ.get("LEADRELAY_LOG_LEVEL", "").strip().upper()
        logs.configure(level if level in ("DEBUG", "WARNING", "ERROR") else "INFO")  # on_starting checks it
        self.error_log.handlers[:] = logging.getLogger().handlers


logger_class = JsonLogger
# No control socket: it lives in $HOME, which two instances on one box would share.
control_socket_disable = True

# Each web process counts webhooks on its own; prometheus-client's multiprocess mode
# has them write to one directory that /metrics adds up. Set here, before any worker
# imports prometheus_client, and private to this server unless the operator names one.
if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="leadrelay-metrics-")


def on_starting(server):
    """Fail at start, naming every bad setting or mapping entry in one message, rather
    than with a traceback in every web process's boot (a live web on the sandbox's Redis
    too); say once where events go; start the counters from zero (files left by an
    earlier server would be added in)."""
    from workers.common import logs
    from workers.common.queues import connect
    from workers.config import mappingfile, versions
    from workers.config.needed import WEB, ConfigError
    from workers.config.settings import load
    from workers.graphapi import capi
    from workers.run import redisowner

    metrics_dir = os.environ["PROMETHEUS_MULTIPROC_DIR"]
    os.makedirs(metrics_dir, exist_ok=True)
    for name in os.listdir(metrics_dir):  # only prometheus-client's files: the directory may be the operator's
        if name.endswith(".db"):
            os.remove(os.path.join(metrics_dir, name))

    try:
        settings = load(role=WEB)
        routes = mappingfile.validate(settings)["routes"]
        connection = connect(settings.redis_url)
        redisowner.usable(connection, settings, str(environment.data_dir()), "web")
    except ConfigError as err:
        print(f"leadrelay: configuration error: {err}", file=sys.stderr)
        sys.exit(2)
    capi.warn_at_start(routes.datasets.values(), "web")
    versions.warn_at_start(settings.api_version, "web")
    if not settings.trusted_proxies:  # throttling's address; the first forwarded request is said again (guard.py)
        logs.get("leadrelay.web").info(
            "client_address",
            seen="the connecting address",
            detail="behind a load balancer every client shares its address: set LEADRELAY_TRUSTED_PROXIES",
        )


def post_worker_init(worker):
    """Move everything loaded so far (Flask, the mapping file, phonenumbers' and pycountry's
    tables: some 60,000 objects) out of the garbage collector's sight. A full collection
    walks them all, 34 ms on the bench machine, during which no request of that process is
    answered: it was most of the receiver's p99. They live as long as the process anyway."""
    import gc

    gc.freeze()


def worker_exit(server, worker):
    """A web process that stops hands on the deliveries it has not logged and counted yet
    (webhook_app/deliveries.py: once a second otherwise)."""
    from webhook_app import deliveries

    deliveries.flush()


def child_exit(server, worker):
    """A replaced web process's gauges must not linger (its counters still add up)."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def on_exit(server):
    if os.path.basename(os.environ["PROMETHEUS_MULTIPROC_DIR"]).startswith("leadrelay-metrics-"):
        shutil.rmtree(os.environ["PROMETHEUS_MULTIPROC_DIR"], ignore_errors=True)
