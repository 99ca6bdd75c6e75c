"""autograder.mutation: the operators, the in-process grading of mutants, and validate's findings, on a small
assignment of the test's own (a centring function whose weak draws always have 32 columns); the bundled positions
assignment ends with no surviving mutant."""

from __future__ import annotations

import ast
import textwrap
import time
import types

import numpy as np
import pytest

from autograder import REPOSITORY, assignments, mutation
from autograder.answers.grading import check_generator
from autograder.checks import Call
from autograder.validate import mutant_findings

REFERENCE = '''"""The answer key of centre."""

import numpy as np


def centre(x):
    """x less each row's mean."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim < 1:
        raise ValueError("x must be an array")
    return x - x.sum(axis=-1, keepdims=True) / x.shape[-1]
'''
CHECKS = """from pathlib import Path

from autograder.checks import Shaped, checks_by_id, compare
from autograder.coverage import Cover, Size, values
from autograder import assignments

ref = assignments.reference(Path(__file__).parent)


def always_32(rng):  # weak: every row has 32 numbers, the model's head size
    return (rng.normal(size=(3, 32)),)


def designed(rng, batch, rows, width):  # (rows, width) for a batch of 1, else (batch, rows, width)
    return (values(rng, *([batch] if batch > 1 else []), rows, width),)


INPUTS = {INPUTS}
CHECKS = checks_by_id(compare("check_centre", ref.centre, points=1, inputs=INPUTS))
EQUIVALENT_MUTANTS = {EQUIVALENT}
"""
WEAK = '{"rows": always_32}'
STRONG = (
    '{"rows": Shaped(designed, Cover({"batch": Size(1, 3), "rows": Size(1, 6), "width": Size(1, 12)}, '
    'pairs=(("rows", "width"), ("batch", "rows"), ("batch", "width"))))}'
)
RETURN = "return x - x.sum(axis=-1, keepdims=True)"
CONSTANT = f"centre: {RETURN} / x.shape[-1] -> {RETURN} / 32"


def assignment(folder, inputs: str, equivalent: str = "{}") -> assignments.AssignmentChecks:
    folder.mkdir()
    (folder / "reference.py").write_text(REFERENCE)
    (folder / "checks.py").write_text(CHECKS.replace("{INPUTS}", inputs).replace("{EQUIVALENT}", equivalent))
    return assignments.load(folder)


def function_of(source: str) -> ast.FunctionDef:
    return ast.parse(textwrap.dedent(source)).body[0]


def test_each_operator_makes_its_mutants_and_leaves_guards_alone():
    function = function_of(
        '''
        def f(x, k):
            """a docstring with 3 in it"""
            if k < 0:
                raise ValueError(f"k is {k + 1}")
            d = x.shape[-1]
            if k > 1:
                x = x - 1
            return np.swapaxes(x, -1, -2).sum(axis=0) / np.sqrt(d)
        '''
    )
    made = {mutant.key: mutant.operator for mutant in mutation.syntax_mutants("f", function, (4, 32))}
    assert made["f: d = x.shape[-1] -> d = 32"] == "constant size"
    assert made["f: if k > 1: -> if k >= 1:"] == "off by one"
    assert made["f: if k > 1: -> if False:"] == "branch"
    assert made["f: x = x - 1 -> x = x + 1"] == "dropped sign"
    assert made["f: x = x - 1 -> x = x - 2"] == "off by one"
    returned = "f: return np.swapaxes(x, -1, -2).sum(axis=0) / np.sqrt(d) -> return"
    assert made[f"{returned} x.sum(axis=0) / np.sqrt(d)"] == "axes"
    assert made[f"{returned} np.swapaxes(x, -1, -2).sum(axis=1) / np.sqrt(d)"] == "axes"
    assert made[f"{returned} np.swapaxes(x, -1, -2).sum(axis=0) / d"] == "dropped term"
    assert not [key for key in made if "k < 0" in key or "raise" in key or "k + 1" in key]  # the guard, its message


