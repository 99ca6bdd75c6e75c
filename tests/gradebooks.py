"""What the grading engine's tests share: a throwaway PostgreSQL server, a small course whose gradebook holds two
checks and a written answer, synthetic outcomes, and the instant grading task that the coordinator's tests hand to
Dask (no kernel runs). The fixtures built on them are in tests/conftest.py."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from autograder.grading import task

ASSIGNMENT = NOTEBOOK = "attention"


def postgres_binaries() -> Path | None:
    """The folder of Debian's initdb and pg_ctl (newest version), or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("pg_ctl")
    return Path(on_path).parent if on_path and shutil.which("initdb") else None


def why_no_postgres() -> str | None:
    """None when a throwaway server can be started here, else why not."""
    try:
        import psycopg  # noqa: F401 - SQLAlchemy's driver for postgresql:// URLs
    except ImportError:
        return "psycopg is not installed (pip install -e . installs psycopg[binary])"
    if postgres_binaries() is None:
        return "PostgreSQL's server programs (initdb, pg_ctl) are not installed: apt-get install postgresql"
    if os.getuid() == 0 and shutil.which("runuser") is None:
        return "running as root, and no runuser to start the server as the postgres user"
    return None


class Server:
    """A PostgreSQL server in a temporary folder, on a Unix socket there."""

    def __init__(self):
        self.bin = postgres_binaries()
        self.folder = Path(tempfile.mkdtemp(prefix="attention-postgres-"))
        self.data, self.socket = self.folder / "data", self.folder / "socket"
        self.socket.mkdir()
        self.prefix = []
        if os.getuid() == 0:  # initdb and postgres refuse to run as root
            self.prefix = ["runuser", "-u", "postgres", "--"]
            shutil.chown(self.folder, "postgres")
            shutil.chown(self.socket, "postgres")
            os.chmod(self.folder, 0o755)
        self.user = "postgres" if self.prefix else None

    def run(self, *command: str, timeout: float = 60):
        done = subprocess.run([*self.prefix, *command], capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
        return done

    def start(self):
        self.run(
            str(self.bin / "initdb"),
            "-D",
            str(self.data),
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--no-sync",
            *(["-U", "postgres"] if self.user else []),
        )
        options = (
            f"-c listen_addresses='' -c unix_socket_directories='{self.socket}' -c fsync=off -c max_connections=60"
        )
        self.run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            str(self.folder / "log"),
            "-w",
            "-t",
            "60",
            "start",
        )
        return self

    def url(self, database: str = "postgres") -> str:
        user = self.user or os.environ.get("USER") or "postgres"
        return f"postgresql://{user}@/{database}?host={self.socket}"

    def create_database(self) -> str:
        import psycopg

        name = f"gradebook_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def stop(self):
        try:
            self.run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


def make_course(root: Path, url: str) -> Path:
    """A course folder whose gradebook holds the assignment's structure: two checks, a written answer."""
    course = root / "course"
    course.mkdir()
    with Gradebook(url) as gradebook:
        gradebook.add_assignment(ASSIGNMENT)
        gradebook.add_notebook(NOTEBOOK, ASSIGNMENT)
        gradebook.add_grade_cell("check_a", NOTEBOOK, ASSIGNMENT, max_score=2, cell_type="code")
        gradebook.add_grade_cell("check_b", NOTEBOOK, ASSIGNMENT, max_score=1, cell_type="code")
        gradebook.add_grade_cell("written", NOTEBOOK, ASSIGNMENT, max_score=1, cell_type="markdown")
        gradebook.add_solution_cell("written", NOTEBOOK, ASSIGNMENT)
    return course


def outcome(student: str, version: int, a: float = 2.0, b: float = 1.0) -> task.Outcome:
    return task.Outcome(
        student,
        f"{version:064d}",
        ASSIGNMENT,
        autograded={f"{NOTEBOOK}.ipynb": f"graded v{version}".encode()},
        feedback={f"{NOTEBOOK}.html": f"<p>feedback v{version}</p>".encode()},
        grades=[
            {"notebook": NOTEBOOK, "name": "check_a", "auto_score": a, "needs_manual_grade": False},
            {"notebook": NOTEBOOK, "name": "check_b", "auto_score": b, "needs_manual_grade": False},
            {"notebook": NOTEBOOK, "name": "written", "auto_score": None, "needs_manual_grade": True},
        ],
        comments=[{"notebook": NOTEBOOK, "name": "written", "auto_comment": f"auto v{version}"}],
        worker="here:1",
    )


def scores(url: str, student: str) -> dict:
    with Gradebook(url) as gradebook:
        try:
            submission = gradebook.find_submission(ASSIGNMENT, student)
        except MissingEntry:  # no submission: nothing recorded (any other error is the test's failure)
            return {}
        notebook = submission.notebooks[0]
        found = {grade.name: (grade.auto_score, grade.manual_score) for grade in notebook.grades}
        found.update({f"comment {c.name}": (c.auto_comment, c.manual_comment) for c in notebook.comments})
        return found


def hand_in(course: Path, student: str, points: str):
    folder = course / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{NOTEBOOK}.ipynb").write_text(points)


def synthetic_course(root: Path, students: dict[str, str], url: str | None = None) -> tuple[Path, str]:
    url = url or f"sqlite:///{root / 'course' / 'gradebook.db'}"
    course = make_course(root, url)
    (course / "source" / ASSIGNMENT).mkdir(parents=True)
    # an empty notebook (no cells): the class run's export reads the source's order of cells, and refuses "{}"
    empty = '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
    (course / "source" / ASSIGNMENT / f"{NOTEBOOK}.ipynb").write_text(empty)
    (course / "release" / ASSIGNMENT).mkdir(parents=True)
    (course / "release" / ASSIGNMENT / f"{NOTEBOOK}.ipynb").write_text(empty)
    for student, points in students.items():
        hand_in(course, student, points)
    return course, url


def instant(assignment: task.Assignment, submission: task.Submission) -> task.Outcome:
    """The grading task, without nbgrader: check_a earns the number in the student's notebook."""
    result = outcome(submission.student, 1, a=float(submission.files[f"{NOTEBOOK}.ipynb"].decode() or 0))
    result.fingerprint = submission.fingerprint
    result.extension = submission.extension  # as the worker hands it on (its penalty's due date)
    return result


DIES_ONCE = "ATTENTION_TEST_DIES_ONCE"  # the file that says the worker has died once (tests/autograder/grading)


def dies_once(assignment: task.Assignment, submission: task.Submission) -> task.Outcome:
    """``instant`` after 0.4 s, its worker named in the outcome; the worker grading s03 dies the first time (its
    process exits, as one the system killed would), having written its process id into the file $DIES_ONCE."""
    import time

    from autograder.grading.worker import worker_name

    time.sleep(0.4)
    marker = Path(os.environ[DIES_ONCE])
    if submission.student == "s03" and not marker.exists():
        marker.write_text(str(os.getpid()))
        os._exit(1)
    result = instant(assignment, submission)
    result.worker = worker_name()
    return result
