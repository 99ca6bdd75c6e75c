"""Grade a class on every core, or on a Dask cluster, into one nbgrader gradebook.

    from autograder.grading import grade_class
    summary = grade_class(Path("course"), ["ada", "bob"])                    # local: one worker per core
    summary = grade_class(Path("course"), students, scheduler="tcp://10.0.0.5:8786")

Each submission is one task, ``grade_submission(assignment, submission)``, run by a Dask worker: in a
private course folder of its own (a copy of the course's gradebook template, the source, the student's
files), nbgrader's own Autograde and GenerateFeedback run in-process (nbgrader.apps.NbGraderAPI), the
notebook's kernel and the hidden checks' runner in their sandboxes (autograder.sandbox). The task sends
everything back as bytes (``Outcome``), so a worker on another machine needs the project installed but no
shared file system.

The coordinator (this process) records each outcome as it arrives, one at a time, so that a run killed at
any moment loses no finished grade and leaves no half-written one:

1. the autograded and feedback folders are written under .grading/ and renamed into place;
2. the gradebook: a copy of gradebook.db is updated with nbgrader's Gradebook API, flushed to disk and
   renamed over gradebook.db (a rename is atomic: the gradebook is the old one or the new one);
3. the ledger, .grading/<student>.json, written last: the submission's fingerprint (its files, the
   assignment, the grader's code). A submission whose fingerprint matches its ledger, with its autograded
   folder and gradebook entry in place, is not graded again.

A notebook that cannot be read (not JSON, empty, an unknown format), or that nbgrader cannot grade, is
graded as the blank release with a first cell that says why, so the student gets 0 points and a reason,
and the gradebook holds a submission for them like everyone else.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
import socket
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
ASSIGNMENT = "attention"
NOTEBOOK = "attention"
LEDGER = ".grading"  # in the course folder: the ledger and the folders being written
# What decides a grade: a change to any of these grades everyone again (not classroom.py or export.py)
GRADER_CODE = ["nbgrader_config.py", "lib/*.py", *(f"autograder/{name}.py" for name in (
    "checks", "execute", "grade", "grading", "kernel", "model", "operations", "preprocessor", "runner", "sandbox"))]
WORKER_CONFIG = '''"""nbgrader configuration of a private grading folder, written by autograder.grading."""
c = get_config()  # noqa: F821
load_subconfig({repository_config!r})  # noqa: F821
c.CourseDirectory.root = {root!r}
c.CourseDirectory.course_id = "attention"
'''


class GradingError(RuntimeError):
    """The class could not be graded (not a problem of one submission); the message says why."""


# --- what travels between the coordinator and the workers ------------------------------------------------


@dataclass(frozen=True)
class Assignment:
    """What every worker needs: the course's gradebook after generate_assignment, the source, the release."""

    gradebook: bytes
    source: dict  # {path relative to source/attention/: bytes}
    release: bytes  # the release notebook, graded in place of a notebook that cannot be read
    config: str  # lines added to the private folder's nbgrader_config.py (e.g. the cell timeout)
    fingerprint: str
    forward_cache: str | None = None  # lib's forward passes shared by every notebook (see shared_forward_cache)


@dataclass(frozen=True)
class Submission:
    student: str
    files: dict  # {path relative to submitted/<student>/attention/: bytes}
    fingerprint: str


@dataclass
class Outcome:
    student: str
    fingerprint: str
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
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in sorted(folder.rglob("*"))
            if path.is_file() and not path.is_symlink() and ".ipynb_checkpoints" not in path.parts}


def grader_fingerprint() -> str:
    files = [path for pattern in GRADER_CODE for path in REPOSITORY.glob(pattern)]
    return digest((path.relative_to(REPOSITORY).as_posix(), path.read_bytes()) for path in files)


def load_assignment(course: Path, config: str = "") -> Assignment:
    """The Assignment of ``course`` (after nbgrader generate_assignment)."""
    gradebook = (course / "gradebook.db").read_bytes()
    source = folder_files(course / "source" / ASSIGNMENT)
    release = (course / "release" / ASSIGNMENT / f"{NOTEBOOK}.ipynb").read_bytes()
    fingerprint = digest([*(("source/" + k, v) for k, v in source.items()), ("config", config.encode()),
                          ("grader", grader_fingerprint().encode())])
    return Assignment(gradebook, source, release, config, fingerprint)


