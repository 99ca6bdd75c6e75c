"""A graded assignment read into data (autograder.report.course), on notebooks built in memory and a small sqlite
gradebook on tmp_path (nothing is graded).

Pinned here: verdicts are read from the check cells' metadata only (a planted one in an answer cell is not), a
notebook graded before verdicts were stored is stale with the regrade command, a broken verdict or kernel end is a
problem and not a crash; answer cells, solution markers, cell labels and timing (a student's planted execution
metadata is no time, not a crash); blank against answered; the stale notice (ten names, then a count); and
read_course on a gradebook: the grade cells in the source notebook's order, scores and written answers, the
ledger's blank reason, an autograded notebook that is missing.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from gradebooks import ASSIGNMENT, NOTEBOOK
from nbgrader.api import Gradebook

from autograder.report.course import (
    REGRADE,
    GradedAssignment,
    Student,
    answer_cells,
    assignments_of,
    cell_label,
    cell_seconds,
    graded_verdicts,
    read_autograded,
    read_course,
    solution_cells,
)
from autograder.verdicts import CHECKS_SECONDS, EXITED, KERNEL, KEY, KernelEnd, Property, StaleVerdicts, Verdict

# --- verdicts read as data, on in-memory notebooks --------------------------------------------------------------


def code_cell(source: str, nbgrader: dict | None = None, verdict: Verdict | None = None) -> dict:
    metadata = {"nbgrader": nbgrader} if nbgrader else {}
    if verdict is not None:
        metadata[KEY] = verdict.to_dict()
    return {"cell_type": "code", "metadata": metadata, "source": source, "outputs": [], "execution_count": 1}


SOFTMAX_ANSWER = {"solution": True, "grade": False, "grade_id": "softmax"}
SOFTMAX_CHECK = {"solution": False, "grade": True, "grade_id": "check_softmax", "points": 2}


def softmax_verdict(points: float, message: str = "row 0 sums to 2.0") -> Verdict:
    values = Property("values", True) if points >= 2 else Property("values", False, message)
    properties = (Property("shape", True), values)
    return Verdict("check_softmax", "softmax", points, 2.0, properties, seed=3)


def test_verdicts_come_from_the_check_cells_metadata_only():
    """A verdict a student planted in their answer cell's metadata (nbgrader restores only the check cells) is
    not read; the check cell's is, whatever its output's words say."""
    planted = softmax_verdict(2.0)
    stored = softmax_verdict(0.5, "row 0 sums to <b>2.0</b>")
    notebook = {
        "cells": [
            code_cell("def softmax(x):\n    return x", SOFTMAX_ANSWER, verdict=planted),
            code_cell("check_softmax()", SOFTMAX_CHECK, verdict=stored),
        ]
    }
    notebook["cells"][1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "check_softmax: 2 / 2"}]
    verdicts = graded_verdicts(notebook)
    assert list(verdicts) == ["check_softmax"]
    assert verdicts["check_softmax"].points == 0.5
    assert verdicts["check_softmax"].failed[0].message == "row 0 sums to <b>2.0</b>"


def test_how_the_hidden_checks_were_cut_short_is_a_problem_read_from_the_verdict():
    """A crash stored with the verdict (ChecksEnd, its signal a field) is one problem naming the check it cost."""
    from dataclasses import replace

    from autograder.verdicts import ChecksEnd

    crash = ChecksEnd("crash", "softmax", signal="SIGSEGV")
    stored = replace(softmax_verdict(0.0, "crashed"), limit="crash", end=crash)
    student = Student("ada")
    read_autograded(student, {"cells": [code_cell("check_softmax()", SOFTMAX_CHECK, verdict=stored)]}, release={})
    assert student.verdicts["check_softmax"].end.signal == "SIGSEGV"
    assert student.problems == [("hidden checks (check_softmax)", "softmax crashed (SIGSEGV: a segmentation fault)")]


def test_the_hidden_checks_seconds_are_read_from_the_notebook_s_metadata():
    """ExternalVerdicts stores them (verdicts.CHECKS_SECONDS); one that is no number of seconds is no time."""
    cells = [code_cell("check_softmax()", SOFTMAX_CHECK, verdict=softmax_verdict(2.0))]
    for stored, read in ((2.34, 2.34), (0, 0.0), ("3 s", None), (True, None), (-1.0, None)):
        student = Student("ada")
        read_autograded(student, {"cells": cells, "metadata": {CHECKS_SECONDS: stored}}, release={})
        assert student.checks_seconds == read, stored
    student = Student("bo")
    read_autograded(student, {"cells": cells}, release={})  # graded before they were stored
    assert student.checks_seconds is None


def test_a_notebook_graded_before_verdicts_were_stored_is_stale():
    words = "check_softmax (softmax): 2 / 2 points\n  PASS shape\n  PASS values\n"
    cell = code_cell("check_softmax()", SOFTMAX_CHECK)
    cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": words}]
    notebook = {"cells": [code_cell("def softmax(x):\n    return x", SOFTMAX_ANSWER), cell]}
    with pytest.raises(StaleVerdicts, match="--regrade"):
        graded_verdicts(notebook)
    student = Student("ada", submitted=True, state="answered")
    read_autograded(student, notebook, release={"cells": [code_cell("raise NotImplementedError", SOFTMAX_ANSWER)]})
    assert student.verdicts == {} and "python -m autograder.course --regrade" in student.stale
    assert student.state == "answered" and student.problems == []


def test_a_stored_verdict_that_is_not_one_is_a_problem_not_a_crash():
    broken = softmax_verdict(1.0).to_dict()
    broken["properties"] = [{"name": "shape", "passed": True, "colour": "red"}]
    cell = code_cell("check_softmax()", SOFTMAX_CHECK)
    cell["metadata"][KEY] = broken
    student = Student("ada", submitted=True, state="answered")
    read_autograded(student, {"cells": [cell]}, release={})
    assert student.verdicts == {} and not student.stale
    [(where, reason)] = student.problems
    assert "a stored verdict cannot be read" in reason and "--regrade --student ada" in reason


# --- cells -----------------------------------------------------------------------------------------------------


def test_answer_cells_are_the_autograded_solution_cells_and_solution_markers_come_out():
    source = "def softmax(x):\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION\n"
    notebook = {
        "cells": [
            {"cell_type": "markdown", "metadata": {"nbgrader": {"solution": True, "grade_id": "essay"}}, "source": "x"},
            code_cell(["def softmax(x):\n", "    return x\n"], SOFTMAX_ANSWER),
            code_cell("check_softmax()", SOFTMAX_CHECK),
            code_cell("print(1)"),
            code_cell("again", SOFTMAX_ANSWER),  # a repeated grade id keeps the first cell
            code_cell("x", {"solution": True, "grade": False}),  # no grade id
            {"cell_type": "code", "metadata": {"nbgrader": "not a mapping"}, "source": "y"},
        ]
    }
    assert answer_cells(notebook) == {"softmax": "def softmax(x):\n    return x\n"}
    assert answer_cells(None) == {} and answer_cells({}) == {}
    solved = solution_cells({"cells": [code_cell(source, SOFTMAX_ANSWER)]})
    assert "SOLUTION" not in solved["softmax"] and "return x" in solved["softmax"]


def test_cell_labels_and_seconds():
    assert cell_label(4, code_cell("x", SOFTMAX_ANSWER)) == "softmax"
    assert cell_label(7, code_cell("\n\n   import numpy as np  \nx = 1")) == "cell 7: import numpy as np"
    assert cell_label(2, code_cell("")) == "cell 2: "
    cell = code_cell("x")
    cell["metadata"]["execution"] = {
        "iopub.execute_input": "2026-12-01T10:00:00.250Z",
        "shell.execute_reply": "2026-12-01T10:00:02.000Z",
    }
    assert cell_seconds(cell) == pytest.approx(1.75)
    cell["metadata"]["execution"]["shell.execute_reply"] = "yesterday"
    assert cell_seconds(cell) is None, "an unreadable time is no time"
    assert cell_seconds(code_cell("never ran")) is None


def test_a_students_own_execution_metadata_is_no_time_and_no_crash():
    """nbclient rewrites the timing of the code cells it runs; a markdown cell keeps whatever metadata the student
    wrote, which must not stop the class's report."""
    planted = [{"cell_type": "markdown", "metadata": {"execution": value}, "source": "hi"} for value in ("x", [1])]
    student = Student("mallory", submitted=True, state="answered")
    read_autograded(student, {"cells": planted, "metadata": {}}, release={})
    assert student.cells_seconds == {} and student.problems == []


