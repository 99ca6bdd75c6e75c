"""Grade a class on every core, or on a Dask cluster, into one nbgrader gradebook.

    from autograder.class_grading import grade_class
    summary = grade_class(Path("course"), ["ada", "bob"])                    # local: one worker per core
    summary = grade_class(Path("course"), students, scheduler="tcp://10.0.0.5:8786")

Each submission is one task, ``grade_submission(assignment, submission)``, run by a Dask worker: in a
private course folder of its own (a copy of the course's gradebook template, the source, the student's
files), nbgrader's own Autograde and GenerateFeedback run in-process (nbgrader.apps.NbGraderAPI), the
notebook's kernel and the hidden checks' runner in their sandboxes (autograder.sandbox). The task sends
everything back as bytes (``Outcome``), so a worker on another machine needs the project installed but no
shared file system.

The coordinator (this process) records each outcome as it arrives, each whole and on its own (a few at once,
on RECORDERS threads, so that one's wait for the disk is another's time to work), into nbgrader's gradebook
(SQLite, the default, in write-ahead-log mode with a busy timeout; or PostgreSQL), so that Formgrader, nbgrader's
own commands and a grader saving manual scores can write to it at the same time, and a run killed at any
moment loses no finished grade and leaves no half-written one (``record`` gives the order):

1. a journal entry, .grading/journal/<student>.json: what is about to be written;
2. the autograded and feedback folders, written under .grading/tmp/ and renamed into place;
3. the gradebook: one transaction through nbgrader's Gradebook (GradebookWriter), all of the submission's
   grades and comments or none (a new submission's rows inserted as Gradebook.add_submission makes them);
4. the ledger, .grading/students/<student>.json: the submission's fingerprint (its files, the assignment,
   the grader's code); then the journal entry is removed. A submission whose fingerprint matches its
   ledger, with its autograded folder and gradebook entry in place, is not graded again.

A journal entry still there at the start of a run (a run stopped between 1 and 4) is repaired: the ledger
is completed when the gradebook and the files hold what the journal says, otherwise the student is graded
again (``repair``). One run at a time grades a course (``CourseLock``).

A notebook that cannot be read (not JSON, empty, an unknown format), or that nbgrader cannot grade, is
graded as the blank release with a first cell that says why, so the student gets 0 points and a reason,
and the gradebook holds a submission for them like everyone else.
"""

from __future__ import annotations

import dataclasses
import hashlib
import html
import json
import os
import queue
import re
import shutil
import socket
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from urllib.parse import quote

from autograder import REPOSITORY  # noqa: E402

LEDGER = ".grading"  # in the course folder: the ledger and the folders being written
# What decides a grade: a change to any of these grades everyone again (not classroom, export, report, similarity);
# an assignment's own checks.py is part of its source, and so of its fingerprint
GRADER_CODE = [
    "nbgrader_config.py",
    "lib/*.py",
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
            "class_grading",
            "model",
            "notebook_grading",
            "sandbox",
            "sanitise",
            "stand_ins",
            "student_kernel",
            "verdicts",
        )
    ),
]
COURSE_CONFIG = '''"""nbgrader configuration of {what}, written by autograder: the repository's own configuration
({repository_config}), with this folder as the course's root."""
import os

c = get_config()  # noqa: F821 (nbgrader provides it)
_repository_config = {repository_config!r}
if not os.path.exists(_repository_config):  # load_subconfig would skip a missing file without a word
    raise FileNotFoundError(f"the course configuration {{_repository_config}} is missing")
load_subconfig(_repository_config)  # noqa: F821
c.CourseDirectory.root = {root!r}
'''


def course_config(root: Path, what: str, extra: str = "") -> str:
    """The nbgrader_config.py of a course folder or a private grading folder: the repository's, rooted at ``root``."""
    return (
        COURSE_CONFIG.format(what=what, repository_config=str(REPOSITORY / "nbgrader_config.py"), root=str(root))
        + extra
    )


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
    config: str  # lines added to the private folder's nbgrader_config.py (e.g. the cell timeout)
    fingerprint: str
    forward_cache: str | None = None  # lib's forward passes shared by every notebook (see shared_forward_cache)


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


STRUCTURE = (
    "course",
    "assignment",
    "notebook",
    "base_cell",
    "grade_cells",
    "solution_cells",
    "task_cells",
    "source_cell",
)  # the gradebook's tables that generate_assignment fills; the rest grow with the class


def gradebook_template(db: str) -> bytes:
    """An SQLite gradebook (bytes) holding what generate_assignment put into the gradebook at ``db`` (the
    assignments, notebooks and cells) and no student: what a worker's private folder needs, the same size
    for a class of 10 or of 10,000, and made the same way from SQLite or PostgreSQL."""
    from nbgrader.api import Base
    from sqlalchemy import create_engine, select, text

    with tempfile.TemporaryDirectory(prefix=temporary_prefix()) as scratch:
        path = Path(scratch) / "gradebook.db"
        source, target = create_engine(db), create_engine(f"sqlite:///{path}")
        try:
            Base.metadata.create_all(target)
            with source.connect() as reading, target.begin() as writing:
                version = reading.execute(text("SELECT version_num FROM alembic_version")).scalar()
                writing.execute(text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)"))
                writing.execute(
                    text("INSERT INTO alembic_version (version_num) VALUES (:version)"), {"version": version}
                )
                for table in Base.metadata.sorted_tables:
                    if table.name in STRUCTURE:
                        rows = [dict(row._mapping) for row in reading.execute(select(table))]
                        if rows:
                            writing.execute(table.insert(), rows)
        finally:
            source.dispose()
            target.dispose()
        return path.read_bytes()


def load_assignment(course: Path, name: str, config: str = "", db: str | None = None) -> Assignment:
    """The Assignment ``name`` of ``course`` (after nbgrader generate_assignment), its gradebook at ``db``
    (default the course's gradebook.db)."""
    from autograder import assignments

    (notebook,) = assignments.notebooks(course / "source" / name)
    gradebook = gradebook_template(db or sqlite_url(course))
    source = folder_files(course / "source" / name)
    release = (course / "release" / name / f"{notebook}.ipynb").read_bytes()
    fingerprint = digest(
        [
            *(("source/" + k, v) for k, v in source.items()),
            ("config", config.encode()),
            ("grader", grader_fingerprint().encode()),
        ]
    )
    return Assignment(name, notebook, gradebook, source, release, config, fingerprint)


CACHED_TEXTS = 300  # the notebook measures heads on the first 300 validation products (sections 7 and 8)
# The class's forward cache is built only for a run with at least this many new or changed submissions (unless
# one is built already): below it, the build (about 20 s on the 2-core machine) costs more than it saves
# (benchmarks/forward_cache_cost.py measures both; benchmarks/README.md has the numbers)
FORWARD_CACHE_FROM = 8
FORWARD_CACHE_HOME = "ATTENTION_FORWARD_CACHE_HOME"  # the environment variable that moves the shared caches
FORWARD_CACHE_KEPT_DAYS = 2  # another model's cache unused this long is removed