CACHED_TEXTS = 300  # the notebook measures heads on the first 300 validation products (sections 7 and 8)


def shared_forward_cache(course: Path) -> str | None:
    """lib's forward passes of the texts every notebook runs the model on, recorded once for the class
    (lib.transformer.write_forward_cache, a folder): each kernel then maps them instead of recomputing them,
    the same numbers to the last bit. None when the store's model is missing. Caches of another model, of an
    earlier format or left half-written by a killed run are removed."""
    from autograder import model
    from lib import transformer
    from lib.products import product_texts

    if not model.available():
        return None
    path = course / LEDGER / f"forward-{transformer.model_digest(str(transformer.MODEL_DIR))}"
    path.parent.mkdir(exist_ok=True)
    for stale in path.parent.glob("forward-*"):
        if stale != path:
            shutil.rmtree(stale) if stale.is_dir() and not stale.is_symlink() else stale.unlink()
    if not (path / "index.json").exists():
        transformer.write_forward_cache(path, [ids for ids, _ in product_texts("validation", CACHED_TEXTS)])
    return str(path)


def load_submission(course: Path, student: str, assignment: Assignment) -> Submission:
    files = folder_files(course / "submitted" / student / ASSIGNMENT)
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
    notebook.cells.insert(0, nbformat.v4.new_markdown_cell(
        f"**Your submission could not be graded: {reason}.** It was graded as the blank assignment "
        "(0 points). Your file is kept as you handed it in: open it in JupyterLab, fix it or hand in a "
        "fresh copy of the assignment, and ask your instructor to grade it again."))
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


def _read_results(root: Path, student: str, outcome: Outcome, handed_in: set):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        submission = gradebook.find_submission(ASSIGNMENT, student)
        outcome.timestamp = submission.timestamp
        for notebook in submission.notebooks:
            outcome.penalties[notebook.name] = notebook.late_submission_penalty
            for grade in notebook.grades:
                outcome.grades.append({"notebook": notebook.name, "name": grade.name, "auto_score": grade.auto_score,
                                       "needs_manual_grade": grade.needs_manual_grade})
            for comment in notebook.comments:
                outcome.comments.append({"notebook": notebook.name, "name": comment.name,
                                         "auto_comment": comment.auto_comment})
    # nbgrader's autograded folder: the graded notebook and the files the student handed in; not what the
    # student's kernel wrote there while it ran (scratch files, or junk to fill the instructor's disk)
    autograded = folder_files(root / "autograded" / student / ASSIGNMENT)
    outcome.autograded = {path: data for path, data in autograded.items() if path in handed_in or path == f"{NOTEBOOK}.ipynb"}
    outcome.feedback = folder_files(root / "feedback" / student / ASSIGNMENT)


def _autograde(root: Path, student: str, outcome: Outcome) -> str | None:
    """nbgrader autograde + generate_feedback for one student in the private folder; None, or what failed."""
    api = nbgrader_api(root)
    for step, run in [("autograde", api.autograde), ("generate_feedback", api.generate_feedback)]:
        started = time.monotonic()
        result = run(ASSIGNMENT, student, force=True)
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


