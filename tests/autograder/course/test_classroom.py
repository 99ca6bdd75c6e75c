"""The whole class through nbgrader, end to end: autograder.course.run.grade_course, the library under
`python -m autograder.course`, on the bundled submissions; and the command line's own messages and exit
statuses (at the end).

Each bundled student must get exactly the points of examples/expected.json (written by hand from the mistakes)
for every graded cell, read back from nbgrader's gradebook and from both exports; the submitted notebooks stay
byte for byte as the students handed them in; every student gets a feedback page that names what failed.
Also: examples/submissions are what examples/make_submissions.py makes now.

The class is graded once for the whole suite (the ``graded_class`` fixture in conftest.py), together with the
hostile and broken submissions of tests/hostile.py: so these tests also show that every other submission is
graded exactly as without them. It is the slowest part of the suite (a few minutes): one sandboxed kernel per
notebook running the whole assignment, on all cores. The cell limit is 30 s there (--cell-timeout; the course's
own is 60 s): the slowest cell of a correct notebook now takes under 3 s (the 300-product cells under 1 s; 20 s
once interrupted them on a busy machine, before sections 7 and 8 computed the model once).
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lms_course import ROSTER, make_gradebook
from nbgrader.api import Gradebook

from autograder import model, sandbox
from autograder.checks import ATOL
from autograder.course import classroom
from autograder.course.table import show

REPOSITORY = Path(__file__).resolve().parents[3]
EXAMPLES = REPOSITORY / "examples"
SUBMISSIONS = EXAMPLES / "submissions"
EXPECTED = json.loads((EXAMPLES / "expected.json").read_text())
ASSIGNMENT, NOTEBOOK = EXPECTED["assignment"], EXPECTED["notebook"]
STUDENTS = sorted(EXPECTED["students"])
POSITIONS = json.loads((EXAMPLES / "expected_positions.json").read_text())  # the same class's second assignment

FEEDBACK_SAYS = {  # a failed property's message that the student's feedback page must show
    "mask_after_softmax": "masked ones zeroed afterwards",
    "no_sqrt_scaling": "the weights match unscaled scores",
    "previous_token_off_by_one": "averaged pattern[:, i, i]",
    "split_heads_reshape_order": "x.reshape(heads, T, d) mixes positions into heads",
}

pytestmark = pytest.mark.skipif(
    not (Path(sys.executable).parent / "nbgrader").exists(), reason="nbgrader is not installed next to this Python"
)


def expected_points(student: str) -> dict:
    """{grade_id: points or None} for ``student``, with the model's or the no-model numbers as data/model is."""
    points = dict(EXPECTED["students"][student]["points"])
    if not model.available():
        points.update(EXPECTED["without_the_model"]["points"].get(student, {}))
    elif model.cache().record_gap > ATOL:  # head_statistics.json does not belong to this model and catalogue
        points.update(EXPECTED["without_recorded_statistics"]["points"].get(student, {}))
    return points


def notebook_bytes(folder: Path) -> dict[str, bytes]:
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in sorted(folder.rglob("*.ipynb"))}


@pytest.fixture(scope="module")
def pipeline(graded_class):
    return graded_class


def test_expected_json_is_consistent():
    """The hand-written numbers add up: every cell listed, within its maximum, totals as stated."""
    top = EXPECTED["max_points"]
    assert sum(v for k, v in top.items() if k.startswith("check_")) == 29
    for student, entry in EXPECTED["students"].items():
        assert set(entry["points"]) == set(top), student
        for grade_id, points in entry["points"].items():
            assert points is None or 0 <= points <= top[grade_id], (student, grade_id)
        auto = sum(points for grade_id, points in entry["points"].items() if grade_id.startswith("check_"))
        assert auto == pytest.approx(entry["auto_total"], abs=1e-9), student
    assert set(SUBMISSIONS.iterdir()) == {SUBMISSIONS / student for student in STUDENTS}


