"""Hostile and broken submissions (tests/hostile.py), graded through the real pipeline with the bundled class.

For each case: the points it earned (by hand, in hostile.py) in nbgrader's gradebook, a clear reason in its
feedback or in the class table, and what its autograded notebook shows. For the run: the other students'
points (tests/autograder/course/test_classroom.py checks them in this same run), the submitted files unchanged, the
gradebook consistent, nothing written outside the sandbox, no connection reached the grader's loopback.
"""

from __future__ import annotations

import json
from pathlib import Path

import hostile
import pytest
from conftest import CANARY_TEXT, REPOSITORY
from nbgrader.api import Gradebook

from autograder import sandbox
from autograder.course.table import show

ASSIGNMENT = NOTEBOOK = "attention"
NAMES = sorted(hostile.build(hostile.Context(Path("/nonexistent/course"), Path("/nonexistent/canary"), 9)))
pytestmark = pytest.mark.skipif(
    sandbox.bubblewrap() is None,
    reason=(f"bubblewrap is not available ({sandbox.INSTALL}): hostile submissions are graded only inside the sandbox"),
)


def autograded_text(course: Path, student: str) -> str:
    """Every source and output of the student's autograded notebook, as one text."""
    notebook = json.loads((course / "autograded" / student / ASSIGNMENT / f"{NOTEBOOK}.ipynb").read_text())
    parts = []
    for cell in notebook["cells"]:
        parts.append("".join(cell["source"]))
        for output in cell.get("outputs", []):
            parts.append(
                " ".join(str(output.get(key, "")) for key in ("ename", "evalue", "data"))
                + "".join(output.get("text", ""))
            )
    return "\n".join(parts)


NOTES = ("kernel died", "timed out", "ran out of time", "graded as blank", "not graded", "not autograded")


def table_line(run, student: str) -> str:
    """``student``'s line of the class's table as the command line shows it (autograder.course.table.show)."""
    return next(line for line in show(run.table).splitlines() if line.split() and line.split()[0] == student)


@pytest.mark.parametrize("student", NAMES)
def test_hostile_submission_gets_the_points_it_earned(graded_class, student):
    case = graded_class.cases[student]
    wrong = []
    with Gradebook(f"sqlite:///{graded_class.course / 'gradebook.db'}") as gradebook:
        for grade_id, points in case.points.items():
            grade = gradebook.find_grade(grade_id, NOTEBOOK, ASSIGNMENT, student)
            want = (None, True) if points is None else (pytest.approx(points, abs=1e-9), False)
            if (grade.auto_score, grade.needs_manual_grade) != want:
                wrong.append(f"{grade_id}: {grade.auto_score} (manual: {grade.needs_manual_grade}), expected {points}")
    assert not wrong, f"{student} ({case.why}):\n" + "\n".join(wrong)

    line = table_line(graded_class.run, student)
    if case.note:  # the table fits 120 columns: a long note is cut (…) after its first words
        shown = line.rstrip().removesuffix("…")
        assert case.note in line or any(shown.endswith(case.note[:cut]) for cut in range(6, len(case.note))), (
            f"{student}: the class table should note {case.note!r}: {line}"
        )
    else:
        assert not any(note in line for note in NOTES), f"{student}: no note expected: {line}"
    page = (graded_class.course / "feedback" / student / ASSIGNMENT / f"{NOTEBOOK}.html").read_text()
    for phrase in case.feedback:
        assert phrase in page, f"{student}'s feedback does not say {phrase!r}"
    text = autograded_text(graded_class.course, student)
    for phrase in case.output_has:
        assert phrase in text, f"{student}'s autograded notebook does not show {phrase!r}"
    for phrase in case.output_lacks:
        assert phrase not in text, f"{student}'s autograded notebook shows {phrase!r}"


def test_links_handed_in_are_not_followed(graded_class):
    for folder in ("submitted", "autograded", "feedback"):
        inside = graded_class.course / folder / "links_to_secrets" / ASSIGNMENT
        kept = sorted(path.name for path in inside.iterdir() if not path.is_symlink())
        assert kept == [f"{NOTEBOOK}.{'html' if folder == 'feedback' else 'ipynb'}"], (folder, kept)


def test_huge_output_is_cut_while_it_arrives(graded_class):
    path = graded_class.course / "autograded" / "huge_output" / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
    assert path.stat().st_size < 10 * 2**20, f"{path.stat().st_size:,} bytes: the 100 MB of output was kept"


def test_nothing_was_written_outside_the_sandbox(graded_class):
    assert graded_class.canary.read_text() == CANARY_TEXT
    assert sorted(path.name for path in graded_class.canary.parent.iterdir()) == ["canary.txt"]
    assert not (REPOSITORY / "dropped-by-a-student.txt").exists()
    assert "written by a student" not in (graded_class.course / "grades.csv").read_text()
    kept = sorted(path.name for path in (graded_class.course / "autograded" / "writes_outside" / ASSIGNMENT).iterdir())
    assert kept == [f"{NOTEBOOK}.ipynb"], f"files the kernel wrote were kept: {kept}"


def test_no_connection_reached_the_graders_loopback(graded_class):
    assert graded_class.listener.accepted == 0


def test_gradebook_is_consistent(graded_class):
    """Every student has one submission with every grade cell: an automatic score, or awaiting a grader
    (written answers only), and the grade table's totals add up to the gradebook's."""
    with Gradebook(f"sqlite:///{graded_class.course / 'gradebook.db'}") as gradebook:
        assignment = gradebook.find_assignment(ASSIGNMENT)
        cells = {cell.name: cell for cell in gradebook.find_notebook(NOTEBOOK, ASSIGNMENT).grade_cells}
        assert sorted(s.student.id for s in assignment.submissions) == graded_class.students
        for submission in assignment.submissions:
            notebook = submission.notebooks[0]
            assert sorted(grade.name for grade in notebook.grades) == sorted(cells)
            for grade in notebook.grades:
                if grade.needs_manual_grade:
                    assert grade.auto_score is None and grade.name.startswith("answer_"), (
                        submission.student.id,
                        grade.name,
                    )
                else:
                    assert grade.auto_score is not None and 0 <= grade.auto_score <= cells[grade.name].max_score
            automatic = sum(grade.auto_score for grade in notebook.grades if grade.name.startswith("check_"))
            line = table_line(graded_class.run, submission.student.id)
            assert f" {round(automatic, 2):g} / 29 " in line, line
