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


# --- every other outcome as data: named mistakes, the kernel's end, the blank notebook ----------------------


def test_a_named_mistake_keeps_its_name_whatever_numbers_its_message_quotes():
    from autograder.verdicts import Named, mistake_id, named_after

    one = named_after("weights sum to 1 along axis 0, not along the last axis: softmax each row (axis=-1)")
    other = named_after("weights sum to 1 along axis 2, not along the last axis: softmax each row (axis=-1)")
    assert one == other == "weights-sum-to-along-axis-not-along-the"
    assert named_after("the weights match unscaled scores: divide by sqrt(d)") == "the-weights-match-unscaled-scores"
    named = Named("the weights match unscaled scores: divide by sqrt(d)", "unscaled")
    assert mistake_id("check_attention", "values", named) == mistake_id("check_masked_attention", "x", named)
    assert mistake_id("check_attention", "values", "values differ (largest 0.3)") == "check_attention.values"
    with pytest.raises(ValueError, match="lowercase words joined by '-'"):
        Named("text", "Not A Name")


def test_a_property_stores_its_words_and_its_id_apart():
    from autograder.verdicts import Named, mistake_id

    message = Named("the output is weights @ keys: it is weights @ values", "output-uses-keys")
    verdict = Verdict("c", "f", 0.0, 1.0, (Property("values", False, message, mistake_id("c", "values", message)),))
    stored = verdict.to_dict()["properties"][0]
    assert stored == {
        "name": "values",
        "passed": False,
        "message": "the output is weights @ keys: it is weights @ values",
        "mistake": "output-uses-keys",
    }
    assert type(Verdict.from_dict(verdict.to_dict()).properties[0].message) is str
    assert Verdict.from_dict(verdict.to_dict()).mistakes() == [("output-uses-keys", verdict.properties[0])]


def test_a_verdict_stored_before_mistakes_had_ids_reads_with_the_propertys_id():
    stored = VERDICT.to_dict()
    for item in stored["properties"]:
        del item["mistake"]  # as a grader before ids stored it
    old = Verdict.from_dict(stored)
    assert [key for key, _ in old.mistakes()] == ["check_softmax.rows sum to 1", "check_softmax.values"]


def test_a_kernel_end_is_stored_and_read_back_and_says_its_limit():
    from autograder.verdicts import BUDGET, KERNEL, SIGNAL, KernelEnd, read_kernel_ends

    ends = [KernelEnd(BUDGET, 7, limit=45), KernelEnd(SIGNAL, 9, signal="SIGSEGV")]
    notebook = new_notebook(cells=[new_code_cell("x")])
    notebook.metadata[KERNEL] = [end.to_dict() for end in ends]
    again = nbformat.reads(nbformat.writes(notebook), as_version=4)
    assert read_kernel_ends(again) == ends
    assert ends[0].short() == "cell 7: stopped after 45 s, the notebook's budget; later cells not run"
    assert "stopped after 45 s, the notebook's budget" in ends[0].text()
    assert ends[1].text().startswith("the kernel crashed (SIGSEGV)") and ends[1].died and not ends[0].died
    assert read_kernel_ends(new_notebook()) is None, "autograded before kernel ends were stored: unknown"
    notebook.metadata[KERNEL] = []
    assert read_kernel_ends(notebook) == []


def test_a_kernel_end_or_blank_reason_of_an_unknown_kind_is_refused():
    from autograder.verdicts import KERNEL, Blank, KernelEnd, read_kernel_ends

    with pytest.raises(ValueError, match="a kernel's end is one of"):
        KernelEnd("tired", 1)
    with pytest.raises(ValueError, match="a blank notebook's reason is one of"):
        Blank("lost")
    with pytest.raises(ValueError, match="not a list"):
        read_kernel_ends({"metadata": {KERNEL: "the kernel died"}})
    with pytest.raises(ValueError, match="cannot be read"):
        read_kernel_ends({"metadata": {KERNEL: [{"kind": "signal", "cell": 1, "colour": "red"}]}})


