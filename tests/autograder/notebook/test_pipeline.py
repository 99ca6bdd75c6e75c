"""Each of the course's nbgrader steps alone, on an in-memory notebook (as nbgrader's own tests/preprocessors do):
RestoreCellFlags, DropEmptyMetadata, ExternalVerdicts, StartVerdicts, VerdictGrades, CheckMetadata
(autograder.notebook.autograde). The hidden checks are replaced by a fixed
verdict where a step only moves it."""

import os
import sys
from pathlib import Path

import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from nbgrader.api import Gradebook

from autograder.notebook import autograde as notebook_grading
from autograder.notebook.autograde import (
    EARLY,
    POINTS,
    RESTORED,
    CheckMetadata,
    DropEmptyMetadata,
    EarlyVerdicts,
    ExternalVerdicts,
    RestoreCellFlags,
    StartVerdicts,
    VerdictGrades,
)
from autograder.verdicts import CHECKS_SECONDS, KEY, Property, Verdict, read_checks_seconds, read_verdicts

PYTHON = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
SOURCE = Path(__file__).resolve().parents[3] / "source"
VERDICT = Verdict(
    check="check_causal_mask",
    function="causal_mask",
    points=0.5,
    max_points=1.0,
    properties=(Property("shape", True), Property("lower triangle", False, "row 3 sees position 4")),
    seed=11,
)


def answer(source: str = "def causal_mask(positions):\n    return None\n"):
    cell = new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade": False, "solution": True, "locked": False, "grade_id": "causal_mask_answer"}
    return cell


def check(grade_id: str = "check_causal_mask", **flags):
    cell = new_code_cell("assert causal_mask(3).shape == (3, 3)")
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": True, "grade_id": grade_id, "points": 1}
    cell.metadata["nbgrader"].update(flags)
    cell.outputs = [new_output("error", ename="AssertionError", evalue="from the kernel", traceback=[])]
    return cell


def resources(tmp_path: Path, db: str = "") -> dict:
    notebook = tmp_path / "autograded" / "ada" / "attention" / "attention.ipynb"
    return {
        "nbgrader": {"assignment": "attention", "notebook": "attention", "student": "ada", "db_url": db},
        "metadata": {"path": str(notebook.parent)},
    }


class FixedVerdicts(ExternalVerdicts):
    """ExternalVerdicts whose hidden checks answer VERDICT for every check asked (and count the calls)."""

    graded = []

    def grade(self, checks, sources, ids):
        self.graded.append((sources, ids))
        return {check_id: VERDICT for check_id in ids}


def test_external_verdicts_replace_the_kernels_outputs_and_store_the_verdict(tmp_path):
    notebook = new_notebook(cells=[answer(), check(), new_markdown_cell("text")])
    notebook.cells[0].metadata[KEY] = {"planted": True}  # a student's "verdict": removed
    step = FixedVerdicts(source=str(SOURCE))
    step.graded.clear()
    notebook, handed = step.preprocess(notebook, resources(tmp_path))
    cell = notebook.cells[1]
    assert [output.output_type for output in cell.outputs] == ["stream"]
    assert cell.outputs[0].text.startswith("check_causal_mask (causal_mask): 0.5 / 1 points")
    assert "In your notebook the visible checks stopped with AssertionError: from the kernel" in cell.outputs[0].text
    assert handed[POINTS] == {"check_causal_mask": 0.5}
    assert read_verdicts(notebook) == {"check_causal_mask": VERDICT}
    assert KEY not in notebook.cells[0].metadata
    assert step.graded == [(["def causal_mask(positions):\n    return None\n"], ["check_causal_mask"])]


class Clock:
    """time for autograde alone: monotonic() moves 1.25 s on each reading."""

    def __init__(self):
        self.now = 100.0

    def monotonic(self) -> float:
        self.now += 1.25
        return self.now


def test_external_verdicts_store_the_hidden_checks_seconds_in_the_notebook(tmp_path, monkeypatch):
    """The seconds by the clock from the checks' start to their verdicts (the report's timing.csv reads them); a
    value the student planted in the notebook's metadata is dropped, even with no check cell to grade."""
    monkeypatch.setattr(notebook_grading, "time", Clock())
    notebook = new_notebook(cells=[answer(), check()])
    notebook.metadata[CHECKS_SECONDS] = 0.01  # planted
    notebook, _ = FixedVerdicts(source=str(SOURCE)).preprocess(notebook, resources(tmp_path))
    assert notebook.metadata[CHECKS_SECONDS] == 1.25 and read_checks_seconds(notebook) == 1.25
    nothing = new_notebook(cells=[answer()])
    nothing.metadata[CHECKS_SECONDS] = 0.01
    nothing, _ = FixedVerdicts(source=str(SOURCE)).preprocess(nothing, resources(tmp_path))
    assert CHECKS_SECONDS not in nothing.metadata


