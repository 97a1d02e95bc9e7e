"""REDIS_URL: one Redis (`redis://`, `rediss://`, `unix://`), or a Sentinel-watched primary.

Notes: docs/internals/common.md
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import parse_qs, unquote, urlsplit

import redis
from redis.connection import SSLConnection
from redis.sentinel import Sentinel, SentinelManagedConnection

SCHEMES = ("redis", "rediss", "unix", "redis+sentinel", "rediss+sentinel")
SENTINEL_SCHEMES = ("redis+sentinel", "rediss+sentinel")
DEFAULT_SENTINEL_PORT = 26379
_OPTIONS = {"sentinel_password", "sentinel_username", "ssl_ca_certs"}
_USERINFO = re.compile(r"^(?P<scheme>[a-z+]+://)(?P<user>[^:@/]*):(?P<password>[^@/]*)@")


@dataclass(frozen=True)
class SentinelURL:
    sentinels: tuple[tuple[str, int], ...]
    master: str
    db: int = 0
    username: str | None = None
    password: str | None = None
    tls: bool = False
    options: dict = field(default_factory=dict)


class _Managed(SentinelManagedConnection):
    """redis-py's Sentinel connection, but dropped when a read is interrupted, as its plain
    connection is: the Sentinel one keeps the socket by default, so a stop signal that
    lands while a worker blocks in BLMOVE left that answer unread, and RQ's goodbye then
    read it as its own ("Wrong number of response items"), and the worker started again
    instead of stopping."""

    def read_response(self, *args, disconnect_on_error: bool = True, **kwargs):
        return super().read_response(*args, disconnect_on_error=disconnect_on_error, **kwargs)


class _ManagedTLS(_Managed, SSLConnection):
    pass


def is_sentinel(url: str) -> bool:
    return url.split("://", 1)[0] in SENTINEL_SCHEMES


def parse_sentinel(url: str) -> SentinelURL:
    """The parts of a `redis+sentinel://` URL.

    Raises:
        ValueError: what is wrong with it, in words for the operator.
    """
    parts = urlsplit(url)
    hosts = parts.netloc.rsplit("@", 1)[-1]
    sentinels = []
    for host in filter(None, hosts.split(",")):
        name, _, port = host.rpartition(":") if ":" in host else (host, "", str(DEFAULT_SENTINEL_PORT))
        if not name or not port.isdigit():
            raise ValueError(f"a Sentinel must be host or host:port, got {host!r}")
        sentinels.append((name.strip("[]"), int(port)))
    if not sentinels:
        raise ValueError("name at least one Sentinel: redis+sentinel://host:26379,host2:26379/master-name")
    path = [unquote(piece) for piece in parts.path.strip("/").split("/") if piece]
    if not path or len(path) > 2 or (len(path) == 2 and not path[1].isdigit()):
        raise ValueError("the path must be the primary's name, and optionally a database: /mymaster or /mymaster/0")
    options = {key: values[-1] for key, values in parse_qs(parts.query).items()}
    unknown = set(options) - _OPTIONS
    if unknown:
        raise ValueError(f"unknown option {sorted(unknown)[0]!r} (known: {', '.join(sorted(_OPTIONS))})")
    return SentinelURL(
        sentinels=tuple(sentinels),
        master=path[0],
        db=int(path[1]) if len(path) == 2 else 0,
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password else None,
        tls=parts.scheme == "rediss+sentinel",
        options=options,
    )


def check(url: str) -> None:
    """Raises ValueError, in words, when REDIS_URL is not a form this module connects to."""
    scheme = url.split("://", 1)[0] if "://" in url else ""
    if scheme not in SCHEMES:
        raise ValueError(f"must be a URL starting with {' or '.join(s + '://' for s in SCHEMES)}")
    if scheme in SENTINEL_SCHEMES:
        parse_sentinel(url)
    elif not urlsplit(url).netloc and not urlsplit(url).path:
        raise ValueError("names no host")


def client(url: str, **timeouts) -> redis.Redis:
    """A client for REDIS_URL: redis-py's own for one server; for Sentinel, one that asks
    the Sentinels for the primary and asks again when it fails over."""
    if not is_sentinel(url):
        return redis.Redis.from_url(url, **timeouts)
    found = parse_sentinel(url)
    tls = {"ssl": True, **({"ssl_ca_certs": found.options["ssl_ca_certs"]} if "ssl_ca_certs" in found.options else {})}
    asking = {
        key: value
        for key, value in (
            ("username", found.options.get("sentinel_username")),
            ("password", found.options.get("sentinel_password")),
        )
        if value
    }
    sentinel = Sentinel(
        list(found.sentinels),
        sentinel_kwargs={**timeouts, **asking, **(tls if found.tls else {})},
        **timeouts,
    )
    return sentinel.master_for(
        found.master,
        connection_class=_ManagedTLS if found.tls else _Managed,
        db=found.db,
        username=found.username,
        password=found.password,
        **(tls if found.tls else {}),
        **timeouts,
    )


def masked(url: str) -> str:
    """The URL with its passwords replaced by ***: where it points, not how to get in."""
    shown = _USERINFO.sub(lambda m: f"{m['scheme']}{m['user']}:***@" if m["password"] else m[0], url)
    return re.sub(r"(sentinel_password=)[^&]*", r"\1***", shown)


def topology(connection: redis.Redis, url: str) -> str:
    """One line on where REDIS_URL leads: for Sentinel, the primary's address and how many
    Sentinels and replicas watch it; else the server's role and its replicas.

    Raises:
        redis.RedisError: Redis (or every Sentinel) did not answer.
    """
    info = connection.info("replication")
    replicas = int(info.get("connected_slaves", 0))
    if not is_sentinel(url):
        return f"{info.get('role', '?')}, {replicas} connected replica{'s' * (replicas != 1)}"
    pool = connection.connection_pool
    host, port = pool.get_master_address()
    sentinels = pool.sentinel_manager.sentinels
    answering = 0
    for sentinel in sentinels:
        try:
            sentinel.ping()
            answering += 1
        except redis.RedisError:
            pass
    found = parse_sentinel(url)
    return (
        f"Sentinel primary {found.master!r} at {host}:{port}, {replicas} connected replica"
        f"{'s' * (replicas != 1)}, {answering} of {len(sentinels)} Sentinels answering"
    )
