"""What one grading task is: the assignment every worker needs, one student's submission, and its outcome.

Each travels between the coordinator and a Dask worker as bytes (``Assignment``, ``Submission``, ``Outcome``),
so a worker on another machine needs the project installed but no shared file system.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import socket
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from autograder import REPOSITORY, assignments
from autograder.verdicts import Blank

if TYPE_CHECKING:  # the chain imports the feedback, which reads digest from here
    from autograder.notebook.pipeline import ChainOptions

LEDGER = ".grading"  # in the course folder: the ledger and the folders being written
# What decides a grade: a change to any of these files grades everyone again. Not a list kept by hand: the modules
# of autograder and lib that the grading chain imports (GRADING_ENTRIES, followed import by import, also imports
# made inside functions and modules named as strings for ``python -m``), those the repository's assignments'
# checks import, lib whole (the student's kernel imports it) and nbgrader_config.py. Not classroom, export, report,
# similarity: nothing the chain imports. An assignment's own checks.py is part of its source's fingerprint.
GRADING_ENTRIES = ("autograder.grading.worker", "autograder.notebook.pipeline")
GRADER_PACKAGES = ("autograder", "lib")


def module_file(module: str) -> Path | None:
    """The file of a module of this repository (``autograder.x``), or None when there is none."""
    base = REPOSITORY.joinpath(*module.split("."))
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def imported_modules(path: Path, package: str) -> set[str]:
    """The modules of GRADER_PACKAGES that the file ``path`` (of the package ``package``) imports: ``import``
    and ``from`` statements anywhere in it, and strings that are a module's whole dotted name."""
    named = set()
    for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
        if isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            named.add(base)
            named.update(f"{base}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if re.fullmatch(r"(?:autograder|lib)(?:\.\w+)+", node.value):
                named.add(node.value)
    found = set()
    for name in named:
        while name.split(".")[0] in GRADER_PACKAGES and module_file(name) is None and "." in name:
            name = name.rpartition(".")[0]  # from x import a_function: the module is x
        if name.split(".")[0] in GRADER_PACKAGES and module_file(name) is not None:
            found.add(name)
    return found


def grader_files() -> list[Path]:
    """Every file whose change grades everyone again (see GRADING_ENTRIES), in path order."""
    seen: set[str] = set()
    todo = list(GRADING_ENTRIES)
    for folder in sorted(REPOSITORY.glob("source/*/")):
        for checks in assignments.checks_files(folder):  # checks.py, or the modules of checks/
            todo += sorted(imported_modules(checks, ""))
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        todo += [module.rsplit(".", depth)[0] for depth in range(1, module.count(".") + 1)]  # its packages run first
        path = module_file(module)
        if path is None:  # a name that only looks like a module of ours (a string, an attribute)
            continue
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        todo += sorted(imported_modules(path, package) - seen)
    files = {module_file(module) for module in seen}
    files.update(REPOSITORY.glob("lib/*.py"))
    files.add(REPOSITORY / "nbgrader_config.py")
    return sorted(path for path in files if path.is_file())


class GradingError(RuntimeError):
    """The class could not be graded (not a problem of one submission); the message says why."""


# --- what travels between the coordinator and the workers ------------------------------------------------


@dataclass(frozen=True)
class Assignment:
    """What every worker needs: the course's gradebook after generate_assignment, the source, the release."""

    name: str  # the assignment's name (its folder in source/)
    notebook: str  # its notebook's name, without .ipynb
    gradebook: bytes
    source: dict  # {path relative to source/<assignment>/: bytes}, its checks.py included
    release: bytes  # the release notebook, graded in place of a notebook that cannot be read
    chain: ChainOptions  # the run's options of the grading chain (the cell limit, the seed, the forward cache)
    fingerprint: str


@dataclass(frozen=True)
class Submission:
    student: str
    files: dict  # {path relative to submitted/<student>/<assignment>/: bytes}
    fingerprint: str
    extension: timedelta | None = None  # their own due date less the assignment's (autograder.course.term), for
    # nbgrader's late penalty (SubmittedAssignment.extension); part of the fingerprint when set


@dataclass
class Outcome:
    student: str
    fingerprint: str
    assignment: str = ""
    autograded: dict = field(default_factory=dict)  # {relative path: bytes}
    feedback: dict = field(default_factory=dict)
    grades: list = field(default_factory=list)  # {notebook, name, auto_score, needs_manual_grade}
    comments: list = field(default_factory=list)  # {notebook, name, auto_comment}
    penalties: dict = field(default_factory=dict)  # {notebook: late_submission_penalty}
    extension: timedelta | None = None  # the submission's extension its penalty was computed with (Submission's)
    timestamp: datetime | None = None
    note: str = ""  # what the instructor should know, in words (a notebook graded as blank, and why): shown, not read
    blank: Blank | None = None  # why it was graded as the blank release (verdicts.Blank), None when it was not
    kernel: list = field(default_factory=list)  # how the student's kernel ended early: [verdicts.KernelEnd]
    unprotected: str | None = None  # the worker's missing protections (sandbox.why_unprotected), or None
    worker: str = ""  # host:pid of the worker that graded it
    seconds: float = 0.0
    feedback_seconds: float = 0.0  # of which making the feedback page
    children_cpu: float = 0.0  # CPU seconds of the processes it started: the kernel, the hidden checks' runner
    error: str = ""  # set when nothing could be graded (nothing is recorded)


def digest(items) -> str:
    """sha256 over (name, bytes) pairs, in name order."""
    hasher = hashlib.sha256()
    for name, data in sorted(items):
        hasher.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return hasher.hexdigest()


def folder_files(folder: Path) -> dict:
    """{relative path: bytes} of every file under ``folder``; checkpoints and symbolic links left out (a link
    in a student's folder could otherwise bring in a file of the instructor's)."""
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not path.is_symlink() and not {".ipynb_checkpoints", "__pycache__"} & set(path.parts)
    }


def grader_fingerprint() -> str:
    """One digest of grader_files(): equal on the coordinator and on every worker when they run the same code."""
    return digest((path.relative_to(REPOSITORY).as_posix(), path.read_bytes()) for path in grader_files())


def temporary_prefix() -> str:
    """The name a worker's private folders start with: the host and the process, so that a later run can
    tell the folders of a process that is gone (killed before it could remove them) from live ones."""
    return f"attention-grading-{socket.gethostname()}-{os.getpid()}-"