def test_expected_positions_json_is_consistent_and_every_student_hands_in_positions():
    top = POSITIONS["max_points"]
    assert (POSITIONS["assignment"], POSITIONS["notebook"], sum(top.values())) == ("positions", "positions", 5)
    assert sorted(POSITIONS["students"]) == STUDENTS  # so a run over the bundled class grades both, none left out
    for student, entry in POSITIONS["students"].items():
        assert set(entry["points"]) == set(top), student
        assert all(0 <= points <= top[grade_id] for grade_id, points in entry["points"].items()), student
        assert sum(entry["points"].values()) == pytest.approx(entry["auto_total"], abs=1e-9), student
    held = sorted(path.parts[-3] for path in SUBMISSIONS.glob("*/positions/positions.ipynb"))
    assert held == STUDENTS
    assert (SUBMISSIONS / "blank_release" / "positions" / "positions.ipynb").read_bytes() == (
        REPOSITORY / "release" / "positions" / "positions.ipynb"
    ).read_bytes()


@pytest.fixture(scope="module")
def positions_class(tmp_path_factory):
    """The bundled class's positions notebooks graded as the demo grades them, by the class command's library, into a
    course of their own (the graded attention class is the session's graded_class): (the course, its run)."""
    from conftest import grade_folder

    course = tmp_path_factory.mktemp("positions_class") / "course"
    return course, grade_folder(course, SUBMISSIONS, assignment="positions", progress=False)


def test_the_bundled_positions_notebooks_get_the_expected_points_and_name_their_mistakes(positions_class):
    course, run = positions_class
    with Gradebook(run.db) as gradebook:
        got = {
            student: {
                grade_id: gradebook.find_grade(grade_id, "positions", "positions", student).score
                for grade_id in POSITIONS["max_points"]
            }
            for student in STUDENTS
        }
    assert got == {student: entry["points"] for student, entry in POSITIONS["students"].items()}
    table = show(run.table)
    lines = {line.split()[0]: line.split()[1:] for line in table.splitlines()[1:]}
    assert table.splitlines()[0].split() == ["student", "auto", "lost", "note"]  # no written answers: no column
    assert lines["split_heads_reshape_order"] == ["3", "/", "5", "rotate"]
    assert lines["previous_token_off_by_one"] == ["4", "/", "5", "rotation_angles"]
    assert lines["blank_release"] == ["0", "/", "5", "every", "check"]
    assert lines["never_ends"] == ["5", "/", "5"]  # its attention loops; its positions notebook is plain
    page = (course / "feedback" / "split_heads_reshape_order" / "positions" / "positions.html").read_text()
    assert "the pairs are interleaved (0, 1), (2, 3)" in page
    page = (course / "feedback" / "previous_token_off_by_one" / "positions" / "positions.html").read_text()
    assert "the positions start at 1" in page
    assert run.report.startswith(str(course / "reports" / "positions.html")), run.report


def test_gradebook_holds_exactly_the_expected_points(pipeline):
    with Gradebook(f"sqlite:///{pipeline.course / 'gradebook.db'}") as gradebook:
        assert sorted(student.id for student in gradebook.students) == pipeline.students
        notebook = gradebook.find_notebook(NOTEBOOK, ASSIGNMENT)
        assert {cell.name: cell.max_score for cell in notebook.grade_cells} == EXPECTED["max_points"]
        wrong = []
        for student in STUDENTS:
            for grade_id, points in expected_points(student).items():
                grade = gradebook.find_grade(grade_id, NOTEBOOK, ASSIGNMENT, student)
                got = (grade.auto_score, grade.needs_manual_grade)
                want = (None, True) if points is None else (pytest.approx(points, abs=1e-9), False)
                if got != want:
                    wrong.append(
                        f"{student} {grade_id}: auto_score {grade.auto_score}, needs_manual_grade "
                        f"{grade.needs_manual_grade}; expected {points}"
                    )
        assert not wrong, "\n".join(wrong)