def forward_cache_home() -> Path:
    """Where the forward caches live, shared by every course of this user: $ATTENTION_FORWARD_CACHE_HOME, else
    $XDG_CACHE_HOME/attention-course/forward, else ~/.cache/attention-course/forward."""
    if os.environ.get(FORWARD_CACHE_HOME):
        return Path(os.environ[FORWARD_CACHE_HOME])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "attention-course" / "forward"


def shared_forward_cache(course: Path | None = None, build: bool = True) -> str | None:
    """lib's forward passes of the texts every notebook runs the model on, recorded once (a folder written by
    lib.transformer.write_forward_cache): each kernel then maps them instead of recomputing them, the same
    numbers to the last bit. One per model, shared by every course and run of this user (forward_cache_home(),
    keyed by the model's digest: it depends on nothing else). None when the store's model is missing, or when
    none is built yet and ``build`` is False. One process builds at a time (a lock); the others wait and use
    it. Half-written caches, and other models' caches unused for FORWARD_CACHE_KEPT_DAYS, are removed; so is
    the copy that earlier versions kept in the course's .grading/forward/."""
    import fcntl

    from autograder import model
    from lib import transformer
    from lib.products import product_texts

    if course is not None:
        shutil.rmtree(Path(course) / LEDGER / "forward", ignore_errors=True)
    if not model.available():
        return None
    home = forward_cache_home()
    home.mkdir(parents=True, exist_ok=True)
    path = home / transformer.model_digest(str(transformer.MODEL_DIR))
    with open(home / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or when the process ends however
        now = time.time()
        for other in home.iterdir():
            if other in (path, home / ".lock"):
                continue
            index = other / "index.json"
            unused = now - (index.stat().st_mtime if index.exists() else 0)
            if (
                not index.exists() or unused > FORWARD_CACHE_KEPT_DAYS * 86400
            ):  # half-written (we hold the lock), or old
                shutil.rmtree(
                    other, ignore_errors=True
                ) if other.is_dir() and not other.is_symlink() else other.unlink()
        if not (path / "index.json").exists():
            if not build:
                return None
            shutil.rmtree(path, ignore_errors=True)
            transformer.write_forward_cache(path, [ids for ids, _ in product_texts("validation", CACHED_TEXTS)])
        os.utime(path / "index.json")  # its last use: what FORWARD_CACHE_KEPT_DAYS counts from
    return str(path)


def class_forward_cache(course: Path, new: int, wanted: bool | None) -> str | None:
    """The forward cache for a run grading ``new`` submissions (grade_class's ``forward_cache``): none when
    ``wanted`` is False; built if missing when ``wanted`` is True, or when None and the class has
    FORWARD_CACHE_FROM new submissions or more (below that building it costs more than it saves); otherwise
    the one already built, if any."""
    if wanted is False:
        return None
    return shared_forward_cache(course, build=wanted is True or new >= FORWARD_CACHE_FROM)


def load_submission(course: Path, student: str, assignment: Assignment) -> Submission:
    files = folder_files(course / "submitted" / student / assignment.name)
    return Submission(student, files, digest([*files.items(), ("assignment", assignment.fingerprint.encode())]))


# --- the worker's side ------------------------------------------------------------------------------


def unreadable(data: bytes) -> str | None:
    """Why ``data`` is not a notebook nbgrader can grade, or None when it is one."""
    import nbformat

    if not data.strip():
        return "the file is empty"
    try:
        notebook = nbformat.reads(data.decode("utf-8"), as_version=nbformat.NO_CONVERT)
    except UnicodeDecodeError as error:
        return f"the file is not text (UTF-8): {error}"
    except Exception as error:  # noqa: BLE001 - nbformat raises several kinds for a bad file
        return f"the file is not a notebook: {type(error).__name__}: {str(error).splitlines()[0][:300]}"
    major = notebook.get("nbformat")
    if major not in (3, 4):
        return f"it is a notebook of format version {major}, which cannot be converted to version 4"
    return None


def blank_with_reason(release: bytes, reason: str) -> bytes:
    """The release notebook with a first cell that says why it is graded instead of the student's."""
    import nbformat

    notebook = nbformat.reads(release.decode("utf-8"), as_version=4)
    # the reason may quote the file's first characters: escaped, so that nothing of it is live in a page
    # (``<img onerror=...>`` would run in the feedback's HTML), and the Markdown of it shown as text
    shown = re.sub(r"([\\`*_{}\[\]()#+!|~-])", r"\\\1", html.escape(reason, quote=False))
    notebook.cells.insert(
        0,
        nbformat.v4.new_markdown_cell(
            f"**Your submission could not be graded: {shown}.** It was graded as the blank assignment "
            "(0 points). Your file is kept as you handed it in: open it in JupyterLab, fix it or hand in a "
            "fresh copy of the assignment, and ask your instructor to grade it again."
        ),
    )
    return nbformat.writes(notebook).encode("utf-8")


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def quiet_nbgrader_warnings():
    """nbgrader's Gradebook.update_or_create_submission makes SQLAlchemy warn ("not in session, add operation
    ... will not proceed") every time it creates a submission; the rows are made all the same."""
    import warnings

    from sqlalchemy.exc import SAWarning

    warnings.filterwarnings("ignore", category=SAWarning, message=".*not in session.*")


def nbgrader_api(root: Path):
    """nbgrader's NbGraderAPI on the course folder ``root``, configured by its nbgrader_config.py."""
    from nbgrader.apps import NbGraderAPI
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()
    return NbGraderAPI(config=config)


def _read_results(root: Path, student: str, outcome: Outcome, handed_in: set, notebook_name: str):
    from nbgrader.api import Gradebook

    with Gradebook(sqlite_url(root)) as gradebook:
        submission = gradebook.find_submission(outcome.assignment, student)
        outcome.timestamp = submission.timestamp
        for notebook in submission.notebooks:
            outcome.penalties[notebook.name] = notebook.late_submission_penalty
            for grade in notebook.grades:
                outcome.grades.append(
                    {
                        "notebook": notebook.name,
                        "name": grade.name,
                        "auto_score": grade.auto_score,
                        "needs_manual_grade": grade.needs_manual_grade,
                    }
                )
            for comment in notebook.comments:
                outcome.comments.append(
                    {"notebook": notebook.name, "name": comment.name, "auto_comment": comment.auto_comment}
                )
    # nbgrader's autograded folder: the graded notebook and the files the student handed in; not what the
    # student's kernel wrote there while it ran (scratch files, or junk to fill the instructor's disk)
    autograded = folder_files(root / "autograded" / student / outcome.assignment)
    outcome.autograded = {
        path: data for path, data in autograded.items() if path in handed_in or path == f"{notebook_name}.ipynb"
    }
    outcome.feedback = folder_files(root / "feedback" / student / outcome.assignment)


def _autograde(root: Path, student: str, outcome: Outcome) -> str | None:
    """nbgrader autograde + generate_feedback for one student in the private folder; None, or what failed."""
    api = nbgrader_api(root)
    for step, run in [("autograde", api.autograde), ("generate_feedback", api.generate_feedback)]:
        started = time.monotonic()
        result = run(outcome.assignment, student, force=True)
        if step == "generate_feedback":
            outcome.feedback_seconds = time.monotonic() - started
        if not result.get("success"):
            return f"nbgrader {step} failed: {first_error(result.get('log', '') + chr(10) + result.get('error', ''))}"
    return None


def first_error(log: str) -> str:
    """The exception that stopped nbgrader, out of its log ("KeyError: 'grade_id'"), or the log's last line."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    for line in lines:
        found = re.match(r"^([\w.]+(?:Error|Exception|Exit)): ?(.*)$", line)
        if found and not found[1].endswith("NbGraderException"):
            return f"{found[1].rsplit('.', 1)[-1]}: {found[2][:300]}"
    return lines[-1][:300] if lines else "no message"


_swept = False
# The student's name in a private folder: nbgrader reads a student id as a file glob, at two levels (the
# student's folder, then the notebooks in the folder it found), so an id such as "x[1]" finds nothing even
# when escaped; the private folder holds one student, under this name, and the outcome carries the real id.
PRIVATE_ID = "student"


def grade_submission(assignment: Assignment, submission: Submission) -> Outcome:
    """Autograde one submission and make its feedback, in a private folder; everything comes back as bytes."""
    started = time.monotonic()
    quiet_nbgrader_warnings()
    from autograder import sandbox

    outcome = Outcome(
        submission.student,
        submission.fingerprint,
        assignment.name,
        worker=worker_name(),
        unprotected=sandbox.why_unprotected(),
    )
    global _swept
    if not _swept:  # once per worker process: private folders of workers killed before they could remove them
        sweep_temporary()
        _swept = True
    with tempfile.TemporaryDirectory(prefix=temporary_prefix()) as scratch:
        root = Path(scratch)
        (root / "gradebook.db").write_bytes(assignment.gradebook)
        for relative, data in assignment.source.items():
            (root / "source" / assignment.name / relative).parent.mkdir(parents=True, exist_ok=True)
            (root / "source" / assignment.name / relative).write_bytes(data)
        (root / "lib").symlink_to(REPOSITORY / "lib", target_is_directory=True)
        config = course_config(root, "a private grading folder")
        if assignment.forward_cache and Path(assignment.forward_cache).exists():  # not on a worker of another machine
            config += f"c.SandboxedKernelManager.forward_cache = {assignment.forward_cache!r}\n"  # its kernels read it
        (root / "nbgrader_config.py").write_text(config + assignment.config)
        submitted = root / "submitted" / PRIVATE_ID / assignment.name
        for relative, data in submission.files.items():
            (submitted / relative).parent.mkdir(parents=True, exist_ok=True)
            (submitted / relative).write_bytes(data)
        notebook = submitted / f"{assignment.notebook}.ipynb"
        reason = unreadable(notebook.read_bytes())
        failure = None
        if reason is None:
            failure = _autograde(root, PRIVATE_ID, outcome)
            if failure is not None:
                reason = f"nbgrader could not grade it ({failure})"
        if reason is not None:
            notebook.write_bytes(blank_with_reason(assignment.release, reason))
            outcome.note = f"graded as blank: {reason}"
            failure = _autograde(root, PRIVATE_ID, outcome)
            if failure is not None:
                outcome.error = failure
                return outcome
        _read_results(root, PRIVATE_ID, outcome, set(submission.files), assignment.notebook)
    outcome.seconds = time.monotonic() - started
    return outcome


# --- the coordinator's side -------------------------------------------------------------------------------
#
# .grading/ in the course folder, the coordinator's own files (no name in it is made from a student id
# unless it is under students/ or journal/, so no id can collide with them):
#   lock                                    who is grading the class now (autograder.class_grading.CourseLock)
#   assignments/<name>/students/<id>.json   the ledger: one per student, written last (see record)
#   assignments/<name>/journal/<id>.json    a recording in progress: what it is about to write (see record, repair)
#   assignments/<name>/release.json         the source digest of the last release (autograder.classroom)
#   tmp/                                    folders being written or swapped out, emptied by every run
# (the class's forward cache is per user, not per course: forward_cache_home(), see shared_forward_cache)
# <id> is the student id, percent-quoted (urllib.parse.quote, nothing safe), or a hash of it when that is long.

RECORD_STEPS = ("journal", "autograded", "feedback", "in-transaction", "committed", "ledger")


def checkpoint(step: str):
    """Called by ``record`` after each of RECORD_STEPS; does nothing. (Tests replace it to kill a recording
    at each step and check what the next run makes of it.)"""


def file_key(student: str) -> str:
    quoted = quote(student, safe="")
    return quoted if len(quoted) <= 200 else "sha256-" + hashlib.sha256(student.encode()).hexdigest()


def assignment_folder(course: Path, assignment: str) -> Path:
    """The coordinator's files about one assignment (its name percent-quoted like a student id)."""
    return course / LEDGER / "assignments" / file_key(assignment)


def ledger_path(course: Path, assignment: str, student: str) -> Path:
    return assignment_folder(course, assignment) / "students" / f"{file_key(student)}.json"


def journal_path(course: Path, assignment: str, student: str) -> Path:
    return assignment_folder(course, assignment) / "journal" / f"{file_key(student)}.json"


def scratch_folder(course: Path) -> Path:
    folder = course / LEDGER / "tmp"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _write_json(path: Path, value, durable: bool = True):
    """Write ``value`` as JSON, whole or not at all: a temporary file, flushed to disk (``durable``), renamed
    into place. Without ``durable`` a killed process still leaves the file whole or absent; only a crash of the
    machine can leave it empty or missing (which, for a ledger entry, means the student is graded again)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(value, indent=1, default=str))
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _place(files: dict, target: Path, scratch: Path):
    """Write ``files`` into a new folder under ``scratch``, then swap it in for ``target``. When writing fails
    (a full disk), the new folder is removed and ``target`` is left as it was."""
    fresh = Path(tempfile.mkdtemp(prefix="new-", dir=scratch))
    try:
        for relative, data in files.items():
            (fresh / relative).parent.mkdir(parents=True, exist_ok=True)
            (fresh / relative).write_bytes(data)
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix="old-", dir=scratch))
            os.replace(target, old / "folder")
            os.replace(fresh, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(fresh, target)
    finally:
        shutil.rmtree(fresh, ignore_errors=True)  # gone already when the swap happened


def sqlite_url(course: Path) -> str:
    """nbgrader's default database of a course folder (CourseDirectory.db_url's default)."""
    return f"sqlite:///{Path(course).absolute() / 'gradebook.db'}"


def course_db(course: Path, db: str | None = None) -> str:
    """The gradebook's URL: ``db`` (--db), else the one the course's nbgrader_config.py names
    (CourseDirectory.db_url, as nbgrader reads it), else the course's gradebook.db. GradingError when that file
    cannot be read."""
    if db:
        return db
    if (Path(course) / "nbgrader_config.py").exists():
        from traitlets.config.loader import PyFileConfigLoader

        try:
            config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
        except Exception as error:  # noqa: BLE001 - a broken file: say which
            raise GradingError(
                f"cannot read {Path(course) / 'nbgrader_config.py'}: {type(error).__name__}: {error}"
            ) from None
        named = config.CourseDirectory.get("db_url") if "CourseDirectory" in config else None
        if named:
            return str(named)
    return sqlite_url(course)


def shown_url(url: str) -> str:
    """The database URL without its password, for messages."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


