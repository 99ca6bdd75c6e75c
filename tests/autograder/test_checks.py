"""Checks that remembering cannot pass: sizes past the model's window, the same shapes with new values, every
check's calls shuffled together in one runner (tests/memorising.py holds the submissions that try)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from memorising import VARIANTS, variant_notebook

from autograder import assignments, sandbox
from autograder.answers.grading import answer_sources, check_generator, evaluate, grade_answers, grade_seeds
from autograder.answers.process import changed_labels
from autograder.checks import (
    Args,
    Call,
    Outputs,
    Result,
    call_order,
    changed_inputs,
    checks_by_id,
    compare,
    describe_call,
)

REPOSITORY = Path(__file__).resolve().parents[2]
EXPECTED = json.loads((REPOSITORY / "examples" / "expected.json").read_text())
needs_bubblewrap = pytest.mark.skipif(
    sandbox.bubblewrap() is None, reason=f"bubblewrap is not available ({sandbox.INSTALL})"
)


@pytest.fixture(scope="module")
def attention():
    return assignments.load(REPOSITORY / "source" / "attention")


@needs_bubblewrap
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_a_function_that_remembers_loses_points_on_its_own_check_only(attention, name):
    variant = VARIANTS[name]
    seed = sorted(VARIANTS).index(name) + 11
    verdicts = grade_answers(attention, answer_sources(variant_notebook(variant)), seed=seed)
    full = EXPECTED["students"]["full_solution"]["points"]
    lower = {check: verdict.points for check, verdict in verdicts.items() if verdict.points < full[check]}
    if variant.check:
        assert variant.check in lower, (variant.why, verdicts[variant.check].text())
    assert set(lower) - {variant.check, *variant.also} == set(), {c: verdicts[c].text() for c in lower}
    noted = [check for check, verdict in verdicts.items() if verdict.notes]
    assert noted == (["check_softmax"] if name == "softmax_in_place" else []), noted


@needs_bubblewrap
def test_an_input_changed_in_place_is_noted_in_the_feedback_and_costs_nothing(attention):
    verdicts = grade_answers(
        attention, answer_sources(variant_notebook(VARIANTS["softmax_in_place"])), seed=5, checks=["check_softmax"]
    )
    verdict = verdicts["check_softmax"]
    assert verdict.points == verdict.max_points == 2
    calls = len(attention.checks["check_softmax"].calls(check_generator(5, "check_softmax")))  # the designed included
    assert calls > 7
    assert f"softmax changed its input array (argument 1) in place in {calls} of {calls} calls" in verdict.text()
    assert verdict.notes and verdict.notes[0] in verdict.text()


@needs_bubblewrap
@pytest.mark.parametrize("student", sorted(p.name for p in (REPOSITORY / "examples" / "submissions").iterdir()))
def test_the_bundled_submissions_keep_their_points(attention, student):
    notebook = REPOSITORY / "examples" / "submissions" / student / "attention" / "attention.ipynb"
    verdicts = grade_answers(attention, answer_sources(notebook), seed=sorted(EXPECTED["students"]).index(student))
    expected = EXPECTED["students"][student]["points"]
    assert {c: v.points for c, v in verdicts.items()} == {c: expected[c] for c in verdicts}


def test_the_calls_are_shuffled_together_by_the_seed():
    plans = {"a": [Call("f")] * 5, "b": [Call("g")] * 4, "c": [Call("h")] * 3}
    order = call_order(plans, 7)
    assert sorted(order) == [(check, n) for check, calls in plans.items() for n in range(len(calls))]
    assert call_order(plans, 7) == order  # the seed reproduces it
    orders = {tuple(call_order(plans, seed)) for seed in range(20)}
    assert len(orders) > 15
    grouped = [(check, n) for check, calls in plans.items() for n in range(len(calls))]
    assert sum(order == grouped for order in map(list, orders)) == 0  # never check by check


def test_the_checks_reach_past_the_models_window(attention):
    rng = np.random.default_rng(3)
    sizes = [call.args[0] for call in attention.checks["check_causal_mask"].calls(rng)]
    assert max(sizes) > 2 * 140 and any(150 <= n <= 200 for n in sizes) and len(set(sizes)) < len(sizes)
    shapes = [call.args[0].shape for call in attention.checks["check_split_heads"].calls(rng)]
    assert len(set(shapes)) < len(shapes) and max(shape[0] for shape in shapes) >= 150
    softmax = attention.checks["check_softmax"].calls(rng)
    assert len(softmax) >= 6 and max(call.args[0].shape[-1] for call in softmax) >= 150


def test_the_runners_claims_about_changed_inputs_are_kept_only_where_they_name_an_argument():
    args, kwargs = (np.zeros(3), np.ones(2)), {"mask": np.ones(2, bool)}
    assert changed_labels([0, "mask", 1], args, kwargs) == (0, 1, "mask")
    assert changed_labels([5, -1, True, "<script>", None, 1.0], args, kwargs) == ()
    assert changed_labels("0", args, kwargs) == ()
    calls = [Call("softmax", (np.zeros((2, 3)),)) for _ in range(3)]
    results = [Result(None, (np.zeros((2, 3)),), changed=changed) for changed in [(0,), (), (0,)]]
    assert "in place in 2 of 3 calls" in changed_inputs(calls, results)
    assert changed_inputs(calls, [Result(None)] * 3) is None


# --- the simple tier: compare(...), on tests/assignments/layer_norm --------------------------------------------

LAYER_NORM_FOLDER = REPOSITORY / "tests" / "assignments" / "layer_norm"
SEEDS = range(20)


@pytest.fixture(scope="module")
def layer_norm():
    return assignments.load(LAYER_NORM_FOLDER)


def answered(check, function, seed: int) -> Outputs:
    """check's calls under ``seed`` answered, in this process, by ``function`` (a trusted stand-in for a student)."""
    calls = check.calls(np.random.default_rng(seed))
    results = []
    for call in calls:
        value = np.asarray(function(*call.args, **call.kwargs))
        results.append(Result(None, (value,), ({"type": "numpy.ndarray", "dtype": str(value.dtype), "shape": []},)))
    return Outputs(calls, results)


