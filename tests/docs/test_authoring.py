"""docs/authoring.md's commands are commands that exist: each `python -m autograder...` line it shows (its
continuation lines joined) names a module with a command line, and every --option it passes is one that command
takes (read from its --help), so a renamed option fails here rather than in an instructor's terminal."""

from __future__ import annotations

import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
GUIDE = REPOSITORY / "docs" / "authoring.md"


def commands(text: str) -> list[str]:
    """Each indented command line running `python -m autograder...`, with its `\\` continuation lines joined."""
    joined = re.sub(r"\s*\\\n\s*", " ", text)
    return [line.strip() for line in joined.splitlines() if re.match(r"\s+\S*python -m autograder", line)]


@cache
def help_of(module: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", module, "--help"], cwd=REPOSITORY, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, f"python -m {module} --help failed:\n{done.stderr[-2000:]}"
    return done.stdout


def test_the_guide_shows_the_scaffold_validate_and_class_commands():
    modules = {re.search(r"python -m (\S+)", command).group(1) for command in commands(GUIDE.read_text())}
    assert {"autograder.course.scaffold", "autograder.validate", "autograder.course"} <= modules


def unknown_options(command: str) -> list[str]:
    """The --options of ``command`` that its module's --help does not name."""
    shown = help_of(re.search(r"python -m (\S+)", command).group(1))
    return [
        option
        for option in re.findall(r"(?<!\S)(--[a-z][a-z-]*)", command)
        if not re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", shown)
    ]


@pytest.mark.parametrize("command", commands(GUIDE.read_text()))
def test_each_option_the_guide_passes_is_one_its_command_takes(command):
    assert unknown_options(command) == [], f"docs/authoring.md runs `{command}`: its command takes no such option"


def test_an_option_a_command_does_not_take_is_found():
    joined = commands("text\n    .venv/bin/python -m autograder.course --course c \\\n        --release-only --sub\n")
    assert joined == [".venv/bin/python -m autograder.course --course c --release-only --sub"]
    assert unknown_options(joined[0]) == ["--release-only", "--sub"]  # --sub is only the start of --submissions