def test_exports_hold_the_same_points(pipeline):
    with open(pipeline.course / "checks.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == len(pipeline.students) * len(EXPECTED["max_points"])
    rows = [row for row in rows if row["student_id"] in STUDENTS]
    seen = set()
    for row in rows:
        student, grade_id = row["student_id"], row["grade_id"]
        seen.add((student, grade_id))
        points = expected_points(student)[grade_id]
        assert (row["assignment"], row["notebook"]) == (ASSIGNMENT, NOTEBOOK)
        assert float(row["max_score"]) == EXPECTED["max_points"][grade_id]
        if points is None:
            assert (row["score"], row["auto_score"], row["needs_manual_grade"], row["graded_by"]) == (
                "0.0",
                "",
                "True",
                "pending",
            )
        else:
            assert float(row["score"]) == pytest.approx(points, abs=1e-9), (student, grade_id)
            assert float(row["auto_score"]) == pytest.approx(points, abs=1e-9), (student, grade_id)
            assert (row["needs_manual_grade"], row["graded_by"]) == ("False", "auto"), (student, grade_id)
        assert row["cell_type"] == ("code" if grade_id.startswith("check_") else "markdown")
    assert len(seen) == len(rows)
    order = [row["grade_id"] for row in rows if row["student_id"] == STUDENTS[0]]
    assert order == list(EXPECTED["max_points"]), "cells in the notebook's order"

    with open(pipeline.course / "grades.csv", newline="") as handle:
        grades = {row["student_id"]: row for row in csv.DictReader(handle)}
    assert sorted(grades) == pipeline.students
    for student in STUDENTS:
        total = sum(p for p in expected_points(student).values() if p is not None)
        assert float(grades[student]["raw_score"]) == pytest.approx(total, abs=1e-6), student
        assert float(grades[student]["max_score"]) == sum(EXPECTED["max_points"].values())


def test_submitted_notebooks_are_unchanged(pipeline):
    """Every file of every student, bundled or hostile: the same bytes in the submissions folder and in submitted/."""
    from conftest import files_under

    assert files_under(pipeline.submissions) == pipeline.before, "the pipeline changed the submissions"
    collected = files_under(pipeline.course / "submitted")
    assert collected == pipeline.before, "submitted/ differs from what the students handed in"


def test_feedback_page_per_student_names_the_failed_property(pipeline):
    for student in STUDENTS:
        page = pipeline.course / "feedback" / student / ASSIGNMENT / f"{NOTEBOOK}.html"
        assert page.exists(), f"no feedback for {student}"
    for student, message in FEEDBACK_SAYS.items():
        html = (pipeline.course / "feedback" / student / ASSIGNMENT / f"{NOTEBOOK}.html").read_text()
        assert "FAIL" in html and message in html, f"{student}'s feedback does not say {message!r}"
    solution = (pipeline.course / "feedback" / "full_solution" / ASSIGNMENT / f"{NOTEBOOK}.html").read_text()
    assert "check_attention (attention): 4 / 4 points" in solution and "FAIL" not in solution
    assert solution.count("data:image/png") >= 8, "the notebook's plots are missing from the feedback page"


def test_class_table_shows_totals_and_notes(pipeline):
    table = show(pipeline.run.table)  # as the command line prints it
    lines = {line.split()[0]: line for line in table.splitlines() if line.split() and line.split()[0] in STUDENTS}
    assert sorted(lines) == STUDENTS, table
    for student in STUDENTS:
        total = sum(p for k, p in expected_points(student).items() if k.startswith("check_"))
        assert f" {total:g} / 29 " in lines[student], lines[student]
        note = EXPECTED["students"][student]["note"]
        for possible in ("kernel died", "timed out"):  # never_ends: the cell limit interrupts the loop
            assert (possible in lines[student]) == (possible == note), f"{student}: {lines[student]}"
    steps = ["prepare", "gradebook", "release", "collect", "grade", "export", "report"]
    assert list(pipeline.run.seconds) == steps, "every step ran, in order"


def test_bundled_submissions_are_up_to_date(tmp_path):
    """examples/submissions are exactly what examples/make_submissions.py writes now (regenerated in tmp)."""
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "make_submissions.py"), "--out", str(tmp_path)],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    fresh, bundled = notebook_bytes(tmp_path), notebook_bytes(SUBMISSIONS)
    assert sorted(fresh) == sorted(bundled)
    stale = [path for path in fresh if fresh[path] != bundled[path]]
    assert not stale, f"stale examples/submissions (run .venv/bin/python examples/make_submissions.py): {stale}"


