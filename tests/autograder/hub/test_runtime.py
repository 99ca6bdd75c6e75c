"""autograder.hub.runtime's build of the verdict in JupyterLab (labextension/): without npm, or with a build that
fails, it says why and the hub's runtime is made all the same (the checks page remains); the build itself runs in
make install-hub, and tests/autograder/hub/test_launch.py sees its notification in a browser."""

import sys
from pathlib import Path

from autograder.hub import runtime


def test_without_npm_the_lab_extension_is_skipped_saying_how_to_get_it(monkeypatch, tmp_path):
    monkeypatch.setattr(runtime.shutil, "which", lambda name: None)
    why = runtime.build_lab_extension(Path(sys.executable), tmp_path)
    assert why.startswith("npm is missing (apt-get install nodejs npm): the students' JupyterLab will not show")


def test_a_build_that_fails_is_said_and_installs_nothing(monkeypatch, tmp_path):
    failing = tmp_path / "bin" / "npm"
    failing.parent.mkdir()
    failing.write_text("#!/bin/sh\nexit 7\n")  # npm ci without its registry
    failing.chmod(0o755)
    monkeypatch.setattr(runtime.shutil, "which", lambda name: str(failing) if name == "npm" else "/usr/bin/true")
    installed = []
    real_run = runtime.subprocess.run
    monkeypatch.setattr(
        runtime.subprocess, "run", lambda command, **kw: installed.append(command) or real_run(command, **kw)
    )
    why = runtime.build_lab_extension(Path(sys.executable), tmp_path)
    assert why.startswith(f"the verdict in JupyterLab was not built ({failing} ci --no-audit exited with 7")
    assert [command[0] for command in installed] == [str(failing)]  # no build, no pip install after it
