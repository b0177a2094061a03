"""deploy/ validated offline, with tools that ship their own schemas.

* Kubernetes manifests: ``kubernetes-validate`` (PyPI) bundles the Kubernetes
  JSON Schemas of every release from 1.25; strict mode refuses unknown fields.
* The compose file: ``check-jsonschema`` (PyPI) vendors the Compose
  Specification's schema (``--builtin-schema vendor.compose-spec``).
* The Dockerfile: no engine here to build it, so its shape is checked.

Beyond the schemas, the pieces must fit together: probes on /readyz and
/healthz, resource requests, autoscalers and disruption budgets aimed at real
Deployments, selectors that match the pods, config from the ConfigMap and
secrets from the Secret, and only settings that docs/operations.md documents.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from .test_docs import documented_settings

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S_VERSION = "1.33.0"


def manifests() -> list[dict]:
    docs = []
    for path in sorted((DEPLOY / "k8s").glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        docs += [d for d in yaml.safe_load_all(path.read_text()) if d]
    return docs


def of_kind(kind: str) -> dict[str, dict]:
    return {d["metadata"]["name"]: d for d in manifests() if d["kind"] == kind}


@pytest.mark.parametrize("doc", manifests(), ids=lambda d: f"{d['kind']}/{d['metadata']['name']}")
def test_each_manifest_is_valid_kubernetes(doc):
    kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


def test_a_broken_manifest_is_refused():
    """The validator is not a rubber stamp."""
    deployment = of_kind("Deployment")["grimoire-service"]
    broken = yaml.safe_load(yaml.safe_dump(deployment))
    broken["spec"]["replicas"] = "two"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, K8S_VERSION, strict=True)
    broken = yaml.safe_load(yaml.safe_dump(deployment))
    broken["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["httpGets"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, K8S_VERSION, strict=True)


def test_kustomization_lists_every_manifest():
    listed = yaml.safe_load((DEPLOY / "k8s" / "kustomization.yaml").read_text())["resources"]
    files = sorted(p.name for p in (DEPLOY / "k8s").glob("*.yaml") if p.name != "kustomization.yaml")
    assert sorted(listed) == files


def test_deployments_probe_request_and_read_config_and_secrets():
    deployments = of_kind("Deployment")
    assert set(deployments) == {"grimoire-service", "grimoire-worker"}
    config, secrets = of_kind("ConfigMap"), of_kind("Secret")
    images = set()
    for name, deployment in deployments.items():
        pod = deployment["spec"]["template"]
        assert deployment["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
        assert pod["spec"]["securityContext"]["runAsNonRoot"] is True
        (container,) = pod["spec"]["containers"]
        images.add(container["image"])
        assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
        assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
        ports = {p["name"] for p in container["ports"]}
        assert {container["readinessProbe"]["httpGet"]["port"], container["livenessProbe"]["httpGet"]["port"]} <= ports
        assert {"cpu", "memory"} <= set(container["resources"]["requests"])
        refs = container["envFrom"]
        assert {r["configMapRef"]["name"] for r in refs if "configMapRef" in r} <= set(config)
        assert {r["secretRef"]["name"] for r in refs if "secretRef" in r} <= set(secrets)
        assert "env" not in container, "settings come from the ConfigMap and the Secret"
    assert len(images) == 1, "one image for the service and the workers"
    assert deployments["grimoire-service"]["spec"]["template"]["spec"]["containers"][0]["args"] == ["serve"]
    assert deployments["grimoire-worker"]["spec"]["template"]["spec"]["containers"][0]["args"] == ["worker"]
    # issue #23 item 9: Prometheus scrapes the service on its metrics port, which no Service exposes
    service_pod = deployments["grimoire-service"]["spec"]["template"]
    assert service_pod["metadata"]["annotations"]["prometheus.io/port"] == config["grimoire-config"]["data"][
        "GRIMOIRE_METRICS_PORT"]
    for service in of_kind("Service").values():
        assert {p["targetPort"] for p in service["spec"]["ports"]} == {"http"}


def test_autoscalers_budgets_and_service_aim_at_real_pods():
    deployments = of_kind("Deployment")
    for hpa in of_kind("HorizontalPodAutoscaler").values():
        target = hpa["spec"]["scaleTargetRef"]
        assert target["kind"] == "Deployment" and target["name"] in deployments
        assert 2 <= hpa["spec"]["minReplicas"] < hpa["spec"]["maxReplicas"]
    assert {h["spec"]["scaleTargetRef"]["name"] for h in of_kind("HorizontalPodAutoscaler").values()} == set(deployments)
    pod_labels = [d["spec"]["template"]["metadata"]["labels"] for d in deployments.values()]
    for pdb in of_kind("PodDisruptionBudget").values():
        selector = pdb["spec"]["selector"]["matchLabels"]
        assert sum(selector.items() <= labels.items() for labels in pod_labels) == 1
    (service,) = of_kind("Service").values()
    assert service["spec"]["selector"].items() <= deployments["grimoire-service"]["spec"]["template"]["metadata"][
        "labels"].items()


def test_config_and_secret_hold_only_documented_settings():
    documented = documented_settings()
    for doc in [*of_kind("ConfigMap").values()]:
        assert set(doc["data"]) <= set(documented), set(doc["data"]) - set(documented)
    for doc in of_kind("Secret").values():
        assert set(doc["stringData"]) <= set(documented)
        assert set(doc["stringData"]) == {"REDIS_URL", "QUEUE_REDIS_URL"}
    assert not {"REDIS_URL", "QUEUE_REDIS_URL"} & set(of_kind("ConfigMap")["grimoire-config"]["data"])


def compose_check(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.compose-spec",
                           str(path)], capture_output=True, text=True, timeout=60)


def test_compose_file_is_valid_compose(tmp_path):
    result = compose_check(DEPLOY / "compose.yaml")
    assert result.returncode == 0, result.stdout + result.stderr
    broken = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    broken["services"]["service"]["deploy"]["replicas"] = "two"
    broken["services"]["service"]["restart_policy"] = "always"
    (tmp_path / "compose.yaml").write_text(yaml.safe_dump(broken))
    assert compose_check(tmp_path / "compose.yaml").returncode != 0, "the schema check must be able to fail"


def test_compose_runs_two_services_behind_a_balancer_with_workers_and_redis():
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    assert services["service"]["deploy"]["replicas"] == 2 and services["service"]["command"] == ["serve"]
    assert services["worker"]["command"] == ["worker"]
    assert services["service"]["image"] == services["worker"]["image"]
    assert services["service"]["build"]["dockerfile"] == "deploy/Dockerfile"
    assert "lb" in services and "service:8000" in (DEPLOY / "nginx.conf").read_text()
    assert {"redis", "queue-redis"} <= set(services)
    assert services["dashboard"]["profiles"] == ["dashboard"]
    env = services["service"]["environment"]
    assert env["REDIS_URL"] != env["QUEUE_REDIS_URL"], "the queue lives on its own Redis"
    assert set(env) | set(services["worker"]["environment"]) <= set(documented_settings())
    assert (DEPLOY / compose["services"]["lb"]["volumes"][0].split(":")[0]).exists()


def test_dockerfile_is_small_non_root_and_serves_both_roles():
    text = (DEPLOY / "Dockerfile").read_text()
    instructions = [line for line in text.splitlines() if line and not line.startswith("#")]
    froms = [line for line in instructions if line.startswith("FROM ")]
    assert len(froms) == 2 and all("-slim" in line for line in froms), "a slim multi-stage build"
    users = [line.split()[1] for line in instructions if line.startswith("USER ")]
    assert users and users[-1].split(":")[0] not in {"root", "0"}
    assert re.search(r'^ENTRYPOINT \["grimoire"\]$', text, re.M) and re.search(r'^CMD \["serve"\]$', text, re.M)
    for line in instructions:
        if line.startswith("COPY ") and "--from" not in line:
            for source in line.split()[1:-1]:
                assert (ROOT / source).exists(), f"COPY {source}: no such file in the repository"
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text()
    assert "!service/**" in ignore and "!pyproject.toml" in ignore
