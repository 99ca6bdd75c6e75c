"""The cluster's settings: ``c.Cluster.*`` in the course's nbgrader_config.py, read as the course's other settings.

    c.Cluster.sandbox = "pod-per-notebook"       # or "user-namespace", or "auto" (the one the cluster can run)
    c.Cluster.user_namespaces = True             # the nodes run pods with hostUsers: false
    c.Cluster.network_policies = True            # the network plugin enforces NetworkPolicy
    c.Cluster.grader_image = "registry.example.edu/attention-grader:3f2c1e0"    # deploy/Dockerfile's targets
    c.Cluster.notebook_image = "registry.example.edu/attention-notebook:3f2c1e0"
    c.Cluster.student_image = "registry.example.edu/attention-student:3f2c1e0"

Every name and default is a field of ClusterSettings, written once; an unknown name in the file is refused with
the nearest known one.
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass
from pathlib import Path

from autograder.settings import SettingsError, course_config

SANDBOXES = ("pod-per-notebook", "user-namespace")  # the two ways student code is sandboxed on a cluster
SECTION = "Cluster"  # c.Cluster.* in the course's configuration


@dataclass(frozen=True)
class ClusterSettings:
    """What the generated objects are made from; every field is ``c.Cluster.<field>``."""

    sandbox: str = "auto"  # one of SANDBOXES, or "auto": the one the cluster can run (choice.sandbox_way)
    user_namespaces: bool = False  # the nodes run hostUsers: false pods (Kubernetes >= 1.33, an idmap-capable runtime)
    network_policies: bool = False  # the cluster's network plugin enforces NetworkPolicy (Calico, Cilium, ...)
    namespace: str = "attention"  # the Kubernetes namespace of the course's pods
    grader_image: str = ""  # the grader's image (deploy/Dockerfile, target grader): its commit is the grader's
    notebook_image: str = ""  # a notebook pod's image: the students' and the runner, no grader (target notebook)
    student_image: str = ""  # the students' image (deploy/Dockerfile, target student)
    uid: int = 10001  # the user every course container runs as (not 0: runAsNonRoot)
    cpu: str = "1"  # a notebook's (or a worker's) CPU, requested and its limit
    memory: str = "2Gi"  # its memory, requested and its limit
    scratch: str = "512Mi"  # its writable emptyDir's sizeLimit (the root file system is read-only)
    deadline: int = 900  # seconds a notebook's pod may live (activeDeadlineSeconds), past the chain's own budgets
    tls_secret: str = "attention-dask-tls"  # the Secret holding the workers' TLS files (ca.pem, tls.crt, tls.key)
    worker_seccomp: str = ""  # a worker's seccomp profile file on the node (Localhost); empty: Unconfined
    worker_apparmor: str = ""  # a worker's AppArmor profile on the node (Localhost); empty: Unconfined
    student_cpu: str = "1"  # a student's server: CPU limit
    student_memory: str = "2G"  # a student's server: memory limit (KubeSpawner's units: K, M, G, T)

    @classmethod
    def read(cls, course: Path) -> ClusterSettings:
        """The settings of ``course`` (c.Cluster.* in its configuration), defaults where it says nothing."""
        return cls.from_mapping(dict(course_config(course).get(SECTION, {})), where=f"{course}/nbgrader_config.py")

    @classmethod
    def from_mapping(cls, given: dict, *, where: str = "the settings") -> ClusterSettings:
        """ClusterSettings from ``{field: value}``; an unknown field or a value of the wrong type raises
        SettingsError naming it."""
        fields = {field.name: field for field in dataclasses.fields(cls)}
        for name, value in given.items():
            if name not in fields:
                near = difflib.get_close_matches(name, fields, n=1)
                hint = f" (did you mean c.{SECTION}.{near[0]}?)" if near else ""
                raise SettingsError(f"{where}: c.{SECTION}.{name} is not a setting{hint}")
            wanted = type(getattr(cls(), name))
            if type(value) is not wanted:
                raise SettingsError(
                    f"{where}: c.{SECTION}.{name} must be a {wanted.__name__}, not {type(value).__name__} ({value!r})"
                )
        made = cls(**given)
        if made.sandbox not in ("auto", *SANDBOXES):
            raise SettingsError(
                f"{where}: c.{SECTION}.sandbox is {made.sandbox!r}; it must be one of "
                + ", ".join(repr(name) for name in ("auto", *SANDBOXES))
            )
        if made.uid <= 0:
            raise SettingsError(f"{where}: c.{SECTION}.uid is {made.uid}; it must be a user other than root (> 0)")
        return made
