"""The local sandbox: what `leadrelay run` is when no Meta setting is given.

Notes: docs/internals/config.md
"""

from __future__ import annotations

import os
import secrets
import socket
from pathlib import Path
from typing import Mapping

from dotenv import dotenv_values

from workers.sources.registry import SECRET_SETTINGS, SOURCES

FILE = "sandbox.env"
PREFIX = "sandbox-"  # every generated secret starts with it: none can pass for a real one
# Any of these, set by the user, means a real Meta app: the sandbox stays off.
META_SETTINGS = (
    "META_APP_SECRET",
    "META_VERIFY_TOKEN",
    "META_PAGE_ACCESS_TOKEN",
    "META_DATASET_ID",
    "META_CAPI_ACCESS_TOKEN",
    "META_GRAPH_URL",
    "META_TEST_EVENT_CODE",
)
DATASET_ID = "4242424242"  # the stand-in's dataset
FORM_ID = "555"  # the stand-in's Lead Ads form
PAGE_ID = "111222333444555"
GENERATED = tuple(
    dict.fromkeys(
        (
            "META_APP_SECRET",
            "META_VERIFY_TOKEN",
            "META_PAGE_ACCESS_TOKEN",
            "LEADRELAY_ADMIN_TOKEN",
            "LEADRELAY_API_TOKEN",
            *SECRET_SETTINGS,  # every source's secret and token, from the registry
        )
    )
)


def wanted(environ: Mapping[str, str]) -> bool:
    """No Meta setting given: the sandbox is what the user gets."""
    return not any(environ.get(name, "").strip() for name in META_SETTINGS)


def active(environ: Mapping[str, str]) -> bool:
    """Wanted (before its settings are filled in), or filled in already."""
    return environ.get("LEADRELAY_SANDBOX", "").strip() == "1" or wanted(environ)


def read(directory: Path) -> dict:
    path = directory / FILE
    return {k: v for k, v in dotenv_values(path).items() if v is not None} if path.is_file() else {}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# Secrets that are Basic credentials (Pipedrive's webhook): generated as user:password.
_USER_PASSWORD = {s.secret_setting for s in SOURCES.values() if s.traits.secret_shape == "user:pass"}


def _generated(name: str) -> str:
    value = PREFIX + secrets.token_urlsafe(18)
    return f"{value}:{secrets.token_urlsafe(12)}" if name in _USER_PASSWORD else value


def ensure(directory: Path) -> dict:
    """The sandbox's settings, generated on first use (owner-only file); a file from an
    earlier release gets the secrets it lacks (new sources) added, the rest kept."""
    kept = read(directory)
    if kept:
        missing = [name for name in GENERATED if name not in kept]
        if missing:
            added = {name: _generated(name) for name in missing}
            with (directory / FILE).open("a") as handle:
                handle.writelines(f"{name}={value}\n" for name, value in added.items())
            kept = {**kept, **added}
        return kept
    values = {name: _generated(name) for name in GENERATED}
    values.update(
        {"META_DATASET_ID": DATASET_ID, "META_GRAPH_URL": f"http://127.0.0.1:{_free_port()}", "LEADRELAY_SANDBOX": "1"}
    )
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(
            "# leadrelay's local sandbox, generated once by `leadrelay run` with no Meta settings.\n"
            "# Nothing here reaches Meta. Delete this file to start over with new secrets.\n"
        )
        handle.writelines(f"{name}={value}\n" for name, value in values.items())
    return values


def standin_port(environ: Mapping[str, str]) -> int:
    return int(environ["META_GRAPH_URL"].rsplit(":", 1)[1].strip("/"))


def banner(environ: Mapping[str, str], web: str, redis_url: str, directory: Path) -> str:
    """What a person starting `make run` with nothing set needs to know, and try next."""
    admin = environ.get("LEADRELAY_ADMIN_TOKEN", "")
    return "\n".join(
        [
            "",
            "  leadrelay sandbox: no Meta settings were given, so nothing here reaches Meta.",
            f"  Lead reads go to a stand-in Graph API on {environ.get('META_GRAPH_URL')}; events are kept (dry-run).",
            f"  Secrets were generated once into {directory / FILE}.",
            "",
            f"  admin page   {web}/admin   token: {admin}",
            f"  webhooks     {web}/webhooks/meta   (and /webhooks/typeform, /webhooks/tally, /webhooks/googleads)",
            f"  redis        {redis_url}   (rq info -u {redis_url}; rq-dashboard --json -u {redis_url})",
            "",
            "  In another terminal:",
            "    .venv/bin/leadrelay send-test meta               a signed Lead Ads webhook and its lead",
            "    .venv/bin/leadrelay dry-run                      the Lead event it became, with lead_id",
            "    .venv/bin/leadrelay send-test stages             QualifiedLead, Schedule, Purchase for it",
            "    .venv/bin/leadrelay send-test hubspot            the same from a HubSpot deal (and pipedrive)",
            "    .venv/bin/leadrelay send-test meta --no-webhook  a lead whose webhook never came; then "
            "`leadrelay sweep`",
            "    .venv/bin/leadrelay send-test meta --fail auth   a refused token; 10 s later "
            "`leadrelay replay --reason auth`",
            "    .venv/bin/leadrelay send-test readiness          a month of a funnel; then `leadrelay readiness`",
            "    .venv/bin/leadrelay send-test google             a Google Ads lead and its stages, kept for Google",
            "    .venv/bin/leadrelay doctor                       every check, with the fix for each",
            "",
            "  Going live: put your Meta settings in .env (docs/configuration.md); the sandbox then switches off.",
            "",
        ]
    )
