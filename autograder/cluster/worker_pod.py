"""A grading worker whose user namespace is its own (hostUsers: false), where bubblewrap sandboxes student code.

    deployment = worker_deployment(settings, scheduler="tls://attention-scheduler:8786", replicas=3)
    policy = worker_policy(settings)             # the workers talk to the scheduler and to each other, nothing else

The sandbox of ``c.Cluster.sandbox = "user-namespace"`` (autograder.cluster.choice): the worker is a Dask worker
(``dask worker``, over TLS with the certificates of the Secret ``c.Cluster.tls_secret``), and each notebook it grades
runs in bubblewrap, as on one machine (autograder.sandbox). bubblewrap makes unprivileged user, mount, PID and
network namespaces, which a default pod forbids; the minimum it needs, and nothing more:

- ``hostUsers: false``: the pod's users are mapped to unprivileged ones of the node, so what bubblewrap is allowed
  (namespaces, mounts) is allowed inside that mapping only;
- ``procMount: Unmasked``: bubblewrap mounts a fresh /proc for its PID namespace, which the kernel refuses while
  the runtime's masks lie over /proc (Kubernetes allows it only with hostUsers: false);
- a seccomp and an AppArmor profile that let it call unshare and mount: the node's profile file when
  ``c.Cluster.worker_seccomp``/``worker_apparmor`` names one, else Unconfined (the runtime's defaults forbid both).

Everything else is as locked as a notebook's pod: a non-root user, no capability, no privilege escalation (bubblewrap
needs none unprivileged), a read-only root file system, no service-account token, bounded CPU, memory and scratch.
"""

from __future__ import annotations

from kubernetes.client import models as k8s

from autograder.cluster import objects
from autograder.cluster.choice import sandbox_way
from autograder.cluster.settings import ClusterSettings

ROLE = "worker"
SCHEDULER_ROLE = "scheduler"
CONTAINER = "worker"
NAME = "attention-grading-worker"
POLICY = "attention-workers"
TLS_FOLDER = "/etc/attention/tls"  # the Secret's files: ca.pem, tls.crt, tls.key
TLS_VOLUME = "dask-tls"
DNS_PORT = 53


def worker_command(settings: ClusterSettings, *, scheduler: str) -> list[str]:
    """``dask worker`` of the grader's image, joined to ``scheduler`` over TLS, one notebook at a time."""
    return [
        "dask",
        "worker",
        scheduler,
        "--nthreads=1",
        "--no-dashboard",
        f"--memory-limit={settings.memory}",
        f"--local-directory={objects.SCRATCH}/dask",
        f"--tls-ca-file={TLS_FOLDER}/ca.pem",
        f"--tls-cert={TLS_FOLDER}/tls.crt",
        f"--tls-key={TLS_FOLDER}/tls.key",
    ]


def worker_pod_spec(settings: ClusterSettings, *, scheduler: str) -> k8s.V1PodSpec:
    """The worker's pod spec. Raises autograder.cluster.choice.NoSandbox unless the cluster runs this way
    (``c.Cluster.user_namespaces``), ValueError without an image or with a plain tcp:// scheduler."""
    if sandbox_way(settings) != "user-namespace":
        raise ValueError(f'c.Cluster.sandbox is "{settings.sandbox}": grading runs in a pod per notebook')
    if not settings.grader_image:
        raise ValueError("c.Cluster.grader_image is empty: name the grader's image (deploy/Dockerfile, target grader)")
    if not scheduler.startswith("tls://"):
        raise ValueError(f"the scheduler {scheduler!r} is not a tls:// address: workers on a cluster speak TLS only")
    seccomp = objects.profile(k8s.V1SeccompProfile, settings.worker_seccomp)
    apparmor = objects.profile(k8s.V1AppArmorProfile, settings.worker_apparmor)
    volume, mount = objects.scratch(size=settings.scratch)
    tls = k8s.V1Volume(
        name=TLS_VOLUME, secret=k8s.V1SecretVolumeSource(secret_name=settings.tls_secret, default_mode=0o440)
    )
    container = k8s.V1Container(
        name=CONTAINER,
        image=settings.grader_image,
        image_pull_policy="IfNotPresent",
        command=worker_command(settings, scheduler=scheduler),
        env=objects.environment(),
        working_dir=objects.SCRATCH,
        resources=objects.bounds(cpu=settings.cpu, memory=settings.memory),
        security_context=objects.locked_context(
            uid=settings.uid, seccomp=seccomp, proc_mount="Unmasked", app_armor_profile=apparmor
        ),
        volume_mounts=[mount, k8s.V1VolumeMount(name=TLS_VOLUME, mount_path=TLS_FOLDER, read_only=True)],
    )
    return objects.unprivileged_spec(
        host_users=False,
        restart_policy="Always",
        termination_grace_period_seconds=30,
        security_context=objects.pod_context(uid=settings.uid, seccomp=seccomp),
        containers=[container],
        volumes=[volume, tls],
    )


def worker_deployment(settings: ClusterSettings, *, scheduler: str, replicas: int) -> k8s.V1Deployment:
    """``replicas`` grading workers (a Deployment of worker_pod_spec's pods)."""
    template = k8s.V1PodTemplateSpec(
        metadata=k8s.V1ObjectMeta(labels=objects.labels(ROLE)),
        spec=worker_pod_spec(settings, scheduler=scheduler),
    )
    return k8s.V1Deployment(
        api_version="apps/v1",
        kind="Deployment",
        metadata=k8s.V1ObjectMeta(name=NAME, namespace=settings.namespace, labels=objects.labels(ROLE)),
        spec=k8s.V1DeploymentSpec(
            replicas=replicas,
            selector=k8s.V1LabelSelector(match_labels=objects.labels(ROLE)),
            template=template,
        ),
    )


def worker_policy(settings: ClusterSettings) -> k8s.V1NetworkPolicy:
    """The workers reach the scheduler and each other (Dask moves data between workers), and the cluster's DNS;
    only those reach them. Nothing else: not the internet, not the hub, not the API server."""
    course = [
        k8s.V1NetworkPolicyPeer(pod_selector=k8s.V1LabelSelector(match_labels=objects.labels(role)))
        for role in (SCHEDULER_ROLE, ROLE)
    ]
    dns = k8s.V1NetworkPolicyEgressRule(
        to=[
            k8s.V1NetworkPolicyPeer(
                namespace_selector=k8s.V1LabelSelector(match_labels={"kubernetes.io/metadata.name": "kube-system"}),
                pod_selector=k8s.V1LabelSelector(match_labels={"k8s-app": "kube-dns"}),
            )
        ],
        ports=[k8s.V1NetworkPolicyPort(protocol=protocol, port=DNS_PORT) for protocol in ("UDP", "TCP")],
    )
    return objects.network_policy(
        name=POLICY,
        namespace=settings.namespace,
        role=ROLE,
        ingress=[k8s.V1NetworkPolicyIngressRule(_from=course)],
        egress=[k8s.V1NetworkPolicyEgressRule(to=course), dns],
    )