def test_the_starter_text_unchanged_is_blank_whatever_its_spacing():
    release = {"cells": [code_cell("def softmax(x):\n    raise NotImplementedError", SOFTMAX_ANSWER)]}
    blank = Student("ada", submitted=True, state="answered")
    read_autograded(
        blank, {"cells": [code_cell("def softmax( x ):\n\n  raise NotImplementedError\n", SOFTMAX_ANSWER)]}, release
    )
    assert blank.state == "blank"
    answered = Student("bob", submitted=True, state="answered")
    read_autograded(answered, {"cells": [code_cell("def softmax(x):\n    return x", SOFTMAX_ANSWER)]}, release)
    assert answered.state == "answered" and answered.code == {"softmax": "def softmax(x):\n    return x"}
    missing = Student("cy", submitted=True, state="answered")
    read_autograded(missing, None, release)
    assert missing.problems == [("", "no autograded notebook (not graded, or grading failed)")]


def test_kernel_ends_are_problems_named_by_cell_and_times_add_up():
    cells = [code_cell("x", SOFTMAX_ANSWER), code_cell("while True: pass")]
    for cell in cells:
        cell["metadata"]["execution"] = {
            "iopub.execute_input": "2026-12-01T10:00:00Z",
            "shell.execute_reply": "2026-12-01T10:00:01Z",
        }
    ends = [KernelEnd(EXITED, 1, code=3), KernelEnd(EXITED, 2, code=4), KernelEnd(EXITED, 9, code=5)]
    notebook = {"cells": cells, "metadata": {KERNEL: [end.to_dict() for end in ends]}}
    student = Student("ada", submitted=True, state="answered")
    read_autograded(student, notebook, release={})
    assert [where for where, _ in student.problems] == ["cell 1 (softmax)", "cell 2: while True: pass", "cell 9"]
    assert student.problems[0][1] == ends[0].what() and student.kernel == ends
    assert student.cells_seconds == {"softmax": 1.0, "cell 2: while True: pass": 1.0}
    broken = Student("bob", submitted=True, state="answered")
    read_autograded(broken, {"cells": [], "metadata": {KERNEL: "died"}}, release={})
    [(_, reason)] = broken.problems
    assert "not a list of kernel ends" in reason and f"{REGRADE} --student bob" in reason