def test_compare_draws_each_kind_of_input_twice_with_its_own_role(layer_norm):
    check = layer_norm.checks["check_layer_norm"]
    calls = check.calls(np.random.default_rng(0))
    assert [call.role for call in calls] == [case for case in check.cases for _ in range(2)]
    assert [name for name, _ in check.properties] == list(check.cases)
    assert all(call.function == "layer_norm" and len(call.args) == 4 for call in calls)
    assert calls[0].args[0].shape != calls[2].args[0].shape or not np.array_equal(calls[0].args[0], calls[1].args[0])
    assert {call.args[0].ndim for call in calls if call.role == "a batch of sequences"} == {3}


@pytest.mark.parametrize("check_id", ["check_layer_norm", "check_residual_block", "check_rms_norm"])
def test_each_named_mistake_is_named_on_every_seed_and_the_reference_earns_everything(layer_norm, check_id):
    """Each mistake fails the same properties under every seed (so the same points), each failure naming it."""
    check = layer_norm.checks[check_id]
    held = {message: set() for message, _ in check.mistakes}
    for seed in SEEDS:
        right = evaluate(check, answered(check, check.reference, seed))
        assert all(p.passed for p in right), right
        for message, wrong in check.mistakes:
            judged = evaluate(check, answered(check, wrong, seed))
            failed = [p for p in judged if not p.passed]
            assert failed, (message, seed)
            assert all(p.message.endswith(message) for p in failed), (message, seed, failed)
            held[message].add(tuple(p.name for p in judged if p.passed))
    assert all(len(passing) == 1 for passing in held.values()), held


def test_a_function_argument_is_run_here_by_the_reference_and_the_mistakes(layer_norm):
    check = layer_norm.checks["check_residual_block"]
    calls = check.calls(np.random.default_rng(4))
    x, f = calls[0].args
    assert callable(f) and calls[0].about == f"residual_block(array of shape {x.shape}, <lambda>)"
    alone = evaluate(check, answered(check, lambda x, f: f(x), 4))
    assert [(p.name, p.passed) for p in alone] == [("adds f's output to x", False), ("keeps x's shape", True)]
    assert alone[0].message.endswith("returns f(x) alone: the stream keeps x and adds f's output, x + f(x)")
    flat = evaluate(check, answered(check, lambda x, f: (x + f(x))[..., 0], 4))
    assert flat[1].passed is False and flat[1].message.endswith(f": shape {x.shape[:-1]}")


def test_a_result_no_mistake_explains_reads_its_largest_difference(layer_norm):
    check = layer_norm.checks["check_rms_norm"]
    judged = evaluate(check, answered(check, lambda x, gain, eps: check.reference(x, gain, eps) + 0.5, 3))
    assert [p.passed for p in judged] == [False, False]
    assert judged[0].message.startswith("rms_norm(array of shape") and "largest difference 0.5" in judged[0].message


def test_compare_takes_tuples_or_args_properties_and_judges():
    def double(x, times=2.0):
        return np.asarray(x) * times

    check = compare(
        "check_double",
        double,
        points=3,
        inputs={"plain": lambda rng: (rng.normal(size=4),), "keyword": lambda rng: Args(rng.normal(size=3), times=3.0)},
        properties={"keeps the shape": lambda result, x, **_: None if result.shape == x.shape else "another shape"},
        judges=(("always", lambda out: None),),
        draws=3,
    )
    calls = check.calls(np.random.default_rng(1))
    assert [(call.role, call.kwargs) for call in calls][2:4] == [("plain", {}), ("keyword", {"times": 3.0})]
    assert [name for name, _ in check.properties] == ["plain", "keyword", "keeps the shape", "always"]
    flat = evaluate(check, answered(check, lambda x, times=2.0: (x * times).sum(keepdims=True), 1))
    assert [p.passed for p in flat] == [False, False, False, True]
    assert flat[2].message.endswith(": another shape") and "shape (1,), expected" in flat[0].message
    assert all(p.passed for p in evaluate(check, answered(check, double, 1)))