def test_start_verdicts_hands_its_verdicts_on_for_the_very_same_answers_only(tmp_path):
    notebook = new_notebook(cells=[answer(), check()])
    started = type("Started", (StartVerdicts, FixedVerdicts), {})(source=str(SOURCE))
    started.graded.clear()
    notebook, found = started.preprocess(notebook, resources(tmp_path))
    assert isinstance(found[EARLY], EarlyVerdicts) and found[EARLY].checks == ["check_causal_mask"]
    early = found[EARLY].verdicts
    notebook, _ = FixedVerdicts(source=str(SOURCE)).preprocess(notebook, found)
    assert len(FixedVerdicts.graded) == 1, "the early verdicts were graded again"
    assert read_checks_seconds(notebook) == round(early.result()[1], 2), "the seconds the early grading took"
    notebook.cells[0].source = "def causal_mask(positions):\n    return 1\n"  # changed since: graded again
    _, found = started.preprocess(notebook, resources(tmp_path))
    notebook.cells[0].source = "def causal_mask(positions):\n    return 2\n"
    FixedVerdicts(source=str(SOURCE)).preprocess(notebook, found)
    assert [sources for sources, _ in FixedVerdicts.graded][-1] == ["def causal_mask(positions):\n    return 2\n"]


def test_the_points_reach_the_gradebook_as_data_never_as_an_output(tmp_path):
    """ExternalVerdicts writes the verdict in words only and hands each check's points over (resources[POINTS]);
    VerdictGrades saves those, whatever the cell's outputs say, and scores other grade cells by nbgrader's rule."""
    written = new_code_cell("answer")
    written.metadata["nbgrader"] = {"grade": True, "solution": True, "locked": False, "grade_id": "why", "points": 2}
    notebook = new_notebook(cells=[answer(), check(), written])
    found = resources(tmp_path)
    notebook, found = FixedVerdicts(source=str(SOURCE)).preprocess(notebook, found)
    assert [output.output_type for output in notebook.cells[1].outputs] == ["stream"]
    assert found[POINTS] == {"check_causal_mask": 0.5} and read_verdicts(notebook)["check_causal_mask"] == VERDICT
    forged = new_output("execute_result", data={"text/plain": "99"}, execution_count=1)
    notebook.cells[1].outputs.append(forged)  # a number the kernel printed decides nothing

    class Grade:
        auto_score, manual_score, needs_manual_grade = None, None, None

    grades = {name: Grade() for name in ("check_causal_mask", "why")}

    class Book:
        db = type("Db", (), {"commit": staticmethod(lambda: None)})()

        def find_grade(self, grade_id, *_):
            return grades[grade_id]

    step = VerdictGrades()
    step.points = dict(found[POINTS])
    step.checks = set(step.points)
    step.gradebook, step.notebook_id, step.assignment_id, step.student_id = Book(), "attention", "attention", "ada"
    for cell in notebook.cells[1:]:
        step._add_score(cell, found)
    assert (grades["check_causal_mask"].auto_score, grades["check_causal_mask"].needs_manual_grade) == (0.5, False)
    assert grades["why"].auto_score is None and grades["why"].needs_manual_grade  # a written answer: by hand
    step.points = {}  # a check cell left without points scores 0, never full points by default
    step._add_score(notebook.cells[1], found)
    assert grades["check_causal_mask"].auto_score == 0.0


def test_drop_empty_metadata_makes_a_duplicated_cell_the_students_own():
    duplicate = new_code_cell("x = 1")
    duplicate.metadata["nbgrader"] = {}  # what nbgrader's DeduplicateIds leaves on the copy
    notebook = new_notebook(cells=[duplicate, check()])
    notebook, _ = DropEmptyMetadata().preprocess(notebook, {})
    assert "nbgrader" not in notebook.cells[0].metadata
    assert notebook.cells[1].metadata["nbgrader"]["grade_id"] == "check_causal_mask"


