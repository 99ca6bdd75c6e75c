"""A second assignment through the same commands into the same gradebook: the engine names no assignment.

tests/assignments/positions/ is a small assignment of its own (three functions on rotary positions, its own
hidden checks in checks.py). Beside the graded attention class (a copy of the session's course folder),
the course's grade_course (what `python -m autograder.course --assignment positions --source
tests/assignments` runs) releases it, grades three students and exports: one gradebook then holds both
assignments, and both exports list both.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from conftest import grade_folder
from nbgrader.api import Gradebook

from autograder.course.table import show

REPOSITORY = Path(__file__).resolve().parents[3]
ASSIGNMENTS = Path(__file__).resolve().parents[2] / "assignments"
POINTS = {  # by hand: rotate's mistake costs its values (1 of 2); rotated_score is graded with lib's rotate
    "rotary_right": {"check_rotation_angles": 1.0, "check_rotate": 2.0, "check_rotated_score": 2.0},
    "pairs_interleaved": {"check_rotation_angles": 1.0, "check_rotate": 1.0, "check_rotated_score": 2.0},
    "rotary_blank": {"check_rotation_angles": 0.0, "check_rotate": 0.0, "check_rotated_score": 0.0},
}
INTERLEAVED = (
    "np.concatenate([first * cos - second * sin, first * sin + second * cos], axis=-1)",
    "np.stack([x[..., 0::2] * cos - x[..., 1::2] * sin, x[..., 0::2] * sin + x[..., 1::2] * cos], "
    "axis=-1).reshape(x.shape)",
)


def submission(kind: str, release: dict) -> dict:
    """A student's notebook: the release with the solution typed in (or a mistake), or the release untouched."""
    source = json.loads((ASSIGNMENTS / "positions" / "positions.ipynb").read_text())
    if kind == "rotary_blank":
        return release
    notebook = json.loads(json.dumps(release))
    solutions = {
        cell["id"]: "".join(cell["source"]) for cell in source["cells"] if cell["metadata"]["nbgrader"]["solution"]
    }
    for cell in notebook["cells"]:
        if cell["id"] in solutions:
            text = "\n".join(line for line in solutions[cell["id"]].splitlines() if "### " not in line)
            cell["source"] = text.replace(*INTERLEAVED) if kind == "pairs_interleaved" else text
    return notebook


@pytest.fixture(scope="module")
def both(graded_class, tmp_path_factory):
    """The session's graded attention course, copied, with the positions assignment graded into it."""
    from autograder.course.run import release_notebook

    root = tmp_path_factory.mktemp("second")
    course = root / "course"
    shutil.copytree(graded_class.course, course, symlinks=True)
    release = json.loads(release_notebook(ASSIGNMENTS / "positions", root / "release"))
    submissions = root / "submissions"
    for student in POINTS:
        folder = submissions / student / "positions"
        folder.mkdir(parents=True)
        (folder / "positions.ipynb").write_text(json.dumps(submission(student, release)))
    run = grade_folder(course, submissions, assignment="positions", source=ASSIGNMENTS)
    return course, graded_class, show(run.table)


def test_one_gradebook_holds_both_assignments(both):
    course, graded_class, _ = both
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        assert sorted(a.name for a in gradebook.assignments) == ["attention", "positions"]
        for student, points in POINTS.items():
            for grade_id, want in points.items():
                assert gradebook.find_grade(grade_id, "positions", "positions", student).auto_score == want, (
                    student,
                    grade_id,
                )
        full = gradebook.find_submission("attention", "full_solution")
        assert full.score == 29.0  # the attention class is as it was
        assert len(gradebook.find_assignment("attention").submissions) == len(graded_class.students)


def test_both_exports_list_both_assignments(both):
    course, _, _ = both
    grades = list(csv.DictReader(open(course / "grades.csv")))
    assert {row["assignment"] for row in grades} == {"attention", "positions"}
    positions = {row["student_id"]: float(row["raw_score"]) for row in grades if row["assignment"] == "positions"}
    assert {student: positions[student] for student in POINTS} == {
        student: sum(points.values()) for student, points in POINTS.items()
    }
    assert set(positions.values()) <= {0.0, 4.0, 5.0}  # nbgrader lists every student; the others have no work
    checks = [row for row in csv.DictReader(open(course / "checks.csv")) if row["assignment"] == "positions"]
    checks = [row for row in checks if row["student_id"] in POINTS]  # ChecksExport lists every student too
    assert {(row["student_id"], row["grade_id"]): float(row["score"]) for row in checks} == {
        (student, grade_id): want for student, points in POINTS.items() for grade_id, want in points.items()
    }


def test_the_release_holds_no_checks_and_the_feedback_names_the_mistake(both):
    course, _, table = both
    assert sorted(path.name for path in (course / "release" / "positions").iterdir()) == ["positions.ipynb"]
    page = (course / "feedback" / "pairs_interleaved" / "positions" / "positions.html").read_text()
    assert "the pairs are interleaved" in page
    assert (course / "reports" / "positions.html").exists()
    assert "pairs_interleaved" in table and "rotate" in table
