"""The worker: one submission graded in a private folder, everything sent back as bytes (``Outcome``).

In a private course folder of its own (the source, the student's files; its gradebook an in-memory copy of the
course's gradebook template, gradebook.scratch_gradebook), nbgrader's own Autograde and GenerateFeedback run
in-process, on the chain autograder.notebook.pipeline assembles; the notebook's kernel and the hidden checks' runner run
in their sandboxes (autograder.sandbox).
Only the files nbgrader made come back: the graded notebook with the files the student handed in, and the
feedback page; nothing the student's kernel wrote while it ran.

A notebook that cannot be read (not JSON, empty, an unknown format), or that nbgrader cannot grade, is
graded as the blank release with a first cell that says why, so the student gets 0 points and a reason,
and the gradebook holds a submission for them like everyone else. Why is data (``Outcome.blank``, a
verdicts.Blank), and so is how the student's kernel ended (``Outcome.kernel``, the verdicts.KernelEnd list that
SurvivingExecute stored in the graded notebook, within the notebook's wall-clock budget); both go to the ledger.
"""

from __future__ import annotations

import dataclasses
import html
import json
import os
import re
import shutil
import socket
import tempfile
import threading
import time
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook

from autograder import REPOSITORY, sandbox, verdicts
from autograder.grading import forward
from autograder.grading.gradebook import quiet_nbgrader_warnings, scratch_gradebook
from autograder.grading.readable import unreadable as unreadable  # the rule, shared with the instant checks
from autograder.grading.task import Assignment, Outcome, Submission, temporary_prefix
from autograder.notebook.pipeline import nbgrader_api
from autograder.verdicts import Blank, read_kernel_ends


def blank_with_reason(release: bytes, blank: Blank) -> bytes:
    """The release notebook with a first cell that says why it is graded instead of the student's."""
    notebook = nbformat.reads(release.decode("utf-8"), as_version=4)
    # the reason may quote the file's first characters: escaped, so that nothing of it is live in a page
    # (``<img onerror=...>`` would run in the feedback's HTML), and the Markdown of it shown as text
    shown = re.sub(r"([\\`*_{}\[\]()#+!|~-])", r"\\\1", html.escape(blank.text(), quote=False))
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


def read_results(root: Path, outcome: Outcome, *, submission: Submission, assignment: Assignment, db: str) -> None:
    """The grades, comments, late penalties and timestamp nbgrader wrote into the scratch gradebook ``db``, and the
    files it made, into ``outcome``."""
    with Gradebook(db) as gradebook:
        graded = gradebook.find_submission(assignment.name, PRIVATE_ID)
        outcome.timestamp = graded.timestamp
        for notebook in graded.notebooks:
            outcome.penalties[notebook.name] = notebook.late_submission_penalty
            outcome.grades += [
                {
                    "notebook": notebook.name,
                    "name": grade.name,
                    "auto_score": grade.auto_score,
                    "needs_manual_grade": grade.needs_manual_grade,
                }
                for grade in notebook.grades
            ]
            outcome.comments += [
                {"notebook": notebook.name, "name": comment.name, "auto_comment": comment.auto_comment}
                for comment in notebook.comments
            ]
    outcome.autograded, outcome.feedback = made_files(root, submission=submission, assignment=assignment)
    graded = json.loads(outcome.autograded[f"{assignment.notebook}.ipynb"])
    outcome.kernel = read_kernel_ends(graded) or []


EXCHANGE_FILES = ("timestamp.txt", "submission_secret.txt")  # what nbgrader's collect brings with a notebook


def made_files(root: Path, *, submission: Submission, assignment: Assignment) -> tuple[dict, dict]:
    """({path: bytes} of the autograded folder, of the feedback folder): only what nbgrader made, never a file
    the student's kernel wrote while it ran (its working folder is the autograded folder, and nbgrader's
    GenerateFeedback copies that folder's other files into feedback/, which release_feedback hands out). The
    autograded folder: the graded notebook and the files the student handed in that nbgrader copied, as handed
    in; the feedback folder: the notebook's page, and the exchange's timestamp.txt and submission_secret.txt as
    handed in (nbgrader's release_feedback names each page in the exchange by them)."""
    notebook = f"{assignment.notebook}.ipynb"
    graded = root / "autograded" / PRIVATE_ID / assignment.name / notebook
    page = root / "feedback" / PRIVATE_ID / assignment.name / f"{assignment.notebook}.html"
    copied = graded.parent  # nbgrader copied the handed-in files there, but for its ignored names (checks.py)
    autograded = {path: data for path, data in submission.files.items() if (copied / path).is_file()}
    autograded[notebook] = graded.read_bytes()
    from_exchange = {name: submission.files[name] for name in EXCHANGE_FILES if name in submission.files}
    return autograded, {page.name: page.read_bytes(), **from_exchange}