@pytest.fixture
def gradebook_with_the_source(tmp_path, monkeypatch):
    """A gradebook holding the assignment's source cells: the answer cell and the locked check cell."""
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))  # alembic
    db = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(db) as gradebook:
        gradebook.add_assignment("attention")
        gradebook.add_notebook("attention", "attention")
        gradebook.add_grade_cell("check_causal_mask", "attention", "attention", max_score=1.0, cell_type="code")
        gradebook.add_solution_cell("causal_mask_answer", "attention", "attention")
        for name, text, locked in [
            ("check_causal_mask", "assert causal_mask(3).shape == (3, 3)", True),
            ("causal_mask_answer", "def causal_mask(positions):\n    return None\n", False),
        ]:
            gradebook.add_source_cell(name, "attention", "attention", cell_type="code", locked=locked, source=text)
    return db


def test_restore_cell_flags_puts_back_a_test_cells_flags_and_says_what_changed(tmp_path, gradebook_with_the_source):
    tampered = check(grade=False, points=0)  # the student made the test cell a plain one worth nothing
    tampered.source = "pass  # my own checks"
    notebook = new_notebook(cells=[answer(), tampered])
    notebook, _ = RestoreCellFlags().preprocess(notebook, resources(tmp_path, gradebook_with_the_source))
    flags = notebook.cells[1].metadata["nbgrader"]
    assert (flags["grade"], flags["points"], flags["locked"]) == (True, 1.0, True)
    assert notebook.cells[1].metadata[RESTORED] == ["grade: False -> True", "points: 0 -> 1.0", "its text was edited"]
    assert RESTORED not in notebook.cells[0].metadata  # the answer cell was as released


def test_restore_cell_flags_leaves_an_untouched_notebook_as_it_is(tmp_path, gradebook_with_the_source):
    notebook = new_notebook(cells=[answer(), check()])
    notebook, _ = RestoreCellFlags().preprocess(notebook, resources(tmp_path, gradebook_with_the_source))
    assert all(RESTORED not in cell.metadata for cell in notebook.cells)


def test_check_cells_are_the_assignments_grade_cells_only():
    other = check("check_something_else")
    notebook = new_notebook(cells=[answer(), check(), other])
    attention = notebook_grading.assignments.load(SOURCE / "attention")
    assert [c.metadata["nbgrader"]["grade_id"] for c in notebook_grading.check_cells(notebook, attention)] == [
        "check_causal_mask"
    ]


def metadata_verdict(step, notebook) -> str:
    """What a metadata check says of ``notebook``: "valid", or the error it raised and its message."""
    try:
        step.preprocess(notebook, {})
    except Exception as error:  # noqa: BLE001 - the verdicts of two steps are compared, whatever they raise
        return f"{type(error).__name__}: {error}"
    return "valid"


@pytest.mark.parametrize(
    "broken",
    [
        None,  # a valid notebook
        {"points": "two"},  # not a number
        {"grade_id": 7},
        {"schema_version": 1},  # an older schema: nbgrader's own error
        {"schema_version": 9},
        {"solution": "yes"},
    ],
)
def test_check_metadata_says_what_nbgraders_check_cell_metadata_says(broken):
    """CheckMetadata (its schema compiled once) and nbgrader's CheckCellMetadata, on the same notebooks: the same
    verdict, the same error and message; a valid notebook passes both."""
    from nbgrader.preprocessors import CheckCellMetadata

    cells = [answer(), check(), new_markdown_cell("notes")]
    for cell in cells[:2]:
        cell.metadata["nbgrader"]["schema_version"] = 3
    if broken is not None:
        cells[1].metadata["nbgrader"].update(broken)
    ours, theirs = (metadata_verdict(step(), new_notebook(cells=cells)) for step in (CheckMetadata, CheckCellMetadata))
    assert ours == theirs
    assert (ours == "valid") == (broken is None), ours


def test_nbgrader_releases_neither_checks_py_nor_a_package_of_checks(tmp_path):
    """nbgrader's own walk of an assignment's folder (what generate_assignment copies), with the course's ignore list:
    the notebook's data file goes out, checks.py, every module of a checks/ package and reference.py do not."""
    from nbgrader.utils import find_all_files

    from autograder.notebook.pipeline import IGNORED

    folder = tmp_path / "attention"
    (folder / "checks" / "deeper").mkdir(parents=True)
    for name in ("checks.py", "reference.py", "visible_checks.json", "checks/__init__.py", "checks/mask.py"):
        (folder / name).write_text("x = 1\n")
    (folder / "checks" / "deeper" / "more.py").write_text("x = 1\n")
    released = {Path(path).relative_to(folder).as_posix() for path in find_all_files(str(folder), IGNORED)}
    assert released == {"visible_checks.json"}
