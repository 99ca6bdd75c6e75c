"""The pod per notebook (autograder.cluster.notebook_pod): every security field of the generated Pod and of its
deny-all NetworkPolicy, as ``kubectl apply`` would read them (the client's own sanitize_for_serialization). No
cluster is needed."""

from __future__ import annotations

import pytest

pytest.importorskip("kubernetes", reason="the Kubernetes client is not installed: pip install -e '.[cluster]'")

from kubernetes.client import ApiClient

from autograder.cluster.notebook_pod import notebook_pod, notebook_pod_name, notebook_policy
from autograder.cluster.settings import ClusterSettings

SETTINGS = ClusterSettings(
    sandbox="pod-per-notebook",
    network_policies=True,
    notebook_image="registry.example.edu/attention-notebook:abc123",
    uid=4242,
    cpu="750m",
    memory="1536Mi",
    scratch="300Mi",
    deadline=600,
    namespace="ml101",
)
LABELS = {"app.kubernetes.io/part-of": "attention-course", "attention-course/role": "notebook"}
COMMAND = ["python", "-I", "-S", "/opt/attention/runner.py", "/site"]


def serialised(made) -> dict:
    return ApiClient().sanitize_for_serialization(made)


def test_the_notebook_pod_carries_every_security_field():
    pod = serialised(notebook_pod(SETTINGS, name="grade-0", command=COMMAND))
    assert (pod["apiVersion"], pod["kind"]) == ("v1", "Pod")
    assert pod["metadata"] == {"name": "grade-0", "namespace": "ml101", "labels": LABELS}
    spec = pod["spec"]
    assert spec["restartPolicy"] == "Never"
    assert spec["activeDeadlineSeconds"] == 600
    assert spec["terminationGracePeriodSeconds"] == 5
    assert spec["automountServiceAccountToken"] is False
    assert spec["enableServiceLinks"] is False
    assert (spec["hostNetwork"], spec["hostPID"], spec["hostIPC"]) == (False, False, False)
    assert "serviceAccountName" not in spec and "hostUsers" not in spec  # the nodes have no user namespaces here
    assert spec["securityContext"] == {
        "runAsNonRoot": True,
        "runAsUser": 4242,
        "runAsGroup": 4242,
        "fsGroup": 4242,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    assert spec["volumes"] == [{"name": "scratch", "emptyDir": {"sizeLimit": "300Mi"}}]  # no token volume
    (container,) = spec["containers"]
    assert container["image"] == "registry.example.edu/attention-notebook:abc123"
    assert container["command"] == COMMAND
    assert container["securityContext"] == {
        "runAsNonRoot": True,
        "runAsUser": 4242,
        "runAsGroup": 4242,
        "readOnlyRootFilesystem": True,
        "allowPrivilegeEscalation": False,
        "privileged": False,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    assert container["resources"] == {
        "requests": {"cpu": "750m", "memory": "1536Mi"},
        "limits": {"cpu": "750m", "memory": "1536Mi"},
    }
    assert container["volumeMounts"] == [{"name": "scratch", "mountPath": "/scratch"}]
    assert {env["name"]: env["value"] for env in container["env"]} == {
        "HOME": "/scratch",
        "TMPDIR": "/scratch",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    assert (container["stdin"], container["stdinOnce"]) == (True, True)  # the notebook in, not over the network
    assert "ports" not in container and "envFrom" not in container


def test_with_user_namespaces_the_notebook_pod_has_its_own_too():
    settings = ClusterSettings(**{**SETTINGS.__dict__, "user_namespaces": True})
    assert serialised(notebook_pod(settings, name="grade-0", command=COMMAND))["spec"]["hostUsers"] is False


def test_the_policy_lets_no_packet_in_or_out_of_a_notebook_pod():
    policy = serialised(notebook_policy(SETTINGS))
    assert (policy["apiVersion"], policy["kind"]) == ("networking.k8s.io/v1", "NetworkPolicy")
    assert policy["metadata"] == {"name": "attention-notebooks-deny-all", "namespace": "ml101", "labels": LABELS}
    assert policy["spec"] == {"podSelector": {"matchLabels": LABELS}, "policyTypes": ["Ingress", "Egress"]}


def test_a_pod_name_never_holds_the_students_words():
    hostile = "../../x\n$(rm -rf ~) Ada"
    name = notebook_pod_name(assignment="attention", student=hostile)
    assert name.startswith("grade-") and len(name) == 30 and name[6:].isalnum() and name.islower()
    assert name != notebook_pod_name(assignment="positions", student=hostile)
    assert name == notebook_pod_name(assignment="attention", student=hostile)


def test_without_an_image_or_in_the_other_way_no_pod_is_made():
    with pytest.raises(ValueError, match="c.Cluster.notebook_image is empty"):
        notebook_pod(ClusterSettings(sandbox="pod-per-notebook", network_policies=True), name="g", command=COMMAND)
    other = ClusterSettings(sandbox="user-namespace", user_namespaces=True, notebook_image="r/n:1")
    with pytest.raises(ValueError, match="grading runs on user-namespaced workers"):
        notebook_pod(other, name="g", command=COMMAND)