def test_a_course_refuses_a_folder_it_did_not_make(tmp_path):
    from autograder.course.run import CourseOptions, PipelineError, grade_course

    (tmp_path / "notes.txt").write_text("someone's work")
    with pytest.raises(PipelineError, match="not a course folder made by autograder.course.classroom"):
        grade_course(CourseOptions(course=tmp_path, submissions=SUBMISSIONS))
    assert (tmp_path / "notes.txt").read_text() == "someone's work"
    with pytest.raises(PipelineError, match="inside its source/ or examples/"):
        grade_course(CourseOptions(course=REPOSITORY / "examples" / "course", submissions=SUBMISSIONS))
    assert not (REPOSITORY / "examples" / "course").exists()


# --- the command line itself (autograder.course.classroom): its messages and exit statuses ----------------------------


def test_classroom_refuses_without_the_sandbox_and_grades_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    monkeypatch.delenv(sandbox.UNSANDBOXED, raising=False)
    sandbox.bubblewrap.cache_clear()
    try:
        code = classroom.main(["--course", str(tmp_path / "course"), "--submissions", str(tmp_path / "none")])
    finally:
        sandbox.bubblewrap.cache_clear()
    assert code == 3
    error = capsys.readouterr().err
    assert "REFUSED: bubblewrap is not installed" in error and "pass --unsandboxed" in error
    assert not (tmp_path / "course").exists()


def test_classroom_says_a_course_that_is_a_file_is_refused_and_exits_with_1(tmp_path, capsys):
    (tmp_path / "course").write_text("a file")
    (tmp_path / "submissions" / "ada" / ASSIGNMENT).mkdir(parents=True)
    (tmp_path / "submissions" / "ada" / ASSIGNMENT / "attention.ipynb").write_text("{}")
    code = classroom.main(["--course", str(tmp_path / "course"), "--submissions", str(tmp_path / "submissions")])
    assert code == 1 and "FAILED: --course" in capsys.readouterr().err, "the command says it and exits with 1"
    assert (tmp_path / "course").read_text() == "a file"


@pytest.fixture
def lms_course(tmp_path, monkeypatch):
    make_gradebook(tmp_path, monkeypatch)
    (tmp_path / "roster.csv").write_text(ROSTER)
    return tmp_path


def test_classroom_export_flag_writes_the_file_and_lists_who_needs_the_instructor(lms_course, capsys):
    assert classroom.main(["--course", str(lms_course), "--export", "canvas"]) == 0
    out = capsys.readouterr().out
    assert f"wrote {lms_course / 'lms' / 'canvas.csv'}: 4 students" in out
    assert "NO LMS IDENTITY: bob: not in the roster" in out
    missing = lms_course / "nope.csv"
    assert classroom.main(["--course", str(lms_course), "--export", "moodle", "--roster", str(missing)]) == 1
    assert "cannot read the roster" in capsys.readouterr().err


def test_classroom_feedback_only_says_how_many_pages_it_made_again(graded_course_copy, capsys):
    assert classroom.main(["--course", str(graded_course_copy), "--feedback-only"]) == 0
    assert "feedback regenerated for 0 students (hand grades changed)" in capsys.readouterr().out


