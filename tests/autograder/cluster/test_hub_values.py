"""The hub on Kubernetes (autograder.cluster.hub_values): deploy/z2jh/values.yaml is what the code makes from
deploy/example's settings, and KubeSpawner's own pod manifest for a student, built from that file's KubeSpawner
settings and profile without a cluster (KubeSpawner.get_pod_manifest with a mock user, as kubespawner's own tests
build it), carries the image, the limits, the security context and no service-account token."""

from __future__ import annotations

import asyncio
from pathlib import Path
from unittest.mock import Mock

import pytest

pytest.importorskip("kubernetes", reason="the Kubernetes client is not installed: pip install -e '.[cluster]'")

import yaml

from autograder.cluster import hub_values
from autograder.cluster.settings import ClusterSettings

REPOSITORY = Path(__file__).resolve().parents[3]
EXAMPLE = REPOSITORY / "deploy" / "example"
VALUES = REPOSITORY / "deploy" / "z2jh" / "values.yaml"
MADE_BY = "python -m autograder.cluster values --course deploy/example"
IMAGE = "registry.example.edu/attention-student:0123456789abcdef0123456789abcdef01234567"
NO_CLUSTER = """apiVersion: v1
kind: Config
clusters: [{name: none, cluster: {server: "https://127.0.0.1:9"}}]
contexts: [{name: none, context: {cluster: none, user: none}}]
current-context: none
users: [{name: none, user: {token: none}}]
"""  # KubeSpawner reads a kube config when it is made; nothing here is ever asked


def test_the_committed_values_file_is_the_one_the_code_makes():
    made = hub_values.values_yaml(ClusterSettings.read(EXAMPLE), made_by=MADE_BY)
    assert VALUES.read_text() == made, f"deploy/z2jh/values.yaml is stale: run {MADE_BY} > deploy/z2jh/values.yaml"


def test_a_students_server_reaches_only_the_hub_the_proxy_and_dns():
    values = yaml.safe_load(VALUES.read_text())
    policy = values["singleuser"]["networkPolicy"]
    assert policy["enabled"] is True and policy["egress"] == []
    assert policy["egressAllowRules"] == {
        "cloudMetadataServer": False,
        "dnsPortsCloudMetadataServer": False,
        "dnsPortsPrivateIPs": False,
        "nonPrivateIPs": False,
        "privateIPs": False,
        "dnsPortsKubeSystemNamespace": True,
    }
    assert values["hub"]["networkPolicy"] == {"enabled": True}
    assert values["proxy"]["chp"]["networkPolicy"] == {"enabled": True}
    assert values["singleuser"]["image"] == {"name": IMAGE.rsplit(":", 1)[0], "tag": IMAGE.rsplit(":", 1)[1]}
    assert values["singleuser"]["storage"]["extraVolumeMounts"] == [{"name": "tmp", "mountPath": "/tmp"}]


class MockUser(Mock):
    """A JupyterHub user as KubeSpawner reads one (kubespawner's own tests make it so)."""

    name = "ada"

    @property
    def escaped_name(self):
        return self.name

    @property
    def url(self):
        return self.server.url


def student_pod(values: dict) -> dict:
    """KubeSpawner's pod manifest for ada, from the values file's hub.config.KubeSpawner and its profile list."""
    from jupyterhub.objects import Hub, Server
    from kubernetes_asyncio.client import ApiClient
    from kubespawner import KubeSpawner
    from traitlets.config import Config

    config = Config()
    for name, value in values["hub"]["config"]["KubeSpawner"].items():
        setattr(config.KubeSpawner, name, value)
    config.KubeSpawner.profile_list = values["singleuser"]["profileList"]

    async def manifest():
        user = MockUser()
        user.server = Server()
        spawner = KubeSpawner(config=config, user=user, hub=Hub(), _mock=True)
        spawner.user_options = {"profile": hub_values.PROFILE}
        await spawner.load_user_options()  # the profile applied as KubeSpawner applies it at a start
        async with ApiClient() as api:
            return api.sanitize_for_serialization(await spawner.get_pod_manifest())

    return asyncio.run(manifest())


def test_kubespawners_own_pod_for_a_student_carries_the_image_limits_security_and_no_token(tmp_path, monkeypatch):
    pytest.importorskip("kubespawner", reason="KubeSpawner is not installed: pip install -e '.[cluster]'")
    from kubernetes_asyncio.config import kube_config

    (tmp_path / "kubeconfig").write_text(NO_CLUSTER)
    monkeypatch.setattr(kube_config, "KUBE_CONFIG_DEFAULT_LOCATION", str(tmp_path / "kubeconfig"))  # read at import
    pod = student_pod(yaml.safe_load(VALUES.read_text()))
    spec = pod["spec"]
    assert spec["automountServiceAccountToken"] is False
    assert "serviceAccountName" not in spec
    assert not any("serviceAccountToken" in str(volume) or "projected" in volume for volume in spec.get("volumes", []))
    assert spec["securityContext"] == {
        "runAsNonRoot": True,
        "runAsUser": 10001,
        "runAsGroup": 10001,
        "fsGroup": 10001,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    (container,) = spec["containers"]
    assert container["image"] == IMAGE
    assert container["resources"] == {
        "limits": {"cpu": 1.0, "memory": 2 * 1024**3},
        "requests": {"cpu": 1.0, "memory": 2 * 1024**3},
    }
    context = container["securityContext"]
    assert (context["runAsNonRoot"], context["runAsUser"], context["runAsGroup"]) == (True, 10001, 10001)
    assert (context["allowPrivilegeEscalation"], context["privileged"]) == (False, False)
    assert context["readOnlyRootFilesystem"] is True
    assert context["capabilities"] == {"drop": ["ALL"]}
    assert context["seccompProfile"] == {"type": "RuntimeDefault"}
    assert pod["metadata"]["labels"]["component"] == "singleuser-server"  # what the chart's policies select


def test_an_image_without_a_tag_is_refused():
    assert hub_values.split_image("r.example/a:b1") == ("r.example/a", "b1")
    assert hub_values.split_image("r.example:5000/a@sha256:00ff") == ("r.example:5000/a", "@sha256:00ff")
    for untagged in ("r.example/attention-student", "r.example:5000/attention-student"):
        with pytest.raises(ValueError, match="has no tag: name the exact build"):
            hub_values.split_image(untagged)
    with pytest.raises(ValueError, match="c.Cluster.student_image is empty"):
        hub_values.hub_values(ClusterSettings())
