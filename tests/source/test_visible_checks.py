"""The notebook's visible checks accept what the hidden checks accept, and their messages name the mistake.

A visible check is the first thing a student reads: it must not reject an answer that the hidden checks give full
marks (a float32 computation, a right formula written another way), and when it rejects one it must say what is
wrong (the dtype found and what is accepted; the row maximum before the order of the weights; split_heads' rows
and columns, not raw numbers), and only its own mistake: the visible checks run the student's functions together,
so a wrong softmax must send the student to softmax from attention's checks too, not name the mask or the heads
axis. The check cells run here on the answer cells of the source notebook's solution and of the mutants
(tests/mutants.py), in this process: they are the course's own code.
"""

from __future__ import annotations

import contextlib
import functools
import io
import re
import warnings
from pathlib import Path

import nbformat
import numpy as np
import pytest
from mutants import LIST, MUTANTS

from autograder.answers.grading import answer_sources
from lib.check import FILE, callees_first, check

NOTEBOOK = Path(__file__).resolve().parents[2] / "source" / "attention" / "attention.ipynb"
HIDDEN = re.compile(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS", re.S)
SOLUTION = answer_sources(NOTEBOOK)


def visible_checks(sources: list[str], notebook_path: Path = NOTEBOOK) -> dict[str, str | None]:
    """{check id: None when its visible check passes, else the message it fails with} for these answer cells, the
    setup cell's ``check`` reading the numbers recorded beside the notebook (lib.check)."""
    notebook = nbformat.read(notebook_path, as_version=4)
    namespace = {
        "np": np,
        "check": functools.partial(check, path=notebook_path.parent / FILE),
        "callees_first": functools.partial(callees_first, path=notebook_path.parent / FILE),
    }
    for source in sources:
        exec(source, namespace)  # the course's own answers
    verdicts = {}
    for cell in notebook.cells:
        flags = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code" or not flags.get("grade"):
            continue
        try:
            with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
                warnings.simplefilter("ignore")
                exec(HIDDEN.sub("", cell.source), namespace)
            verdicts[flags["grade_id"]] = None
        except AssertionError as failure:
            verdicts[flags["grade_id"]] = str(failure)
        except Exception as error:  # noqa: BLE001 - a wrong answer may fail any way
            verdicts[flags["grade_id"]] = f"{type(error).__name__}: {error}"
    return verdicts


def failing(verdicts: dict) -> dict:
    return {check: message for check, message in verdicts.items() if message is not None}


def float32_solution() -> list[str]:
    """The solution computed in float32 throughout: the hidden checks give it full marks
    (tests/autograder/answers/test_grading.py, test_a_float32_solution_earns_full_marks)."""
    changed = [
        source.replace("dtype=float)", "dtype=np.float32)").replace("np.sqrt(d)", "np.float32(np.sqrt(d))")
        for source in SOLUTION
    ]
    assert sum(source.count("float32") for source in changed) >= 10
    return changed


def test_the_solution_passes_every_visible_check():
    verdicts = visible_checks(SOLUTION)
    assert len(verdicts) == 16 and failing(verdicts) == {}


def test_a_float32_solution_passes_every_visible_check():
    assert failing(visible_checks(float32_solution())) == {}


@pytest.mark.parametrize("mutant", [m for m in LIST if m.keeps], ids=[m.name for m in LIST if m.keeps])
def test_what_the_hidden_checks_accept_the_visible_checks_accept(mutant):
    assert failing(visible_checks(mutant.sources(SOLUTION))) == {}


def test_a_float16_softmax_reads_its_dtype_and_what_is_accepted():
    verdicts = visible_checks(MUTANTS["softmax: float16"].sources(SOLUTION))
    message = verdicts["check_softmax"]
    assert message.startswith("softmax returned float16 weights"), message
    assert "the checks accept float64, or float32 within its rounding" in message
    assert "sums to" not in message
    calling = verdicts["check_attention"]  # its attention uses that softmax: sent to softmax, in the same words
    assert calling.startswith("attention calls your softmax, and softmax fails its own check: fix softmax first")
    assert (
        "returned float16 numbers" in calling and "the checks accept float64, or float32 within its rounding" in calling
    )
    safe = visible_checks(MUTANTS["safe_softmax: float16"].sources(SOLUTION))["check_safe_softmax"]
    assert safe.startswith("safe_softmax returned float16 weights"), safe


def test_the_column_maximum_reads_the_row_maximum_not_the_order_of_the_weights():
    message = visible_checks(MUTANTS["softmax: the column's max subtracted"].sources(SOLUTION))["check_softmax"]
    assert "subtract each row's own maximum" in message, message
    assert "a larger score must get a larger weight" not in message


SOFTMAX_MISTAKES = [m for m in LIST if m.function == "softmax" and not m.keeps]
CALLERS = {  # a visible check whose function calls the student's softmax -> that function
    "check_attention": "attention",
    "check_masked_attention": "attention",
    "check_average_largest_weight": "average_largest_weight",
    "check_multi_head_attention": "multi_head_attention",
}


@pytest.mark.parametrize("mutant", SOFTMAX_MISTAKES, ids=[m.name for m in SOFTMAX_MISTAKES])
def test_a_softmax_mistake_reads_as_softmax_s_in_the_checks_of_the_functions_that_call_it(mutant):
    """The visible checks run the student's own functions together: a wrong softmax makes attention's checks fail
    too, and they must send the student to softmax, not name a mistake of attention's (the mask, the heads axis)."""
    verdicts = failing(visible_checks(mutant.sources(SOLUTION)))
    assert "check_softmax" in verdicts, f"{mutant.name} passes softmax's visible checks"
    for check_id, message in verdicts.items():
        if check_id in CALLERS:
            assert message.startswith(f"{CALLERS[check_id]} calls your softmax, "), (check_id, message)
            assert "fix softmax first" in message
        else:
            assert check_id == "check_softmax", (check_id, message)


def test_a_row_maximum_over_axis_1_reads_the_heads_axis():
    message = visible_checks(MUTANTS["softmax: the max over axis 1"].sources(SOLUTION))["check_softmax"]
    assert message.startswith("with a heads axis in front, head 0's weights differ from the softmax of its own"), (
        message
    )
    assert "axis=1 runs down a column" in message


def test_the_order_of_the_weights_is_named_for_no_mistake_of_the_row_maximum():
    """'exponentiate the scores themselves' comes after every check of the row maximum: no known mistake reads it."""
    for mutant in SOFTMAX_MISTAKES:
        message = visible_checks(mutant.sources(SOLUTION))["check_softmax"]
        assert "exponentiate the scores themselves" not in message, (mutant.name, message)


def test_a_lost_keepdims_reads_what_to_keep_not_a_bare_value_error():
    message = visible_checks(MUTANTS["softmax: max without keepdims"].sources(SOLUTION))["check_softmax"]
    assert message.startswith("softmax raised ValueError(") and "keepdims=True" in message, message


@pytest.mark.parametrize(
    ("name", "place"),
    [
        (
            "split_heads: reshape(heads, T, d)",
            "head 0, position 1 holds row 0, columns 4..7 of x, but it must hold row 1, columns 0..3",
        ),
        (
            "split_heads: strided columns",
            "head 0, position 0 holds row 0, columns 0, 3, 6, 9 of x, but it must hold row 0, columns 0..3",
        ),
    ],
)
def test_split_heads_says_where_a_head_took_its_numbers_in_rows_and_columns(name, place):
    message = visible_checks(MUTANTS[name].sources(SOLUTION))["check_split_heads"]
    assert message.startswith(place), message
    assert "[" not in message  # no raw numbers


# --- the recorded public inputs (lib.check on visible_checks.json) ----------------------------------------------

POSITIONS = NOTEBOOK.parents[1] / "positions" / "positions.ipynb"


def printed(sources: list[str], notebook_path: Path) -> dict[str, str]:
    """{check id: what its cell printed} for answer cells that pass every visible check."""
    notebook = nbformat.read(notebook_path, as_version=4)
    namespace = {
        "np": np,
        "check": functools.partial(check, path=notebook_path.parent / FILE),
        "callees_first": functools.partial(callees_first, path=notebook_path.parent / FILE),
    }
    for source in sources:
        exec(source, namespace)
    said = {}
    for cell in notebook.cells:
        flags = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and flags.get("grade"):
            out = io.StringIO()
            with warnings.catch_warnings(), contextlib.redirect_stdout(out):
                warnings.simplefilter("ignore")
                exec(HIDDEN.sub("", cell.source), namespace)
            said[flags["grade_id"]] = out.getvalue()
    return said


@pytest.mark.parametrize("notebook_path", [NOTEBOOK, POSITIONS], ids=["attention", "positions"])
def test_a_passing_check_says_so_in_one_line(notebook_path):
    said = printed(answer_sources(notebook_path), notebook_path)
    assert said and all(
        re.fullmatch(r"✓ \w+: \d propert(y holds|ies hold) on the public inputs \(.+\)\n", s) for s in said.values()
    ), said
    assert said.get("check_rotate", "✓ rotate: 2 properties hold on the public inputs").startswith(
        "✓ rotate: 2 properties hold on the public inputs"
    )


def positions_mistakes():
    from autograder import assignments

    checks = assignments.load(POSITIONS.parent).checks
    return [
        (entry.check_id, entry.function, message, wrong)
        for entry in checks.values()
        for message, wrong in entry.mistakes
    ]


@pytest.mark.parametrize("case", positions_mistakes(), ids=lambda case: case[2].split(":")[0])
def test_each_mistake_positions_checks_name_fails_its_visible_check_with_its_own_words(case):
    check_id, function, message, wrong = case
    notebook = nbformat.read(POSITIONS, as_version=4)
    namespace = {"np": np, "check": functools.partial(check, path=POSITIONS.parent / FILE)}
    for source in answer_sources(POSITIONS):
        exec(source, namespace)
    namespace[function] = wrong
    cell = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == check_id)
    with pytest.raises(AssertionError) as raised, contextlib.redirect_stdout(io.StringIO()):
        exec(HIDDEN.sub("", cell.source), namespace)
    assert str(raised.value).startswith(f"{function}(") and str(raised.value).endswith(f": {message}"), raised.value


