"""lib.check, the student's side of the visible checks: recorded numbers in, one line or one sentence out.

The facts here are written by hand, in the file's format (autograder.visible writes the real ones): a doubling
function with one named mistake, a mask that must be boolean, a function taking a list, and one that calls another.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from lib import check as checker
from lib.check import CheckFailed, NotWrittenYet, check


def array(values, dtype="float64") -> dict:
    return {"array": np.asarray(values).tolist(), "dtype": dtype}


FACTS = {
    "format": 1,
    "assignment": "tiny",
    "tolerance": {"atol": 1e-6, "single": 64 * float(np.finfo(np.float32).eps), "accepted": "float64 or float32"},
    "functions": {
        "double": {"cell": "Write double(x)", "calls": []},
        "mask": {"cell": "Write mask(n)", "calls": []},
        "total": {"cell": "Write total(ids)", "calls": []},
        "quadruple": {"cell": "Write quadruple(x)", "calls": ["double"]},
    },
    "checks": {
        "check_double": {
            "function": "double",
            "items": 1,
            "properties": ["values", "large values"],
            "calls": [
                {
                    "about": "double(array of shape (3,))",
                    "role": "values",
                    "args": [array([1.0, 2.0, 3.0])],
                    "kwargs": {},
                    "expected": [array([2.0, 4.0, 6.0])],
                    "mistakes": [{"item": 0, "message": "squares x: multiply by 2", "array": [1.0, 4.0, 9.0]}],
                },
                {
                    "about": "double(array of shape (2,))",
                    "role": "large values",
                    "args": [array([1000.0, -1000.0])],
                    "kwargs": {},
                    "expected": [array([2000.0, -2000.0])],
                    "mistakes": [],
                },
            ],
        },
        "check_mask": {
            "function": "mask",
            "items": 1,
            "properties": ["bool"],
            "calls": [
                {
                    "about": "mask(2)",
                    "role": "",
                    "args": [2],
                    "kwargs": {},
                    "expected": [array([[True, False], [True, True]], "bool")],
                    "mistakes": [],
                }
            ],
        },
        "check_total": {
            "function": "total",
            "items": 1,
            "properties": ["values"],
            "calls": [
                {
                    "about": "total([1, 2, 3])",
                    "role": "",
                    "args": [{"list": [1, 2, 3]}],
                    "kwargs": {},
                    "expected": [array(6, "int64")],
                    "mistakes": [],
                }
            ],
        },
        "check_quadruple": {
            "function": "quadruple",
            "items": 1,
            "properties": ["values"],
            "calls": [
                {
                    "about": "quadruple(array of shape (3,))",
                    "role": "",
                    "args": [array([1.0, 2.0, 3.0])],
                    "kwargs": {},
                    "expected": [array([4.0, 8.0, 12.0])],
                    "mistakes": [],
                }
            ],
        },
    },
}


@pytest.fixture
def recorded(tmp_path, monkeypatch):
    """The facts written beside a notebook, the current folder being the notebook's (as in Jupyter)."""
    (tmp_path / checker.FILE).write_text(json.dumps(FACTS), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def failure(name, function) -> CheckFailed:
    with pytest.raises(CheckFailed) as raised:
        check(name, function)
    return raised.value


def test_a_right_function_prints_one_line_naming_the_properties(recorded, capsys):
    check("double", lambda x: 2 * x)
    assert capsys.readouterr().out == "✓ double: 2 properties hold on the public inputs (values; large values)\n"


def test_a_named_mistake_reads_as_its_own_sentence_first(recorded):
    error = failure("double", lambda x: x * x)
    assert str(error) == "double(array of shape (3,)): squares x: multiply by 2"
    assert isinstance(error, AssertionError)
    assert error._render_traceback_() == ["\x1b[0;31m✗ double(array of shape (3,)): squares x: multiply by 2\x1b[0m"]


def test_another_wrong_value_says_which_public_input_differs_and_by_how_much(recorded):
    error = failure("double", lambda x: np.where(np.abs(x) > 100, x, 2 * x))
    assert str(error) == (
        "double(array of shape (2,)) is wrong: at [0] it gives 1000 where 2000 is expected (public input 2 of 2)"
    )
    shape = failure("double", lambda x: np.append(2 * x, 0.0))
    assert str(shape) == "double(array of shape (3,)) has shape (4,), expected (3,) (public input 1 of 2)"


def test_a_blank_is_one_line_naming_its_cell(recorded):
    def double(x):
        raise NotImplementedError("write double")

    with pytest.raises(NotWrittenYet) as raised:
        check("double", double)
    assert str(raised.value) == "double is not written yet: fill in the cell under 'Write double(x)'"


def test_a_function_not_defined_yet_names_the_cell_to_run(recorded):
    with pytest.raises(NotWrittenYet, match=r"^double is not defined yet: run the cell under 'Write double\(x\)'"):
        check("double")


def test_float32_is_accepted_within_its_rounding_and_float16_refused_with_the_hidden_checks_words(recorded, capsys):
    check("double", lambda x: (2 * x).astype(np.float32) * np.float32(1 + 2e-6))  # within 64 float32 epsilons
    assert capsys.readouterr().out.startswith("✓ double")
    error = failure("double", lambda x: (2 * x).astype(np.float16))
    assert str(error) == (
        "double(array of shape (3,)) returned float16 numbers, which keep about 3 significant digits: "
        "float64 or float32; compute in float64 (np.asarray(x, dtype=float))"
    )
    assert str(failure("double", lambda x: (2 * x).astype(np.float32) + np.float32(1.0))).startswith(
        "double(array of shape (3,)) is wrong"
    )


def test_a_boolean_result_must_be_boolean(recorded, capsys):
    error = failure("mask", lambda n: np.tril(np.ones((n, n))))
    assert str(error) == "mask(2) has dtype float64: return booleans (dtype=bool), True or False"
    check("mask", lambda n: np.tril(np.ones((n, n), dtype=bool)))
    assert capsys.readouterr().out == "✓ mask: 1 property holds on the public inputs (bool)\n"


def test_a_list_the_task_gives_arrives_as_a_list(recorded, capsys):
    def total(ids):
        assert isinstance(ids, list), "a list, as the task says"
        return sum(ids)

    check("total", total)
    assert capsys.readouterr().out.startswith("✓ total")


def test_a_function_that_raises_is_said_in_one_line(recorded):
    assert str(failure("double", lambda x: x.nope)) == (
        "double(array of shape (3,)) raised AttributeError: 'numpy.ndarray' object has no attribute 'nope'"
    )
    assert (
        str(failure("double", lambda x: None))
        == "double(array of shape (3,)) returned NoneType: return an array of numbers"
    )


def test_a_failure_that_comes_from_a_wrong_callee_blames_the_callee(recorded):
    namespace = {"check": check, "np": np}
    exec("def double(x):\n    return x * x\n\ndef quadruple(x):\n    return 2 * double(x)\n", namespace)
    with pytest.raises(CheckFailed) as raised:
        exec("check('quadruple', quadruple)", namespace)
    assert str(raised.value) == (
        "quadruple calls your double, and double fails its own check: fix double first (the cell under "
        "'Write double(x)'): double(array of shape (3,)): squares x: multiply by 2; then run this cell again"
    )
    exec("def double(x):\n    raise NotImplementedError\n", namespace)
    with pytest.raises(CheckFailed, match=r"^quadruple calls your double, and double is not written yet: fill in"):
        exec("check('quadruple', quadruple)", namespace)
    exec("def double(x):\n    return 2 * x\n", namespace)
    exec("check('quadruple', quadruple)", namespace)  # right now: nothing raised


def test_a_missing_file_says_where_it_belongs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CheckFailed, match=r"^the visible checks' numbers are missing: visible_checks.json, released"):
        check("double", lambda x: 2 * x)


def test_an_unknown_function_lists_the_known_ones(recorded):
    with pytest.raises(CheckFailed, match=r"records no check of 'triple': the checks of this notebook are of double"):
        check("triple", lambda x: 3 * x)
