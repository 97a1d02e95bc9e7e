"""Settings from the environment, checked once at start.

Notes: docs/internals/config.md
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Callable, Mapping
from urllib.parse import urlparse

import phonenumbers

from workers.common import redisurl
from workers.common.policy import QUEUE_NAME
from workers.config import sandbox
from workers.config.needed import ConfigError, problems

DEFAULT_GRAPH_URL = "https://graph.facebook.com"
# v26.0 shipped 2026-07-29 (Meta's changelog); Marketing API versions expire within a year.
DEFAULT_API_VERSION = "v26.0"
DEFAULT_GOOGLE_URL = "https://datamanager.googleapis.com"  # Google's Data Manager API


@dataclass(frozen=True)
class Settings:
    redis_url: str = ""
    # Each webhook source's signing secrets, by source name, read from the setting the
    # source registry names (META_APP_SECRET, TYPEFORM_SECRET...).
    source_secrets: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
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
    sweep_seconds: int = 300  # how often the sweep reads every form's leads (0: never)
    sweep_grace_seconds: int = 600  # leads younger than this are left to their webhook
    retry_base_seconds: float = 30.0
    admin_token: str = ""
    allow_unsigned: tuple[str, ...] = ()
    config_path: str = ""
    dead_letter_retention_days: int = 7
    audit_retention_days: int = 365
    api_token: str = ""
    metrics_token: str = ""
    queue_name: str = QUEUE_NAME
    log_level: str = "INFO"
    sandbox: bool = False  # the local sandbox's generated settings (workers/config/sandbox.py)
    admin_cookie_secure: bool = True  # browsers send the admin cookie over HTTPS only
    trusted_proxies: int = 0  # proxies in front whose X-Forwarded-For names the client
    allow_unsafe_redis: bool = False  # run on a Redis that can lose writes (redissafety.py)
    body_timeout_seconds: float = 10.0  # a request body must have arrived whole by then (408)
    token_warn_days: int = 7  # a token that expires sooner is a problem (doctor, the watch)
    watch_seconds: int = 21600  # how often a worker checks tokens and Page subscriptions (0: never)
    source_silent_hours: float = 48.0  # a stage source silent this long while leads come is flagged
    drain_slots: int = 0  # drain jobs at most at once; 0: one per live worker, at least 4
    # Replicas a write must reach before it is acknowledged; -1: auto (replication.py).
    replica_acks: int = -1
    replica_ack_timeout_ms: int = 1000
    # CRM sources that read people back (the registry's `client` lines): the token each reads
    # people back with, and its API's address (the vendor's, or the sandbox's stand-in), by source name.
    crm_tokens: Mapping[str, str] = field(default_factory=dict)
    crm_urls: Mapping[str, str] = field(default_factory=dict)
    # A CRM whose read-back token is issued from client credentials (Salesforce): (id, secret).
    crm_oauth: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    # The address senders call us at, when a proxy in front changes it: HubSpot signs the
    # URL it called (https://leads.example.com), not the one this process sees.
    public_url: str = ""
    # Google's Data Manager API: a service account's key file (Google's own variable), and
    # where the API is (the sandbox's stand-in, a test's).
    google_credentials: str = ""
    google_url: str = DEFAULT_GOOGLE_URL

    @property
    def app_secrets(self) -> tuple[str, ...]:
        """The Meta app's secrets: they sign its webhooks."""
        return self.source_secrets.get("meta", ())

    @property
    def dry_run(self) -> bool:
        """Without a CAPI token events are built and kept, never sent."""
        return not self.capi_access_token

    def masked(self) -> dict:
        """A summary safe to print: secrets reduced to whether they are set."""
        secret = {"verify_token", "page_access_token", "capi_access_token", "admin_token", "api_token", "metrics_token"}
        out = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            out[name] = ("set" if value else "unset") if name in secret else value
        out["crm_tokens"] = {name: "set" if value else "unset" for name, value in self.crm_tokens.items()}
        out["crm_oauth"] = {name: "set" if all(pair) else "unset" for name, pair in self.crm_oauth.items()}
        out["source_secrets"] = {name: "set" if value else "unset" for name, value in self.source_secrets.items()}
        out["redis_url"] = redisurl.masked(self.redis_url)
        return out


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


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = _text(env, name).lower()
    if not raw:
        return default
    if raw not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
        raise ConfigError(name, f"must be 1 or 0, got {raw!r}")
    return raw in ("1", "true", "yes", "on")