BUSY_TIMEOUT_MS = 60_000  # how long a write waits for another writer (Formgrader, nbgrader db, a second run)


INDEXES = [
    ("grade", "notebook_id"),
    ("comment", "notebook_id"),
    ("submitted_notebook", "assignment_id"),
    ("submitted_assignment", "student_id"),
]


def _sqlite_connect(connection, _record):
    # The driver's own transaction handling off, so that BEGIN, SAVEPOINT and COMMIT are ours (SQLAlchemy's
    # documented recipe for pysqlite); the write-ahead log, so that readers (Formgrader, an export) never
    # block a writer nor see half a transaction; a busy timeout, so that two writers wait for each other.
    connection.isolation_level = None
    cursor = connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    # switching a gradebook into the log mode needs it to itself, and SQLite answers "locked" at once, without
    # the busy timeout, while another process writes (Formgrader adding students); so wait here as long
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            cursor.execute("PRAGMA journal_mode = WAL")
            break
        except Exception as error:  # noqa: BLE001 - sqlite3.OperationalError, not imported here
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    cursor.close()


def _sqlite_begin(connection):
    connection.exec_driver_sql("BEGIN IMMEDIATE")  # take the write lock first: no deadlock between two writers


class GradebookWriter:
    """nbgrader's Gradebook on ``url`` (SQLite or PostgreSQL), where each ``write`` is one transaction.

    nbgrader's Gradebook methods commit after every change (a student, a submission); here its session is
    bound to a connection inside one outer transaction, and nbgrader's commits become savepoints of it
    (SQLAlchemy's join_transaction_mode="create_savepoint"), so everything ``write`` does is committed at
    once at its end, or rolled back, whatever nbgrader commits on the way.
    """

    def __init__(self, url: str):
        from nbgrader.api import Gradebook
        from sqlalchemy import event

        quiet_nbgrader_warnings()
        self.url = url
        self.layouts = {}  # {assignment: assignment_layout}, read at its first new submission
        self.gradebook = Gradebook(url)  # nbgrader makes the tables of a new database
        self.engine = self.gradebook.engine
        if self.engine.dialect.name == "sqlite":
            self.engine.dispose()  # connections from now on get the settings below
            event.listen(self.engine, "connect", _sqlite_connect)
            event.listen(self.engine, "begin", _sqlite_begin)
            with self.engine.connect() as connection:  # the log mode stays with the file: readers see it too
                connection.exec_driver_sql("SELECT 1")
        self._add_indexes()

    def _add_indexes(self):
        """INDEXES, those not there yet. nbgrader's schema indexes each submission's rows only behind another
        column (grade by (cell_id, notebook_id), ...), so finding one student's grades read every student's: a
        cost per result that grew with the class. These indexes (extra ones, which nbgrader and its migrations
        ignore) make it flat. Asked first, without a lock: CREATE INDEX locks its table against writes even when
        the index exists, and a writer made while others record (Recorders makes one per thread) deadlocked
        with them on PostgreSQL when it held one table's lock waiting for another. Each index is made in a
        transaction of its own, so that a CREATE INDEX that waits holds nothing another writer waits for."""
        from sqlalchemy import inspect

        inspector = inspect(self.engine)
        for table, column in INDEXES:
            name = f"ix_attention_{table}_{column}"
            if name in {index["name"] for index in inspector.get_indexes(table)}:
                continue
            with self.engine.begin() as connection:
                connection.exec_driver_sql(f"CREATE INDEX IF NOT EXISTS {name} ON {table} ({column})")

    def transaction(self, work, attempts: int = 3):
        """Run ``work(gradebook)`` in one transaction; retried when another writer got in the way (a student
        added at the same moment, a lock held past the busy timeout)."""
        from nbgrader.api import InvalidEntry
        from sqlalchemy.exc import DBAPIError
        from sqlalchemy.orm import scoped_session, sessionmaker

        for attempt in range(1, attempts + 1):
            connection = self.engine.connect()
            outer = connection.begin()
            own = self.gradebook.db
            self.gradebook.db = scoped_session(
                sessionmaker(bind=connection, autoflush=True, join_transaction_mode="create_savepoint")
            )
            try:
                result = work(self.gradebook)
                self.gradebook.db.flush()
                checkpoint("in-transaction")
                outer.commit()
                return result
            except (InvalidEntry, DBAPIError):
                outer.rollback()
                self.layouts.clear()  # read again: an assignment's cells are never expected to change mid-run
                if attempt == attempts:
                    raise
                time.sleep(0.1 * attempt)
            except BaseException:
                outer.rollback()
                raise
            finally:
                self.gradebook.db.remove()
                self.gradebook.db = own
                connection.close()

    def write(self, outcome: Outcome):
        """The outcome's submission, grades, comments, late penalties and timestamp, all or none. The
        instructor's manual scores, extra credit and manual comments are kept."""
        self.transaction(lambda gradebook: _write_outcome(gradebook, outcome, self.layouts))

    def close(self):
        self.gradebook.close()


