"""autograder.grading's recording (ledger.record, gradebook.GradebookWriter), at unit level (synthetic outcomes, no
kernels): one transaction per submission through nbgrader's Gradebook, manual work kept, and a recording killed at
each of its steps repaired by the next run. Run against SQLite, and against PostgreSQL where
tests/autograder/grading/test_gradebook.py can start a throwaway server.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

import pytest
from nbgrader.api import Gradebook, MissingEntry

from autograder import files
from autograder.assignments import Layout
from autograder.grading import gradebook as gradebook_writer
from autograder.grading import ledger as books
from autograder.grading import task

ASSIGNMENT = NOTEBOOK = "attention"
from gradebooks import make_course, outcome, scores  # noqa: E402 - tests/gradebooks.py, beside this file


@pytest.fixture
def course(tmp_path, database, monkeypatch):
    # a new SQLite gradebook runs `alembic` from PATH: the one next to this Python
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    url = database(tmp_path)
    return make_course(tmp_path, url), url


def test_a_record_is_one_transaction_and_keeps_manual_work(course):
    course, url = course
    writer = gradebook_writer.GradebookWriter(url)
    try:
        books.record(course, outcome("ada", 1, a=1.0), writer)
        with Gradebook(url) as gradebook:  # a teaching assistant's grade and comment, as Formgrader saves them
            gradebook.find_grade("written", NOTEBOOK, ASSIGNMENT, "ada").manual_score = 1.0
            gradebook.find_comment("written", NOTEBOOK, ASSIGNMENT, "ada").manual_comment = "well argued"
            gradebook.db.commit()
        before = scores(url, "ada")

        broken = outcome("ada", 2, a=0.5)
        broken.grades.append(
            {"notebook": NOTEBOOK, "name": "check_missing", "auto_score": 1.0, "needs_manual_grade": False}
        )
        with pytest.raises(MissingEntry, match="check_missing"):
            writer.write(broken)
        assert scores(url, "ada") == before, "a failed write changed the gradebook"
        with pytest.raises(MissingEntry, match="check_missing"):
            writer.write(dataclasses.replace(outcome("newcomer", 1), grades=broken.grades))
        assert scores(url, "newcomer") == {}, "a failed write left a half-made submission"

        books.record(course, outcome("ada", 3, a=2.0, b=0.0), writer)
    finally:
        writer.close()
    assert scores(url, "ada") == {
        "check_a": (2.0, None),
        "check_b": (0.0, None),
        "written": (None, 1.0),
        "comment written": ("auto v3", "well argued"),
    }
    assert books.ledger(course, "attention", "ada")["fingerprint"] == f"{3:064d}"
    assert not list((books.assignment_folder(course, "attention") / "journal").iterdir())


# every step on SQLite; on PostgreSQL only the steps inside the database (the others touch files only)
KILLED_AT = [
    *(("sqlite", step) for step in books.RECORD_STEPS),
    *(("postgresql", step) for step in ("in-transaction", "committed")),
]


@pytest.mark.parametrize(("database", "step"), KILLED_AT, indirect=["database"])
def test_a_recording_killed_at_each_step_is_repaired_by_the_next_run(course, step):
    """ada is recorded (version 1); a child process records version 2 and dies (os._exit, no clean-up of any
    kind) right after ``step``. The gradebook then holds one version whole; the next run's repair completes
    the ledger when everything of version 2 is in, else makes ada be graded again; grading her again leaves
    version 2 everywhere."""
    course, url = course
    first, second = outcome("ada", 1, a=1.0, b=0.0), outcome("ada", 2, a=2.0, b=1.0)
    writer = gradebook_writer.GradebookWriter(url)
    books.record(course, first, writer)
    writer.close()

    child = os.fork()
    if child == 0:  # pragma: no cover - the child
        try:
            books.checkpoint = lambda reached: os._exit(9) if reached == step else None
            killed = gradebook_writer.GradebookWriter(url)
            books.record(course, second, killed)
        finally:
            os._exit(3)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 9, "the child did not stop at the step"

    held = scores(url, "ada")
    versions = {
        1: {"check_a": (1.0, None), "check_b": (0.0, None)},
        2: {"check_a": (2.0, None), "check_b": (1.0, None)},
    }
    whole = [v for v, want in versions.items() if {k: held[k] for k in want} == want]
    assert whole == ([2] if step in ("committed", "ledger") else [1]), f"the gradebook holds {held}"

    books.tidy(course)  # what the next run does first
    writer = gradebook_writer.GradebookWriter(url)
    try:
        repaired = books.repair(course, writer)
        submission = task.Submission("ada", {}, second.fingerprint)
        (course / "autograded" / "ada" / ASSIGNMENT / f"{NOTEBOOK}.ipynb").parent.mkdir(parents=True, exist_ok=True)
        current = books.up_to_date(
            course, Layout(ASSIGNMENT, NOTEBOOK), submission, gradebook_writer.students_in_gradebook(url, ASSIGNMENT)
        )
        if step in ("committed", "ledger"):
            assert repaired == {"ada": "recorded in full before the stop: ledger completed"}
            assert current and books.ledger(course, "attention", "ada")["fingerprint"] == second.fingerprint
        else:
            assert repaired == {"ada": "the recording stopped half-way: graded again"}
            assert not current and books.ledger(course, "attention", "ada") == {}
            books.record(course, second, writer)  # the next run grades her again
    finally:
        writer.close()
    assert scores(url, "ada")["check_a"] == (2.0, None) and scores(url, "ada")["comment written"][0] == "auto v2"
    assert (course / "feedback" / "ada" / ASSIGNMENT / f"{NOTEBOOK}.html").read_bytes() == b"<p>feedback v2</p>"
    assert (course / "autograded" / "ada" / ASSIGNMENT / f"{NOTEBOOK}.ipynb").read_bytes() == b"graded v2"
    assert books.ledger(course, "attention", "ada")["fingerprint"] == second.fingerprint
    leftovers = [
        p.name for p in (course / ".grading").rglob("*") if p.is_file() and p.parent.name in ("journal", "tmp")
    ]
    assert not leftovers and not list((course / ".grading" / "tmp").iterdir())


def test_entries_are_the_assignment_s_and_read_the_older_layouts(tmp_path):
    """ledger.entries: the one reader of who was graded (the report asks it, never globs .grading/)."""
    course = tmp_path / "course"
    files.write_json(books.ledger_path(course, "attention", "ada"), {"student": "ada", "fingerprint": "1"})
    files.write_json(
        books.ledger_path(course, "positions", "ada"), {"student": "ada", "assignment": "positions", "fingerprint": "2"}
    )
    files.write_json(course / ".grading" / "students" / "bob.json", {"student": "bob", "fingerprint": "3"})
    files.write_json(course / ".grading" / "cy.json", {"fingerprint": "4"})  # the first layout: named by its file
    files.write_json(course / ".grading" / "not-an-entry.json", {"something": "else"})
    (course / ".grading" / "broken.json").write_text("{")
    found = books.entries(course, "attention")
    assert {student: entry["fingerprint"] for student, entry in found.items()} == {"ada": "1", "bob": "3", "cy": "4"}
    assert books.entries(course, "positions")["ada"]["fingerprint"] == "2"
