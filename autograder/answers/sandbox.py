"""Where the runner (autograder/answers/runner.py) runs: its command line, its sandbox's view, its environment.

The runner's view (bubblewrap, autograder.sandbox): its work folder writable; Python's standard library, NumPy,
the runner's one file and the calls' read-only input files (Call.files: the model's attention patterns, inputs,
not answers) readable. Not in view: site-packages (of any Python), lib, data (the model and its recorded
statistics), the rest of autograder (the checks, the grader), the course, other submissions, the instructor's
home. Without bubblewrap nothing runs unless unsandboxed grading was allowed (sandbox.command raises
SandboxUnavailable); the runner then still sees NumPy only on its path.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from autograder import sandbox
from autograder.answers import runner as answer_runner

RUNNER = Path(answer_runner.__file__).resolve()
RUNNER_INSIDE = "/run/grader/runner.py"  # where the runner's one file appears in its sandbox
SITE_INSIDE = "/run/site"  # the folder that holds NumPy (and nothing else) in the sandbox
FILES_INSIDE = "/run/inputs"  # where the calls' read-only input files (Call.files) appear in the sandbox


def numpy_folders() -> dict[str, str]:
    """{name: folder} of NumPy's package and its bundled libraries, the only packages the runner sees."""
    package = Path(np.__file__).resolve().parent
    folders = {"numpy": str(package)}
    libs = package.parent / "numpy.libs"
    if libs.is_dir():
        folders["numpy.libs"] = str(libs)
    return folders


def base_python() -> Path:
    """The interpreter itself, not a virtual environment's link to it (the runner needs no environment)."""
    return Path(getattr(sys, "_base_executable", sys.executable)).resolve()


def files_inside(files: tuple) -> list[str]:
    """Where the calls' input files appear to the runner: under FILES_INSIDE in the sandbox, else where they are."""
    if sandbox.bubblewrap() is None:
        return [str(path) for path in files]
    return [f"{FILES_INSIDE}/{number}.npy" for number in range(len(files))]


def runner_sandbox(work: Path, files: tuple = ()) -> sandbox.Sandbox:
    """The runner's view (see the module's docstring)."""
    python = base_python()
    prefix = Path(sys.base_prefix).resolve()
    readable = {str(prefix): str(prefix), str(python): str(python), RUNNER_INSIDE: str(RUNNER)}
    readable.update({f"{SITE_INSIDE}/{name}": folder for name, folder in numpy_folders().items()})
    readable.update({inside: str(path) for inside, path in zip(files_inside(files), files)})
    hidden = sandbox.site_folders() + sandbox.course_folders()
    return sandbox.Sandbox(writable=(work,), readable=readable, cwd=work, environment=False, hidden=tuple(hidden))


def runner_command(work: Path, files: tuple = ()) -> list[str]:
    """The runner's command line: limits, then the sandbox (or, unsandboxed, NumPy linked into a folder of its own)."""
    if sandbox.bubblewrap() is not None:
        inner = [str(base_python()), "-I", "-S", RUNNER_INSIDE, SITE_INSIDE]
    else:
        site = work.parent / (work.name + "-site")
        site.mkdir()
        for name, folder in numpy_folders().items():
            (site / name).symlink_to(folder)
        inner = [str(base_python()), "-I", "-S", str(RUNNER), str(site)]
    wrapped = sandbox.command(inner, runner_sandbox(work, files))  # raises SandboxUnavailable where it must
    return sandbox.limited(wrapped, sandbox.STUDENT_MEMORY, sandbox.STUDENT_FILES, sandbox.PROCESS_CAP)


def runner_environment(home: Path) -> dict:
    """A minimal environment: no credentials, one BLAS thread."""
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "TMPDIR": str(home),
        "LANG": "C.UTF-8",
        **sandbox.SINGLE_THREAD,
        "MALLOC_MMAP_THRESHOLD_": str(2**28),
        "MALLOC_TRIM_THRESHOLD_": str(2**28),
    }