def _write_outcome(gradebook, outcome: Outcome, layouts: dict | None = None):
    """The outcome into the gradebook, in the session of an open transaction (GradebookWriter.transaction).
    The student is nbgrader's (update_or_create_student). A submission already there is updated through
    nbgrader's objects (only the autograder's columns: a grader's manual work is kept). A new one gets the rows
    nbgrader's Gradebook.add_submission makes (a submitted notebook per notebook of the assignment, a grade per
    grade and task cell, a comment per solution and task cell), inserted with the scores and comments at
    once: through the ORM, add_submission and the updates after it were most of a result's recording.
    ``layouts``: {assignment: assignment_layout}, read once per writer."""
    from nbgrader.api import MissingEntry

    gradebook.update_or_create_student(outcome.student)
    try:
        submission = gradebook.find_submission(outcome.assignment, outcome.student)
    except MissingEntry:
        layouts = {} if layouts is None else layouts
        if outcome.assignment not in layouts:
            layouts[outcome.assignment] = assignment_layout(gradebook, outcome.assignment)
        _insert_submission(gradebook, outcome, layouts[outcome.assignment])
        return
    from nbgrader import utils

    submission.timestamp = utils.parse_utc(outcome.timestamp)  # as update_or_create_submission sets it
    for notebook in submission.notebooks:
        notebook.late_submission_penalty = outcome.penalties.get(notebook.name)
    # the submission's grades and comments in two queries, not one (nbgrader's find_grade) per cell: at 20
    # grades and 19 comments that was most of a result's recording
    grades, comments = submission_rows(gradebook, submission)
    for entry in outcome.grades:
        grade = grades.get((entry["notebook"], entry["name"]))
        if grade is None:
            raise MissingEntry(_missing("grade", outcome, entry))
        grade.auto_score = entry["auto_score"]
        grade.needs_manual_grade = entry["needs_manual_grade"]
    for entry in outcome.comments:
        comment = comments.get((entry["notebook"], entry["name"]))
        if comment is None:
            raise MissingEntry(_missing("comment", outcome, entry))
        comment.auto_comment = entry["auto_comment"]


