"""The receiver's own Redis connections, for its one call per request (inbox.admit).

Notes: docs/internals/intake.md
"""

from __future__ import annotations

import os
import socket
import time

import hiredis
import redis

_YIELD_SECONDS = 0.00001  # a timer, yet nothing a sender would notice


class RequestRedis:
    """`execute_command(*args)`: the raw answer, as redis-py's client gives it for
    commands without a response callback (EVALSHA, say).

    Raises:
        redis.ConnectionError: Redis could not be reached, twice (a connection Redis
            closed while idle is retried once, on a fresh one).
        redis.TimeoutError: no answer within the client's socket timeout; not retried,
            so a slow Redis costs the sender one wait, not two, before its 503.
        redis.ResponseError: Redis refused the command.
    """

    def __init__(self, client: redis.Redis):
        pool = client.connection_pool
        self._new = lambda: pool.connection_class(**pool.connection_kwargs)
        self._idle: list = []
        self._pid = os.getpid()

    def execute_command(self, *args):
        if self._pid != os.getpid():  # a forked child never shares its parent's sockets
            self._idle, self._pid = [], os.getpid()
        # Under gevent this yields once to the event loop and resumes on a later turn, so
        # other requests' next steps run in between and a web process answers closer to the
        # order requests came. Without a yield a request ran from its body to its Redis call
        # in one go while older ones waited. A short timer rather than sleep(0), which
        # resumes within the same turn: wrk's 32 connections, three interleaved runs, p99
        # 46-77 ms with the timer, 78-92 with sleep(0) (142-148 with neither), at the same
        # throughput. A latency figure, not a guaranteed order: it lives in bench/ingest.py.
        time.sleep(_YIELD_SECONDS)
        try:
            return self._once(args)
        except redis.ConnectionError:
            stale, self._idle = self._idle, []
            for connection in stale:
                connection.disconnect()
            return self._once(args)

    def _make(self):
        # Connected here, through the class's own connect(): a Sentinel-managed one asks
        # the Sentinels where the primary is there (sending connects to its default host).
        connection = self._new()
        connection.connect()
        return connection

    def _once(self, args):
        connection = self._idle.pop() if self._idle else self._make()
        try:
            # `_sock`: redis-py's connected socket (TLS-wrapped under rediss://), a private
            # name of a locked version; tests/intake/test_requestredis.py runs every path.
            answer = _roundtrip(connection._sock, hiredis.pack_command(args))
        except BaseException:
            connection.disconnect()
            raise
        self._idle.append(connection)  # an answer read in full, an error answer (NOSCRIPT) too
        if isinstance(answer, hiredis.ReplyError):
            raise _refusal(str(answer))
        return answer


def _roundtrip(sock, command: bytes):
    """Send one packed command and read its one answer whole.

    Raises:
        redis.TimeoutError: no answer within the socket's timeout.
        redis.ConnectionError: the socket broke, Redis closed it, or answered READONLY.
    """
    reader = hiredis.Reader()
    try:
        sock.sendall(command)
        while True:
            data = sock.recv(65536)
            if not data:
                raise redis.ConnectionError("Redis closed the connection")
            reader.feed(data)
            answer = reader.gets()
            if answer is not False:
                break
    except socket.timeout:
        raise redis.TimeoutError("no answer from Redis in time") from None
    except OSError as err:
        raise redis.ConnectionError(f"Redis connection failed ({type(err).__name__})") from None
    if isinstance(answer, hiredis.ReplyError) and str(answer).startswith("READONLY"):
        raise redis.ConnectionError("the server is a replica now (READONLY)")
    return answer


def _refusal(text: str) -> redis.ResponseError:
    """redis-py's exception for an error answer: NOSCRIPT is the one a caller acts on."""
    return redis.exceptions.NoScriptError(text) if text.startswith("NOSCRIPT") else redis.ResponseError(text)
