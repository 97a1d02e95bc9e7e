"""Where settings come from, in order.

Notes: docs/internals/config.md
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import MutableMapping

from dotenv import dotenv_values

from workers.config import sandbox

ENV_FILE = "LEADRELAY_ENV_FILE"  # default ".env" in the working directory; empty: read none
DATA_DIR = "LEADRELAY_DATA_DIR"  # default "data": the embedded Redis, the sandbox's settings
SANDBOX_DIR = "sandbox"  # the sandbox's own folder inside it: `make clean` deletes only that


def base_dir(environ: MutableMapping[str, str] = os.environ) -> Path:
    """The data folder: LEADRELAY_DATA_DIR, or `data` in the working folder."""
    return Path(environ.get(DATA_DIR) or "data").resolve()


def start_command() -> str:
    """How the person reading a message starts leadrelay: `make run` in a checkout (the
    README's way), `leadrelay run` where the package was installed from a wheel."""
    checkout = Path(__file__).resolve().parents[2]
    return "make run" if (checkout / "Makefile").is_file() and (checkout / "workers").is_dir() else "leadrelay run"


def web_bind(environ: MutableMapping[str, str] = os.environ) -> str:
    """Where `leadrelay web` listens (gunicorn's settings and the taken-port check read
    this one rule): LEADRELAY_BIND, else every address on $PORT, as platforms set it."""
    return environ.get("LEADRELAY_BIND") or f"0.0.0.0:{environ.get('PORT', '8000')}"


def data_dir(environ: MutableMapping[str, str] = os.environ) -> Path:
    """This process's local state (the embedded Redis and its address, the web's address):
    the sandbox's own folder, or, live, the data folder itself. Going live in a checkout
    that ran the sandbox starts from an empty Redis, and `make clean` never deletes it."""
    return base_dir(environ) / SANDBOX_DIR if sandbox.active(environ) else base_dir(environ)


def _fill(environ: MutableMapping[str, str], values: dict, set_wins: bool = False) -> None:
    """Fill what `environ` leaves unset; with `set_wins`, a name set to nothing
    (`LEADRELAY_ADMIN_TOKEN=`) is set too, and is not filled."""
    for name, value in values.items():
        if value is not None and not (name in environ if set_wins else environ.get(name, "").strip()):
            environ[name] = value


def apply(environ: MutableMapping[str, str] = os.environ, start_sandbox: bool = False) -> bool:
    """Fill `environ` from `.env`, then from the sandbox when no Meta setting is given;
    True when the sandbox is on.

    `start_sandbox` (for `leadrelay run`) creates the sandbox's settings on first use;
    other commands only read them, and find the running embedded Redis from the data
    directory when REDIS_URL is unset.
    """
    env_file = environ.get(ENV_FILE, ".env")
    if env_file and Path(env_file).is_file():  # the environment wins, even set empty: it turns a setting off
        _fill(environ, dotenv_values(env_file), set_wins=True)
    if start_sandbox:
        _move_old_sandbox(base_dir(environ))
    on = sandbox.wanted(environ)
    if on:
        values = sandbox.ensure(data_dir(environ)) if start_sandbox else sandbox.read(data_dir(environ))
        _fill(environ, values)
        on = bool(values)
    if not start_sandbox and not environ.get("REDIS_URL", "").strip():
        kept = kept_redis_url(data_dir(environ))
        if kept:
            environ["REDIS_URL"] = kept
    return on


def _move_old_sandbox(base: Path) -> None:
    """Earlier releases kept the sandbox's files (and its Redis) in the data folder itself,
    where a live start would have found them: they move to the sandbox's folder. Only at
    `leadrelay run`, whose embedded Redis is not running yet."""
    if (base / sandbox.FILE).is_file() and not (base / SANDBOX_DIR).exists():
        (base / SANDBOX_DIR).mkdir()
        for entry in list(base.iterdir()):
            if entry.name != SANDBOX_DIR:
                entry.rename(base / SANDBOX_DIR / entry.name)


REDIS_URL_FILE = "redis.url"


def kept_redis_url(directory: Path) -> str:
    """The embedded Redis's address, kept by `leadrelay run` in the data directory."""
    path = directory / REDIS_URL_FILE
    return path.read_text().strip() if path.is_file() else ""