@pytest.mark.parametrize("notebook_path", [NOTEBOOK, POSITIONS], ids=["attention", "positions"])
def test_a_blank_function_is_one_line_naming_its_cell(notebook_path):
    from autograder.validate.release import blank_release

    blank = answer_sources(blank_release(nbformat.read(notebook_path, as_version=4)))
    verdicts = visible_checks(blank, notebook_path)
    assert len(verdicts) in (3, 16) and all(verdicts.values()), verdicts
    positions = {
        "check_rotation_angles": "rotation_angles is not written yet: fill in the cell under "
        "'Write rotation_angles(positions, size, base=10000.0)'",
        "check_rotate": "rotate calls your rotation_angles, and rotation_angles is not written yet: fill in the cell "
        "under 'Write rotation_angles(positions, size, base=10000.0)' first; then run this cell again",
    }
    for check_id, message in positions.items():
        assert verdicts.get(check_id, message) == message
    for message in verdicts.values():
        assert "\n" not in message


@pytest.mark.parametrize(
    ("name", "check_id", "words"),
    [
        ("average_largest_weight: max down a column", "check_average_largest_weight", "axis"),
        ("multi_head_attention: scaled by sqrt(D)", "check_multi_head_attention", "sqrt"),
        ("attention: mask with -1e9", "check_masked_attention", ""),
    ],
)
def test_what_the_issue_found_passing_visibly_now_fails_first(name, check_id, words):
    """Issue 35: these passed every visible check and lost points only in the grade."""
    message = visible_checks(MUTANTS[name].sources(SOLUTION))[check_id]
    assert message is not None and words in message, message


def isolated_pairs():
    """(caller, callee, a mutant of the callee) for every pair of ISOLATE of attention's checks.py."""
    from autograder import assignments

    isolate = assignments.load(NOTEBOOK.parent).isolate
    return [
        (caller, callee, mutant)
        for caller, callees in isolate.items()
        for callee in callees
        for mutant in LIST
        if mutant.function == callee and not mutant.keeps
    ]


@pytest.mark.parametrize("case", isolated_pairs(), ids=lambda case: f"{case[0]} <- {case[2].name}")
def test_one_wrong_callee_at_a_time_is_blamed_in_its_callers_checks(case):
    """Issue 35: a wrong join_heads made the multi-head check say "use the causal mask". With only the callee
    wrong, each failing check of the caller names the callee (the visible checks run the student's own functions)."""
    caller, callee, mutant = case
    verdicts = failing(visible_checks(mutant.sources(SOLUTION)))
    from autograder import assignments

    checks = assignments.load(NOTEBOOK.parent).checks
    for check_id in [key for key, entry in checks.items() if entry.function == caller]:
        if check_id in verdicts:
            message = verdicts[check_id]
            assert message.startswith(
                (f"{caller} calls your {callee}", f"this check of {caller} uses your {callee}")
            ), message