def autograde(root: Path, outcome: Outcome, assignment: Assignment, db: str) -> str | None:
    """nbgrader autograde + generate_feedback of the private folder's student, its gradebook ``db``; None, or what
    failed."""
    api = nbgrader_api(root, options=assignment.chain, db=db)
    for step, run in [("autograde", api.autograde), ("generate_feedback", api.generate_feedback)]:
        started = time.monotonic()
        result = run(assignment.name, PRIVATE_ID, force=True)
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
    started, meter = time.monotonic(), ChildrenCpu().start()
    quiet_nbgrader_warnings()
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
    with (
        tempfile.TemporaryDirectory(prefix=temporary_prefix()) as scratch,
        scratch_gradebook(assignment.gradebook) as db,
    ):
        root = Path(scratch)
        notebook = private_folder(root, assignment, submission)
        assignment = with_local_forward_cache(assignment, root / "source" / assignment.name)
        if submission.extension:
            extend_in_scratch(db, assignment.name, submission.extension)
        outcome.extension = submission.extension
        blank = unreadable(notebook.read_bytes())
        if blank is None:
            failure = autograde(root, outcome, assignment, db)
            if failure is not None:
                blank = Blank(verdicts.UNGRADABLE, failure)
        if blank is not None:
            notebook.write_bytes(blank_with_reason(assignment.release, blank))
            outcome.blank, outcome.note = blank, f"graded as blank: {blank.text()}"
            failure = autograde(root, outcome, assignment, db)
            if failure is not None:
                outcome.error = failure
                return outcome
        read_results(root, outcome, submission=submission, assignment=assignment, db=db)
    outcome.seconds = time.monotonic() - started
    outcome.children_cpu = meter.stop()
    return outcome


class ChildrenCpu:
    """The CPU seconds of the processes this one starts while it grades (the kernel, the hidden checks' runner,
    inside bubblewrap), read from /proc every ``every`` seconds: the system's own count of children's time
    (RUSAGE_CHILDREN) misses them, because bubblewrap's processes in their PID namespace are never reaped by
    their parent. What a process uses after its last reading is missed (at most ``every`` seconds of it)."""

    def __init__(self, every: float = 0.5):
        self.every, self.used, self.done = every, {}, threading.Event()
        self.thread = threading.Thread(target=self.run, name="children-cpu", daemon=True)
        self.ticks = os.sysconf("SC_CLK_TCK")

    def start(self) -> ChildrenCpu:
        self.thread.start()
        return self

    def read(self) -> None:
        for pid in sandbox.descendants(os.getpid()):
            try:
                with open(f"/proc/{pid}/stat", "rb") as handle:
                    fields = handle.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue  # ended meanwhile
            self.used[pid] = (int(fields[11]) + int(fields[12])) / self.ticks  # utime, stime

    def run(self) -> None:
        while not self.done.wait(self.every):
            self.read()

    def stop(self) -> float:
        self.done.set()
        self.thread.join()
        return sum(self.used.values())


def extend_in_scratch(db: str, name: str, extension) -> None:
    """The private student's submission of ``name`` made in the scratch gradebook ``db`` with their ``extension``
    before nbgrader's autograde, which keeps it (it updates the timestamp only), so that nbgrader's own
    AssignLatePenalties counts the seconds late from the student's own due date."""
    with Gradebook(db) as gradebook:
        gradebook.update_or_create_student(PRIVATE_ID)
        gradebook.update_or_create_submission(name, PRIVATE_ID, extension=extension)


def with_local_forward_cache(assignment: Assignment, source: Path) -> Assignment:
    """``assignment`` with the class's forward cache as a folder of this machine (forward.on_this_machine): the
    coordinator's, or the same one built here once."""
    wanted = assignment.chain.forward_cache
    local = forward.on_this_machine(wanted, source)
    if local == wanted:
        return assignment
    return dataclasses.replace(assignment, chain=dataclasses.replace(assignment.chain, forward_cache=local))


def private_folder(root: Path, assignment: Assignment, submission: Submission) -> Path:
    """The private course folder at ``root``: the source, lib, the student's files under PRIVATE_ID (its gradebook
    is in memory, scratch_gradebook). Returns the submitted notebook's path."""
    for folder, files in (("source", assignment.source), (f"submitted/{PRIVATE_ID}", submission.files)):
        for relative, data in files.items():
            path = root / folder / assignment.name / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    (root / "lib").symlink_to(REPOSITORY / "lib", target_is_directory=True)
    return root / "submitted" / PRIVATE_ID / assignment.name / f"{assignment.notebook}.ipynb"


def sweep_temporary(folder: Path | None = None) -> list[str]:
    """Remove the private grading folders left in ``folder`` (the temporary folder) by processes of this host
    that are gone; returns their names. Folders of running processes are left alone."""
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
