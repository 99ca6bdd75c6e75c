"""The grading worker in its own user namespace (autograder.cluster.worker_pod): every field of the generated
Deployment's pod that bubblewrap needs (hostUsers: false, an unmasked /proc, profiles that allow unshare and mount)
and every one that stays locked, and the workers' NetworkPolicy. No cluster is needed."""

from __future__ import annotations

import pytest

pytest.importorskip("kubernetes", reason="the Kubernetes client is not installed: pip install -e '.[cluster]'")

from kubernetes.client import ApiClient

from autograder.cluster.settings import ClusterSettings
from autograder.cluster.worker_pod import worker_deployment, worker_policy

SETTINGS = ClusterSettings(
    sandbox="user-namespace",
    user_namespaces=True,
    grader_image="registry.example.edu/attention-grader:abc123",
    uid=4242,
    cpu="2",
    memory="3Gi",
    scratch="1Gi",
    namespace="ml101",
)
SCHEDULER = "tls://attention-scheduler:8786"


def label(role: str) -> dict:
    return {"app.kubernetes.io/part-of": "attention-course", "attention-course/role": role}


def serialised(made) -> dict:
    return ApiClient().sanitize_for_serialization(made)


def test_the_worker_runs_in_its_own_user_namespace_with_only_what_bubblewrap_needs():
    deployment = serialised(worker_deployment(SETTINGS, scheduler=SCHEDULER, replicas=3))
    assert (deployment["apiVersion"], deployment["kind"]) == ("apps/v1", "Deployment")
    assert deployment["spec"]["replicas"] == 3
    assert deployment["spec"]["selector"] == {"matchLabels": label("worker")}
    assert deployment["spec"]["template"]["metadata"] == {"labels": label("worker")}
    spec = deployment["spec"]["template"]["spec"]
    assert spec["hostUsers"] is False
    assert spec["automountServiceAccountToken"] is False
    assert spec["enableServiceLinks"] is False
    assert (spec["hostNetwork"], spec["hostPID"], spec["hostIPC"]) == (False, False, False)
    assert spec["restartPolicy"] == "Always"
    assert spec["securityContext"] == {
        "runAsNonRoot": True,
        "runAsUser": 4242,
        "runAsGroup": 4242,
        "fsGroup": 4242,
        "seccompProfile": {"type": "Unconfined"},
    }
    assert spec["volumes"] == [
        {"name": "scratch", "emptyDir": {"sizeLimit": "1Gi"}},
        {"name": "dask-tls", "secret": {"secretName": "attention-dask-tls", "defaultMode": 0o440}},
    ]
    (container,) = spec["containers"]
    assert container["image"] == "registry.example.edu/attention-grader:abc123"
    assert container["securityContext"] == {
        "runAsNonRoot": True,
        "runAsUser": 4242,
        "runAsGroup": 4242,
        "readOnlyRootFilesystem": True,
        "allowPrivilegeEscalation": False,
        "privileged": False,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "Unconfined"},
        "procMount": "Unmasked",
        "appArmorProfile": {"type": "Unconfined"},
    }
    assert container["resources"] == {
        "requests": {"cpu": "2", "memory": "3Gi"},
        "limits": {"cpu": "2", "memory": "3Gi"},
    }
    assert container["volumeMounts"] == [
        {"name": "scratch", "mountPath": "/scratch"},
        {"name": "dask-tls", "mountPath": "/etc/attention/tls", "readOnly": True},
    ]
    assert container["command"] == [
        "dask",
        "worker",
        SCHEDULER,
        "--nthreads=1",
        "--no-dashboard",
        "--memory-limit=3Gi",
        "--local-directory=/scratch/dask",
        "--tls-ca-file=/etc/attention/tls/ca.pem",
        "--tls-cert=/etc/attention/tls/tls.crt",
        "--tls-key=/etc/attention/tls/tls.key",
    ]


def test_the_nodes_own_profiles_replace_unconfined_when_named():
    settings = ClusterSettings(**{**SETTINGS.__dict__, "worker_seccomp": "attention/bwrap.json"})
    settings = ClusterSettings(**{**settings.__dict__, "worker_apparmor": "attention-bwrap"})
    spec = serialised(worker_deployment(settings, scheduler=SCHEDULER, replicas=1))["spec"]["template"]["spec"]
    localhost = {"type": "Localhost", "localhostProfile": "attention/bwrap.json"}
    assert spec["securityContext"]["seccompProfile"] == localhost
    assert spec["containers"][0]["securityContext"]["seccompProfile"] == localhost
    assert spec["containers"][0]["securityContext"]["appArmorProfile"] == {
        "type": "Localhost",
        "localhostProfile": "attention-bwrap",
    }


def test_the_workers_reach_the_scheduler_each_other_and_dns_only():
    policy = serialised(worker_policy(SETTINGS))
    course = [{"podSelector": {"matchLabels": label("scheduler")}}, {"podSelector": {"matchLabels": label("worker")}}]
    assert policy["spec"] == {
        "podSelector": {"matchLabels": label("worker")},
        "policyTypes": ["Ingress", "Egress"],
        "ingress": [{"from": course}],
        "egress": [
            {"to": course},
            {
                "to": [
                    {
                        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
                        "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
                    }
                ],
                "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
            },
        ],
    }


def test_a_plain_scheduler_or_a_missing_image_is_refused():
    with pytest.raises(ValueError, match="'tcp://s:8786' is not a tls:// address"):
        worker_deployment(SETTINGS, scheduler="tcp://s:8786", replicas=1)
    with pytest.raises(ValueError, match="c.Cluster.grader_image is empty"):
        worker_deployment(
            ClusterSettings(sandbox="user-namespace", user_namespaces=True), scheduler=SCHEDULER, replicas=1
        )