def test_the_stale_notice_names_ten_students_then_counts_the_rest():
    graded = GradedAssignment(course=Path("."), name="attention")
    assert graded.stale_message() == ""
    graded.students = [Student(f"s{n:02d}", submitted=True, stale="old") for n in range(12)] + [Student("fresh")]
    graded.students.append(Student("new", submitted=True))
    message = graded.stale_message()
    assert message.startswith("12 of 13 submitted notebooks of attention were autograded before")
    assert "s09 and 2 more" in message and "s10" not in message and REGRADE in message


# --- a gradebook on tmp_path ------------------------------------------------------------------------------------


@pytest.fixture
def alembic_on_path(monkeypatch):
    """A new gradebook runs `alembic` from PATH: the one next to this Python."""
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))


def small_course(tmp_path: Path) -> tuple[Path, str]:
    """A course with check_b before check_a in its source notebook, ada graded (ledger: fine), bob graded as the
    blank release (the ledger says the file was empty), cy with no autograded notebook, dee who submitted nothing."""
    course = tmp_path / "course"
    url = f"sqlite:///{course / 'gradebook.db'}"
    course.mkdir()
    with Gradebook(url) as gradebook:
        gradebook.add_assignment(ASSIGNMENT)
        gradebook.add_notebook(NOTEBOOK, ASSIGNMENT)
        gradebook.add_grade_cell("check_a", NOTEBOOK, ASSIGNMENT, max_score=2, cell_type="code")
        gradebook.add_grade_cell("check_b", NOTEBOOK, ASSIGNMENT, max_score=1, cell_type="code")
        gradebook.add_grade_cell("written", NOTEBOOK, ASSIGNMENT, max_score=3, cell_type="markdown")
        gradebook.add_solution_cell("written", NOTEBOOK, ASSIGNMENT)
        for student in ("ada", "bob", "cy", "dee"):
            gradebook.add_student(student)
        for student, (a, b) in {"ada": (2.0, 0.5), "bob": (0.0, 0.0), "cy": (1.0, 1.0)}.items():
            gradebook.add_submission(ASSIGNMENT, student)
            gradebook.find_grade("check_a", NOTEBOOK, ASSIGNMENT, student).auto_score = a
            gradebook.find_grade("check_b", NOTEBOOK, ASSIGNMENT, student).auto_score = b
            gradebook.find_grade("written", NOTEBOOK, ASSIGNMENT, student).needs_manual_grade = True
        gradebook.db.commit()
    order = {"cells": [code_cell("", {"grade_id": "check_b"}), code_cell("", {"grade_id": "check_a"})]}
    for folder in ("source", "release"):
        (course / folder / ASSIGNMENT).mkdir(parents=True)
        (course / folder / ASSIGNMENT / f"{NOTEBOOK}.ipynb").write_text(json.dumps(order))
    for student in ("ada", "bob"):
        folder = course / "autograded" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        (folder / f"{NOTEBOOK}.ipynb").write_text(json.dumps({"cells": [code_cell("x = 1")]}))
    ledger = course / ".grading"
    ledger.mkdir()
    (ledger / "ada.json").write_text(json.dumps({"student": "ada", "fingerprint": "1", "seconds": 4.5}))
    (ledger / "bob.json").write_text(json.dumps({"student": "bob", "fingerprint": "2", "blank": {"kind": "empty"}}))
    return course, url


