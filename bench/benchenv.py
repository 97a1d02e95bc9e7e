"""The settings the bench scripts run leadrelay with, named once: a stand-in Graph API, an
embedded Redis, a data folder of their own, no sweep or watch of their own, and nothing
of the caller's environment that could point them elsewhere. The log level is the
shipped one: the product as it runs."""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path


def service_env(redis_url: str, graph_url: str, data: str, dataset_id: str = "4242424242") -> dict:
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith(("META_", "LEADRELAY_"))},
        "REDIS_URL": redis_url,
        "META_APP_SECRET": "bench-secret",
        "META_VERIFY_TOKEN": "bench-verify",
        "META_PAGE_ACCESS_TOKEN": "bench-page-token",
        "META_DATASET_ID": dataset_id,
        "META_CAPI_ACCESS_TOKEN": "bench-capi-token",
        "META_GRAPH_URL": graph_url,
        "LEADRELAY_ENV_FILE": "",
        "LEADRELAY_DATA_DIR": data,
        "LEADRELAY_SWEEP_SECONDS": "0",
        "LEADRELAY_WATCH_SECONDS": "0",
    }


def stop_all(processes) -> None:
    """TERM every process, then wait for each: a minute, then KILL."""
    import signal
    import subprocess

    for process in processes:
        process.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()


def app_on(redis_url: str, data: str):
    """The web app on that Redis, in this process (no Graph call is made)."""
    os.environ.update(service_env(redis_url, "http://127.0.0.1:9", data))
    from webhook_app import create_app

    return create_app()


@contextmanager
def service_redis():
    """An embedded Redis in a temporary data folder, this process's environment pointed at it
    as the service's (no Graph call is made); yields a client connected as the service
    connects (its timeouts) and the mapping's routes. Import the tree to measure first."""
    from workers.run.embedded_redis import EmbeddedRedis

    with tempfile.TemporaryDirectory() as data, EmbeddedRedis(Path(data) / "redis") as server:
        os.environ.update(service_env(server.url, "http://127.0.0.1:9", data))
        from workers.common.queues import connect
        from workers.config.mappingfile import validate
        from workers.config.settings import load

        yield connect(server.url), validate(load())["routes"]


@contextmanager
def running_against(graph):
    """Start the Graph stand-in `graph` and an embedded Redis in a temporary folder; yield
    (the Redis URL, the settings that reach both, also put in this process's environment);
    stop both after."""
    from workers.run.embedded_redis import EmbeddedRedis  # the tree the caller put on sys.path

    base = graph.start()
    with tempfile.TemporaryDirectory() as data:
        server = EmbeddedRedis(Path(data) / "redis")
        url = server.start()
        env = service_env(url, base, data, graph.dataset_id)
        os.environ.update(env)
        try:
            yield url, env
        finally:
            server.stop()
            graph.stop()


def print_scores(cases: int, scores, width: int) -> None:
    """A case set's score: right and wrong in all, then per group (`scores`: a Counter of
    (group, outcome) -> n), the way the unseen-case scripts print it."""
    from collections import Counter

    total = Counter(outcome for (_, outcome), n in scores.items() for _ in range(n))
    print(f"{cases} cases: {total['right']} right, {total['wrong']} wrong")
    for group in sorted({group for group, _ in scores}):
        print(f"  {group:{width}} " + ", ".join(f"{n} {o}" for (k, o), n in sorted(scores.items()) if k == group))
