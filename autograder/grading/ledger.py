"""The ledger: what the coordinator keeps beside the gradebook so that a run killed at any moment loses no
finished grade and leaves no half-written one (``record`` gives the order, ``repair`` finishes or undoes); its files
are written whole or not at all (autograder.files).

.grading/ in the course folder, the coordinator's own files (no name in it is made from a student id
unless it is under students/ or journal/, so no id can collide with them):

    lock                                    who is grading the class now (autograder.grading.lock.CourseLock)
    assignments/<name>/students/<id>.json   the ledger: one per student, written last (see record)
    assignments/<name>/journal/<id>.json    a recording in progress: what it is about to write (see record, repair)
    assignments/<name>/release.json         the source digest of the last release (autograder.course.run.release)
    tmp/                                    folders being written or swapped out, emptied by every run

<id> is the student id, percent-quoted (urllib.parse.quote, nothing safe), or a hash of it when that is long.
(The class's forward cache is per user, not per course: autograder.grading.forward.)
"""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import datetime
from pathlib import Path
from urllib.parse import quote

from nbgrader.api import MissingEntry

from autograder.files import place_folder, write_json
from autograder.grading.gradebook import GradebookWriter
from autograder.grading.task import LEDGER, Outcome, Submission, digest, folder_files

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
        "blank": outcome.blank.to_dict() if outcome.blank else None,  # verdicts.Blank: why graded as blank
        "kernel": [end.to_dict() for end in outcome.kernel],  # verdicts.KernelEnd: how the kernel ended early
        "worker": outcome.worker,
        "seconds": round(outcome.seconds, 2),
        "feedback_seconds": round(outcome.feedback_seconds, 2),
        "children_cpu": round(outcome.children_cpu, 2),
        "recorded": datetime.now().isoformat(timespec="seconds"),
    }
    journal = journal_path(course, outcome.assignment, outcome.student)
    write_json(
        journal,
        {
            "ledger": entry,
            "gradebook": recorded_digest(outcome),
            "files": files_digest(outcome.autograded, outcome.feedback),
        },
    )
    checkpoint("journal")
    scratch = scratch_folder(course)
    place_folder(outcome.autograded, course / "autograded" / outcome.student / outcome.assignment, scratch)
    checkpoint("autograded")
    place_folder(outcome.feedback, course / "feedback" / outcome.student / outcome.assignment, scratch)
    checkpoint("feedback")
    writer.write(outcome, before_commit=lambda: checkpoint("in-transaction"))  # looked up when called: tests replace it
    checkpoint("committed")
    # not flushed to disk: a ledger entry lost to a crash of the machine (not of this process, whose writes the
    # system keeps) only makes the student be graded again; the journal and the gradebook's commit are flushed
    write_json(ledger_path(course, outcome.assignment, outcome.student), entry, durable=False)
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
            write_json(ledger_path(course, assignment, student), journal["ledger"])
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


def entries(course: Path, assignment: str) -> dict:
    """{student: ledger entry} of every student of ``assignment`` graded in ``course`` (each entry names its
    student and assignment), also from the layouts of earlier versions (.grading/students/*.json,
    .grading/<student>.json), which knew one assignment and are read for any."""
    found = {}
    folder = course / LEDGER
    paths = [
        *sorted((assignment_folder(course, assignment) / "students").glob("*.json")),
        *sorted(folder.glob("students/*.json")),
        *sorted(folder.glob("*.json")),
    ]
    for path in paths:
        try:
            entry = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(entry, dict) and "fingerprint" in entry and entry.get("assignment", assignment) == assignment:
            found.setdefault(entry.get("student") or path.stem, entry)
    return found


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
    remove the temporary files of a stopped write_json. Call it holding the course lock."""
    scratch = course / LEDGER / "tmp"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True, exist_ok=True)
    for folder in [course / LEDGER, *(course / LEDGER / "assignments").glob("*/*")]:
        for leftover in folder.glob(".*.tmp") if folder.is_dir() else []:
            leftover.unlink(missing_ok=True)
