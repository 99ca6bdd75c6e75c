"""The feedback pages again after hand grading: the pages made again for exactly the students whose hand grades
(manual scores, extra credit, manual comments in Formgrader) changed since their page was made, and the digest of
those hand grades kept in each student's ledger entry. Called by the class command (autograder.course.run) after
grading and for --feedback-only; it hands the course folder's feedback/ pages to nbgrader's release_feedback.
"""

from __future__ import annotations

from pathlib import Path

from nbgrader.api import (
    Assignment,
    BaseCell,
    Comment,
    Grade,
    Gradebook,
    Notebook,
    SubmittedAssignment,
    SubmittedNotebook,
)
from nbgrader.converters import GenerateFeedback

from autograder.files import write_atomic, write_json
from autograder.grading.ledger import ledger, ledger_path
from autograder.grading.task import digest
from autograder.notebook.pipeline import nbgrader_api
from autograder.settings import Course

FIELD = "feedback_hand_grades"  # in a student's ledger entry: the digest of the hand grades of its feedback page


def hand_digest(items) -> str:
    """The digest of a submission's hand grades: (kind, notebook, cell, value) for every manual score, extra
    credit and manual comment that is set."""
    return digest((f"{kind}/{notebook}/{cell}", repr(value).encode()) for kind, notebook, cell, value in items)


# the feedback of a graded submission is made in a private folder whose gradebook holds no hand grade, and a
# ledger entry without FIELD (grading.ledger.record writes the entry anew) is such a page
NO_HAND_GRADES = hand_digest([])


def hand_grades(db: str, assignment: str) -> tuple[dict, list]:
    """({student: hand_digest} for every student with a submission of ``assignment`` in the gradebook at ``db``,
    the assignment's notebooks)."""
    items = {}
    with Gradebook(db) as gradebook:
        for kind, columns in ((Grade, ("manual_score", "extra_credit")), (Comment, ("manual_comment",))):
            rows = (
                gradebook.db.query(
                    SubmittedAssignment.student_id, Notebook.name, BaseCell.name, *(getattr(kind, c) for c in columns)
                )
                .select_from(kind)
                .join(SubmittedNotebook, SubmittedNotebook.id == kind.notebook_id)
                .join(SubmittedAssignment, SubmittedAssignment.id == SubmittedNotebook.assignment_id)
                .join(Assignment, Assignment.id == SubmittedAssignment.assignment_id)
                .join(Notebook, Notebook.id == SubmittedNotebook.notebook_id)
                .join(BaseCell, BaseCell.id == kind.cell_id)
                .filter(Assignment.name == assignment)
            )
            for student, notebook, cell, *values in rows:
                found = items.setdefault(student, [])
                for column, value in zip(columns, values):
                    if value is not None:
                        found.append((column, notebook, cell, float(value) if column != "manual_comment" else value))
        students = {
            student
            for (student,) in gradebook.db.query(SubmittedAssignment.student_id)
            .join(Assignment, Assignment.id == SubmittedAssignment.assignment_id)
            .filter(Assignment.name == assignment)
        }
        notebooks = [notebook.name for notebook in gradebook.find_assignment(assignment).notebooks]
    return {student: hand_digest(items.get(student, [])) for student in students}, notebooks


class Pages:
    """nbgrader's GenerateFeedback as the course configures it (nbgrader_config.py: the template, HandGrades,
    VerdictStyle), making one student's page at a time in the course folder. The page is written whole, then
    renamed into place, as ``nbgrader generate_feedback`` would write it; the student's id is used as it is
    (nbgrader's command reads it as a file pattern, so an id such as "x[1]" finds nothing there)."""

    def __init__(self, course: Course):
        self.course = course.folder
        api = nbgrader_api(self.course, db=course.db)
        self.db = course.db
        converter = GenerateFeedback(coursedir=api.coursedir, parent=api)
        self.exporter = converter.exporter_class(parent=converter, config=converter.config)
        for step in converter.preprocessors:
            self.exporter.register_preprocessor(step)

    def make(self, assignment: str, student: str, notebook: str) -> Path:
        source = self.course / "autograded" / student / assignment / f"{notebook}.ipynb"
        resources = {
            "unique_key": notebook,
            "output_files_dir": f"{notebook}_files",
            "nbgrader": {"student": student, "assignment": assignment, "notebook": notebook, "db_url": self.db},
        }
        page, _ = self.exporter.from_filename(str(source), resources=resources)
        target = self.course / "feedback" / student / assignment / f"{notebook}.html"
        write_atomic(target, page)
        return target


def refresh(course: Course, assignment: str) -> list[str]:
    """Make the feedback page again for exactly the students of ``assignment`` whose hand grades (manual
    scores, extra credit, manual comments in the gradebook) differ from those their page was made with (the
    ledger's FIELD), and record the new ones in their ledger entries; returns those students. Students the
    classroom has not graded (no ledger entry, no autograded notebook) are left alone. The caller holds the
    course's lock (grading.CourseLock)."""
    value, course = course, course.folder
    digests, notebooks = hand_grades(value.db, assignment)
    pages, changed = None, []
    for student, now in sorted(digests.items()):
        entry = ledger(course, assignment, student)
        folder = course / "autograded" / student / assignment
        made = [notebook for notebook in notebooks if (folder / f"{notebook}.ipynb").is_file()]
        if not entry or entry.get(FIELD, NO_HAND_GRADES) == now or not made:
            continue
        pages = pages or Pages(value)
        for notebook in made:
            pages.make(assignment, student, notebook)
        write_json(ledger_path(course, assignment, student), {**entry, FIELD: now})
        changed.append(student)
    return changed
