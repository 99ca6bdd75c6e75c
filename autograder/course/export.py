"""An nbgrader export plugin: one CSV row per student, per graded cell (each check and each written answer).

    nbgrader export --exporter=autograder.course.export.ChecksExport --to checks.csv
    nbgrader export --exporter=autograder.course.export.ChecksExport --to checks.csv --assignment=[attention]
    --student=[ada]

nbgrader's own CsvExportPlugin writes one row per student and assignment (the total score). This one keeps
the detail the gradebook has per grade cell, so a class's results can be read check by check:

    student_id, assignment, notebook, grade_id, cell_type, score, max_score, auto_score, manual_score,
    needs_manual_grade, graded_by

- score: the gradebook's score of the cell (a manual score wins over the automatic one, extra credit added),
  as nbgrader computes it; 0.0 for a student who submitted nothing, as in nbgrader's own export;
- auto_score / manual_score: empty when not set (auto_score is empty for a written answer that awaits a
  grader; nbgrader gives an unchanged answer cell an automatic 0);
- needs_manual_grade: True while a grader still has to look at the cell;
- graded_by: "manual" (a grader's score), "auto" (the autograder's), "pending" (neither yet: it needs a
  grader) or "not submitted".

Rows come in a fixed order: students by id, assignments in the gradebook's order (due date, then name),
notebooks by name, cells in the order of the source notebook (source/<assignment>/<notebook>.ipynb under the
course directory) when it is there, else by name (the gradebook keeps no cell positions); a source notebook that
is there but malformed stops the export with MalformedNotebook, naming the file and what is wrong.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins import ExportPlugin
from traitlets import Unicode

COLUMNS = [
    "student_id",
    "assignment",
    "notebook",
    "grade_id",
    "cell_type",
    "score",
    "max_score",
    "auto_score",
    "manual_score",
    "needs_manual_grade",
    "graded_by",
]


def number(value) -> str:
    """A score as CSV text: '' for None, otherwise the float's shortest form (2.0 -> '2.0', 0.67 -> '0.67')."""
    return "" if value is None else repr(float(value))


class MalformedNotebook(ValueError):
    """A source notebook whose cells cannot be read: the message names the file and what is wrong in it."""


def cell_order(path) -> dict[str, int]:
    """{grade_id: position} of the nbgrader cells of the notebook at ``path`` ({} when there is no such file, or no
    path: the cells then go by name). A file that is not a notebook's JSON (cells, each an object with its metadata)
    raises MalformedNotebook, naming the file and what is wrong."""
    if path is None:  # ChecksExport outside an nbgrader app, without course_root
        return {}
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as error:
        raise MalformedNotebook(f"{path}: cannot be read as a notebook ({error})") from None
    try:
        notebook = json.loads(text)
    except ValueError as error:
        raise MalformedNotebook(f"{path}: not a notebook's JSON ({error}): restore the source notebook") from None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        raise MalformedNotebook(
            f"{path}: a notebook is a JSON object with a list of cells, this is {kind(notebook)}"
            + ("" if not isinstance(notebook, dict) else f" whose cells are {kind(cells)}")
            + ": restore the source notebook"
        )
    order = {}
    for number, cell in enumerate(cells):
        grade_id = grade_id_of(cell, f"{path}: cell {number}")
        if grade_id is not None:
            order.setdefault(str(grade_id), len(order))
    return order


def grade_id_of(cell, where: str):
    """The cell's nbgrader grade_id (None without one); MalformedNotebook when the cell, its metadata or its nbgrader
    metadata is not an object."""
    metadata = an_object(cell, where).get("metadata", {})
    nbgrader = an_object(metadata, f"{where}'s metadata").get("nbgrader", {})
    return an_object(nbgrader, f"{where}'s nbgrader metadata").get("grade_id")


def an_object(value, what: str) -> dict:
    if not isinstance(value, dict):
        raise MalformedNotebook(f"{what} is {kind(value)}, not an object: restore the source notebook")
    return value


