"""What one grading task is: the assignment every worker needs, one student's submission, and its outcome.

Each travels between the coordinator and a Dask worker as bytes (``Assignment``, ``Submission``, ``Outcome``),
so a worker on another machine needs the project installed but no shared file system.
"""

from __future__ import annotations

import hashlib
import os
import socket
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from autograder import REPOSITORY

if TYPE_CHECKING:  # the chain imports the feedback, which reads digest from here
    from autograder.pipeline import ChainOptions

LEDGER = ".grading"  # in the course folder: the ledger and the folders being written
# What decides a grade: a change to any of these grades everyone again (not classroom, export, report, similarity);
# an assignment's own checks.py is part of its source, and so of its fingerprint
GRADER_CODE = [
    "nbgrader_config.py",
    "lib/*.py",
    "autograder/grading/*.py",
    *(
        f"autograder/{name}.py"
        for name in (
            "answer_budget",
            "answer_grading",
            "answer_process",
            "answer_runner",
            "answer_sandbox",
            "answer_session",
            "assignments",
            "checks",
            "model",
            "notebook_grading",
            "pipeline",
            "sandbox",
            "sanitise",
            "stand_ins",
            "student_kernel",
            "verdicts",
        )
    ),
]


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
    timestamp: datetime | None = None
    note: str = ""  # what the instructor should know (a notebook graded as blank, and why)
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
        if path.is_file() and not path.is_symlink() and ".ipynb_checkpoints" not in path.parts
    }


def grader_fingerprint() -> str:
    files = [path for pattern in GRADER_CODE for path in REPOSITORY.glob(pattern)]
    return digest((path.relative_to(REPOSITORY).as_posix(), path.read_bytes()) for path in files)


def temporary_prefix() -> str:
    """The name a worker's private folders start with: the host and the process, so that a later run can
    tell the folders of a process that is gone (killed before it could remove them) from live ones."""
    return f"attention-grading-{socket.gethostname()}-{os.getpid()}-"
