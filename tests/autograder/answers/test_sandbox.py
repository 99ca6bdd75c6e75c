"""Where the answers' runner runs (autograder.answers.sandbox): its command line, its view and its environment.

Pinned: the runner is started by the base interpreter (no virtual environment) with -I -S and a site that holds
NumPy only; inside bubblewrap its one file, NumPy and the calls' input files appear at fixed places, every
site-packages and the course's folders are hidden, and the limits wrap it all; without bubblewrap it is refused
unless unsandboxed grading was allowed, and then NumPy is linked into a folder of its own. Its environment is
built from nothing, so no secret of the grader's reaches it. One real runner shows what it can and cannot see.
"""

from __future__ import annotations

import os
import select
import signal
import sys
from pathlib import Path

import numpy as np
import pytest

from autograder import REPOSITORY, sandbox
from autograder.answers import runner as answer_runner
from autograder.answers.process import start_runner
from autograder.answers.sandbox import (
    FILES_INSIDE,
    RUNNER,
    RUNNER_INSIDE,
    SITE_INSIDE,
    base_python,
    files_inside,
    numpy_folders,
    runner_command,
    runner_environment,
    runner_sandbox,
)

needs_bubblewrap = pytest.mark.skipif(
    sandbox.bubblewrap() is None,
    reason=f"bubblewrap is not available ({sandbox.INSTALL}): the runner is started only inside the sandbox",
)


@pytest.fixture
def without_bubblewrap(monkeypatch):
    monkeypatch.setattr(sandbox, "bubblewrap", lambda: None)


@pytest.fixture
def with_bubblewrap(monkeypatch):
    monkeypatch.setattr(sandbox, "bubblewrap", lambda: "/usr/bin/bwrap")


def test_numpy_folders_are_numpys_package_and_its_libraries_only():
    folders = numpy_folders()
    assert set(folders) <= {"numpy", "numpy.libs"}
    assert Path(folders["numpy"], "__init__.py").is_file() and Path(folders["numpy"]).name == "numpy"
    assert all(Path(folder).parent == Path(folders["numpy"]).parent for folder in folders.values())


def test_the_runner_is_started_by_the_interpreter_itself_not_an_environment():
    python = base_python()
    assert python.is_file() and python == python.resolve()
    assert not str(python).startswith(str(REPOSITORY))  # the repository's .venv is not in the runner's view


def test_input_files_appear_numbered_inside_the_sandbox_and_as_they_are_without(monkeypatch):
    files = ("/data/patterns.npy", "/data/inputs.npy")
    monkeypatch.setattr(sandbox, "bubblewrap", lambda: "/usr/bin/bwrap")
    assert files_inside(files) == [f"{FILES_INSIDE}/0.npy", f"{FILES_INSIDE}/1.npy"]
    monkeypatch.setattr(sandbox, "bubblewrap", lambda: None)
    assert files_inside(files) == list(files)
    assert files_inside(()) == []


def test_the_runners_view_holds_its_file_numpy_and_the_inputs_and_hides_the_course(tmp_path, with_bubblewrap):
    patterns = tmp_path / "patterns.npy"
    view = runner_sandbox(tmp_path / "work", (patterns,))
    assert view.writable == (tmp_path / "work",) and view.cwd == tmp_path / "work"
    assert view.environment is False  # not the grader's virtual environment
    assert view.readable[RUNNER_INSIDE] == str(RUNNER)
    assert view.readable[f"{SITE_INSIDE}/numpy"] == numpy_folders()["numpy"]
    assert view.readable[f"{FILES_INSIDE}/0.npy"] == str(patterns)
    in_repository = {value for value in view.readable.values() if Path(value).is_relative_to(REPOSITORY)}
    assert in_repository <= {str(RUNNER), *numpy_folders().values()}  # of the course: the runner's one file only
    assert REPOSITORY in view.hidden and set(sandbox.site_folders()) <= set(view.hidden)


