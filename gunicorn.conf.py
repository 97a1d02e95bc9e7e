"""gunicorn settings for the leadrelay receiver (Procfile `web:` and `make run`)."""

import multiprocessing
import os
import shutil
import sys
import tempfile

bind = os.environ.get("LEADRELAY_BIND") or f"0.0.0.0:{os.environ.get('PORT', '8000')}"
workers = int(os.environ.get("WEB_CONCURRENCY", multiprocessing.cpu_count() * 2))
# Threads keep slow or keep-alive clients from pinning a whole process when no
# buffering proxy sits in front; the handlers are short and hold no shared state.
worker_class = "gthread"
threads = int(os.environ.get("LEADRELAY_WEB_THREADS", 4))
timeout = 30
graceful_timeout = 20
keepalive = 5
accesslog = None  # the app logs one structured line per webhook
errorlog = "-"
# No control socket: it lives in $HOME, which two instances on one box would share.
control_socket_disable = True

# Each web process counts webhooks on its own; prometheus-client's multiprocess mode
# has them write to one directory that /metrics adds up. Set here, before any worker
# imports prometheus_client, and private to this server unless the operator names one.
if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="leadrelay-metrics-")


def on_starting(server):
    """Fail at start, naming the setting, rather than in every worker's boot; start the
    counters from zero (files left by an earlier server would be added in)."""
    from webhook_app.config import WEB, ConfigError, load

    metrics_dir = os.environ["PROMETHEUS_MULTIPROC_DIR"]
    os.makedirs(metrics_dir, exist_ok=True)
    for name in os.listdir(metrics_dir):  # only prometheus-client's files: the directory may be the operator's
        if name.endswith(".db"):
            os.remove(os.path.join(metrics_dir, name))

    try:
        load(role=WEB)
    except ConfigError as err:
        print(f"leadrelay: configuration error: {err}", file=sys.stderr)
        sys.exit(2)


def child_exit(server, worker):
    """A replaced web process's gauges must not linger (its counters still add up)."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def on_exit(server):
    if os.path.basename(os.environ["PROMETHEUS_MULTIPROC_DIR"]).startswith("leadrelay-metrics-"):
        shutil.rmtree(os.environ["PROMETHEUS_MULTIPROC_DIR"], ignore_errors=True)
