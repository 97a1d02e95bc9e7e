"""Settings from the environment, checked once at start.

Every setting is documented in the README. A mistake raises ConfigError with the
setting's name, so a deploy fails at start instead of dropping leads later.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Callable, Mapping
from urllib.parse import urlparse, urlsplit, urlunsplit

import phonenumbers

DEFAULT_GRAPH_URL = "https://graph.facebook.com"
# v26.0 shipped 2026-07-29 (spec §6); Marketing API versions expire within a year.
DEFAULT_API_VERSION = "v26.0"

WEB = "web"
WORKER = "worker"

# Which settings each process cannot start without.
REQUIRED = {
    WEB: ("REDIS_URL", "META_APP_SECRET", "META_VERIFY_TOKEN"),
    WORKER: ("REDIS_URL", "META_PAGE_ACCESS_TOKEN", "META_DATASET_ID"),
}


class ConfigError(ValueError):
    """A setting is missing or malformed; the message names it."""

    def __init__(self, setting: str, problem: str):
        super().__init__(f"{setting}: {problem}")
        self.setting = setting


@dataclass(frozen=True)
class Settings:
    redis_url: str = ""
    app_secrets: tuple[str, ...] = ()
    verify_token: str = ""
    page_access_token: str = ""
    dataset_id: str = ""
    capi_access_token: str = ""
    test_event_code: str = ""
    graph_url: str = DEFAULT_GRAPH_URL
    api_version: str = DEFAULT_API_VERSION
    default_region: str = "US"
    lead_event_source: str = "leadrelay"
    max_body_bytes: int = 4 * 1024 * 1024
    profile_retention_days: int = 90
    graph_timeout_seconds: float = 10.0
    dry_run_keep: int = 200
    retry_base_seconds: float = 30.0
    admin_token: str = ""
    typeform_secrets: tuple[str, ...] = ()
    tally_secrets: tuple[str, ...] = ()
    allow_unsigned: tuple[str, ...] = ()
    config_path: str = ""
    dead_letter_retention_days: int = 7
    api_token: str = ""
    metrics_token: str = ""
    queue_name: str = "leadrelay"
    log_level: str = "INFO"

    @property
    def dry_run(self) -> bool:
        """Without a CAPI token events are built and kept, never sent."""
        return not self.capi_access_token

    def masked(self) -> dict:
        """A summary safe to print: secrets reduced to whether they are set."""
        secret = {"app_secrets", "verify_token", "page_access_token", "capi_access_token", "admin_token",
                  "typeform_secrets", "tally_secrets", "api_token", "metrics_token"}
        out = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            out[name] = ("set" if value else "unset") if name in secret else value
        out["redis_url"] = _without_password(self.redis_url)
        return out


def _without_password(url: str) -> str:
    """A managed Redis URL carries its password: show where it points, not how to get in."""
    parts = urlsplit(url)
    if not parts.password:
        return url
    host = parts.hostname + (f":{parts.port}" if parts.port else "")
    user = f"{parts.username}:" if parts.username else ":"
    return urlunsplit(parts._replace(netloc=f"{user}***@{host}"))


def _text(env: Mapping[str, str], name: str, default: str = "") -> str:
    return env.get(name, default).strip()


def _list(env: Mapping[str, str], name: str) -> tuple[str, ...]:
    """A comma-separated setting: secrets accept several, so one can be rotated out."""
    return tuple(part.strip() for part in _text(env, name).split(",") if part.strip())


def _number(env: Mapping[str, str], name: str, default, kind: Callable = int, minimum=1):
    raw = _text(env, name)
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise ConfigError(name, f"must be a number, got {raw!r}") from None
    if value < minimum:
        raise ConfigError(name, f"must be at least {minimum}, got {raw!r}")
    return value


def _check_url(name: str, value: str, schemes: tuple[str, ...]) -> str:
    parsed = urlparse(value)
    if parsed.scheme not in schemes or not (parsed.netloc or parsed.path):
        raise ConfigError(name, f"must be a URL starting with {' or '.join(s + '://' for s in schemes)}")
    return value.rstrip("/")


def load(env: Mapping[str, str] | None = None, role: str | None = None) -> Settings:
    """Read and check settings; with a role, also require what that process needs.

    Raises:
        ConfigError: a setting is missing (for the role) or malformed.
    """
    env = os.environ if env is None else env
    secrets = _list(env, "META_APP_SECRET")
    allow_unsigned = tuple(s.lower() for s in _list(env, "LEADRELAY_ALLOW_UNSIGNED"))
    for source in allow_unsigned:
        if source not in ("typeform", "tally"):
            raise ConfigError("LEADRELAY_ALLOW_UNSIGNED", f"names form sources (typeform, tally), got {source!r}")
    dataset_id = _text(env, "META_DATASET_ID")
    if dataset_id and not dataset_id.isdigit():
        raise ConfigError("META_DATASET_ID", "must be the numeric dataset (pixel) id")
    version = _text(env, "META_API_VERSION", DEFAULT_API_VERSION)
    if not re.fullmatch(r"v\d+\.\d+", version):
        raise ConfigError("META_API_VERSION", f"must look like v26.0, got {version!r}")
    region = _text(env, "LEADRELAY_DEFAULT_REGION", "US").upper()
    if region not in phonenumbers.SUPPORTED_REGIONS:
        raise ConfigError("LEADRELAY_DEFAULT_REGION", f"must be a two-letter country code, got {region!r}")
    redis_url = _text(env, "REDIS_URL")
    if redis_url:
        _check_url("REDIS_URL", redis_url, ("redis", "rediss", "unix"))
    log_level = _text(env, "LEADRELAY_LOG_LEVEL", "INFO").upper()
    if log_level not in {"DEBUG", "INFO", "WARNING", "ERROR"}:
        raise ConfigError("LEADRELAY_LOG_LEVEL", "must be DEBUG, INFO, WARNING or ERROR")

    settings = Settings(
        redis_url=redis_url,
        app_secrets=secrets,
        verify_token=_text(env, "META_VERIFY_TOKEN"),
        page_access_token=_text(env, "META_PAGE_ACCESS_TOKEN"),
        dataset_id=dataset_id,
        capi_access_token=_text(env, "META_CAPI_ACCESS_TOKEN"),
        test_event_code=_text(env, "META_TEST_EVENT_CODE"),
        graph_url=_check_url("META_GRAPH_URL", _text(env, "META_GRAPH_URL", DEFAULT_GRAPH_URL), ("http", "https")),
        api_version=version,
        default_region=region,
        lead_event_source=_text(env, "LEADRELAY_LEAD_EVENT_SOURCE", "leadrelay"),
        max_body_bytes=_number(env, "LEADRELAY_MAX_BODY_BYTES", 4 * 1024 * 1024),
        profile_retention_days=_number(env, "LEADRELAY_PROFILE_RETENTION_DAYS", 90),
        graph_timeout_seconds=_number(env, "LEADRELAY_GRAPH_TIMEOUT_SECONDS", 10.0, kind=float, minimum=0.1),
        dry_run_keep=_number(env, "LEADRELAY_DRY_RUN_KEEP", 200),
        retry_base_seconds=_number(env, "LEADRELAY_RETRY_BASE_SECONDS", 30.0, kind=float, minimum=0.01),
        admin_token=_text(env, "LEADRELAY_ADMIN_TOKEN"),
        typeform_secrets=_list(env, "TYPEFORM_SECRET"),
        tally_secrets=_list(env, "TALLY_SIGNING_SECRET"),
        allow_unsigned=allow_unsigned,
        config_path=_text(env, "LEADRELAY_CONFIG"),
        dead_letter_retention_days=_number(env, "LEADRELAY_DEAD_LETTER_RETENTION_DAYS", 7),
        api_token=_text(env, "LEADRELAY_API_TOKEN"),
        metrics_token=_text(env, "LEADRELAY_METRICS_TOKEN"),
        queue_name=_text(env, "LEADRELAY_QUEUE", "leadrelay"),
        log_level=log_level,
    )
    if role is not None:
        require(settings, role)
    return settings


_ATTRIBUTE = {
    "REDIS_URL": "redis_url",
    "META_APP_SECRET": "app_secrets",
    "META_VERIFY_TOKEN": "verify_token",
    "META_PAGE_ACCESS_TOKEN": "page_access_token",
    "META_DATASET_ID": "dataset_id",
}


def require(settings: Settings, role: str, skip: tuple[str, ...] = ()) -> None:
    """Raises ConfigError naming the first setting the role needs and lacks."""
    for name in REQUIRED[role]:
        if name not in skip and not getattr(settings, _ATTRIBUTE[name]):
            raise ConfigError(name, f"must be set for the {role} process (see README, Configuration)")