@pytest.mark.skipif(sandbox.bubblewrap() is None, reason=f"bubblewrap is not available ({sandbox.INSTALL})")
def test_classroom_grades_each_assignment_of_an_nbgrader_course_folder_of_the_instructors(tmp_path, capsys):
    """An instructor's own nbgrader course folder (nbgrader_config.py, source/ with two assignments): the class command
    adopts it, takes its source/ without copying over it, and grades each assignment the submissions hold, in turn,
    into one gradebook; the instructor's files stay."""
    course = tmp_path / "ml101"
    for name in ("week1", "week2"):
        shutil.copytree(REPOSITORY / "source" / "positions", course / "source" / name)
    (course / "nbgrader_config.py").write_text("c = get_config()  # noqa: F821\n")
    (course / "notes.md").write_text("my notes")
    solution = (REPOSITORY / "source" / "positions" / "positions.ipynb").read_bytes()
    blank = (REPOSITORY / "release" / "positions" / "positions.ipynb").read_bytes()
    for name, notebook in (("week1", solution), ("week2", blank)):
        (tmp_path / "submissions" / "ada" / name).mkdir(parents=True)
        (tmp_path / "submissions" / "ada" / name / "positions.ipynb").write_bytes(notebook)
    sources = {path: path.read_bytes() for path in sorted((course / "source").rglob("*")) if path.is_file()}
    code = classroom.main(["--course", str(course), "--submissions", str(tmp_path / "submissions"), "--jobs", "1"])
    printed = capsys.readouterr()
    assert code == 0, printed.out[-3000:] + printed.err[-3000:]
    assert "=== assignment week1 (1 of 2) ===" in printed.out and "=== assignment week2 (2 of 2) ===" in printed.out
    assert "does not load autograder_config.py" in printed.out  # the instructor is told the one line to add
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        assert gradebook.find_submission("week1", "ada").score == 5.0
        assert gradebook.find_submission("week2", "ada").score == 0.0
    assert {path: path.read_bytes() for path in sources} == sources and (course / "notes.md").read_text() == "my notes"
    assert sorted(p.name for p in (course / "release").iterdir()) == ["week1", "week2"]


def test_an_appeal_decided_with_points_remakes_the_students_feedback_page_at_once(graded_course_copy, capsys):
    """issue 37: a decision that changes a check's points reaches the gradebook and, at once, the feedback page."""
    import datetime

    from autograder.attempts import Attempts
    from autograder.service.appeals import Appeals
    from autograder.service.appeals import main as appeals_main
    from autograder.verdicts import Property, Verdict

    course, student, check = graded_course_copy, "no_sqrt_scaling", "check_masked_attention"
    url = f"sqlite:///{course / 'gradebook.db'}"
    with Gradebook(url) as gradebook:
        grade = gradebook.find_grade(check, "attention", "attention", student)
        before, worth = grade.score, grade.max_score
    assert before < worth
    page = course / "feedback" / student / "attention" / "attention.html"
    shown = page.read_text()
    when = datetime.datetime(2026, 12, 1, 10)
    store = Attempts(url)
    store.add(key=f"{student}+1", student=student, assignment="attention", submitted=when, now=when)
    (attempt,) = store.select(student=student)
    store.start(attempt.id, now=when)
    lost = Verdict(check, "attention", before, worth, (Property("values", False, "the rows differ"),), seed=3)
    store.finish(attempt.id, points=before, max_points=worth, verdicts=[lost], now=when)
    appeal = Appeals(url).ask(
        student=student, attempt=store.get(attempt.id), check=check, text="scaled", digest="d" * 64
    )
    capsys.readouterr()
    assert appeals_main(["--course", str(course), "decide", str(appeal.id), "--points", f"{worth:g}"]) == 0
    said = capsys.readouterr().out.splitlines()
    assert said == [
        f"appeal {appeal.id} decided: {check} of {student} is now {worth:g} / {worth:g} in the gradebook",
        f"feedback page of {student} made again",
    ]
    remade = page.read_text()
    assert remade != shown
    with Gradebook(url) as gradebook:
        assert gradebook.find_grade(check, "attention", "attention", student).score == worth
        total = gradebook.find_submission("attention", student).score
    assert f"{total:g}" in remade or f"{total}" in remade
