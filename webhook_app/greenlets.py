"""Whether this process serves on gevent's cooperative sockets (gunicorn's gevent workers:
`leadrelay web`, `leadrelay run`) or not (Flask's test client, another WSGI server).

Notes: docs/internals/webhook_app.md
"""

from __future__ import annotations


def cooperative() -> bool:
    try:
        from gevent import monkey
    except ImportError:  # pragma: no cover: gevent is a dependency
        return False
    return monkey.is_module_patched("socket")
