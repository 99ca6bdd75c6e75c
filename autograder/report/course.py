"""A graded assignment read into data: each student's scores, stored verdicts, answer code, problems and times.

What it reads: the gradebook (nbgrader's Gradebook API), the autograded notebooks (the verdict each hidden
check stored in its cell's metadata, autograder.verdicts; the kernel's errors; nbclient's timing of each
cell), the release and source notebooks (the starter text, the solution), and the grading ledger (.grading/,
seconds per notebook, why a notebook was graded as blank: verdicts.Blank). How the kernel ended and how long the
hidden checks took are read from the notebook's metadata (verdicts.KernelEnd, verdicts.read_checks_seconds). It
does not import the checks or the course library, and it parses no sentence: a notebook graded before verdicts
were stored is marked stale, with what to do (grade the class again).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from autograder.attempts import read_attempts
from autograder.grading.ledger import entries as ledger_entries
from autograder.settings import CourseSettings
from autograder.term import Term
from autograder.verdicts import (
    Blank,
    KernelEnd,
    StaleVerdicts,
    Verdict,
    checks_ends,
    read_checks_seconds,
    read_kernel_ends,
    read_verdicts,
)

REGRADE = "python -m autograder.course --regrade"
SOLUTION_MARKER = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$", re.M)


@dataclass
class Student:
    id: str
    submitted: bool = False
    state: str = "not submitted"  # answered, blank, unreadable, not submitted
    reason: str = ""  # why it is unreadable, in words (blank.text())
    blank: Blank | None = None  # why it was graded as the blank release (the ledger's), None when it was not
    kernel: list[KernelEnd] = field(default_factory=list)  # how its kernel ended early (the notebook's metadata)
    checks: dict = field(default_factory=dict)  # {check: (score, max_score)} from the gradebook
    written: dict = field(default_factory=dict)  # {cell: (score or None, max_score, needs_manual_grade)}
    notebook_ids: dict = field(default_factory=dict)  # {notebook: the gradebook's submitted notebook id}
    verdicts: dict[str, Verdict] = field(default_factory=dict)  # {check: the verdict its cell stored}
    stale: str = ""  # why the stored verdicts could not be read (graded before they were stored), or ""
    code: dict = field(default_factory=dict)  # {answer cell id: source}
    problems: list = field(default_factory=list)  # [(cell, reason)]
    cells_seconds: dict = field(default_factory=dict)  # {cell label: seconds in the kernel}
    checks_seconds: float | None = None  # the hidden checks' seconds by the clock (the notebook's metadata)
    ledger: dict = field(default_factory=dict)
    submitted_at: datetime | None = None  # when the submission was received (nbgrader's timestamp, UTC)
    due: datetime | None = None  # their own due date: an extension or late days (autograder.course.term), else the
    due_why: str = ""  # assignment's; why it is their own (" (an extension and 1 late day)"), "" when it is not

    @property
    def late_hours(self) -> float:
        """Hours after their own due date the submission came (0 when on time, or without a date)."""
        if self.submitted_at is None or self.due is None or self.submitted_at <= self.due:
            return 0.0
        return (self.submitted_at - self.due).total_seconds() / 3600

    @property
    def auto(self) -> float:
        return sum(score for score, _ in self.checks.values())

    @property
    def auto_top(self) -> float:
        return sum(top for _, top in self.checks.values())


@dataclass
class GradedAssignment:
    """One assignment of a graded course, as the report needs it."""

    course: Path
    name: str
    notebooks: list[str] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)  # the code grade cells, in the source notebook's order
    written: list[str] = field(default_factory=list)  # the written-answer grade cells, in order
    release: dict = field(default_factory=dict)  # {notebook: the release notebook (dict) or None}
    source: dict = field(default_factory=dict)  # {notebook: the source notebook (dict) or None}
    students: list[Student] = field(default_factory=list)
    attempts: list = field(default_factory=list)  # the instant checks of each Submit (autograder.attempts.Attempt)
    notes: list = field(default_factory=list)  # what could not be read, in sentences

    @property
    def submitted(self) -> list[Student]:
        return [s for s in self.students if s.submitted]

    @property
    def answered(self) -> list[Student]:
        return [s for s in self.submitted if s.state == "answered"]

    @property
    def stale(self) -> list[Student]:
        """The students whose notebooks were graded before verdicts were stored as data."""
        return [s for s in self.submitted if s.stale]

    def stale_message(self) -> str:
        """What to do about stale notebooks, in one sentence ("" when there are none)."""
        stale = self.stale
        if not stale:
            return ""
        names = ", ".join(s.id for s in stale[:10]) + (f" and {len(stale) - 10} more" if len(stale) > 10 else "")
        return (
            f"{len(stale)} of {len(self.submitted)} submitted notebooks of {self.name} were autograded before "
            f"verdicts were stored as data ({names}): their properties and mistakes are missing from the report. "
            f"Grade the class again ({REGRADE}), then make the report again."
        )


# --- notebooks ---------------------------------------------------------------------------------------------


def text_of(source) -> str:
    return "".join(source) if isinstance(source, list) else (source or "")


def read_notebook(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def nbgrader_meta(cell: dict) -> dict:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, dict) else {}


def answer_cells(notebook: dict | None) -> dict:
    """{grade_id: source} of the notebook's autograded answer cells (code, solution), in order."""
    cells = {}
    for cell in (notebook or {}).get("cells", []):
        meta = nbgrader_meta(cell)
        if cell.get("cell_type") == "code" and meta.get("solution") and not meta.get("grade") and meta.get("grade_id"):
            cells.setdefault(meta["grade_id"], text_of(cell.get("source")))
    return cells