def test_the_sandboxed_command_runs_the_runner_isolated_under_the_limits(tmp_path):
    if sandbox.bubblewrap() is None:
        pytest.skip(f"bubblewrap is not available ({sandbox.INSTALL})")
    command = runner_command(tmp_path / "work", (tmp_path / "a.npy",))
    assert command[-5:] == [str(base_python()), "-I", "-S", RUNNER_INSIDE, SITE_INSIDE]
    assert command[:2] == [sys.executable, "-c"] and f"RLIMIT_AS,{sandbox.STUDENT_MEMORY}" in command[2]
    assert f"RLIMIT_FSIZE,{sandbox.STUDENT_FILES}" in command[2]
    assert command[3] == sandbox.bubblewrap() and "--unshare-all" in command and "--die-with-parent" in command
    inside = command.index(f"{FILES_INSIDE}/0.npy")
    assert command[inside - 2 : inside + 1] == ["--ro-bind", str(tmp_path / "a.npy"), f"{FILES_INSIDE}/0.npy"]
    assert not (tmp_path / "work-site").exists()  # no site folder of its own: NumPy is bound at SITE_INSIDE


def test_without_bubblewrap_the_runner_is_refused_unless_allowed(tmp_path, monkeypatch, without_bubblewrap):
    monkeypatch.delenv(sandbox.UNSANDBOXED, raising=False)
    with pytest.raises(sandbox.SandboxUnavailable, match="Nothing was graded. Install bubblewrap"):
        runner_command(tmp_path / "work")


def test_unsandboxed_the_runner_still_sees_numpy_only_on_its_path(tmp_path, monkeypatch, without_bubblewrap):
    monkeypatch.setenv(sandbox.UNSANDBOXED, "1")
    monkeypatch.setattr(sandbox, "warn_once", lambda log=None: None)
    command = runner_command(tmp_path / "work")
    site = tmp_path / "work-site"
    assert command[-5:] == [str(base_python()), "-I", "-S", str(RUNNER), str(site)]
    assert sorted(p.name for p in site.iterdir()) == sorted(numpy_folders())
    assert (site / "numpy").resolve() == Path(numpy_folders()["numpy"])
    assert command[:2] == [sys.executable, "-c"]  # the limits hold without the sandbox too


def test_the_environment_is_built_from_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "secret-token")
    monkeypatch.setenv("PYTHONPATH", str(REPOSITORY))
    environment = runner_environment(tmp_path)
    assert environment == {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "TMPDIR": str(tmp_path),
        "LANG": "C.UTF-8",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "MALLOC_MMAP_THRESHOLD_": str(2**28),
        "MALLOC_TRIM_THRESHOLD_": str(2**28),
    }


PROBE = """
import os, sys
def probe(paths):
    return np.array([os.path.exists(p) for p in paths], dtype=float), float(len([m for m in sys.modules if m.startswith(("autograder", "lib"))]))
"""  # noqa: E501 - one line of the student's answer


def home_files() -> list[str]:
    """Files in the grader's home outside the Python the runner runs (which may live there, as with pyenv)."""
    python = base_python()
    return [str(path) for path in sorted(Path.home().iterdir()) if not python.is_relative_to(path)]


@needs_bubblewrap
def test_a_real_runner_sees_numpy_and_its_inputs_but_not_the_course(tmp_path):
    inputs = tmp_path / "inputs.npy"
    np.save(inputs, np.arange(3.0))
    work = tmp_path / "work"
    work.mkdir()
    process = start_runner(work, (inputs,))

    def read(fd, n):
        assert select.select([fd], [], [], 60)[0], "the runner said nothing for 60 s"
        return os.read(fd, n)

    site = str(sandbox.site_folders()[0])
    paths = [
        RUNNER_INSIDE,
        f"{SITE_INSIDE}/numpy/__init__.py",
        f"{FILES_INSIDE}/0.npy",
        str(work),
        str(REPOSITORY / "autograder"),
        str(REPOSITORY / "lib"),
        str(inputs),
        os.path.join(site, "numpy"),
        *home_files()[:1],
    ]
    try:
        stdin, stdout = process.stdin.fileno(), process.stdout.fileno()
        request = {"op": "cells", "cells": [PROBE], "skip": {}, "names": ["probe"], "seconds": 5.0}
        answer_runner.send(stdin, {**request, "files": files_inside((inputs,))})
        header = {}
        while header.get("op") != "ready":
            header, _ = answer_runner.receive(stdout, np, read=read)
        assert header["missing"] == []
        answer_runner.send(stdin, {"op": "call", "function": "probe", "args": [paths], "seconds": 5.0})
        header, values = answer_runner.receive(stdout, np, read=read)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        process.stdin.close()
        process.stdout.close()
    assert header["op"] == "result", header
    seen = dict(zip(paths, values[0].tolist()))
    assert seen == {**{path: 1.0 for path in paths[:4]}, **{path: 0.0 for path in paths[4:]}}
    assert values[1].tolist() == 0.0  # nothing of the course was imported in the runner
