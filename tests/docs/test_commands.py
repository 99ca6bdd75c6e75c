"""Every command the README and the Makefile name (``python -m autograder.…``, ``python -m lib.…``) answers
``--help``: exit status 0, its usage printed, no file written where it ran, and no module of an optional extra
needed (as after ``make install``, which installs none: each extra's modules are made missing for the command)."""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

REPOSITORY = Path(__file__).resolve().parents[2]
NAMED = r"-m ((?:autograder|lib)(?:\.[a-z_]+)*)"
RUN_WITHOUT_EXTRAS = """
import os, runpy, sys

for name in os.environ["ATTENTION_MISSING_EXTRAS"].split(","):
    sys.modules[name] = None  # as if not installed: its import raises ModuleNotFoundError, find_spec answers None
sys.argv = [sys.argv[1], "--help"]
runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""


def named_commands() -> list[str]:
    text = (REPOSITORY / "README.md").read_text() + (REPOSITORY / "Makefile").read_text()
    return sorted(set(re.findall(NAMED, text)))


def distributions_installed_with(requirements: list[str]) -> set[str]:
    """The distributions ``pip install`` of ``requirements`` brings, followed through the installed metadata (a
    distribution again when it is asked for with other extras: ``jsonschema[format-nongpl]``)."""
    visited, waiting = set(), [Requirement(line) for line in requirements]
    while waiting:
        requirement = waiting.pop()
        name = requirement.name.lower().replace("_", "-")
        if (name, frozenset(requirement.extras)) in visited:
            continue
        visited.add((name, frozenset(requirement.extras)))
        try:
            needed = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        wanted = ("", *requirement.extras)
        for line in needed:
            further = Requirement(line)
            if further.marker is None or any(further.marker.evaluate({"extra": extra}) for extra in wanted):
                waiting.append(further)
    return {name for name, _ in visited}


def modules_of_the_extras() -> set[str]:
    """The top-level modules that only an optional extra installs (not also the runtime's dependencies)."""
    project = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())["project"]
    runtime = distributions_installed_with(project["dependencies"])
    optional = {line for lines in project["optional-dependencies"].values() for line in lines}
    only_extras = distributions_installed_with(sorted(optional)) - runtime
    modules = set()
    for module, distributions in importlib.metadata.packages_distributions().items():
        if {name.lower().replace("_", "-") for name in distributions} & only_extras:
            modules.add(module)
    return modules | {name.replace("-", "_") for name in only_extras}


def test_the_readme_and_the_makefile_name_the_commands():
    commands = named_commands()
    assert {"autograder.course", "autograder.service", "autograder.validate", "lib.tour", "lib.store"} <= set(commands)


def test_the_extras_modules_are_found():
    missing = modules_of_the_extras()
    assert {"jupyterhub", "torch", "kubernetes"} <= missing
    assert "numpy" not in missing and "nbgrader" not in missing


@pytest.mark.parametrize("command", named_commands())
def test_a_command_answers_help_without_an_extra_or_a_side_effect(command, tmp_path):
    where = tmp_path / "cwd"
    where.mkdir()
    environment = {
        **os.environ,
        "PYTHONPATH": str(REPOSITORY),
        "ATTENTION_MISSING_EXTRAS": ",".join(sorted(modules_of_the_extras())),
    }
    answer = subprocess.run(
        [sys.executable, "-c", RUN_WITHOUT_EXTRAS, command],
        cwd=where,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert answer.returncode == 0, f"python -m {command} --help: exit {answer.returncode}\n{answer.stderr[-2000:]}"
    assert "usage:" in answer.stdout and f"-m {command}" in answer.stdout
    assert sorted(path.name for path in where.rglob("*")) == [], f"python -m {command} --help wrote files"
