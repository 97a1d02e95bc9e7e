"""gunicorn settings for the leadrelay receiver (Procfile `web:` and `make run`)."""

import multiprocessing
import os
import sys

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


def on_starting(server):
    """Fail at start, naming the setting, rather than in every worker's boot."""
    from webhook_app.config import WEB, ConfigError, load

    try:
        load(role=WEB)
    except ConfigError as err:
        print(f"leadrelay: configuration error: {err}", file=sys.stderr)
        sys.exit(2)