def solution_cells(notebook: dict | None) -> dict:
    """The source notebook's answer cells with the solution markers taken out."""
    return {key: SOLUTION_MARKER.sub("", code) for key, code in answer_cells(notebook).items()}


def squeeze(code: str) -> str:
    return re.sub(r"\s+", "", code)


def cell_label(number: int, cell: dict) -> str:
    grade_id = nbgrader_meta(cell).get("grade_id")
    if grade_id:
        return grade_id
    first = next((line.strip() for line in text_of(cell.get("source")).splitlines() if line.strip()), "")
    return f"cell {number}: {first[:40]}"


def cell_seconds(cell: dict) -> float | None:
    timing = cell.get("metadata", {}).get("execution", {})
    if not isinstance(timing, dict):  # a cell nbclient did not run (markdown, empty) keeps the student's metadata
        return None
    start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
    if not (start and end):
        return None
    try:
        return (
            datetime.fromisoformat(end.replace("Z", "+00:00")) - datetime.fromisoformat(start.replace("Z", "+00:00"))
        ).total_seconds()
    except (TypeError, ValueError, AttributeError):
        return None


def graded_verdicts(notebook: dict) -> dict[str, Verdict]:
    """{check: Verdict} stored in the notebook's graded code cells (nbgrader restores those cells from the
    source, so a verdict a student planted in an answer cell's metadata is not read). StaleVerdicts when the
    notebook was graded before verdicts were stored; ValueError when a stored verdict is not one."""
    graded = [
        cell
        for cell in notebook.get("cells", [])
        if cell.get("cell_type") == "code" and nbgrader_meta(cell).get("grade")
    ]
    try:
        verdicts = read_verdicts({"cells": graded})
    except StaleVerdicts:
        raise
    except (TypeError, KeyError, ValueError, AttributeError) as error:
        raise ValueError(f"a stored verdict cannot be read ({type(error).__name__}: {error})") from None
    return {check: verdict for check, verdict in verdicts.items() if isinstance(verdict, Verdict)}


# --- one student's autograded notebook --------------------------------------------------------------------


def read_verdicts_into(student: Student, notebook: dict) -> None:
    try:
        graded = graded_verdicts(notebook)
        student.verdicts.update(graded)
        for checks, end in checks_ends(graded):  # how the hidden checks were cut short, as the verdicts store it
            student.problems.append((f"hidden checks ({', '.join(checks)})", end.what()))
    except StaleVerdicts as error:
        student.stale = str(error)
    except ValueError as error:
        student.problems.append(("", f"{error}: grade this notebook again ({REGRADE} --student {student.id})"))


def read_kernel_problems(student: Student, notebook: dict) -> None:
    """Each cell's time in the kernel, and how the kernel ended early (the KernelEnd list SurvivingExecute stored in
    the notebook's metadata), one problem per end; nothing for a notebook autograded before they were stored."""
    cells = notebook.get("cells", [])
    for number, cell in enumerate(cells, start=1):
        label = cell_label(number, cell)
        seconds = cell_seconds(cell)
        if seconds is not None:
            student.cells_seconds[label] = student.cells_seconds.get(label, 0.0) + seconds
    try:
        ends = read_kernel_ends(notebook)
    except ValueError as error:
        student.problems.append(("", f"{error}: grade this notebook again ({REGRADE} --student {student.id})"))
        return
    student.kernel.extend(ends or [])  # None: autograded before they were stored (the next class run grades it again)
    for end in ends or []:
        label = cell_label(end.cell, cells[end.cell - 1]) if 0 < end.cell <= len(cells) else ""
        where = label if label.startswith("cell ") or not label else f"cell {end.cell} ({label})"
        student.problems.append((where or f"cell {end.cell}", end.what()))


def read_autograded(student: Student, notebook: dict | None, release: dict) -> None:
    if notebook is None:
        if student.submitted:
            student.problems.append(("", "no autograded notebook (not graded, or grading failed)"))
        return
    read_verdicts_into(student, notebook)
    read_kernel_problems(student, notebook)
    student.checks_seconds = read_checks_seconds(notebook)
    student.code = answer_cells(notebook)
    starter = answer_cells(release)
    same = all(squeeze(student.code.get(key, "")) == squeeze(code) for key, code in starter.items())
    student.state = "blank" if starter and same else "answered"


