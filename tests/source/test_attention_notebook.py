"""The source notebook is the one copy of the assignment, edited in JupyterLab with nbgrader's Create Assignment.

What a build script used to promise is checked on the notebook itself: the points table, unique grade ids
that are also the cells' ids (stable across edits), every answer cell followed by its visible check, solution
markers in every answer, hidden blocks that only name their check, and nbgrader's metadata in every cell.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from autograder import assignments

SOURCE = Path(__file__).resolve().parents[2] / "source" / "attention" / "attention.ipynb"
CHECKS = assignments.load(SOURCE.parent).checks
WRITTEN = {
    "answer_scaling_prediction": 1,
    "answer_read_a_head": 1,
    "answer_copy_prediction": 1,
    "answer_mask_after_softmax": 1,
}
HIDDEN = re.compile(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", re.S)


@pytest.fixture(scope="module")
def notebook():
    notebook = nbformat.read(SOURCE, as_version=4)
    nbformat.validate(notebook)
    return notebook


def flags(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def test_every_cell_has_nbgrader_metadata_and_its_grade_id_as_cell_id(notebook):
    ids = [flags(cell).get("grade_id") for cell in notebook.cells]
    assert None not in ids, "a cell has no nbgrader metadata: give it a type in the Create Assignment toolbar"
    assert len(set(ids)) == len(ids), f"duplicate grade ids: {sorted({i for i in ids if ids.count(i) > 1})}"
    for cell in notebook.cells:
        assert flags(cell)["schema_version"] == 3
        assert cell.id == flags(cell)["grade_id"], (
            f"cell {cell.id!r} has grade id {flags(cell)['grade_id']!r}: the cell id is the grade id, so ids stay "
            "stable and readable (set cell.id to the grade id)"
        )


def test_points_table(notebook):
    graded = {flags(cell)["grade_id"]: flags(cell)["points"] for cell in notebook.cells if flags(cell)["grade"]}
    expected = {check_id: check.points for check_id, check in CHECKS.items()} | WRITTEN
    assert graded == expected
    assert sum(CHECKS[check].points for check in CHECKS) == 29 and sum(WRITTEN.values()) == 4


def test_answer_cells_hold_a_solution_block_and_keep_their_signature(notebook):
    answers = [cell for cell in notebook.cells if flags(cell)["solution"] and cell.cell_type == "code"]
    assert {flags(cell)["grade_id"] for cell in answers} == {check.function for check in CHECKS.values()}
    for cell in answers:
        name = flags(cell)["grade_id"]
        assert not flags(cell)["grade"] and not flags(cell)["locked"]
        assert cell.source.startswith(f"def {name}("), f"{name}'s cell must start with its signature"
        before, _, rest = cell.source.partition("### BEGIN SOLUTION")
        assert rest and "### END SOLUTION" in rest, f"{name}: no ### BEGIN SOLUTION / ### END SOLUTION block"
        assert '"""' in before, f"{name}: the docstring must stay visible, above the solution block"


def test_every_answer_cell_is_followed_by_its_visible_check(notebook):
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    for position, cell in enumerate(code):
        if flags(cell)["solution"]:
            following = flags(code[position + 1])
            assert following["grade_id"] == f"check_{flags(cell)['grade_id']}" and following["grade"], (
                f"the answer cell {flags(cell)['grade_id']} is followed by {following['grade_id']}, not its check"
            )


def test_check_cells_are_locked_and_their_hidden_block_names_only_the_check(notebook):
    checks = [cell for cell in notebook.cells if flags(cell)["grade"] and cell.cell_type == "code"]
    assert {flags(cell)["grade_id"] for cell in checks} == set(CHECKS)
    for cell in checks:
        grade_id = flags(cell)["grade_id"]
        assert flags(cell)["locked"] and not flags(cell)["solution"]
        blocks = HIDDEN.findall(cell.source)
        assert blocks == [f"# graded outside this kernel: checks.py, {grade_id}\n"], (
            f"{grade_id}'s hidden block must only name its check, not hold test code: {blocks}"
        )
        visible = HIDDEN.sub("", cell.source)
        assert "assert" in visible, f"{grade_id} has no visible check for the student"
        assert not re.search(r"\blib\.(attention|heads)\b|from lib import", visible), (
            f"{grade_id}'s visible checks call lib's reference: they would hand out the answer"
        )


def test_written_answers_are_markdown_graded_by_hand(notebook):
    written = {
        flags(cell)["grade_id"]: cell
        for cell in notebook.cells
        if flags(cell)["grade"] and cell.cell_type == "markdown"
    }
    assert set(written) == set(WRITTEN)
    for cell in written.values():
        assert flags(cell)["solution"] and not flags(cell)["locked"]
        assert len(cell.source.split()) >= 30, "the model answer for graders is a few sentences"


def test_no_cell_holds_outputs(notebook):
    assert all(not cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code")


def test_each_locked_cell_as_released_is_what_grading_compares_a_submission_with(notebook):
    """RestoreCellFlags notes "its text was edited" when a locked cell differs from the gradebook's source (hidden
    tests included) with the hidden tests removed: that must be the release's text, or every check cell of every
    student would be noted as edited."""
    from autograder.notebook.autograde import released_source

    release = nbformat.read(SOURCE.parent.parent.parent / "release" / "attention" / "attention.ipynb", as_version=4)
    released = {flags(cell)["grade_id"]: cell.source for cell in release.cells}
    locked = [cell for cell in notebook.cells if flags(cell).get("locked")]
    assert len(locked) > 16
    for cell in locked:
        assert released_source(cell.source) == released[flags(cell)["grade_id"]], flags(cell)["grade_id"]
    check = next(cell for cell in locked if HIDDEN.search(cell.source))
    assert released_source(check.source) != check.source  # the hidden block is what differs
    assert released_source(check.source + "\n# edited") != released[flags(check)["grade_id"]]
