"""nbgrader's tables as this project writes them (autograder.grading.gradebook: raw inserts into submitted_assignment,
submitted_notebook, grade and comment, and a worker's gradebook copied table by table), pinned: the installed nbgrader
is within the range pyproject.toml states, and every column of those tables is the one the code was written for. A
new nbgrader that changes them fails here, before a class is graded into tables it no longer has."""

from __future__ import annotations

import tomllib
from importlib.metadata import version
from pathlib import Path

from nbgrader.api import Base, Comment, Grade, SubmittedAssignment, SubmittedNotebook
from packaging.requirements import Requirement

from autograder.grading.gradebook import STRUCTURE

REPOSITORY = Path(__file__).resolve().parents[3]

WRITTEN = {  # table: [(column, type, nullable)] as nbgrader 0.9.3-0.9.6 define them
    "submitted_assignment": [
        ("id", "VARCHAR(32)", False),
        ("assignment_id", "VARCHAR(32)", True),
        ("student_id", "VARCHAR(128)", True),
        ("timestamp", "DATETIME", True),
        ("extension", "DATETIME", True),
    ],
    "submitted_notebook": [
        ("id", "VARCHAR(32)", False),
        ("assignment_id", "VARCHAR(32)", True),
        ("notebook_id", "VARCHAR(32)", True),
        ("flagged", "BOOLEAN", True),
        ("late_submission_penalty", "FLOAT", True),
    ],
    "grade": [
        ("id", "VARCHAR(32)", False),
        ("notebook_id", "VARCHAR(32)", True),
        ("cell_id", "VARCHAR(32)", True),
        ("auto_score", "FLOAT", True),
        ("manual_score", "FLOAT", True),
        ("extra_credit", "FLOAT", True),
        ("needs_manual_grade", "BOOLEAN", False),
    ],
    "comment": [
        ("id", "VARCHAR(32)", False),
        ("notebook_id", "VARCHAR(32)", True),
        ("cell_id", "VARCHAR(32)", True),
        ("auto_comment", "TEXT", True),
        ("manual_comment", "TEXT", True),
    ],
}
COPIED = {  # the structure a worker's gradebook is copied with (gradebook_template): table -> columns
    "course": ["id"],
    "assignment": ["id", "name", "duedate", "course_id"],
    "notebook": ["id", "name", "assignment_id", "kernelspec"],
    "base_cell": ["id", "name", "notebook_id", "type"],
    "source_cell": ["id", "name", "cell_type", "locked", "source", "checksum", "notebook_id"],
    "grade_cells": ["id", "max_score", "cell_type"],
    "solution_cells": ["id"],
    "task_cells": ["id", "max_score", "cell_type"],
}


def test_the_installed_nbgrader_is_within_the_pinned_range():
    project = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())["project"]
    (pinned,) = [Requirement(line) for line in project["dependencies"] if line.startswith("nbgrader")]
    assert pinned.specifier and pinned.specifier.contains(version("nbgrader")), (pinned, version("nbgrader"))
    assert not pinned.specifier.contains("0.10.0"), "nbgrader is pinned below the next minor release"


def test_the_tables_written_directly_have_the_columns_the_code_writes():
    for model in (SubmittedAssignment, SubmittedNotebook, Grade, Comment):
        table = model.__table__
        assert [(c.name, str(c.type), c.nullable) for c in table.columns] == WRITTEN[table.name], table.name


def test_a_workers_gradebook_copies_the_tables_it_was_written_for():
    tables = {table.name: [c.name for c in table.columns] for table in Base.metadata.sorted_tables}
    assert set(STRUCTURE) == set(COPIED)
    assert {name: tables[name] for name in STRUCTURE} == COPIED
