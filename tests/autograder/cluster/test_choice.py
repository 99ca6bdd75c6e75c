"""The sandbox a cluster's grading uses (autograder.cluster.choice) and the settings it is read from
(autograder.cluster.settings): the configured way when the cluster can run it, auto's pick, and a refusal naming
both ways when neither holds; nothing of the generated objects is made then."""

from __future__ import annotations

import pytest

pytest.importorskip("kubernetes", reason="the Kubernetes client is not installed: pip install -e '.[cluster]'")

import yaml

from autograder.cluster.__main__ import main
from autograder.cluster.choice import NoSandbox, sandbox_way
from autograder.cluster.notebook_pod import notebook_pod
from autograder.cluster.settings import ClusterSettings
from autograder.cluster.worker_pod import worker_deployment
from autograder.settings import SettingsError

BOTH = (
    'c.Cluster.sandbox = "user-namespace" needs c.Cluster.user_namespaces = True (the nodes run pods with '
    'hostUsers: false (Kubernetes 1.33 or later)); c.Cluster.sandbox = "pod-per-notebook" needs '
    "c.Cluster.network_policies = True (the cluster's network plugin enforces NetworkPolicy)"
)
IMAGES = {"grader_image": "r/g:1", "notebook_image": "r/n:1"}


@pytest.mark.parametrize(
    "sandbox, user_namespaces, network_policies, way",
    [
        ("auto", True, True, "user-namespace"),
        ("auto", True, False, "user-namespace"),
        ("auto", False, True, "pod-per-notebook"),
        ("pod-per-notebook", True, True, "pod-per-notebook"),
        ("user-namespace", True, False, "user-namespace"),
    ],
)
def test_the_way_that_holds_is_chosen(sandbox, user_namespaces, network_policies, way):
    settings = ClusterSettings(sandbox=sandbox, user_namespaces=user_namespaces, network_policies=network_policies)
    assert sandbox_way(settings) == way


def test_neither_way_holding_is_refused_naming_both_and_nothing_is_made():
    settings = ClusterSettings(**IMAGES)  # auto, and the cluster says it can run neither
    with pytest.raises(NoSandbox) as refused:
        sandbox_way(settings)
    assert str(refused.value) == f"no sandbox for student code on this cluster: neither way holds. {BOTH}"
    with pytest.raises(NoSandbox):
        notebook_pod(settings, name="grade-x", command=["python"])
    with pytest.raises(NoSandbox):
        worker_deployment(settings, scheduler="tls://s:8786", replicas=1)


@pytest.mark.parametrize(
    "sandbox, flag",
    [("user-namespace", "user_namespaces"), ("pod-per-notebook", "network_policies")],
)
def test_a_way_chosen_that_the_cluster_cannot_run_is_refused(sandbox, flag):
    other = {"user_namespaces": "network_policies", "network_policies": "user_namespaces"}[flag]
    settings = ClusterSettings(sandbox=sandbox, **{other: True}, **IMAGES)  # the other way would hold: not taken
    with pytest.raises(NoSandbox) as refused:
        sandbox_way(settings)
    assert str(refused.value).startswith(f'c.Cluster.sandbox is "{sandbox}" but c.Cluster.{flag} is False')
    assert str(refused.value).endswith(f"The two ways: {BOTH}")


def test_the_settings_are_read_from_the_course_and_mistakes_are_named(tmp_path):
    (tmp_path / "nbgrader_config.py").write_text(
        'c = get_config()\nc.Cluster.sandbox = "pod-per-notebook"\nc.Cluster.network_policies = True\n'
        'c.Cluster.memory = "1Gi"\n'
    )
    read = ClusterSettings.read(tmp_path)
    assert (read.sandbox, read.network_policies, read.memory, read.cpu) == ("pod-per-notebook", True, "1Gi", "1")
    with pytest.raises(SettingsError, match=r"c.Cluster.network_policy is not a setting \(did you mean "):
        ClusterSettings.from_mapping({"network_policy": True})
    with pytest.raises(SettingsError, match=r"c.Cluster.uid must be a int, not str \('1000'\)"):
        ClusterSettings.from_mapping({"uid": "1000"})
    with pytest.raises(SettingsError, match="c.Cluster.uid is 0; it must be a user other than root"):
        ClusterSettings.from_mapping({"uid": 0})
    with pytest.raises(SettingsError, match="c.Cluster.sandbox is 'bubblewrap'; it must be one of 'auto'"):
        ClusterSettings.from_mapping({"sandbox": "bubblewrap"})


def test_the_command_writes_the_chosen_ways_objects_or_refuses_with_both(tmp_path, capsys):
    lines = 'c = get_config()\nc.Cluster.grader_image = "r/g:1"\nc.Cluster.notebook_image = "r/n:1"\n'
    (tmp_path / "nbgrader_config.py").write_text(lines)
    assert main(["manifests", "--course", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"error: no sandbox for student code on this cluster: neither way holds. {BOTH}\n"

    (tmp_path / "nbgrader_config.py").write_text(lines + "c.Cluster.user_namespaces = True\n")
    assert main(["manifests", "--course", str(tmp_path), "--replicas", "5"]) == 0
    deployment, policy = yaml.safe_load_all(capsys.readouterr().out)
    assert (deployment["kind"], deployment["spec"]["replicas"], policy["kind"]) == ("Deployment", 5, "NetworkPolicy")
    assert deployment["spec"]["template"]["spec"]["hostUsers"] is False

    (tmp_path / "nbgrader_config.py").write_text(lines + "c.Cluster.network_policies = True\n")
    assert main(["manifests", "--course", str(tmp_path)]) == 0
    policy, pod = yaml.safe_load_all(capsys.readouterr().out)
    assert (policy["metadata"]["name"], pod["kind"]) == ("attention-notebooks-deny-all", "Pod")
    assert pod["spec"]["containers"][0]["image"] == "r/n:1"
