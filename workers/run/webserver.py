"""The web process as a command: gunicorn with the settings the package ships, and the
address it listens on (`leadrelay web`, `leadrelay run`)."""

from __future__ import annotations

import errno
import os
import shutil
import socket
import sys
import time
from pathlib import Path

import requests

from workers.config import environment

# gunicorn's settings live in the package, not in a file beside the code: an installed
# wheel (a container image, a systemd unit) runs `leadrelay web` from any folder.
CONFIG = "python:webhook_app.gunicorn_conf"
APP = "webhook_app:create_app()"
DEFAULT_BIND = "127.0.0.1:8000"  # `leadrelay run`: one machine; `leadrelay web` reads PORT as platforms set it


def script(name: str) -> str:
    """A console script of this install (beside this Python), else from PATH."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else (shutil.which(name) or name)


def command(*gunicorn_args: str) -> list[str]:
    """gunicorn with leadrelay's settings, extra gunicorn options before the app."""
    return [script("gunicorn"), "-c", CONFIG, *gunicorn_args, APP]


def exec_web(gunicorn_args: tuple[str, ...]) -> None:
    """Become gunicorn (the process a supervisor watches is gunicorn's arbiter itself).
    Its name must stay `gunicorn`: the settings patch for gevent only under it.

    Raises:
        RuntimeError: the address is taken (gunicorn would retry five times and end with
            "Can't connect", no hint).
    """
    overridden = any(a in ("-b", "--bind", "--reuse-port") or a.startswith("--bind=") for a in gunicorn_args)
    bind = environment.web_bind()
    if not overridden and taken(bind):
        raise RuntimeError(
            f"{bind} is in use (another leadrelay web, or `make run`?); listen elsewhere with "
            f"LEADRELAY_BIND=127.0.0.1:8001 (or PORT=8001), or stop what holds it"
        )
    args = command(*gunicorn_args)
    os.execv(args[0], ["gunicorn", *args[1:]])


def every_interface(bind: str) -> bool:
    """The web process listens on every interface (`0.0.0.0:8000`, `[::]:8000`, `:8000`)."""
    host = bind.rpartition(":")[0].strip("[]")
    return not bind.startswith("unix:") and host in ("", "0.0.0.0", "::")


def base_url(bind: str) -> str:
    host, _, port = bind.rpartition(":")
    return f"http://{'127.0.0.1' if every_interface(bind) else host}:{port}"


def taken(bind: str) -> bool:
    """Something already listens where the web process would: gunicorn would retry five
    times, print `Connection in use` each time and exit 2, with the worker already running."""
    host, _, port = bind.rpartition(":")
    if bind.startswith("unix:") or not port.isdigit():
        return False  # gunicorn itself says what is wrong with a socket path
    with socket.socket(socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gunicorn binds
        try:
            sock.bind((host.strip("[]") or "0.0.0.0", int(port)))
        except OSError as err:
            return err.errno == errno.EADDRINUSE
    return False


def healthy(base: str, children, timeout: float = 60.0) -> bool:
    """Wait until the web process answers /healthz (or a child dies)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and all(c.poll() is None for c in children):
        try:
            if requests.get(f"{base}/healthz", timeout=1).status_code == 200:
                return True
        except requests.RequestException:
            pass
        time.sleep(0.1)
    return False