def _check_url(name: str, value: str, schemes: tuple[str, ...]) -> str:
    parsed = urlparse(value)
    if parsed.scheme not in schemes or not (parsed.netloc or parsed.path):
        raise ConfigError(name, f"must be a URL starting with {' or '.join(s + '://' for s in schemes)}")
    return value.rstrip("/")


def load(
    env: Mapping[str, str] | None = None,
    role: str | tuple[str, ...] | None = None,
    skip: tuple[str, ...] = (),
    found: list | None = None,
) -> Settings:
    """Read and check settings; with a role (or several), also require what it needs.
    With `found`, problems are added to it instead of raised (`leadrelay doctor` goes on
    with every other check), and malformed settings take their defaults.

    Raises:
        ConfigError: naming every setting that is missing (for the role) or malformed.
    """
    from workers.sources.registry import CRM_SOURCES, SOURCES, UNSIGNED_ALLOWED  # loaded when settings are read

    env = os.environ if env is None else env
    errors: list[ConfigError] = []

    def checked(check: Callable, default=""):
        try:
            return check()
        except ConfigError as err:
            errors.append(err)
            return default

    def allow_unsigned():
        names = tuple(s.lower() for s in _list(env, "LEADRELAY_ALLOW_UNSIGNED"))
        for source in names:
            if source not in UNSIGNED_ALLOWED:
                raise ConfigError(
                    "LEADRELAY_ALLOW_UNSIGNED", f"names sources among {', '.join(UNSIGNED_ALLOWED)}, got {source!r}"
                )
        return names

    def dataset_id():
        value = _text(env, "META_DATASET_ID")
        if value and not value.isdigit():
            raise ConfigError("META_DATASET_ID", "must be the numeric dataset (pixel) id")
        return value

    def version():
        value = _text(env, "META_API_VERSION", DEFAULT_API_VERSION)
        if not re.fullmatch(r"v\d+\.\d+", value):
            raise ConfigError("META_API_VERSION", f"must look like v26.0, got {value!r}")
        return value

    def region():
        value = _text(env, "LEADRELAY_DEFAULT_REGION", "US").upper()
        if value not in phonenumbers.SUPPORTED_REGIONS:
            raise ConfigError("LEADRELAY_DEFAULT_REGION", f"must be a two-letter country code, got {value!r}")
        return value

    def redis_url():
        value = _text(env, "REDIS_URL")
        try:
            redisurl.check(value) if value else None
        except ValueError as err:
            raise ConfigError("REDIS_URL", str(err)) from None
        return value.rstrip("/")

    def replica_acks():
        value = _text(env, "LEADRELAY_REPLICA_ACKS", "auto").lower()
        if value == "auto":
            return -1
        if not value.isdigit():
            raise ConfigError(
                "LEADRELAY_REPLICA_ACKS", f"must be auto or a number of replicas (0: no wait), got {value!r}"
            )
        return int(value)

    def log_level():
        value = _text(env, "LEADRELAY_LOG_LEVEL", "INFO").upper()
        if value not in {"DEBUG", "INFO", "WARNING", "ERROR"}:
            raise ConfigError("LEADRELAY_LOG_LEVEL", "must be DEBUG, INFO, WARNING or ERROR")
        return value

    def number(name, default, **kw):
        return checked(lambda: _number(env, name, default, **kw), default)

    graph_url = checked(
        lambda: _check_url("META_GRAPH_URL", _text(env, "META_GRAPH_URL", DEFAULT_GRAPH_URL), ("http", "https")),
        DEFAULT_GRAPH_URL,
    )
    in_sandbox = _text(env, "LEADRELAY_SANDBOX") == "1"

    def crm_url(name: str) -> str:
        # The sandbox's stand-in answers every API it reads people from; live, the vendor's.
        setting, default = f"{name.upper()}_API_URL", graph_url if in_sandbox else SOURCES[name].module.API_URL
        return checked(lambda: _check_url(setting, _text(env, setting, default), ("http", "https")), default)

    google_default = graph_url if in_sandbox else DEFAULT_GOOGLE_URL

    def google_credentials():
        value = _text(env, "GOOGLE_APPLICATION_CREDENTIALS")
        if value and not os.path.isfile(value):
            raise ConfigError("GOOGLE_APPLICATION_CREDENTIALS", "names no file: give the service account's key file")
        return value

    def public_url():
        value = _text(env, "LEADRELAY_PUBLIC_URL")
        return _check_url("LEADRELAY_PUBLIC_URL", value, ("http", "https")) if value else value

    settings = Settings(
        redis_url=checked(redis_url),
        source_secrets={name: _list(env, source.secret_setting) for name, source in SOURCES.items()},
        verify_token=_text(env, "META_VERIFY_TOKEN"),
        page_access_token=_text(env, "META_PAGE_ACCESS_TOKEN"),
        dataset_id=checked(dataset_id),
        capi_access_token=_text(env, "META_CAPI_ACCESS_TOKEN"),
        test_event_code=_text(env, "META_TEST_EVENT_CODE"),
        graph_url=graph_url,
        api_version=checked(version, DEFAULT_API_VERSION),
        default_region=checked(region, "US"),
        lead_event_source=_text(env, "LEADRELAY_LEAD_EVENT_SOURCE", "leadrelay"),
        max_body_bytes=number("LEADRELAY_MAX_BODY_BYTES", 4 * 1024 * 1024),
        profile_retention_days=number("LEADRELAY_PROFILE_RETENTION_DAYS", 90),
        graph_timeout_seconds=number("LEADRELAY_GRAPH_TIMEOUT_SECONDS", 10.0, kind=float, minimum=0.1),
        dry_run_keep=number("LEADRELAY_DRY_RUN_KEEP", 200),
        sweep_seconds=number("LEADRELAY_SWEEP_SECONDS", 300, minimum=0),
        # The sandbox's sample leads are made and announced at once: a short grace shows the
        # sweep recovering a lead whose webhook never came (send-test meta --no-webhook).
        sweep_grace_seconds=number("LEADRELAY_SWEEP_GRACE_SECONDS", 5 if in_sandbox else 600, minimum=0),
        retry_base_seconds=number("LEADRELAY_RETRY_BASE_SECONDS", 30.0, kind=float, minimum=0.01),
        admin_token=_text(env, "LEADRELAY_ADMIN_TOKEN"),
        allow_unsigned=checked(allow_unsigned, ()),
        config_path=_text(env, "LEADRELAY_CONFIG"),
        dead_letter_retention_days=number("LEADRELAY_DEAD_LETTER_RETENTION_DAYS", 7),
        audit_retention_days=number("LEADRELAY_AUDIT_RETENTION_DAYS", 365),
        api_token=_text(env, "LEADRELAY_API_TOKEN"),
        metrics_token=_text(env, "LEADRELAY_METRICS_TOKEN"),
        queue_name=_text(env, "LEADRELAY_QUEUE", QUEUE_NAME),
        log_level=checked(log_level, "INFO"),
        sandbox=in_sandbox,
        # The sandbox serves plain HTTP on loopback; a deployment is behind HTTPS.
        admin_cookie_secure=checked(
            lambda: _flag(env, "LEADRELAY_ADMIN_COOKIE_SECURE", _text(env, "LEADRELAY_SANDBOX") != "1"), True
        ),
        trusted_proxies=number("LEADRELAY_TRUSTED_PROXIES", 0, minimum=0),
        allow_unsafe_redis=checked(lambda: _flag(env, "LEADRELAY_ALLOW_UNSAFE_REDIS", False), False),
        body_timeout_seconds=number("LEADRELAY_BODY_TIMEOUT_SECONDS", 10.0, kind=float, minimum=0.1),
        crm_tokens={
            name: _text(env, SOURCES[name].token_setting) for name in CRM_SOURCES if SOURCES[name].token_setting
        },
        crm_urls={name: crm_url(name) for name in CRM_SOURCES if SOURCES[name].token_setting},
        crm_oauth={
            name: (_text(env, f"{name.upper()}_OAUTH_CLIENT_ID"), _text(env, f"{name.upper()}_OAUTH_CLIENT_SECRET"))
            for name in CRM_SOURCES
            if SOURCES[name].traits.oauth_token_path
        },
        public_url=checked(public_url),
        google_credentials=checked(google_credentials),
        google_url=checked(
            lambda: _check_url(
                "GOOGLE_DATAMANAGER_URL", _text(env, "GOOGLE_DATAMANAGER_URL", google_default), ("http", "https")
            ),
            google_default,
        ),
        token_warn_days=number("LEADRELAY_TOKEN_WARN_DAYS", 7, minimum=0),
        watch_seconds=number("LEADRELAY_WATCH_SECONDS", 21600, minimum=0),
        source_silent_hours=number("LEADRELAY_SOURCE_SILENT_HOURS", 48.0, kind=float, minimum=1),
        drain_slots=number("LEADRELAY_DRAIN_SLOTS", 0, minimum=0),
        replica_acks=checked(replica_acks, -1),
        replica_ack_timeout_ms=number("LEADRELAY_REPLICA_ACK_TIMEOUT_MS", 1000, minimum=1),
    )
    errors.extend(_sandbox_problems(settings, env))
    errors.extend(
        ConfigError(SOURCES[name].secret_setting, problem)
        for name, values in settings.source_secrets.items()
        for problem in SOURCES[name].secret_problems(values)[:1]
    )
    missing = {}
    skip = (*skip, *_routed(settings.config_path))
    for name in (role,) if isinstance(role, str) else role or ():
        missing.update((err.setting, err) for err in problems(settings, name, skip))
    named = {err.setting for err in errors}  # a malformed value is said once, not again as missing
    errors.extend(err for setting, err in missing.items() if setting not in named)
    if found is not None:
        found.extend(errors)
    elif errors:
        raise ConfigError.of(errors)
    return settings