@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")  # nbgrader's add_submission, SQLAlchemy 2
@pytest.mark.usefixtures("alembic_on_path")
def test_read_course_from_a_gradebook(tmp_path):
    course, url = small_course(tmp_path)
    assert assignments_of(course=course, db=url) == [ASSIGNMENT]
    graded = read_course(course=course, assignment=ASSIGNMENT, db=url)
    assert graded.checks == ["check_b", "check_a"], "the source notebook's order"
    assert graded.written == ["written"] and graded.attempts == []
    students = {s.id: s for s in graded.students}
    assert list(students) == ["ada", "bob", "cy", "dee"]
    ada, bob, cy, dee = students.values()
    assert ada.checks == {"check_a": (2.0, 2.0), "check_b": (0.5, 1.0)} and ada.auto == 2.5
    assert ada.written == {"written": (None, 3.0, True)} and ada.ledger["seconds"] == 4.5
    assert (ada.state, ada.problems) == ("answered", [])
    assert (bob.state, bob.reason) == ("unreadable", "the file is empty")
    assert cy.problems == [("", "no autograded notebook (not graded, or grading failed)")]
    assert (dee.submitted, dee.state, dee.checks) == (False, "not submitted", {})
    assert [s.id for s in read_course(course=course, assignment=ASSIGNMENT, db=url, only={"cy"}).students] == ["cy"]


@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")
@pytest.mark.usefixtures("alembic_on_path")
def test_a_ledger_blank_reason_that_cannot_be_read_is_a_problem(tmp_path):
    course, url = small_course(tmp_path)
    (course / ".grading" / "ada.json").write_text(json.dumps({"student": "ada", "fingerprint": "1", "blank": "x"}))
    ada = read_course(course=course, assignment=ASSIGNMENT, db=url, only={"ada"}).students[0]
    [(_, reason)] = ada.problems
    assert reason.startswith("the ledger's blank reason cannot be read") and ada.state == "answered"
