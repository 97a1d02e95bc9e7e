"""The receiver's own Redis connections, for its one call per request (inbox.admit).

redis-py's client does a lot per command besides the command: it takes a connection from
its pool (a lock, metrics bookkeeping, and a poll of the socket to check that nothing is
left unread on it), wraps the call in its retry machinery, and releases it again. Under
gevent, where the poll is a trip through the event loop, a command cost about 145 µs of
CPU that way against 35 µs on a held connection (measured on the 2-core bench machine,
docs/design.md, "Throughput"). At thousands of webhooks a second that is
most of what the receiver adds to bare Flask.

A `RequestRedis` keeps idle redis-py connections (same URL, timeouts and TLS as the client's
pool) and uses each for one whole command at a time: it goes back only after its answer
was read in full, and is dropped on anything else (an error, a timeout, a greenlet killed
in the middle), so a connection with an answer still unread is never reused, which is what
the pool's poll guards against. Everything else in the service uses the client.

When Redis restarts, every idle connection is dead at once: the first one found dead
drops them all, so one request, not one per idle connection, pays for it.
"""

from __future__ import annotations

import os
import time

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
            connection.send_command(*args)
            answer = connection.read_response()
        except redis.ResponseError:  # an answer, read in full (NOSCRIPT, say): the connection is sound
            self._idle.append(connection)
            raise
        except BaseException:
            connection.disconnect()
            raise
        self._idle.append(connection)
        return answer
