"""Checks that remembering cannot pass: sizes past the model's window, the same shapes with new values, every
check's calls shuffled together in one runner (tests/memorising.py holds the submissions that try)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from memorising import VARIANTS, variant_notebook

from autograder import sandbox
from autograder.answers.grading import answer_sources, grade_answers
from autograder.answers.process import changed_labels
from autograder.checks import Call, Result, call_order, changed_inputs
from autograder.course import assignments

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
    assert "softmax changed its input array (argument 1) in place in 7 of 7 calls" in verdict.text()
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