def _missing(kind: str, outcome: Outcome, entry: dict) -> str:
    return f"No such {kind}: {outcome.assignment}/{entry['notebook']}/{entry['name']} for {outcome.student}"


def assignment_layout(gradebook, name: str) -> tuple:
    """(assignment id, [(notebook id, notebook name, grade cells, solution cells, task cells)]) of assignment
    ``name``, the cells as (id, name): what Gradebook.add_submission walks to make a submission's rows."""
    assignment = gradebook.find_assignment(name)
    return assignment.id, [
        (
            notebook.id,
            notebook.name,
            [(cell.id, cell.name) for cell in notebook.grade_cells],
            [(cell.id, cell.name) for cell in notebook.solution_cells],
            [(cell.id, cell.name) for cell in notebook.task_cells],
        )
        for notebook in assignment.notebooks
    ]


def _insert_submission(gradebook, outcome: Outcome, layout: tuple):
    """A new submission's rows, as Gradebook.add_submission makes them, with the outcome's values in them."""
    from nbgrader import utils
    from nbgrader.api import Comment, Grade, MissingEntry, SubmittedAssignment, SubmittedNotebook, new_uuid
    from sqlalchemy import insert

    assignment_id, notebooks = layout
    grades = {(g["notebook"], g["name"]): g for g in outcome.grades}
    comments = {(c["notebook"], c["name"]): c for c in outcome.comments}
    submission_id = new_uuid()
    timestamp = utils.parse_utc(outcome.timestamp)
    submitted, grade_rows, comment_rows = [], [], []
    for notebook_id, notebook, grade_cells, solution_cells, task_cells in notebooks:
        submitted_id = new_uuid()
        submitted.append(
            {
                "id": submitted_id,
                "assignment_id": submission_id,
                "notebook_id": notebook_id,
                "flagged": False,
                "late_submission_penalty": outcome.penalties.get(notebook),
            }
        )
        for cell_id, cell in [*grade_cells, *task_cells]:
            entry = grades.pop((notebook, cell), {})
            grade_rows.append(
                {
                    "id": new_uuid(),
                    "notebook_id": submitted_id,
                    "cell_id": cell_id,
                    "auto_score": entry.get("auto_score"),
                    "manual_score": None,
                    "extra_credit": None,
                    "needs_manual_grade": entry.get("needs_manual_grade", True),
                }
            )
        for cell_id, cell in [*solution_cells, *task_cells]:
            entry = comments.pop((notebook, cell), {})
            comment_rows.append(
                {
                    "id": new_uuid(),
                    "notebook_id": submitted_id,
                    "cell_id": cell_id,
                    "auto_comment": entry.get("auto_comment"),
                    "manual_comment": None,
                }
            )
    for kind, left in (("grade", grades), ("comment", comments)):
        if left:
            raise MissingEntry(_missing(kind, outcome, next(iter(left.values()))))
    session = gradebook.db
    session.execute(
        insert(SubmittedAssignment.__table__),
        [
            {
                "id": submission_id,
                "assignment_id": assignment_id,
                "student_id": outcome.student,
                "timestamp": timestamp,
                "extension": None,
            }
        ],
    )
    for table, rows in (
        (SubmittedNotebook.__table__, submitted),
        (Grade.__table__, grade_rows),
        (Comment.__table__, comment_rows),
    ):
        if rows:
            session.execute(insert(table), rows)


def submission_rows(gradebook, submission) -> tuple[dict, dict]:
    """({(notebook, cell name): Grade}, {(notebook, cell name): Comment}) of a submitted assignment: its
    submitted notebooks' ids and names in one query, then its grades and its comments in one query each, the
    cell's name joined in (nothing is loaded lazily afterwards).

    The grades and comments are selected by their own ``notebook_id`` compared with known values (an index
    probe, whatever the statistics: INDEXES or nbgrader's unique (cell_id, notebook_id)), not through a join on
    ``submitted_notebook.assignment_id``: on PostgreSQL, with no statistics yet (a gradebook filled since the
    last ANALYZE), the planner estimated that join at hundreds of rows and read the whole grade and comment
    tables (a sequential scan, 17 ms a result at 10,000 students against 0.3 ms at 100)."""
    from nbgrader.api import BaseCell, Comment, Grade, Notebook, SubmittedNotebook

    notebook_names = dict(
        gradebook.db.query(SubmittedNotebook.id, Notebook.name)
        .join(Notebook, Notebook.id == SubmittedNotebook.notebook_id)
        .filter(SubmittedNotebook.assignment_id == submission.id)
    )
    found = []
    for kind in (Grade, Comment):
        rows = (
            gradebook.db.query(kind, BaseCell.name)
            .join(BaseCell, BaseCell.id == kind.cell_id)
            .filter(kind.notebook_id.in_(list(notebook_names)))
        )
        found.append({(notebook_names[row.notebook_id], cell): row for row, cell in rows})
    return found[0], found[1]


def record_in_gradebook(course: Path, outcome: Outcome, db: str | None = None):
    """Put one outcome into the gradebook in one transaction (a GradebookWriter for one write)."""
    writer = GradebookWriter(db or sqlite_url(course))
    try:
        writer.write(outcome)
    finally:
        writer.close()