def test_a_shape_specialised_mutant_is_wrong_only_when_its_condition_holds():
    function = function_of("def f(x, n):\n    return x * n\n")
    calls = [Call("f", (np.ones((2, 3)), 2)), Call("f", (np.ones((4, 3)), 3))]
    made = {mutant.key: mutant for mutant in mutation.shape_mutants("f", function, calls)}
    module = types.ModuleType("reference")
    module.f, module.np = (lambda x, n: x * n), np
    wrong = mutation.compiled(made["f: wrong only when x.shape[-2] == n"], module)
    assert (wrong(np.ones((2, 3)), 2) == 3.0).all() and (wrong(np.ones((4, 3)), 3) == 3.0).all()  # wrong, right
    assert "f: wrong only when x.shape[-1] == n" in made and "f: wrong only when x.shape[-1] = 1" in made
    assert (mutation.perturbed(np.zeros(0)) == np.ones(1)).all()  # an empty result made wrong shows


def test_weak_draws_let_mutants_survive_and_validate_names_each_with_its_diff(tmp_path):
    checks = assignment(tmp_path / "centre", WEAK)
    started = time.monotonic()
    counts, findings = mutant_findings(checks, list(checks.checks), 20)
    assert time.monotonic() - started < 20
    survivors = {finding.message.split("'")[1]: finding for finding in findings if finding.kind == "mutant-survives"}
    assert CONSTANT in survivors  # every row has 32 numbers: / 32 is right on every draw
    assert "+    return x - x.sum(axis=-1, keepdims=True) / 32" in survivors[CONSTANT].message  # its diff
    assert survivors[CONSTANT].place.endswith("reference.py:6")
    assert "centre: wrong only when x.shape[-1] odd" in survivors  # never drawn odd
    assert f"centre: {RETURN} / x.shape[-1] -> return x" not in survivors  # killed
    tally = counts["centre"]
    assert tally["survived"] == len(survivors) and tally["killed"] + tally["survived"] == tally["made"] > 10


def test_designed_draws_kill_every_mutant(tmp_path):
    checks = assignment(tmp_path / "centre", STRONG)
    counts, findings = mutant_findings(checks, list(checks.checks), 20)
    assert (
        findings == [] and counts["centre"]["survived"] == 0 and counts["centre"]["killed"] == counts["centre"]["made"]
    )


def test_a_marked_mutant_counts_as_equivalent_and_a_wrong_mark_is_a_finding(tmp_path):
    marks = {CONSTANT: "every row has 32 numbers", "centre: no such change": "a stale mark"}
    checks = assignment(tmp_path / "centre", WEAK, repr(marks))
    counts, findings = mutant_findings(checks, list(checks.checks), 5)
    assert counts["centre"]["equivalent"] == 1
    assert CONSTANT not in " ".join(f.message for f in findings if f.kind == "mutant-survives")
    stale = [f.message for f in findings if f.kind == "equivalent-unknown"]
    assert len(stale) == 1 and "'centre: no such change', which is no mutant" in stale[0]
    strong = assignment(tmp_path / "strong", STRONG, repr({CONSTANT: "wrongly marked"}))
    _, findings = mutant_findings(strong, list(strong.checks), 5)
    assert [f.kind for f in findings] == ["equivalent-unknown"] and "kill on every seed" in findings[0].message


def test_a_reference_that_loses_on_its_own_checks_is_named(tmp_path):
    checks = assignment(tmp_path / "centre", STRONG)
    (tmp_path / "centre" / "reference.py").write_text(REFERENCE.replace("/ x.shape[-1]", "/ 32"))
    checks = assignments.load(tmp_path / "centre")  # reloaded: the reference changed
    _, findings = mutant_findings(checks, list(checks.checks), 5)
    assert [f.kind for f in findings] == ["reference-below-full"]
    assert findings[0].place.endswith("reference.py:6") and "the reference centre" in findings[0].message


def test_the_positions_assignment_ends_with_no_surviving_mutant():
    checks = assignments.load(REPOSITORY / "source" / "positions")
    counts, findings = mutant_findings(checks, list(checks.checks), 20)
    assert findings == []
    assert {name: tally["survived"] for name, tally in counts.items()} == dict.fromkeys(counts, 0)
    assert sum(tally["equivalent"] for tally in counts.values()) == len(checks.equivalent_mutants) == 7
    assert sum(tally["made"] for tally in counts.values()) > 80


@pytest.mark.parametrize("seed", [0, 7])
def test_mutants_are_graded_on_the_checks_own_calls(seed):
    checks = assignments.load(REPOSITORY / "source" / "positions")
    drawn = mutation.plans(checks.checks, [seed], check_generator)
    assert [len(calls) for calls in drawn[seed].values()] == [
        len(check.calls(check_generator(seed, check_id))) for check_id, check in checks.checks.items()
    ]
