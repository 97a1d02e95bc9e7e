"""`leadrelay run`: the web process, a worker and (unless REDIS_URL is set) an embedded
Redis together, and in the sandbox the Graph stand-in; one stops, all stop."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from workers.common import logs
from workers.common.queues import connect
from workers.config import environment, sandbox
from workers.config.needed import ConfigError
from workers.config.settings import Settings
from workers.engine import recovery
from workers.run import redisowner, webserver
from workers.run.embedded_redis import EmbeddedRedis
from workers.run.worker import on_stop_signal

log = logs.get(__name__)

WEB_URL_FILE = "web.url"  # where `leadrelay send-test` finds the running web process


def _say_where(base: str, settings: Settings) -> None:
    """One line with the addresses a person starting `make run` looks for."""
    log.info(
        "serving",
        webhooks=f"{base}/webhooks/meta",
        metrics=f"{base}/metrics",
        admin=f"{base}/admin" if settings.admin_token else "off (set LEADRELAY_ADMIN_TOKEN)",
        stage_api=f"{base}/api/v1/stage-events" if settings.api_token else "off (set LEADRELAY_API_TOKEN)",
    )


def run_all(settings: Settings, bind: str, data_dir: Path) -> int:
    """Web and worker together, on an embedded Redis unless REDIS_URL is set; in the
    sandbox, with the Graph stand-in in this process.

    Ctrl-C (or SIGTERM) stops the web and worker, then Redis; if either process
    dies, the others are stopped too and the exit status is non-zero.
    """
    if webserver.taken(bind):
        raise RuntimeError(
            f"{bind} is in use (another leadrelay?); listen elsewhere with "
            f"`leadrelay run --bind 127.0.0.1:8001`, or LEADRELAY_BIND=127.0.0.1:8001 make run"
        )
    embedded = standin = None
    # The children read this process's settings and data folder, from any working folder.
    env = {**os.environ, "LEADRELAY_BIND": bind, environment.DATA_DIR: str(environment.base_dir())}
    if not settings.redis_url:
        embedded = EmbeddedRedis(data_dir)
        env["REDIS_URL"] = embedded.start()
        log.info("embedded_redis", url=env["REDIS_URL"], data_dir=str(data_dir))
    try:
        connection = connect(env["REDIS_URL"])
        redisowner.usable(connection, settings, str(data_dir), "run")
    except ConfigError:
        if embedded:
            embedded.stop()
        raise
    if settings.sandbox:
        from workers.standin.server import GraphStandin  # the sandbox's alone: no worker loads it

        standin = GraphStandin(any_lead=True)  # leads survive a restart of the sandbox as sample leads
        standin.page_forms[sandbox.PAGE_ID] = [sandbox.FORM_ID]  # listed, so the sweep reads its leads
        standin.start(sandbox.standin_port(env))
    base = webserver.base_url(bind)
    claimed = claim_web_url(data_dir, base)
    # Children get their own sessions so a terminal's Ctrl-C reaches only us; we then
    # stop them in order (web and worker gracefully, Redis last).
    children = [
        subprocess.Popen([webserver.script("leadrelay"), role], env=env, start_new_session=True)
        for role in ("web", "worker")
    ]
    _say_where(base, settings)
    if settings.sandbox and webserver.healthy(base, children):
        print(sandbox.banner(env, base, env["REDIS_URL"], data_dir), flush=True)
        if webserver.every_interface(bind):  # its admin token is printed above: say who else can use it
            print(
                f"  Listening on every interface ({bind}): anyone on this network reaches the sandbox's "
                "admin page and webhooks. LEADRELAY_BIND=127.0.0.1:8000 keeps it to this machine.",
                flush=True,
            )
    stopping = False

    def _stop(signum, frame):
        nonlocal stopping
        stopping = True

    on_stop_signal(_stop)
    status = 0
    try:
        while not stopping:
            exited = [c for c in children if c.poll() is not None]
            if exited:
                status = exited[0].returncode or 1
                log.error("process_exited", pid=exited[0].pid, status=exited[0].returncode)
                break
            time.sleep(0.2)
    finally:
        for child in children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)  # gunicorn and RQ both shut down gracefully on TERM
        for child in children:
            try:
                child.wait(timeout=30)
            except subprocess.TimeoutExpired:
                child.kill()
        if standin:
            standin.stop()
        if embedded:
            embedded.stop()
        if claimed:
            release_web_url(data_dir)
        log.info("stopped", status=status)
    return status


def web_url(data_dir: Path) -> tuple[str, int] | None:
    """The running `leadrelay run`'s address and pid, as it wrote them; None without one."""
    try:
        url, pid = (data_dir / WEB_URL_FILE).read_text().split()[:2]
        return url, int(pid)
    except (OSError, ValueError):
        return None


def claim_web_url(data_dir: Path, base: str) -> bool:
    """Say where this run's web process listens, for `leadrelay send-test`, unless another
    live `leadrelay run` already says so (a second run on another port must not point
    the first one's commands at itself, nor leave its address behind when it stops).
    The folder is made if needed: a live run (REDIS_URL set) in a fresh checkout or an
    empty folder has none yet. True when this run wrote it."""
    current = web_url(data_dir)
    if current and current[1] != os.getpid() and recovery.pid_alive(current[1]):
        log.warning("web_url_kept", url=current[0], detail="another leadrelay run owns it; send-test --url reaches us")
        return False
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / WEB_URL_FILE).write_text(f"{base}\n{os.getpid()}\n")
    return True


def release_web_url(data_dir: Path) -> None:
    """Remove the address when it is still this run's."""
    current = web_url(data_dir)
    if current and current[1] == os.getpid():
        (data_dir / WEB_URL_FILE).unlink(missing_ok=True)