def recorded_digest(outcome: Outcome) -> str:
    """What the autograder writes into the gradebook for a submission, as one digest (see gradebook_digest)."""
    items = [(f"grade/{g['notebook']}/{g['name']}", repr(_score(g["auto_score"])).encode()) for g in outcome.grades]
    items += [(f"comment/{c['notebook']}/{c['name']}", repr(c["auto_comment"]).encode()) for c in outcome.comments]
    return digest(items)


def _score(value):
    return None if value is None else float(value)


def gradebook_digest(gradebook, assignment: str, student: str) -> str | None:
    """recorded_digest of what the gradebook holds for ``student`` now (None: no submission). Only the
    autograder's own columns count: a grader's manual score or comment since then changes nothing."""
    from nbgrader.api import MissingEntry

    try:
        submission = gradebook.find_submission(assignment, student)
    except MissingEntry:
        return None
    items = []
    for notebook in submission.notebooks:
        items += [(f"grade/{notebook.name}/{g.name}", repr(_score(g.auto_score)).encode()) for g in notebook.grades]
        items += [(f"comment/{notebook.name}/{c.name}", repr(c.auto_comment).encode()) for c in notebook.comments]
    return digest(items)


def files_digest(autograded: dict, feedback: dict) -> str:
    return digest(
        [*(("autograded/" + k, v) for k, v in autograded.items()), *(("feedback/" + k, v) for k, v in feedback.items())]
    )


def record(course: Path, outcome: Outcome, writer: GradebookWriter):
    """Record a finished outcome, in this order (the journal makes every step repairable, see ``repair``):

    1. journal/<id>.json: what is about to be written (the ledger entry, a digest of the grades, of the files);
    2. autograded/<id>/<assignment>/, then feedback/<id>/<assignment>/: each written under tmp/ and renamed in;
    3. the gradebook: one transaction (GradebookWriter.write);
    4. students/<id>.json, the ledger: the submission's fingerprint; from now on it is up to date;
    5. the journal removed.

    A failure at any step (a full disk, the database refusing) raises; ``repair`` then puts things right at
    once, and a run killed at any step is repaired by the next run.
    """
    entry = {
        "student": outcome.student,
        "assignment": outcome.assignment,
        "fingerprint": outcome.fingerprint,
        "note": outcome.note,
        "worker": outcome.worker,
        "seconds": round(outcome.seconds, 2),
        "feedback_seconds": round(outcome.feedback_seconds, 2),
        "recorded": datetime.now().isoformat(timespec="seconds"),
    }
    journal = journal_path(course, outcome.assignment, outcome.student)
    _write_json(
        journal,
        {
            "ledger": entry,
            "gradebook": recorded_digest(outcome),
            "files": files_digest(outcome.autograded, outcome.feedback),
        },
    )
    checkpoint("journal")
    scratch = scratch_folder(course)
    _place(outcome.autograded, course / "autograded" / outcome.student / outcome.assignment, scratch)
    checkpoint("autograded")
    _place(outcome.feedback, course / "feedback" / outcome.student / outcome.assignment, scratch)
    checkpoint("feedback")
    writer.write(outcome)
    checkpoint("committed")
    # not flushed to disk: a ledger entry lost to a crash of the machine (not of this process, whose writes the
    # system keeps) only makes the student be graded again; the journal and the gradebook's commit are flushed
    _write_json(ledger_path(course, outcome.assignment, outcome.student), entry, durable=False)
    checkpoint("ledger")
    journal.unlink()


def repair(course: Path, writer: GradebookWriter, only: str | None = None) -> dict:
    """Finish or undo the recordings that a run left unfinished (a journal is still there); returns
    {student: what was done}. When the gradebook and the files hold exactly what the journal says (the run
    stopped after the gradebook's commit), the ledger is written: the student is up to date. Otherwise the
    ledger is removed, so the student is graded again (the gradebook holds the previous grades whole, or
    none; the files are replaced when they are graded again)."""
    done = {}
    for path in sorted((course / LEDGER / "assignments").glob("*/journal/*.json")):
        try:
            journal = json.loads(path.read_text())
            student, assignment = journal["ledger"]["student"], journal["ledger"]["assignment"]
        except (OSError, ValueError, KeyError, TypeError):
            path.unlink(missing_ok=True)  # cannot be: journals are renamed in whole
            continue
        if only is not None and student != only:
            continue
        files = files_digest(
            folder_files(course / "autograded" / student / assignment),
            folder_files(course / "feedback" / student / assignment),
        )
        in_gradebook = gradebook_digest(writer.gradebook, assignment, student)
        writer.gradebook.db.remove()
        if files == journal["files"] and in_gradebook == journal["gradebook"]:
            _write_json(ledger_path(course, assignment, student), journal["ledger"])
            done[student] = "recorded in full before the stop: ledger completed"
        else:
            ledger_path(course, assignment, student).unlink(missing_ok=True)
            done[student] = "the recording stopped half-way: graded again"
        path.unlink()
    return done


def ledger(course: Path, assignment: str, student: str) -> dict:
    try:
        return json.loads(ledger_path(course, assignment, student).read_text())
    except (OSError, ValueError):
        return {}


def students_in_gradebook(db: str, name: str) -> set:
    """The students with a submission of assignment ``name`` in the gradebook at ``db`` (read once per run)."""
    from nbgrader.api import Gradebook, SubmittedAssignment

    with Gradebook(db) as gradebook:
        assignment = gradebook.find_assignment(name)
        rows = gradebook.db.query(SubmittedAssignment.student_id).filter(
            SubmittedAssignment.assignment_id == assignment.id
        )
        return {student for (student,) in rows}


def up_to_date(course: Path, assignment, submission: Submission, in_gradebook: set) -> bool:
    """True when this exact submission was graded by this grader and everything it left is in place
    (``assignment``: its ``name`` and ``notebook``, an Assignment or an assignments.Layout; ``in_gradebook``:
    students_in_gradebook)."""
    return (
        ledger(course, assignment.name, submission.student).get("fingerprint") == submission.fingerprint
        and (course / "autograded" / submission.student / assignment.name / f"{assignment.notebook}.ipynb").exists()
        and submission.student in in_gradebook
    )


def tidy(course: Path):
    """Empty .grading/tmp/ (folders a stopped run was writing or swapping out; never a finished grade), and
    remove the temporary files of a stopped _write_json. Call it holding the course lock."""
    scratch = course / LEDGER / "tmp"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True, exist_ok=True)
    for folder in [course / LEDGER, *(course / LEDGER / "assignments").glob("*/*")]:
        for leftover in folder.glob(".*.tmp") if folder.is_dir() else []:
            leftover.unlink(missing_ok=True)


def temporary_prefix() -> str:
    """The name a worker's private folders start with: the host and the process, so that a later run can
    tell the folders of a process that is gone (killed before it could remove them) from live ones."""
    return f"attention-grading-{socket.gethostname()}-{os.getpid()}-"