def _routed(path: str) -> tuple[str, ...]:
    """The settings the mapping file's datasets and Pages stand in for; a file that cannot
    be read requires nothing here (the mapping file's own check names what is wrong)."""
    from workers.config import mappingfile, routesfile

    try:
        return routesfile.routed_settings(mappingfile.read(path))
    except ConfigError:
        return ()


def _sandbox_problems(settings: Settings, env: Mapping[str, str]) -> list[ConfigError]:
    """The sandbox and a real Meta account never mix: no real CAPI token in the sandbox,
    no sandbox secret or stand-in beside real settings."""
    if settings.sandbox:
        found = []
        if settings.capi_access_token:
            found.append(
                ConfigError(
                    "META_CAPI_ACCESS_TOKEN",
                    "the sandbox never sends to Meta: going live means "
                    "setting every Meta setting yourself (the sandbox then switches off)",
                )
            )
        if urlparse(settings.graph_url).hostname not in ("127.0.0.1", "localhost", "::1"):
            found.append(
                ConfigError(
                    "META_GRAPH_URL",
                    "the sandbox talks only to its loopback stand-in: remove META_GRAPH_URL (or set every Meta "
                    "setting to go live; deleting data/sandbox/sandbox.env starts a fresh sandbox)",
                )
            )
        return found
    return [
        ConfigError(name, "is the sandbox's generated value (data/sandbox/sandbox.env); set your own")
        for name in sandbox.GENERATED
        if _text(env, name).startswith(sandbox.PREFIX)
    ]
