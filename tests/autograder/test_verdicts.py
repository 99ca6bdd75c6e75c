"""autograder.verdicts: a verdict is data, stored once in its check cell, read the same way by every page."""

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from autograder.verdicts import KEY, QUOTED, Property, StaleVerdicts, Verdict, quoted, read_verdicts

VERDICT = Verdict(
    check="check_softmax",
    function="softmax",
    points=1.0,
    max_points=2.0,
    properties=(
        Property("shape", True),
        Property("rows sum to 1", False, "row 0 sums to 2.0"),
        Property("values", False, "row 0 sums to 2.0"),
        Property("no overflow", None, "not available here"),
    ),
    seed=7,
    failed_call="softmax(scores (3, 5) float64)",
    cpu_seconds=0.25,
)


def check_cell(grade_id: str, **metadata):
    cell = new_code_cell("# visible checks")
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": grade_id, "points": 2}
    cell.metadata.update(metadata)
    return cell


def answer_cell(**metadata):
    cell = new_code_cell("def softmax(x): ...")
    cell.metadata["nbgrader"] = {"grade": False, "solution": True, "grade_id": "softmax_answer"}
    cell.metadata.update(metadata)
    return cell


def test_a_verdict_survives_the_notebooks_json_unchanged():
    notebook = new_notebook(cells=[answer_cell(), check_cell("check_softmax", **{KEY: VERDICT.to_dict()})])
    again = nbformat.reads(nbformat.writes(notebook), as_version=4)
    assert read_verdicts(again) == {"check_softmax": VERDICT}
    assert read_verdicts(again)["check_softmax"].failed == [VERDICT.properties[1], VERDICT.properties[2]]


def test_the_text_says_each_property_once_and_the_seed():
    lines = VERDICT.text().splitlines()
    assert lines[0] == "check_softmax (softmax): 1 / 2 points"
    assert lines[1] == "  PASS shape"
    assert lines[2] == "  FAIL rows sum to 1: row 0 sums to 2.0"
    assert lines[3] == "  FAIL values: the same failure as above"
    assert lines[4] == "  n/a  no overflow: not available here"
    assert "seed 7" in lines[5]


def test_points_on_the_gradebooks_scale():
    assert VERDICT.scaled(2.0) == 1.0
    assert VERDICT.scaled(3.0) == 1.5
    assert Verdict("c", "f", 1.0, 3.0, ()).scaled(2.0) == 0.67


def test_a_notebook_graded_before_verdicts_were_data_says_to_regrade():
    notebook = new_notebook(cells=[answer_cell(), check_cell("check_softmax")])
    with pytest.raises(StaleVerdicts, match="--regrade"):
        read_verdicts(notebook)
    with pytest.raises(StaleVerdicts, match="--regrade"):
        Verdict.from_dict({**VERDICT.to_dict(), "format": 0})


def test_a_verdict_planted_in_an_answer_cell_is_not_read():
    planted = Verdict("check_attention", "attention", 4.0, 4.0, (Property("values", True),))
    notebook = new_notebook(
        cells=[answer_cell(**{KEY: planted.to_dict()}), check_cell("check_softmax", **{KEY: VERDICT.to_dict()})]
    )
    assert list(read_verdicts(notebook)) == ["check_softmax"]


def test_a_notebook_without_graded_cells_has_no_verdicts():
    assert read_verdicts(new_notebook(cells=[answer_cell()])) == {}


def test_a_quoted_exception_is_one_line_with_its_numbers_rounded_and_its_place_kept():
    hidden = "0.8347293412, -1.2345678e-07, 12345678"
    text = f"ValueError: the inputs were\n[{hidden}]\nand more (answer cell 3, line 7, in softmax)"
    assert quoted(text) == "ValueError: the inputs were … (answer cell 3, line 7, in softmax)"
    assert quoted(f"ValueError: [{hidden}] (answer cell 2, line 1)") == (
        "ValueError: [0.835, -1.23e-07, 1.23e+07] (answer cell 2, line 1)"
    )
    assert quoted("IndexError: index 5 is out of bounds for axis 0 with size 3") == (
        "IndexError: index 5 is out of bounds for axis 0 with size 3"  # counts and shapes stay as they are
    )
    assert quoted("x" * 5000) == "x" * (QUOTED - 1) + "…"
    assert quoted("a\x0bb\u2028c") == "a …"  # every line break Python knows ends the line
