"""What every pod of the course shares: its labels, its bounds, its scratch folder, a locked-down container.

Each function returns the official Kubernetes client's models (kubernetes.client), serialised by
``ApiClient().sanitize_for_serialization`` into what ``kubectl apply`` reads.
"""

from __future__ import annotations

from kubernetes.client import models as k8s

PART_OF = ("app.kubernetes.io/part-of", "attention-course")  # every object of the course carries this label
ROLE = "attention-course/role"  # which of the course's pods: notebook, worker, scheduler
SCRATCH = "/scratch"  # the one writable folder of a course container (its HOME and TMPDIR)
SCRATCH_VOLUME = "scratch"


def labels(role: str) -> dict[str, str]:
    """The labels of one of the course's pods, selected by its NetworkPolicy."""
    return {PART_OF[0]: PART_OF[1], ROLE: role}


def bounds(*, cpu: str, memory: str) -> k8s.V1ResourceRequirements:
    """CPU and memory requested and limited alike (the Guaranteed class: the pod is not the first one evicted, and
    a student's code cannot take more than it was scheduled for)."""
    each = {"cpu": cpu, "memory": memory}
    return k8s.V1ResourceRequirements(requests=dict(each), limits=dict(each))


def scratch(*, size: str) -> tuple[k8s.V1Volume, k8s.V1VolumeMount]:
    """The container's one writable folder: an emptyDir of at most ``size`` (the kubelet evicts a pod past it),
    mounted at SCRATCH, gone with the pod."""
    volume = k8s.V1Volume(name=SCRATCH_VOLUME, empty_dir=k8s.V1EmptyDirVolumeSource(size_limit=size))
    return volume, k8s.V1VolumeMount(name=SCRATCH_VOLUME, mount_path=SCRATCH)


def environment() -> list[k8s.V1EnvVar]:
    """HOME and TMPDIR in the scratch folder (the rest of the file system is read-only), no bytecode written."""
    values = {"HOME": SCRATCH, "TMPDIR": SCRATCH, "PYTHONDONTWRITEBYTECODE": "1"}
    return [k8s.V1EnvVar(name=name, value=value) for name, value in values.items()]


def profile(kind: type, localhost: str):
    """A seccomp or AppArmor profile of ``kind``'s class: the node's file ``localhost`` when given, else
    Unconfined."""
    if localhost:
        return kind(type="Localhost", localhost_profile=localhost)
    return kind(type="Unconfined")


def pod_context(*, uid: int, seccomp: k8s.V1SeccompProfile) -> k8s.V1PodSecurityContext:
    """The pod's security context: every container a non-root user ``uid`` (its group too), its volumes that
    group's, the seccomp profile ``seccomp``."""
    return k8s.V1PodSecurityContext(
        run_as_non_root=True, run_as_user=uid, run_as_group=uid, fs_group=uid, seccomp_profile=seccomp
    )


def locked_context(*, uid: int, seccomp: k8s.V1SeccompProfile, **more) -> k8s.V1SecurityContext:
    """A container that runs as ``uid`` (never root), on a read-only root file system, gains no privilege
    (no setuid, no capability: all dropped), is not privileged, under ``seccomp``; ``more``: other fields of
    V1SecurityContext (the worker's procMount and AppArmor profile)."""
    return k8s.V1SecurityContext(
        run_as_non_root=True,
        run_as_user=uid,
        run_as_group=uid,
        read_only_root_filesystem=True,
        allow_privilege_escalation=False,
        privileged=False,
        capabilities=k8s.V1Capabilities(drop=["ALL"]),
        seccomp_profile=seccomp,
        **more,
    )


def unprivileged_spec(**fields) -> k8s.V1PodSpec:
    """A pod spec that reaches nothing of the cluster's own: no service-account token mounted, no service's address
    in its environment, not on the node's network, process or IPC namespaces; ``fields``: the rest of V1PodSpec."""
    return k8s.V1PodSpec(
        automount_service_account_token=False,
        enable_service_links=False,
        host_network=False,
        host_pid=False,
        host_ipc=False,
        **fields,
    )


def network_policy(*, name: str, namespace: str, role: str, ingress=None, egress=None) -> k8s.V1NetworkPolicy:
    """A NetworkPolicy on the pods of ``role``: both directions governed, only the ``ingress`` and ``egress`` rules
    given allowed (none given: nothing in, nothing out)."""
    return k8s.V1NetworkPolicy(
        api_version="networking.k8s.io/v1",
        kind="NetworkPolicy",
        metadata=k8s.V1ObjectMeta(name=name, namespace=namespace, labels=labels(role)),
        spec=k8s.V1NetworkPolicySpec(
            pod_selector=k8s.V1LabelSelector(match_labels=labels(role)),
            policy_types=["Ingress", "Egress"],
            ingress=ingress,
            egress=egress,
        ),
    )
