"""deploy/kubernetes/leadrelay.yaml: valid against the Kubernetes API's schemas (offline,
kubernetes-validate's bundled schemas, strict: no field Kubernetes would drop), and saying
what the compose file says: the same commands, probes on the web's health routes, two of
each, a disruption budget for each, settings by reference only."""

from pathlib import Path

import kubernetes_validate
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = list(yaml.safe_load_all((ROOT / "deploy" / "kubernetes" / "leadrelay.yaml").read_text()))
KINDS = {(doc["kind"], doc["metadata"]["name"]): doc for doc in DOCS}


@pytest.mark.parametrize("version", ["1.29", "1.33"])
@pytest.mark.parametrize("doc", DOCS, ids=lambda d: f"{d['kind']}/{d['metadata']['name']}")
def test_each_manifest_is_valid_kubernetes(doc, version):
    kubernetes_validate.validate(doc, version, strict=True)


def _container(name: str) -> dict:
    [container] = KINDS[("Deployment", f"leadrelay-{name}")]["spec"]["template"]["spec"]["containers"]
    return container


def test_web_and_worker_run_the_commands_the_image_and_compose_run():
    compose = yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text())["services"]
    assert _container("web")["command"] == compose["web"]["command"]
    assert _container("worker")["command"] == compose["worker"]["command"]


def test_web_is_live_on_healthz_and_ready_only_with_redis():
    web = _container("web")
    assert web["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert web["readinessProbe"]["httpGet"]["path"] == "/readyz"


def test_two_of_each_and_a_drain_never_takes_them_all():
    for name in ("web", "worker"):
        assert KINDS[("Deployment", f"leadrelay-{name}")]["spec"]["replicas"] >= 2
        budget = KINDS[("PodDisruptionBudget", f"leadrelay-{name}")]["spec"]
        assert budget["minAvailable"] == 1


def test_no_secret_is_written_in_the_manifests():
    for name in ("web", "worker"):
        container = _container(name)
        assert container["envFrom"] == [{"secretRef": {"name": "leadrelay-settings"}}]
        assert not any(e["name"].startswith(("META_", "REDIS_URL")) for e in container.get("env", []))
