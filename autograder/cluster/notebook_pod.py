"""A pod per notebook: the student's kernel and the runner in one short-lived, locked-down pod cut off from the network.

    pod = notebook_pod(settings, name=notebook_pod_name(assignment="attention", student="ada"), command=[...])
    policy = notebook_policy(settings)          # applied once per namespace: no traffic in or out of such pods

The sandbox of ``c.Cluster.sandbox = "pod-per-notebook"`` (autograder.cluster.choice), where bubblewrap cannot run:
the pod is the sandbox. It runs as a non-root user on a read-only root file system with every capability dropped,
no privilege escalation and the runtime's default seccomp profile; it holds no service-account token and no
service's address; its only writable folder is an emptyDir of bounded size; CPU and memory are requested and
limited alike; it is never restarted and dies at its deadline (activeDeadlineSeconds). Its notebook comes in on its
standard input and its outcome goes out on its standard output (``stdin_once``: attached through the API server,
not the pod network), so the NetworkPolicy can deny every packet in and out.
"""

from __future__ import annotations

import hashlib

from kubernetes.client import models as k8s

from autograder.cluster import objects
from autograder.cluster.choice import sandbox_way
from autograder.cluster.settings import ClusterSettings

ROLE = "notebook"
CONTAINER = "notebook"
POLICY = "attention-notebooks-deny-all"
RUNTIME_DEFAULT = "RuntimeDefault"


def notebook_pod_name(*, assignment: str, student: str) -> str:
    """A pod's name for one student's notebook: a digest, never the student's own words (which are hostile and
    need not be a DNS label)."""
    return "grade-" + hashlib.sha256(f"{assignment}\0{student}".encode()).hexdigest()[:24]


def notebook_pod(settings: ClusterSettings, *, name: str, command: list[str]) -> k8s.V1Pod:
    """The pod that runs one notebook with ``command``, in ``c.Cluster.notebook_image`` (the students' image and the
    runner: no grader, no reference, no hidden check, which stay with the worker that drives the pod).
    Raises autograder.cluster.choice.NoSandbox unless the cluster runs this way (``c.Cluster.network_policies``),
    ValueError without an image."""
    if sandbox_way(settings) != "pod-per-notebook":
        raise ValueError(f'c.Cluster.sandbox is "{settings.sandbox}": grading runs on user-namespaced workers')
    if not settings.notebook_image:
        raise ValueError(
            "c.Cluster.notebook_image is empty: name the notebooks' image (deploy/Dockerfile, target notebook)"
        )
    seccomp = k8s.V1SeccompProfile(type=RUNTIME_DEFAULT)
    volume, mount = objects.scratch(size=settings.scratch)
    container = k8s.V1Container(
        name=CONTAINER,
        image=settings.notebook_image,
        image_pull_policy="IfNotPresent",
        command=list(command),
        env=objects.environment(),
        working_dir=objects.SCRATCH,
        resources=objects.bounds(cpu=settings.cpu, memory=settings.memory),
        security_context=objects.locked_context(uid=settings.uid, seccomp=seccomp),
        volume_mounts=[mount],
        stdin=True,
        stdin_once=True,
        termination_message_policy="FallbackToLogsOnError",
    )
    spec = objects.unprivileged_spec(
        restart_policy="Never",
        active_deadline_seconds=settings.deadline,
        termination_grace_period_seconds=5,
        # its own user namespace as well, where the nodes have them: root in the pod is nobody on the node
        host_users=False if settings.user_namespaces else None,
        security_context=objects.pod_context(uid=settings.uid, seccomp=seccomp),
        containers=[container],
        volumes=[volume],
    )
    metadata = k8s.V1ObjectMeta(name=name, namespace=settings.namespace, labels=objects.labels(ROLE))
    return k8s.V1Pod(api_version="v1", kind="Pod", metadata=metadata, spec=spec)


def notebook_policy(settings: ClusterSettings) -> k8s.V1NetworkPolicy:
    """Every notebook pod of the namespace cut off: no rule, so no packet in or out (DNS included)."""
    return objects.network_policy(name=POLICY, namespace=settings.namespace, role=ROLE)