def test_the_simple_tier_refuses_what_it_cannot_use():
    with pytest.raises(ValueError, match="give inputs"):
        compare("check_f", np.sum, points=1, inputs={})
    returns_a_list = compare("check_f", np.sum, points=1, inputs={"values": lambda rng: [rng.normal(size=3)]})
    with pytest.raises(TypeError, match=r"returned a list: return the call's arguments as a tuple"):
        returns_a_list.calls(np.random.default_rng(0))
    one = compare("check_f", np.sum, points=1, inputs={"values": lambda rng: (rng.normal(size=3),)})
    with pytest.raises(ValueError, match="two checks have the id 'check_f'"):
        checks_by_id(one, one)
    assert checks_by_id(one) == {"check_f": one}


def student_answers(layer_norm_body: str, rms_norm_body: str, residual_body: str = "return x + f(x)") -> list[str]:
    return [
        f"def layer_norm(x, gain, bias, eps=1e-5):\n    {layer_norm_body}\n",
        f"def residual_block(x, f):\n    {residual_body}\n",
        f"def rms_norm(x, gain, eps=1e-5):\n    {rms_norm_body}\n",
    ]


STUDENTS = {  # answer cells, points by hand: {check id: points}, the words the verdicts must hold
    "right": (
        student_answers(
            "return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps) * gain + bias",
            "return x / np.sqrt((x ** 2).mean(-1, keepdims=True) + eps) * gain",
        ),
        {"check_layer_norm": 3.0, "check_residual_block": 2.0, "check_rms_norm": 2.0},
        {},
    ),
    "batch norm's axis": (
        student_answers(
            "return (x - x.mean(axis=0)) / np.sqrt(x.var(axis=0) + eps) * gain + bias",
            "return x / np.sqrt((x ** 2).mean(axis=0) + eps) * gain",
        ),
        {"check_layer_norm": 0.0, "check_residual_block": 2.0, "check_rms_norm": 0.0},
        {
            "check_layer_norm": "the variance is taken over axis 0 (as batch norm does)",
            "check_rms_norm": "the mean square is taken over axis 0 (as batch norm does)",
        },
    ),
    "forgets eps": (
        student_answers(
            "m = x.mean(-1, keepdims=True)\n    return (x - m) / np.sqrt(((x - m) ** 2).mean(-1, keepdims=True)) * gain"
            " + bias",
            "return x / np.sqrt((x ** 2).mean(-1, keepdims=True)) * gain",
        ),
        {"check_layer_norm": 2.0, "check_residual_block": 2.0, "check_rms_norm": 1.0},
        {"check_layer_norm": "ignores eps", "check_rms_norm": "ignores eps"},
    ),
    "blank": (
        student_answers(*["raise NotImplementedError()"] * 3),
        {"check_layer_norm": 0.0, "check_residual_block": 0.0, "check_rms_norm": 0.0},
        dict.fromkeys(["check_layer_norm", "check_residual_block", "check_rms_norm"], "NotImplementedError"),
    ),
}


@pytest.mark.parametrize("student", sorted(STUDENTS))
def test_four_students_of_layer_norm_get_their_points_and_mistakes_on_every_seed(layer_norm, student):
    sources, points, words = STUDENTS[student]
    graded = grade_seeds(layer_norm, sources, SEEDS)
    for check_id, want in points.items():
        assert {seed: verdicts[check_id].points for seed, verdicts in graded.items()} == dict.fromkeys(SEEDS, want)
    for check_id, said in words.items():
        for verdicts in graded.values():
            assert said in verdicts[check_id].text(), verdicts[check_id].text()
    if student == "forgets eps":
        failed = {check_id: [p.name for p in verdict.failed] for check_id, verdict in graded[0].items()}
        eps = ["eps inside the square root"]
        assert failed == {"check_layer_norm": eps, "check_residual_block": [], "check_rms_norm": eps}


def test_a_call_names_the_dtype_of_each_array_that_is_not_float64():
    """'softmax(array of shape (3, 4))' for float64 alone: an int, float32 or bool argument says so, so a message
    about rounding or indexing can be read against what the function was given."""
    shown = describe_call(
        Call(
            "f",
            (np.zeros((3, 4)), np.zeros((3, 4), np.float32), np.arange(6).reshape(2, 3), np.array([0.5, 1.0])),
            {"ids": np.arange(4), "mask": np.array([True, False]), "small": np.ones(2, np.float32)},
        )
    )
    assert shown == (
        "f(array of shape (3, 4), float32 array of shape (3, 4), int64 array of shape (2, 3), [0.5, 1. ], "
        "ids=[0, 1, 2, 3], mask=[ True, False] (bool), small=[1., 1.] (float32))"
    )
