"""The Zero to JupyterHub values file: the course's hub on Kubernetes, made from its settings and checked here.

    values = hub_values(ClusterSettings.read(course))       # a dict, as ``helm install -f values.yaml`` reads it
    python -m autograder.cluster values --course DIR > values.yaml

What it says (Zero to JupyterHub's chart, ``jupyterhub/jupyterhub``, maps each key to KubeSpawner's setting):

- one KubeSpawner profile, the course's: the students' image (the student package, JupyterLab and the course's
  extension: deploy/Dockerfile, target student), its CPU and memory limited and guaranteed;
- no service-account token in a student's pod, a non-root user, no capability, no privilege escalation, the
  runtime's seccomp profile, a read-only root file system with an emptyDir /tmp;
- network policies on: a student's server answers only the hub and the proxy, and reaches only the hub, the proxy
  and the cluster's DNS (every other rule of the chart's ``egressAllowRules`` off: no internet, no private address,
  no cloud metadata server).
"""

from __future__ import annotations

import yaml

from autograder.cluster.settings import ClusterSettings

PROFILE = "attention"  # the profile's slug, the one a student's server starts with
TMP = "/tmp"
EGRESS_RULES = (  # Zero to JupyterHub's singleuser.networkPolicy.egressAllowRules, each off but the DNS
    "cloudMetadataServer",
    "dnsPortsCloudMetadataServer",
    "dnsPortsPrivateIPs",
    "nonPrivateIPs",
    "privateIPs",
)


def split_image(image: str) -> tuple[str, str]:
    """(name, tag) of an image reference; a digest (@sha256:...) or a tag is required, never an implied latest."""
    if "@" in image:
        name, digest = image.split("@", 1)
        return name, "@" + digest
    name, _, tag = image.rpartition(":")
    if not name or "/" in tag:
        raise ValueError(f"the image {image!r} has no tag: name the exact build (registry/name:tag, or @sha256:...)")
    return name, tag


def spawner_settings(settings: ClusterSettings) -> dict:
    """What KubeSpawner itself is told (``hub.config.KubeSpawner``): no token, the users, the security contexts."""
    return {
        "automount_service_account_token": False,
        "uid": settings.uid,
        "gid": settings.uid,
        "fs_gid": settings.uid,
        "pod_security_context": {
            "runAsNonRoot": True,
            "runAsUser": settings.uid,
            "runAsGroup": settings.uid,
            "fsGroup": settings.uid,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "container_security_context": {
            "runAsNonRoot": True,
            "runAsUser": settings.uid,
            "runAsGroup": settings.uid,
            "allowPrivilegeEscalation": False,
            "privileged": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
    }


def tmp_storage(settings: ClusterSettings) -> dict:
    """The writable /tmp of a read-only root (``singleuser.storage``'s extra volume, beside the chart's home, which
    a ``volumes`` setting of KubeSpawner's own would replace)."""
    return {
        "extraVolumes": [{"name": "tmp", "emptyDir": {"sizeLimit": settings.scratch}}],
        "extraVolumeMounts": [{"name": "tmp", "mountPath": TMP}],
    }


def course_profile(settings: ClusterSettings) -> dict:
    """The course's KubeSpawner profile: its image and bounds, applied by KubeSpawner itself."""
    if not settings.student_image:
        raise ValueError(
            "c.Cluster.student_image is empty: name the students' image (deploy/Dockerfile, target student)"
        )
    split_image(settings.student_image)
    return {
        "display_name": "Attention (the course's notebooks)",
        "slug": PROFILE,
        "description": "JupyterLab with the course's library and its Submit checks",
        "default": True,
        "kubespawner_override": {
            "image": settings.student_image,
            "image_pull_policy": "IfNotPresent",
            "cpu_limit": float(settings.student_cpu),
            "cpu_guarantee": float(settings.student_cpu),
            "mem_limit": settings.student_memory,
            "mem_guarantee": settings.student_memory,
        },
    }


def hub_values(settings: ClusterSettings) -> dict:
    """The values file of the course's hub, as a dict (yaml.safe_dump writes it)."""
    profile = course_profile(settings)
    name, tag = split_image(settings.student_image)
    override = profile["kubespawner_override"]
    return {
        "hub": {
            "networkPolicy": {"enabled": True},
            "config": {"KubeSpawner": spawner_settings(settings)},
        },
        "proxy": {"chp": {"networkPolicy": {"enabled": True}}},
        "singleuser": {
            "image": {"name": name, "tag": tag},
            "cpu": {"limit": override["cpu_limit"], "guarantee": override["cpu_guarantee"]},
            "memory": {"limit": override["mem_limit"], "guarantee": override["mem_guarantee"]},
            "uid": settings.uid,
            "fsGid": settings.uid,
            "storage": tmp_storage(settings),
            "serviceAccountName": None,
            # the chart's iptables rule needs a privileged init container; the network policy blocks the
            # metadata server instead (cloudMetadataServer: false below)
            "cloudMetadata": {"blockWithIptables": False},
            "networkPolicy": {
                "enabled": True,
                "egressAllowRules": {**{rule: False for rule in EGRESS_RULES}, "dnsPortsKubeSystemNamespace": True},
                "egress": [],
            },
            "profileList": [profile],
        },
    }


def values_yaml(settings: ClusterSettings, *, made_by: str) -> str:
    """The values file's text: a first line saying which command made it, then the values."""
    return f"# made by {made_by}: change c.Cluster.* and make it again, never by hand\n" + yaml.safe_dump(
        hub_values(settings), sort_keys=False, default_flow_style=False
    )