def sweep_temporary(folder: Path | None = None) -> list[str]:
    """Remove the private grading folders left in ``folder`` (the temporary folder) by processes of this host
    that are gone; returns their names. Folders of running processes are left alone."""
    from autograder import sandbox

    folder = Path(folder or tempfile.gettempdir())
    host = socket.gethostname()
    removed = []
    for path in folder.glob("attention-grading-*"):
        found = re.fullmatch(r"attention-grading-(.+)-(\d+)-[^-]+", path.name)
        if found is None or found[1] != host or sandbox.alive(int(found[2])):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path.name)
    return removed


class CourseLock:
    """One grading run per course at a time: an exclusive lock (flock) on .grading/lock, which the system
    releases when the process ends however it ends, so a lock left by a killed run is never in the way.
    The file says who holds it (host, process, since when, the command); a holder that ended without
    clearing it was stopped (killed, or its machine lost), and the next run says it took over."""

    def __init__(self, course: Path, wait: bool = False, say=print, poll: float = 5.0):
        self.path = Path(course) / LEDGER / "lock"
        self.wait, self.say, self.poll = wait, say, poll
        self.handle = None
        self.took_over = None  # what the file said when this run found it left behind

    def holder(self) -> dict:
        try:
            return json.loads(self.path.read_text() or "{}")
        except (OSError, ValueError):
            return {}

    @staticmethod
    def describe(holder: dict) -> str:
        if not holder:
            return "a run that has not said who it is yet"
        return (
            f"process {holder.get('pid')} on {holder.get('host')}, since {holder.get('since')}"
            f" ({holder.get('command', '?')})"
        )

    def __enter__(self):
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.handle = open(self.path, "a+", encoding="utf-8")
        waited = False
        while True:
            try:
                fcntl.flock(self.handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                holder = self.describe(self.holder())
                if not self.wait:
                    self.handle.close()
                    raise GradingError(
                        f"another grading run holds {self.path.parent.parent}: {holder}. "
                        "Wait for it to finish, or run again with --wait"
                    ) from None
                if not waited:
                    self.say(f"waiting for the grading run that holds {self.path.parent.parent}: {holder}")
                    waited = True
                time.sleep(self.poll)
        left = self.holder()
        if left:
            self.took_over = left
            self.say(f"taking over the lock of a grading run that stopped without releasing it: {self.describe(left)}")
        self.handle.seek(0)
        self.handle.truncate()
        self.handle.write(
            json.dumps(
                {
                    "host": socket.gethostname(),
                    "pid": os.getpid(),
                    "since": datetime.now().isoformat(timespec="seconds"),
                    "command": " ".join(sys.argv)[:300],
                }
            )
        )
        self.handle.flush()
        return self

    def __exit__(self, *_):
        import fcntl

        self.handle.seek(0)
        self.handle.truncate()
        self.handle.flush()
        fcntl.flock(self.handle, fcntl.LOCK_UN)
        self.handle.close()


@dataclass
class Summary:
    graded: list  # students graded in this run
    skipped: list  # students whose grades were up to date
    failed: dict  # {student: why nothing could be recorded}
    notes: dict  # {student: note}
    seconds: float
    repaired: dict = field(default_factory=dict)  # {student: what repair did} for an earlier run's leftovers
    refused_workers: dict = field(default_factory=dict)  # {worker address: why it was not used}


def make_client(scheduler: str | None, jobs: int | None):
    """A Dask client: of the cluster at ``scheduler``, or of a local cluster (one single-threaded worker
    process per job, default one per core)."""
    from dask.distributed import Client, LocalCluster

    if scheduler:
        try:
            return Client(scheduler, timeout="20s"), None
        except OSError as error:
            raise GradingError(
                f"cannot reach the Dask scheduler at {scheduler} ({error}): start one with "
                "`dask scheduler`, or leave out --scheduler to grade on this machine"
            ) from None
    workers = jobs or os.cpu_count() or 1
    cluster = LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        worker_dashboard_address=None,
        silence_logs=40,
    )
    return Client(cluster), cluster


WORKER_CHECK = "__import__('autograder.class_grading', fromlist=['grading']).grader_fingerprint()"


def usable_workers(client, where: str, wait: float = 30.0) -> tuple[list, dict]:
    """(the workers that can grade, {worker: why not}): a worker must import the project and hold the same
    grader code (its fingerprint) as this process. Raises GradingError when no worker joins in ``wait``
    seconds, or when none can grade."""
    if not client.nthreads():
        try:
            client.wait_for_workers(1, timeout=wait)
        except Exception:  # noqa: BLE001 - a TimeoutError (asyncio's or distributed's)
            raise GradingError(
                f"the Dask scheduler {where} has no workers (none joined in {wait:g} s): start "
                "some with `dask worker <scheduler address>`, or leave out --scheduler"
            ) from None
    # eval is sent by reference (a builtin), so a worker without the project can run the check and say so
    # (on_error="return": its ModuleNotFoundError comes back as the answer), where scatter or a task would
    # fail with the raw error deep inside Dask
    answers = client.run(eval, WORKER_CHECK, on_error="return")
    mine = grader_fingerprint()
    good, bad = [], {}
    for address, answer in sorted(answers.items()):
        if isinstance(answer, BaseException):
            bad[address] = (
                f"cannot import the project ({type(answer).__name__}: {answer}): install it there "
                "(pip install -e . in a checkout of the same commit)"
            )
        elif answer != mine:
            bad[address] = (
                f"has other grading code (fingerprint {str(answer)[:12]}, here {mine[:12]}): "
                "install the same commit there"
            )
        else:
            good.append(address)
    if not good:
        raise GradingError(
            f"no Dask worker of {where} can grade:\n" + "\n".join(f"  {address}: {why}" for address, why in bad.items())
        )
    return good, bad