def grade_submission(assignment: Assignment, submission: Submission) -> Outcome:
    """Autograde one submission and make its feedback, in a private folder; everything comes back as bytes."""
    started = time.monotonic()
    quiet_nbgrader_warnings()
    from autograder import sandbox

    outcome = Outcome(submission.student, submission.fingerprint, worker=worker_name(),
                      unprotected=sandbox.why_unprotected())
    with tempfile.TemporaryDirectory(prefix="attention-grading-") as scratch:
        root = Path(scratch)
        (root / "gradebook.db").write_bytes(assignment.gradebook)
        for relative, data in assignment.source.items():
            (root / "source" / ASSIGNMENT / relative).parent.mkdir(parents=True, exist_ok=True)
            (root / "source" / ASSIGNMENT / relative).write_bytes(data)
        (root / "lib").symlink_to(REPOSITORY / "lib", target_is_directory=True)
        config = WORKER_CONFIG.format(repository_config=str(REPOSITORY / "nbgrader_config.py"), root=str(root))
        if assignment.forward_cache and Path(assignment.forward_cache).exists():  # not on a worker of another machine
            config += f"c.SandboxedKernelManager.forward_cache = {assignment.forward_cache!r}\n"  # its kernels read it
        (root / "nbgrader_config.py").write_text(config + assignment.config)
        submitted = root / "submitted" / submission.student / ASSIGNMENT
        for relative, data in submission.files.items():
            (submitted / relative).parent.mkdir(parents=True, exist_ok=True)
            (submitted / relative).write_bytes(data)
        notebook = submitted / f"{NOTEBOOK}.ipynb"
        reason = unreadable(notebook.read_bytes())
        failure = None
        if reason is None:
            failure = _autograde(root, submission.student, outcome)
            if failure is not None:
                reason = f"nbgrader could not grade it ({failure})"
        if reason is not None:
            notebook.write_bytes(blank_with_reason(assignment.release, reason))
            outcome.note = f"graded as blank: {reason}"
            failure = _autograde(root, submission.student, outcome)
            if failure is not None:
                outcome.error = failure
                return outcome
        _read_results(root, submission.student, outcome, set(submission.files))
    outcome.seconds = time.monotonic() - started
    return outcome


# --- the coordinator's side -------------------------------------------------------------------------------


def _write_json(path: Path, value):
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(value, indent=1, default=str))
    os.replace(temporary, path)


def _place(files: dict, target: Path, scratch: Path):
    """Write ``files`` into a new folder under ``scratch``, then swap it in for ``target``."""
    fresh = Path(tempfile.mkdtemp(prefix="new-", dir=scratch))
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


def record_in_gradebook(course: Path, outcome: Outcome):
    """Put the outcome into gradebook.db as one atomic change: update a copy, then rename it over the original.

    The instructor's manual scores are kept; the automatic ones, the comments, the late penalty and the
    timestamp are replaced.
    """
    from nbgrader.api import Gradebook

    quiet_nbgrader_warnings()
    original = course / "gradebook.db"
    copy = course / LEDGER / f"gradebook.{os.getpid()}.db"
    shutil.copyfile(original, copy)
    with Gradebook(f"sqlite:///{copy}") as gradebook:
        gradebook.update_or_create_student(outcome.student)
        submission = gradebook.update_or_create_submission(ASSIGNMENT, outcome.student, timestamp=outcome.timestamp)
        for notebook in submission.notebooks:
            notebook.late_submission_penalty = outcome.penalties.get(notebook.name)
        for entry in outcome.grades:
            grade = gradebook.find_grade(entry["name"], entry["notebook"], ASSIGNMENT, outcome.student)
            grade.auto_score = entry["auto_score"]
            grade.needs_manual_grade = entry["needs_manual_grade"]
        for entry in outcome.comments:
            comment = gradebook.find_comment(entry["name"], entry["notebook"], ASSIGNMENT, outcome.student)
            comment.auto_comment = entry["auto_comment"]
        gradebook.db.commit()
    with open(copy, "rb+") as handle:
        os.fsync(handle.fileno())
    os.replace(copy, original)


def record(course: Path, outcome: Outcome):
    """Record a finished outcome: files, then the gradebook, then the ledger (see the module's docstring)."""
    scratch = course / LEDGER
    scratch.mkdir(exist_ok=True)
    _place(outcome.autograded, course / "autograded" / outcome.student / ASSIGNMENT, scratch)
    _place(outcome.feedback, course / "feedback" / outcome.student / ASSIGNMENT, scratch)
    record_in_gradebook(course, outcome)
    _write_json(scratch / f"{outcome.student}.json", {
        "fingerprint": outcome.fingerprint, "note": outcome.note, "worker": outcome.worker,
        "seconds": round(outcome.seconds, 2), "recorded": datetime.now().isoformat(timespec="seconds")})


def ledger(course: Path, student: str) -> dict:
    try:
        return json.loads((course / LEDGER / f"{student}.json").read_text())
    except (OSError, ValueError):
        return {}