def kind(value) -> str:
    """What a JSON value is, in words: 'a list', 'a string', 'null'."""
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def graded_cells(notebook, order: dict[str, int] | None = None) -> list:
    """The notebook's grade and task cells, in ``order`` ({grade_id: position}) and then by name."""
    order = order or {}
    cells = list(notebook.grade_cells) + list(notebook.task_cells)
    return sorted(cells, key=lambda cell: (order.get(cell.name, len(order)), cell.name))


def graded_by(grade) -> str:
    if grade.manual_score is not None:
        return "manual"
    if grade.auto_score is not None:
        return "auto"
    return "pending"


def check_rows(gradebook: Gradebook, students=(), assignments=(), source=None) -> list[dict]:
    """One dict per (student, assignment, notebook, graded cell), with the COLUMNS as keys (values as text).

    source: a function (assignment, notebook) -> path of the source notebook, for the cells' order (optional).
    """
    rows = []
    chosen_students = sorted((s for s in gradebook.students if not students or s.id in students), key=lambda s: s.id)
    for assignment in gradebook.assignments:
        if assignments and assignment.name not in assignments:
            continue
        for student in chosen_students:
            for notebook in sorted(assignment.notebooks, key=lambda n: n.name):
                order = cell_order(source(assignment.name, notebook.name)) if source else {}
                for cell in graded_cells(notebook, order):
                    row = {
                        "student_id": student.id,
                        "assignment": assignment.name,
                        "notebook": notebook.name,
                        "grade_id": cell.name,
                        "cell_type": getattr(cell, "cell_type", "task"),
                        "max_score": number(cell.max_score),
                    }
                    try:
                        grade = gradebook.find_grade(cell.name, notebook.name, assignment.name, student.id)
                    except MissingEntry:
                        row.update(
                            score=number(0.0),
                            auto_score="",
                            manual_score="",
                            needs_manual_grade="False",
                            graded_by="not submitted",
                        )
                    else:
                        row.update(
                            score=number(grade.score),
                            auto_score=number(grade.auto_score),
                            manual_score=number(grade.manual_score),
                            needs_manual_grade=str(bool(grade.needs_manual_grade)),
                            graded_by=graded_by(grade),
                        )
                    rows.append(row)
    return rows


def write_checks(rows: list[dict], destination) -> None:
    """check_rows as checks.csv: a header of COLUMNS, then a line per row."""
    with open(destination, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def course_check_rows(gradebook: Gradebook, course: Path) -> list[dict]:
    """check_rows of every student and assignment of ``course``, its cells in its source notebooks' order (what
    ChecksExport(course_root=course) writes)."""
    return check_rows(
        gradebook, source=lambda assignment, notebook: course / "source" / assignment / f"{notebook}.ipynb"
    )


class ChecksExport(ExportPlugin):
    """Export every grade cell's score per student (``--to``, default checks.csv)."""

    course_root = Unicode(
        None, allow_none=True, help="The course folder, for the cells' order when not run by an nbgrader app"
    ).tag(config=True)

    def export(self, gradebook: Gradebook) -> None:
        destination = self.to or "checks.csv"
        students = [str(item) for item in self.student]
        assignments = [str(item) for item in self.assignment]
        self.log.info("Exporting the score of every graded cell to %s", destination)
        if assignments:
            self.log.info("Exporting only assignments: %s", assignments)
        if students:
            self.log.info("Exporting only students: %s", students)
        rows = check_rows(gradebook, students, assignments, self.source_notebook)
        write_checks(rows, destination)
        self.log.info("Wrote %d rows (%d students)", len(rows), len({row["student_id"] for row in rows}))

    def source_notebook(self, assignment: str, notebook: str):
        """The source notebook's path in the course directory (None outside an nbgrader app)."""
        coursedir = getattr(self.parent, "coursedir", None)
        if coursedir is None:
            return (
                None
                if self.course_root is None
                else Path(self.course_root) / "source" / assignment / f"{notebook}.ipynb"
            )
        folder = coursedir.format_path(coursedir.source_directory, ".", assignment)
        return Path(folder) / f"{notebook}.ipynb"