def test_a_blank_reason_says_why_and_survives_the_ledgers_json():
    import json

    from autograder.verdicts import EMPTY, FORMAT_VERSION, NOT_NOTEBOOK, UNGRADABLE, Blank

    assert Blank(EMPTY).text() == "the file is empty"
    assert Blank(NOT_NOTEBOOK, "NotJSONError: x").text() == "the file is not a notebook: NotJSONError: x"
    assert Blank(FORMAT_VERSION, "5").text().startswith("it is a notebook of format version 5")
    assert Blank(UNGRADABLE, "KeyError: 'grade_id'").text() == "nbgrader could not grade it (KeyError: 'grade_id')"
    blank = Blank(NOT_NOTEBOOK, "NotJSONError: x")
    assert Blank.from_dict(json.loads(json.dumps(blank.to_dict()))) == blank
    assert Blank.from_dict(None) is None


def test_the_feedback_says_how_to_reproduce_a_grade_with_what_a_student_has():
    """The seed and the failing calls' inputs as the verdict describes them; never the grader's API, which students
    do not have."""
    failing = VERDICT.text().splitlines()[-1]
    assert failing.startswith("Graded outside your notebook on inputs drawn at grading time (seed 7). ")
    assert "call softmax in your notebook on inputs like the ones named above" in failing
    assert "np.random.default_rng(0).normal(size=shape)" in failing and "quote it to your instructor" in failing
    assert "autograder" not in VERDICT.text() and "grade_answers" not in VERDICT.text()
    passing = Verdict("check_softmax", "softmax", 2.0, 2.0, (Property("values", True),), seed=11)
    assert passing.text().splitlines()[-1] == (
        "Graded outside your notebook on inputs drawn at grading time (seed 11). The seed draws these very inputs "
        "again: quote it to your instructor, who can grade with it."
    )
    assert Verdict("c", "f", 0.0, 1.0, (Property("values", False, "wrong"),)).text().splitlines()[-1] == (
        "  FAIL values: wrong"
    )  # no seed (a notebook not graded here): no sentence


def test_how_the_hidden_checks_were_cut_short_is_stored_with_the_verdict_and_read_back():
    """A ChecksEnd is data on the verdict (its kind, where, the limit, a crash's signal, an exit's status): it survives
    the notebook's JSON, a verdict stored before ends were reads as None, and an unknown kind is refused."""
    from dataclasses import replace

    from autograder.verdicts import CRASH, EXIT, IDLE, ChecksEnd, checks_ends

    idle = ChecksEnd(IDLE, "attention", limit=2.0)
    crash = ChecksEnd(CRASH, "softmax", signal="SIGSEGV")
    graded = [
        replace(VERDICT, check="check_attention", function="attention", end=idle, limit=idle.kind),
        replace(VERDICT, check="check_masked_attention", function="attention", end=idle, limit=idle.kind),
        replace(VERDICT, end=crash, limit=crash.kind),
        replace(VERDICT, check="check_causal_mask", function="causal_mask"),
    ]
    notebook = new_notebook(cells=[check_cell(v.check, **{KEY: v.to_dict()}) for v in graded])
    again = read_verdicts(nbformat.reads(nbformat.writes(notebook), as_version=4))
    assert list(again.values()) == graded
    assert checks_ends(again) == [(["check_attention", "check_masked_attention"], idle), (["check_softmax"], crash)]
    assert idle.what() == "stopped: attention waited 2 s without computing (sleep, input or a lock?)"
    assert crash.what() == "softmax crashed (SIGSEGV: a segmentation fault)"
    assert ChecksEnd(EXIT, "answer cell 3", code=4).what() == "answer cell 3 exited (exit 4)"
    assert ChecksEnd("notebook", limit=120.0).what() == "stopped: the hidden checks used up their 120 s of CPU time"
    assert ChecksEnd("notebook", limit=120.0).whole and not idle.whole
    stored = VERDICT.to_dict()
    del stored["end"]  # as a grader before ends stored it
    assert Verdict.from_dict(stored).end is None
    with pytest.raises(ValueError, match="a hidden checks' end is one of"):
        ChecksEnd("tired")
