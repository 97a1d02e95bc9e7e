"""Whether this process serves on gevent's cooperative sockets (gunicorn's gevent workers:
`leadrelay web`, `leadrelay run`) or not (Flask's test client, another WSGI server).

Two things need them and must agree: a body's read deadline (bodies.py) and the
once-a-second hand-on of routine deliveries (deliveries.py). Asked at request time, not
at import: gunicorn patches the sockets in each worker after the app may have been loaded.
"""

from __future__ import annotations


def cooperative() -> bool:
    try:
        from gevent import monkey
    except ImportError:  # pragma: no cover: gevent is a dependency
        return False
    return monkey.is_module_patched("socket")