def grade_class(
    course: Path,
    assignment: str,
    students: list[str],
    scheduler: str | None = None,
    jobs: int | None = None,
    config: str = "",
    progress: bool = True,
    regrade: bool = False,
    db: str | None = None,
    task=None,
    forward_cache: bool | None = None,
    wait_for_workers: float = 30.0,
) -> Summary:
    """Grade the submitted/ notebooks of ``assignment`` of ``students`` in ``course`` that are new or changed (all with
    ``regrade``), in parallel, recording each as it finishes into the gradebook at ``db`` (default the
    course's gradebook.db). The course must have run generate_assignment. The caller holds the course's
    lock (CourseLock). ``task`` replaces grade_submission (benchmarks and tests: an instant grader);
    ``forward_cache``: lib's forward passes shared by every notebook (see shared_forward_cache): True, built if
    missing; False, not used; None (default), used when built already, built for FORWARD_CACHE_FROM or more new
    submissions."""
    from autograder import sandbox

    started = time.monotonic()
    course = course.resolve()
    db = db or sqlite_url(course)
    task = task or grade_submission
    tidy(course)
    sweep_temporary()
    writer = GradebookWriter(db)
    try:
        repaired = repair(course, writer)
        warned = {socket.gethostname(): sandbox.warn_once()} if task is grade_submission else {}
        assignment = load_assignment(course, assignment, config, db)
        submissions = [load_submission(course, student, assignment) for student in students]
        in_gradebook = set() if regrade else students_in_gradebook(db, assignment.name)
        todo = [s for s in submissions if regrade or not up_to_date(course, assignment, s, in_gradebook)]
        summary = Summary([], [s.student for s in submissions if s not in todo], {}, {}, 0.0, repaired)
        if todo:
            _grade(
                course,
                todo,
                assignment,
                summary,
                writer,
                scheduler,
                jobs,
                progress,
                task,
                forward_cache,
                wait_for_workers,
                warned,
            )
    finally:
        writer.close()
    for student in summary.skipped:
        note = ledger(course, assignment.name, student).get("note")
        if note:
            summary.notes[student] = note
    summary.seconds = time.monotonic() - started
    return summary


def _grade(
    course, todo, assignment, summary, writer, scheduler, jobs, progress, task, forward_cache, wait_for_workers, warned
):
    from dask.distributed import as_completed
    from tqdm import tqdm

    if task is grade_submission:
        from autograder import model

        if model.available():
            model.cache()  # measure the model once here, not in every local worker at once
        assignment = dataclasses.replace(
            assignment, forward_cache=class_forward_cache(course, len(todo), forward_cache)
        )
    client, cluster = make_client(scheduler, jobs)
    try:
        where = scheduler or "of this machine"
        good, summary.refused_workers = usable_workers(client, where, wait_for_workers)
        for address, why in summary.refused_workers.items():
            print(f"WARNING: Dask worker {address} is not used: {why}", file=sys.stderr, flush=True)
        shared = client.scatter(assignment, broadcast=True, workers=good)
        futures = [
            client.submit(
                task,
                shared,
                submission,
                key=f"grade-{file_key(assignment.name)}-{file_key(submission.student)}-{submission.fingerprint[:12]}",
                pure=False,
                retries=0,
                workers=good,
                allow_other_workers=False,
            )
            for submission in todo
        ]
        student_of = {future.key: submission.student for future, submission in zip(futures, todo)}
        bar = tqdm(
            total=len(futures), desc="grading", unit="notebook", disable=not progress, file=sys.stdout, mininterval=0.5
        )
        # results fetched by Dask's event loop as tasks finish (with_results), taken here in batches, instead of
        # a round trip to the loop per result (a worker lost or a task that raised: its exception, not an Outcome)
        completed = as_completed(futures, with_results=True, raise_errors=False)
        with Recorders(course, writer, summary, warned, bar) as recorders:
            for batch in completed.batches():
                for future, result in batch:
                    recorders.take(student_of[future.key], future.status, result)
                    future.release()
        bar.close()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


RECORDERS = 4  # results recorded at the same time, each by its own GradebookWriter (see Recorders)


class Recorders:
    """Records finished outcomes on RECORDERS threads, each with a GradebookWriter of its own. Each outcome is
    still recorded whole by ``record``, in its order (journal, files, one transaction, ledger); different
    students' recordings overlap, so that one's wait for the disk (the journal's and the database's flush to
    disk, which on a busy machine take longer than everything else a result costs) is another's time to work.
    The gradebook orders the transactions (SQLite: one writer at a time, the others wait; PostgreSQL: rows of
    different students). Leaving the block waits for every recording taken."""

    def __init__(self, course, writer, summary, warned, bar, threads: int = RECORDERS):
        from concurrent.futures import ThreadPoolExecutor

        self.course, self.summary, self.warned, self.bar = course, summary, warned, bar
        self.writers = [writer]
        self.idle = queue.SimpleQueue()
        self.idle.put(writer)
        self.threads = threads
        self.pool = ThreadPoolExecutor(threads, thread_name_prefix="record")
        self.pending = set()

    def _writer(self):
        try:
            return self.idle.get_nowait()
        except queue.Empty:
            writer = GradebookWriter(self.writers[0].url)  # at most one per thread
            self.writers.append(writer)
            return writer

    def _record(self, student, status, result):
        writer = self._writer()
        try:
            _take(self.course, student, status, result, writer, self.summary, self.warned, self.bar)
        finally:
            self.idle.put(writer)
        return student

    def _collect(self, done):
        for job in done:
            self.pending.discard(job)
            student = job.result()  # a bug in recording itself stops the run, as it did before
            self.bar.set_postfix_str(student, refresh=False)
            self.bar.update()

    def take(self, student, status, result):
        from concurrent.futures import FIRST_COMPLETED, wait

        self.pending.add(self.pool.submit(self._record, student, status, result))
        if len(self.pending) >= 2 * self.threads:  # a bounded queue: outcomes are not held by the thousand
            done, _ = wait(self.pending, return_when=FIRST_COMPLETED)
            self._collect(done)
        self._collect([job for job in list(self.pending) if job.done()])

    def __enter__(self):
        return self

    def __exit__(self, kind, *_):
        from concurrent.futures import wait

        try:
            done, _ = wait(self.pending)  # stopped or not, what was taken is recorded (or journalled) whole
            self.pool.shutdown(wait=True)
            if kind is None:
                self._collect(done)
        finally:
            for writer in self.writers[1:]:
                writer.close()


def _take(course, student, status, result, writer, summary, warned, bar):
    """One finished task: its outcome recorded, or why not in summary.failed."""
    if status != "finished" or not isinstance(result, Outcome):
        error = result[1] if isinstance(result, tuple) and len(result) == 3 else result  # (type, exception, traceback)
        summary.failed[student] = f"{type(error).__name__}: {error}"
        return
    outcome = result
    host = outcome.worker.rsplit(":", 1)[0]
    if outcome.unprotected and host not in warned:  # a worker on another machine, once per machine
        warned[host] = outcome.unprotected
        bar.write(f"WARNING: on {host}: {outcome.unprotected}")
    if outcome.error:
        summary.failed[student] = outcome.error
        return
    try:
        record(course, outcome, writer)
    except Exception as error:  # noqa: BLE001 - a full disk, the database refusing: this student only
        summary.failed[student] = f"not recorded ({type(error).__name__}: {error}); graded again next run"
        try:
            repair(course, writer, only=student)
        except Exception:  # noqa: BLE001, S110 - the journal stays; the next run repairs it
            pass
    else:
        summary.graded.append(student)
        if outcome.note:
            summary.notes[student] = outcome.note