def students_in_gradebook(course: Path) -> set:
    """The students with a submission of the assignment in gradebook.db (read once per run)."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        return {submission.student.id for submission in gradebook.find_assignment(ASSIGNMENT).submissions}


def up_to_date(course: Path, submission: Submission, in_gradebook: set) -> bool:
    """True when this exact submission was graded by this grader and everything it left is in place
    (``in_gradebook``: students_in_gradebook(course))."""
    return (ledger(course, submission.student).get("fingerprint") == submission.fingerprint
            and (course / "autograded" / submission.student / ASSIGNMENT / f"{NOTEBOOK}.ipynb").exists()
            and submission.student in in_gradebook)


def tidy(course: Path):
    """Remove what a killed run left half-written under .grading/ (never a finished grade)."""
    scratch = course / LEDGER
    scratch.mkdir(exist_ok=True)
    for leftover in [*scratch.glob("new-*"), *scratch.glob("old-*"), *scratch.glob("gradebook.*.db"), *scratch.glob(".*.tmp")]:
        if leftover.is_dir():
            shutil.rmtree(leftover, ignore_errors=True)
        else:
            leftover.unlink(missing_ok=True)


@dataclass
class Summary:
    graded: list  # students graded in this run
    skipped: list  # students whose grades were up to date
    failed: dict  # {student: why nothing could be recorded}
    notes: dict  # {student: note}
    seconds: float


def make_client(scheduler: str | None, jobs: int | None):
    """A Dask client: of the cluster at ``scheduler``, or of a local cluster (one single-threaded worker
    process per job, default one per core)."""
    from dask.distributed import Client, LocalCluster

    if scheduler:
        try:
            return Client(scheduler, timeout="20s"), None
        except OSError as error:
            raise GradingError(f"cannot reach the Dask scheduler at {scheduler} ({error}): start one with "
                               "`dask scheduler`, or leave out --scheduler to grade on this machine") from None
    workers = jobs or os.cpu_count() or 1
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                           worker_dashboard_address=None, silence_logs=40)
    return Client(cluster), cluster


def grade_class(course: Path, students: list[str], scheduler: str | None = None, jobs: int | None = None,
                config: str = "", progress: bool = True, regrade: bool = False) -> Summary:
    """Grade the submitted/ notebooks of ``students`` in ``course`` that are new or changed (all with
    ``regrade``), in parallel, recording each as it finishes. The course must have run generate_assignment."""
    from dask.distributed import as_completed
    from tqdm import tqdm

    from autograder import sandbox

    started = time.monotonic()
    course = course.resolve()
    tidy(course)
    warned = {socket.gethostname(): sandbox.warn_once()}
    assignment = load_assignment(course, config)
    submissions = [load_submission(course, student, assignment) for student in students]
    in_gradebook = set() if regrade else students_in_gradebook(course)
    todo = [s for s in submissions if regrade or not up_to_date(course, s, in_gradebook)]
    summary = Summary([], [s.student for s in submissions if s not in todo], {}, {}, 0.0)
    if todo:
        from autograder import model

        if model.available():
            model.cache()  # measure the model once here, not in every local worker at once
        assignment = dataclasses.replace(assignment, forward_cache=shared_forward_cache(course))
        client, cluster = make_client(scheduler, jobs)
        try:
            shared = client.scatter(assignment, broadcast=True)
            futures = [client.submit(grade_submission, shared, submission, key=f"grade-{submission.student}-{submission.fingerprint[:12]}",
                                     pure=False, retries=0) for submission in todo]
            bar = tqdm(total=len(futures), desc="grading", unit="notebook", disable=not progress, file=sys.stdout,
                       mininterval=0.5)
            for future in as_completed(futures):
                student = todo[futures.index(future)].student
                try:
                    outcome = future.result()
                except Exception as error:  # noqa: BLE001 - a worker lost or a task that raised
                    summary.failed[student] = f"{type(error).__name__}: {error}"
                else:
                    host = outcome.worker.rsplit(":", 1)[0]
                    if outcome.unprotected and host not in warned:  # a worker on another machine, once per machine
                        warned[host] = outcome.unprotected
                        bar.write(f"WARNING: on {host}: {outcome.unprotected}")
                    if outcome.error:
                        summary.failed[student] = outcome.error
                    else:
                        record(course, outcome)
                        summary.graded.append(student)
                        if outcome.note:
                            summary.notes[student] = outcome.note
                bar.set_postfix_str(student, refresh=False)
                bar.update()
            bar.close()
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    for student in summary.skipped:
        note = ledger(course, student).get("note")
        if note:
            summary.notes[student] = note
    summary.seconds = time.monotonic() - started
    return summary
