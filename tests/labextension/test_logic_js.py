"""labextension/lib/logic.js, the Lab extension's decisions (what the notification says, when it asks again, the
sentence Validate's dialog leads with, the feedback page one click opens), tested with node alone: logic.test.mjs
beside this file, run by ``node --test``. Skipped, with the reason, where Node.js is not installed (the hub then runs
without the Lab extension: autograder.hub.runtime says so)."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

TESTS = Path(__file__).with_name("logic.test.mjs")


def node_or_skip() -> str:
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        pytest.skip("Node.js is not installed (apt-get install nodejs): the Lab extension's logic is tested with it")
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    major, minor = (int(part) for part in version.lstrip("v").split(".")[:2])
    if (major, minor) < (20, 19):  # logic.js is an ES module in a folder without "type": "module"
        pytest.skip(f"Node.js {version} cannot import logic.js as an ES module by its syntax: 20.19 or later can")
    return node


def test_the_lab_extensions_logic_passes_its_node_tests():
    node = node_or_skip()
    ran = subprocess.run([node, "--test", str(TESTS)], capture_output=True, text=True, timeout=120)
    said = ran.stdout + ran.stderr
    assert ran.returncode == 0, said[-4000:]
    passed = int(re.search(r"^# pass (\d+)$", said, re.MULTILINE).group(1))
    written = len(re.findall(r"^test\(", TESTS.read_text(), re.MULTILINE))
    assert passed == written > 0, f"{passed} of {written} node tests passed:\n{said[-4000:]}"
