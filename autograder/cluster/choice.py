"""Which sandbox the cluster's grading uses: the configured way when the cluster can run it, else a refusal.

Student code runs on a cluster in one of two ways (settings.SANDBOXES):

- ``user-namespace``: grading workers in pods whose user namespace is their own (``hostUsers: false``), where
  bubblewrap makes its sandboxes unprivileged as it does on one machine (worker_pod); the nodes must run such
  pods (``c.Cluster.user_namespaces``);
- ``pod-per-notebook``: no bubblewrap; the kernel and the runner in a short-lived pod per notebook, locked down and
  cut off from the network (notebook_pod); only a network plugin that enforces NetworkPolicy cuts it off
  (``c.Cluster.network_policies``).

Neither holding is refused closed: nothing is generated that would run student code unsandboxed.
"""

from __future__ import annotations

from autograder.cluster.settings import SECTION, ClusterSettings

NEEDS = {  # each way: the setting that says the cluster can run it, and what that setting states
    "user-namespace": ("user_namespaces", "the nodes run pods with hostUsers: false (Kubernetes 1.33 or later)"),
    "pod-per-notebook": ("network_policies", "the cluster's network plugin enforces NetworkPolicy"),
}


class NoSandbox(ValueError):
    """The cluster can run neither sandbox; the message names both ways and what each needs."""


def both_ways() -> str:
    """The two ways in one sentence each: which setting chooses it and what it needs."""
    return "; ".join(
        f'c.{SECTION}.sandbox = "{way}" needs c.{SECTION}.{flag} = True ({what})' for way, (flag, what) in NEEDS.items()
    )


def sandbox_way(settings: ClusterSettings) -> str:
    """The way student code is sandboxed under ``settings``: the one chosen if the cluster can run it, or with
    ``auto`` the user namespace, else the pod per notebook. Raises NoSandbox when the chosen way (or, with auto,
    each) cannot run."""
    holds = [way for way, (flag, _) in NEEDS.items() if getattr(settings, flag)]
    if settings.sandbox == "auto":
        if holds:
            return holds[0]
        raise NoSandbox(f"no sandbox for student code on this cluster: neither way holds. {both_ways()}")
    if settings.sandbox in holds:
        return settings.sandbox
    flag, what = NEEDS[settings.sandbox]
    raise NoSandbox(
        f'c.{SECTION}.sandbox is "{settings.sandbox}" but c.{SECTION}.{flag} is False: the cluster must say that '
        f"{what}. The two ways: {both_ways()}"
    )
