"""The cluster's objects written out: ``python -m autograder.cluster manifests|values --course DIR``.

    python -m autograder.cluster manifests --course DIR --scheduler tls://attention-scheduler:8786 > grading.yaml
    python -m autograder.cluster values --course DIR > values.yaml      # Zero to JupyterHub's values file

``manifests`` writes the objects of the sandbox the course's c.Cluster.* chooses (autograder.cluster.choice): the
workers' Deployment and NetworkPolicy (user-namespace), or the notebooks' NetworkPolicy and an example notebook pod
(pod-per-notebook), as YAML documents for ``kubectl apply -f``. It exits 2 with the reason when the settings
cannot be read or neither sandbox holds.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

from autograder.cluster.choice import NoSandbox, sandbox_way
from autograder.cluster.hub_values import values_yaml
from autograder.cluster.settings import ClusterSettings
from autograder.settings import SettingsError

# what the example notebook pod runs: the runner's one file (deploy/Dockerfile, target notebook) on the image's NumPy
EXAMPLE_COMMAND = ["python", "-I", "-S", "/opt/attention/runner.py", "/usr/local/lib/python3.11/site-packages"]


def grading_objects(settings: ClusterSettings, *, scheduler: str, replicas: int) -> list:
    """The Kubernetes objects of the chosen sandbox (raises NoSandbox when none holds)."""
    from autograder.cluster.notebook_pod import (  # here: the objects need the cluster extra (kubernetes), --help not
        notebook_pod,
        notebook_pod_name,
        notebook_policy,
    )
    from autograder.cluster.worker_pod import worker_deployment, worker_policy  # here: as notebook_pod, kubernetes

    if sandbox_way(settings) == "user-namespace":
        return [worker_deployment(settings, scheduler=scheduler, replicas=replicas), worker_policy(settings)]
    example = notebook_pod_name(assignment="example", student="example")
    return [notebook_policy(settings), notebook_pod(settings, name=example, command=EXAMPLE_COMMAND)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.cluster", description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("manifests", "values"))
    parser.add_argument("--course", type=Path, required=True, help="the course folder (its c.Cluster.* settings)")
    parser.add_argument("--scheduler", default="tls://attention-scheduler:8786", help="the workers' scheduler")
    parser.add_argument("--replicas", type=int, default=2, help="grading workers (user-namespace)")
    args = parser.parse_args(argv)
    try:
        settings = ClusterSettings.read(args.course)
        if args.what == "values":
            sys.stdout.write(
                values_yaml(settings, made_by=f"python -m autograder.cluster values --course {args.course}")
            )
            return 0
        objects = grading_objects(settings, scheduler=args.scheduler, replicas=args.replicas)
    except (SettingsError, NoSandbox, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    from kubernetes.client import ApiClient  # here: the cluster extra, which --help and the values do not need

    api = ApiClient()
    sys.stdout.write(yaml.safe_dump_all([api.sanitize_for_serialization(made) for made in objects], sort_keys=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