# --- the course folder and its gradebook -------------------------------------------------------------------


def database_url(course: Path) -> str:
    """The course's gradebook, as its settings name it (autograder.settings)."""
    return CourseSettings.read(course).db


def assignments_of(*, course: Path, db: str | None = None) -> list[str]:
    """The names of the assignments in the course's gradebook."""
    with Gradebook(db or database_url(course)) as gradebook:
        return [assignment.name for assignment in gradebook.assignments]


def read_grade_cells(gradebook: Gradebook, graded: GradedAssignment) -> None:
    """The assignment's notebooks and grade cells, in the order of the source notebooks' cells."""
    found = gradebook.find_assignment(graded.name)
    graded.notebooks = sorted(notebook.name for notebook in found.notebooks)
    order = {}
    for name in graded.notebooks:
        source = read_notebook(graded.course / "source" / graded.name / f"{name}.ipynb")
        for cell in (source or {}).get("cells", []):
            grade_id = nbgrader_meta(cell).get("grade_id")
            if grade_id:
                order.setdefault(grade_id, len(order))
        cells = gradebook.find_notebook(name, graded.name).grade_cells
        for cell in sorted(cells, key=lambda c: (order.get(c.name, len(order)), c.name)):
            (graded.checks if cell.cell_type == "code" else graded.written).append(cell.name)


def read_grades(gradebook: Gradebook, assignment: str, student_id: str) -> Student:
    """One student's submission as the gradebook records it: scores of the checks and written answers."""
    student = Student(student_id)
    try:
        submission = gradebook.find_submission(assignment, student_id)
    except MissingEntry:
        return student
    student.submitted, student.state = True, "answered"
    student.submitted_at = submission.timestamp
    for notebook in submission.notebooks:
        student.notebook_ids[notebook.name] = notebook.id
        for grade in notebook.grades:
            if grade.cell_type == "code":
                student.checks[grade.name] = (float(grade.score or 0.0), float(grade.max_score or 0.0))
            else:
                score = None if grade.needs_manual_grade else float(grade.score or 0.0)
                student.written[grade.name] = (score, float(grade.max_score or 0.0), bool(grade.needs_manual_grade))
    return student


def read_due_dates(graded: GradedAssignment, base: datetime | None, db: str) -> None:
    """Each student's own due date (their extension and late days, the course's term), else the assignment's
    (``base``); the assignment's for all, with a problem said, where the term cannot be read."""
    try:
        term = Term(db)
        try:
            standings = term.standings(assignment=graded.name, base=base)
        finally:
            term.close()
    except Exception as error:  # noqa: BLE001 - any database trouble: the assignment's date, and why
        standings = {}
        graded.notes.append(f"each student's own due date could not be read ({error}): the assignment's is shown")
    for student in graded.students:
        standing = standings.get(student.id)
        student.due = standing.due if standing is not None else base
        student.due_why = standing.why() if standing is not None else ""


def read_course(
    *, course: Path, assignment: str, db: str | None = None, only: set[str] | None = None
) -> GradedAssignment:
    """The students of ``assignment`` and what the report needs besides. ``db``: the gradebook's URL (default:
    database_url); ``only``: these students (default: everyone in the gradebook)."""
    course = Path(course)
    graded = GradedAssignment(course=course, name=assignment)
    graded.attempts = read_attempts(db or database_url(course), assignment)
    with Gradebook(db or database_url(course)) as gradebook:
        read_grade_cells(gradebook, graded)
        for record in sorted(gradebook.students, key=lambda s: s.id):
            if only is None or record.id in only:
                graded.students.append(read_grades(gradebook, assignment, record.id))
        try:
            base = gradebook.find_assignment(assignment).duedate
        except MissingEntry:
            base = None
    read_due_dates(graded, base, db or database_url(course))
    for name in graded.notebooks:
        graded.release[name] = read_notebook(course / "release" / assignment / f"{name}.ipynb")
        graded.source[name] = read_notebook(course / "source" / assignment / f"{name}.ipynb")
    entries = ledger_entries(course, assignment)  # the ledger says who was graded, and its notes
    for student in graded.students:
        student.ledger = entries.get(student.id, {})
        if not student.submitted:
            continue
        for name in graded.notebooks:
            notebook = read_notebook(course / "autograded" / student.id / assignment / f"{name}.ipynb")
            read_autograded(student, notebook, graded.release[name] or {})
        try:
            student.blank = Blank.from_dict(student.ledger.get("blank"))
        except (TypeError, ValueError) as error:
            student.problems.append(("", f"the ledger's blank reason cannot be read ({error}): grade it again"))
        if student.blank is not None:  # graded as the blank release, and why (the worker's, as data)
            student.state, student.reason = "unreadable", student.blank.text()
    return graded
