"""The grading engine: the solution earns full marks, each known mistake loses points on its own
exercise only, and hostile answers earn nothing for their tricks.

The solution is the source notebook's answer cells (source/attention/attention.ipynb): the
notebook is the one place the solution is written. Each mistake is a small edit of one answer
cell, as a student would make it.
"""

from __future__ import annotations

import os
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from autograder import assignments, model, sandbox
from autograder.answers.grading import answer_sources, check_generator
from autograder.answers.grading import grade_answers as grade_with

REPOSITORY = Path(__file__).resolve().parents[3]
NOTEBOOK = REPOSITORY / "source" / "attention" / "attention.ipynb"
ATTENTION = assignments.load(NOTEBOOK.parent)
CHECKS = ATTENTION.checks


def grade_answers(sources, **options):
    """The attention assignment's verdicts on ``sources``."""
    return grade_with(ATTENTION, sources, **options)


SEED = 20260101
DRIVE = "drives the store's model"
RECORDED = "matches recorded statistics"

pytestmark = pytest.mark.skipif(
    not NOTEBOOK.exists(), reason="the source notebook source/attention/attention.ipynb is missing"
)
needs_bubblewrap = pytest.mark.skipif(
    sandbox.bubblewrap() is None,
    reason=f"bubblewrap is not available ({sandbox.INSTALL}): hostile answers are graded only inside the sandbox",
)


@pytest.fixture(scope="module")
def solution() -> list[str]:
    return answer_sources(NOTEBOOK)


def cell_of(sources: list[str], function: str) -> int:
    """Index of the answer cell that defines ``function``."""
    found = [i for i, source in enumerate(sources) if re.search(rf"^def {function}\(", source, re.M)]
    assert len(found) == 1, f"expected one answer cell defining {function}, found {len(found)}"
    return found[0]


def edit(sources: list[str], function: str, old: str, new: str) -> list[str]:
    """The sources with ``old`` replaced by ``new`` in ``function``'s cell (``old`` must be there)."""
    index = cell_of(sources, function)
    assert old in sources[index], f"the solution of {function} no longer contains {old!r}: update this mistake"
    changed = list(sources)
    changed[index] = sources[index].replace(old, new)
    return changed


def replace_cell(sources: list[str], function: str, new: str) -> list[str]:
    changed = list(sources)
    changed[cell_of(sources, function)] = new
    return changed


def lost(verdicts) -> dict[str, list[str]]:
    """{check id: names of failed properties} for every check short of full marks."""
    return {
        check_id: [p.name for p in verdict.properties if p.passed is False]
        for check_id, verdict in verdicts.items()
        if verdict.points < verdict.max_points
    }


def only_these_lose(verdicts, expected: set[str]):
    losses = lost(verdicts)
    assert set(losses) == expected, f"expected losses on {sorted(expected)} only, got {losses}"
    for check_id in expected:
        assert verdicts[check_id].points < verdicts[check_id].max_points


# --- the solution -------------------------------------------------------------------------------


def test_answer_sources_are_the_fifteen_graded_functions(solution):
    assert len(solution) == 15  # 16 checks: attention has two
    for check in CHECKS.values():
        cell_of(solution, check.function)


def test_solution_earns_full_marks_on_every_check(solution):
    verdicts = grade_answers(solution, seed=SEED)
    assert set(verdicts) == set(CHECKS)
    for check_id, verdict in verdicts.items():
        assert verdict.points == verdict.max_points == CHECKS[check_id].points, verdict.text()
        assert "PASS" in verdict.text() and "FAIL" not in verdict.text()
        assert f"seed {SEED}" in verdict.text()
    assert sum(v.max_points for v in verdicts.values()) == 29


def test_solution_full_marks_on_fresh_seeds(solution):
    for verdict in grade_answers(solution).values():  # seed from os.urandom
        assert verdict.points == verdict.max_points, verdict.text()


def record_matches_model() -> bool:
    """True when lib's own statistics of data/model on this catalogue are head_statistics.json's."""
    return model.available() and model.cache().record_gap <= 1e-6


@pytest.mark.skipif(not model.available(), reason="the store's model (data/model) is not there yet")
def test_recorded_statistics_belong_to_the_model_and_catalogue():
    assert model.cache().record_gap <= 1e-6, (
        "lib's head statistics of data/model over the current catalogue differ from data/model/head_statistics.json "
        f"by {model.cache().record_gap:.3g}: the catalogue or the model changed after the record; re-record it. "
        "Until then the autograder reports 'matches recorded statistics' as not available"
    )


@pytest.mark.skipif(not model.available(), reason="the store's model (data/model) is not there yet")
def test_model_properties_are_judged_and_pass(solution):
    verdicts = grade_answers(solution, seed=SEED)
    judged = [("check_masked_attention", DRIVE)]
    if record_matches_model():
        judged += [("check_previous_token_weight", RECORDED), ("check_far_back_weight", RECORDED)]
    for check_id, name in judged:
        (prop,) = [p for p in verdicts[check_id].properties if p.name == name]
        assert prop.passed is True, prop.message


# --- the catalogue of mistakes ----------------------------------------------------------------------


@dataclass(frozen=True)
class Mistake:
    name: str
    function: str
    old: str
    new: str
    lost: tuple[str, ...]  # the checks that must lose points: the function's own
    says: str  # a fragment of the feedback that names the mistake
    drives_model: bool = False  # True: the model, run with the student's attention as written, notices too

    def sources(self, solution):
        return edit(solution, self.function, self.old, self.new)


ATTENTION_CHECKS = ("check_attention", "check_masked_attention")
SOFTMAX_BODY = "    exps = np.exp(scores - top)                        # the largest becomes exp(0) = 1: no overflow\n"

MISTAKES = [
    Mistake("softmax over axis 0", "softmax", "axis=-1", "axis=0", ("check_softmax",), "softmax over axis 0", True),
    Mistake(
        "softmax without max subtraction (overflow)",
        "softmax",
        "np.exp(scores - top)",
        "np.exp(scores)",
        ("check_softmax",),
        "subtract each row's maximum",
    ),
    Mistake(
        "softmax divides by the whole array's total",
        "softmax",
        "exps.sum(axis=-1, keepdims=True)",
        "exps.sum()",
        ("check_softmax",),
        "whole array sums to 1",
        True,
    ),
    Mistake("no sqrt(d) scaling", "attention", " / np.sqrt(d)", "", ATTENTION_CHECKS, "unscaled scores"),
    Mistake("scores divided by d", "attention", "/ np.sqrt(d)", "/ d", ATTENTION_CHECKS, "divided by d"),
    Mistake(
        "weights transposed",
        "attention",
        "return weights, weights @ values",
        "return np.swapaxes(weights, -1, -2), weights @ values",
        ATTENTION_CHECKS,
        "transposed",
    ),
    Mistake("keys.T on a heads axis", "attention", "np.swapaxes(keys, -1, -2)", "keys.T", ATTENTION_CHECKS, "keys.T"),
    Mistake(
        "mask after softmax",
        "attention",
        "    if mask is not None:\n        scores = np.where(mask, scores, -np.inf)                  # hidden"
        " positions: weight exactly 0\n    weights = softmax(scores)\n",
        "    weights = softmax(scores)\n    if mask is not None:\n        weights = weights * mask\n",
        ("check_masked_attention",),
        "zeroed afterwards",
    ),
    Mistake("mask with -1e9", "attention", "-np.inf)", "-1e9)", ("check_masked_attention",), "large negative number"),
    Mistake("mask with -1e4", "attention", "-np.inf)", "-1e4)", ("check_masked_attention",), "large negative number"),
    Mistake(
        "mask written as 0 instead of -inf",
        "attention",
        "-np.inf)",
        "0.0)",
        ("check_masked_attention",),
        "not exactly 0.0",
    ),
    Mistake(
        "mask used the wrong way round",
        "attention",
        "np.where(mask, scores, -np.inf)",
        "np.where(mask, -np.inf, scores)",
        ("check_masked_attention",),
        "wrong way round",
    ),
    Mistake(
        "causal mask inverted (upper triangle)",
        "causal_mask",
        "np.tril(",
        "np.triu(",
        ("check_causal_mask",),
        "above the diagonal",
    ),
    Mistake(
        "causal mask without the diagonal",
        "causal_mask",
        "dtype=bool))",
        "dtype=bool), -1)",
        ("check_causal_mask",),
        "diagonal is False",
    ),
    Mistake("causal mask of floats", "causal_mask", "dtype=bool", "dtype=float", ("check_causal_mask",), "not bool"),
    Mistake(
        "largest weight over the wrong axis",
        "average_largest_weight",
        ".max(axis=-1)",
        ".max(axis=0)",
        ("check_average_largest_weight",),
        "max down a column",
    ),
    Mistake(
        "average_largest_weight ignores scaled",
        "average_largest_weight",
        "if scaled:",
        "if True:",
        ("check_average_largest_weight",),
        "ignores `scaled`",
    ),
    Mistake(
        "split_heads with x.reshape(heads, T, d)",
        "split_heads",
        "x.reshape(positions, heads, width // heads).transpose(1, 0, 2)",
        "x.reshape(heads, positions, width // heads)",
        ("check_split_heads",),
        "x.reshape(heads, T, d)",
    ),
    Mistake(
        "split_heads takes strided columns",
        "split_heads",
        "x.reshape(positions, heads, width // heads).transpose(1, 0, 2)",
        "x.reshape(positions, width // heads, heads).transpose(2, 0, 1)",
        ("check_split_heads",),
        "every heads-th column",
    ),
    Mistake(
        "join_heads does not invert split",
        "join_heads",
        "x.transpose(1, 0, 2).reshape",
        "x.reshape",
        ("check_join_heads",),
        "mixes positions",
    ),
    Mistake(
        "output projection missing",
        "multi_head_attention",
        "join_heads(mixed) @ w_output",
        "join_heads(mixed)",
        ("check_multi_head_attention",),
        "without the output projection",
    ),
    Mistake(
        "multi-head attention without the causal mask",
        "multi_head_attention",
        "values, causal_mask(x.shape[0]))",
        "values)",
        ("check_multi_head_attention",),
        "later positions",
    ),
    Mistake(
        "previous-token weight on the diagonal (i, i)",
        "previous_token_weight",
        "pattern[:, rows, rows - 1]",
        "pattern[:, rows, rows]",
        ("check_previous_token_weight",),
        "weight on itself",
    ),
    Mistake(
        "previous-token weight two back (i, i-2)",
        "previous_token_weight",
        "pattern[:, rows, rows - 1]",
        "pattern[:, rows[1:], rows[1:] - 2]",
        ("check_previous_token_weight",),
        "two positions back",
    ),
    Mistake(
        "previous-token average includes position 0",
        "previous_token_weight",
        "np.arange(1, pattern.shape[-1])",
        "np.arange(0, pattern.shape[-1])",
        ("check_previous_token_weight",),
        "including position 0",
    ),
    Mistake(
        "even spread 1/i",
        "even_previous_weight",
        "np.arange(2, positions + 1)",
        "np.arange(1, positions)",
        ("check_even_previous_weight",),
        "used 1 / i",
    ),
    Mistake(
        "end marker counted as a description position",
        "description_positions",
        "return after[ids[after] != end_id]",
        "return after",
        ("check_description_positions",),
        "end marker",
    ),
    Mistake(
        "description starts at sep",
        "description_positions",
        "np.arange(sep + 1, len(ids))",
        "np.arange(sep, len(ids))",
        ("check_description_positions",),
        "starts at sep",
    ),
    Mistake("far back with > 4", "far_back_weight", ">= 4", "> 4", ("check_far_back_weight",), "i - j > 4"),
    Mistake(
        "markers counted as far back",
        "far_back_weight",
        " & (j != 0) & (j != sep)",
        "",
        ("check_far_back_weight",),
        "counted the markers",
    ),
    Mistake(
        "marker weight counts only <s>",
        "marker_weight",
        " + pattern[:, queries, sep]",
        "",
        ("check_marker_weight",),
        "only <s>",
    ),
    Mistake(
        "even far-back counts the markers",
        "even_far_back_weight",
        " & (j != 0) & (j != sep)",
        "",
        ("check_even_far_back_weight",),
        "counted the markers",
    ),
    Mistake(
        "even far-back divides by i",
        "even_far_back_weight",
        "/ (queries + 1)",
        "/ queries",
        ("check_even_far_back_weight",),
        "divided by i",
    ),
    Mistake(
        "even marker weight of one marker",
        "even_marker_weight",
        "2.0 /",
        "1.0 /",
        ("check_even_marker_weight",),
        "one marker",
    ),
    Mistake(
        "safe_softmax returns NaN for a masked row",
        "safe_softmax",
        "return np.divide(exps, total, out=np.zeros_like(exps), where=total > 0)",
        "return exps / total",
        ("check_safe_softmax",),
        "gives NaN",
    ),
    Mistake(
        "safe_softmax gives a masked row 1/n",
        "safe_softmax",
        "return np.divide(exps, total, out=np.zeros_like(exps), where=total > 0)",
        "return np.where(total > 0, exps / np.where(total > 0, total, 1), 1 / exps.shape[-1])",
        ("check_safe_softmax",),
        "1/n everywhere",
    ),
]


def test_catalogue_is_large_and_covers_every_check():
    assert len(MISTAKES) >= 20
    assert {check for mistake in MISTAKES for check in mistake.lost} == set(CHECKS)


@pytest.fixture(scope="module")
def catalogue(solution) -> dict[str, dict]:
    """{mistake name: verdicts}, graded a few at a time (each grading waits on its own runner process)."""
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 1)) as pool:
        graded = pool.map(lambda mistake: grade_answers(mistake.sources(solution), seed=SEED), MISTAKES)
        return dict(zip((m.name for m in MISTAKES), graded))


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.name for m in MISTAKES])
def test_mistake_loses_points_on_its_own_exercise_only(catalogue, mistake):
    verdicts = catalogue[mistake.name]
    expected = set(mistake.lost)
    if mistake.drives_model and model.available():
        expected.add(
            "check_masked_attention"
        )  # the documented exception: the model runs the student's attention as written
        assert lost(verdicts)["check_masked_attention"] == [DRIVE]
    only_these_lose(verdicts, expected)
    feedback = "\n".join(verdicts[check].text() for check in mistake.lost)
    assert mistake.says in feedback, feedback
    for check in set(mistake.lost) & {"check_previous_token_weight", "check_far_back_weight"}:
        if record_matches_model():  # the mistake shows on the store's model too
            assert RECORDED in lost(verdicts)[check], verdicts[check].text()


def test_partial_credit_is_by_property(solution):
    """No sqrt(d): shapes and row sums still hold (2 of 4 properties of check_attention)."""
    verdicts = grade_answers(edit(solution, "attention", " / np.sqrt(d)", ""), seed=SEED)
    attention = verdicts["check_attention"]
    assert [p.passed for p in attention.properties] == [True, True, False, False]
    assert attention.points == 2.0
    assert "FAIL scaled by sqrt(d): the weights match unscaled scores" in attention.text()


EVEN_MARKERS_FROM_THE_STATISTIC = """
def even_marker_weight(queries):
    queries = np.asarray(queries)
    size = int(queries.max(initial=1)) + 1  # no query at all (a text without a description): <s> and <sep>
    even = np.tril(np.ones((size, size))) / np.arange(1, size + 1)[:, None]   # (T, T) an even spread
    return marker_weight(even[None], 1, queries)[0]
"""


def test_isolation_grades_a_caller_with_lib_version_of_what_it_calls(solution):
    """even_marker_weight built on a wrong marker_weight loses nothing: marker_weight is lib's while it is graded."""
    sources = replace_cell(solution, "even_marker_weight", EVEN_MARKERS_FROM_THE_STATISTIC)
    assert lost(grade_answers(sources, seed=SEED)) == {}
    sources = edit(sources, "marker_weight", " + pattern[:, queries, sep]", "")
    only_these_lose(grade_answers(sources, seed=SEED), {"check_marker_weight"})


def test_masked_weights_report_the_leak(solution):
    verdicts = grade_answers(edit(solution, "attention", "-np.inf)", "-100.0)"), seed=SEED)
    (zero,) = [p for p in verdicts["check_masked_attention"].properties if p.name.startswith("exactly 0.0")]
    assert not zero.passed and re.search(r"weight up to \d\.\de-4\d, not exactly 0\.0", zero.message), zero.message


# --- hostile answers ------------------------------------------------------------------------------------


@needs_bubblewrap
def test_patched_builtins_and_assert_earn_nothing(solution):
    patched = edit(solution, "softmax", "    return exps / exps.sum(axis=-1, keepdims=True)\n", "    return exps\n")
    patched = [
        "import builtins\nbuiltins.all = lambda *a, **k: True\nbuiltins.AssertionError = type('Never', (Exception,),"
        " {})\nbuiltins.isinstance = lambda *a: True\n"
    ] + patched
    verdicts = grade_answers(patched, seed=SEED)
    assert lost(verdicts).keys() == {"check_softmax"} | ({"check_masked_attention"} if model.available() else set())
    assert verdicts["check_softmax"].points == 0.5  # only the shape holds


@needs_bubblewrap
def test_patched_numpy_comparisons_earn_nothing(solution):
    patched = edit(solution, "attention", " / np.sqrt(d)", "")
    patched += [
        "np.allclose = lambda *a, **k: True\nnp.array_equal = lambda *a, **k: True\n"
        "np.testing.assert_allclose = lambda *a, **k: None\nnp.isclose = lambda *a, **k: True\n"
    ]
    verdicts = grade_answers(patched, seed=SEED)
    only_these_lose(verdicts, set(ATTENTION_CHECKS))


ALWAYS_EQUAL = """
class AlwaysEqual:
    def __eq__(self, other):
        return True
    __ne__ = lambda self, other: False


def softmax(scores):
    return AlwaysEqual()
"""

EQUAL_ARRAY = """
class EqualArray(np.ndarray):
    def __eq__(self, other):
        return np.ones(np.shape(other), dtype=bool)


def softmax(scores):
    return np.zeros(np.shape(scores)).view(EqualArray)
"""


@needs_bubblewrap
@pytest.mark.parametrize("answer", [ALWAYS_EQUAL, EQUAL_ARRAY], ids=["object", "ndarray subclass"])
def test_always_equal_results_earn_nothing(solution, answer):
    verdicts = grade_answers(replace_cell(solution, "softmax", answer), seed=SEED)
    softmax = verdicts["check_softmax"]
    assert softmax.points <= 0.5  # an array of zeros keeps its shape, nothing else
    assert set(lost(verdicts)) <= {"check_softmax", "check_masked_attention"}  # the model runs attention as written
    if answer is ALWAYS_EQUAL:
        assert softmax.points == 0 and "not an array of numbers" in softmax.text()


def test_calling_lib_inside_a_graded_function_earns_nothing_and_says_why(solution):
    """lib is absent where the answers run: an attention that imports lib's softmax fails its checks with a
    message saying so, and costs nothing elsewhere (other checks hand attention a softmax of their own)."""
    calls_lib = edit(
        solution,
        "attention",
        "    weights = softmax(scores)\n",
        "    import lib.attention\n    weights = lib.attention.softmax(scores)\n",
    )
    verdicts = grade_answers(calls_lib, seed=SEED)
    only_these_lose(verdicts, set(ATTENTION_CHECKS))
    for check in ATTENTION_CHECKS:
        assert verdicts[check].points == 0
        assert "lib is not available where your functions are graded" in verdicts[check].text()


ROUTES = r'''
import gc, os, sys, types

_TRIED = []


def _reference(name):
    """Every route to a function called ``name`` that the student did not write, or None."""
    found = []
    for module in list(sys.modules.values()):  # sys.modules, '__main__' included
        candidate = getattr(module, name, None)
        if callable(candidate):
            found.append(candidate)
    for thing in gc.get_objects():  # every object the process holds
        if isinstance(thing, types.FunctionType) and thing.__name__ == name:
            found.append(thing)
    frame = sys._getframe()
    while frame is not None:  # the runner's frames
        found += [v for v in list(frame.f_locals.values()) + list(frame.f_globals.values())
                  if callable(v) and getattr(v, "__name__", "") == name]
        frame = frame.f_back
    for function in found:  # anything with a closure: a wrapper's cells
        for cell in getattr(function, "__closure__", None) or ():
            try:
                if callable(cell.cell_contents) and getattr(cell.cell_contents, "__name__", "") == name:
                    found.append(cell.cell_contents)
            except ValueError:
                pass
    mine = [f for f in found
            if not getattr(getattr(f, "__code__", None), "co_filename", "<answer").startswith("<answer")]
    _TRIED.append((name, len(mine)))
    return mine[0] if mine else None


def _read(path):
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return None


def causal_mask(positions):
    reference = _reference("causal_mask")
    return reference(positions) if reference else np.zeros((positions, positions), dtype=bool)


def split_heads(x, heads):
    reference = _reference("split_heads")
    if reference:
        return reference(x, heads)
    return np.zeros((heads, x.shape[0], x.shape[1] // heads))


def previous_token_weight(pattern):
    import json
    for path in [%(statistics)r, "data/model/head_statistics.json", "/run/attention/head_statistics.json"]:
        text = _read(path)
        if text:
            return np.asarray(json.loads(text)["previous"]).ravel()[: pattern.shape[0]]
    reference = _reference("previous_token_weight")
    return reference(pattern) if reference else np.zeros(pattern.shape[0])


def join_heads(x):
    source = _read(%(lib)r) or _read(%(checks)r)
    if source:
        namespace = {}
        exec(source, namespace)
        return namespace["join_heads"](x)
    return np.zeros((x.shape[1], x.shape[0] * x.shape[2]))
'''


@needs_bubblewrap
def test_no_route_from_the_answers_leads_to_the_reference_or_the_record(solution):
    """Functions that search every object, module, frame and closure of the runner's process for a function of the
    same name, read the recorded statistics, or load the reference's and the checks' source: none finds anything,
    so each falls back to zeros and earns nothing; the other checks are unaffected."""
    routes = ROUTES % {
        "statistics": str(model.MODEL_DIR / "head_statistics.json"),
        "lib": str(REPOSITORY / "source" / "attention" / "reference.py"),
        "checks": str(REPOSITORY / "autograder" / "checks.py"),
    }
    cheats = {"causal_mask", "split_heads", "previous_token_weight", "join_heads"}
    sources = [source for source in solution if not any(f"def {name}(" in source for name in cheats)] + [routes]
    verdicts = grade_answers(sources, seed=SEED)
    lost_checks = {f"check_{name}" for name in cheats}
    only_these_lose(verdicts, lost_checks)
    for check in lost_checks:
        assert verdicts[check].points == 0, verdicts[check].text()
        assert "returns zeros" in verdicts[check].text(), verdicts[check].text()


FORGES = r'''
_channel = []


def attention(queries, keys, values, mask=None):
    if not _channel and softmax.__closure__:  # while attention is graded, softmax is the grader's stand-in
        cells = dict(zip(softmax.__code__.co_freevars, softmax.__closure__))
        _channel.append(cells["channel"].cell_contents)
    queries, keys, values = (np.asarray(a, dtype=float) for a in (queries, keys, values))
    scores = queries @ np.swapaxes(keys, -1, -2) / np.sqrt(queries.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores)
    return weights, weights @ values


def split_heads(x, heads):
    """Asks the grader, over the captured pipe, for split_heads itself (and then for join_heads and softmax)."""
    for name in ("split_heads", "join_heads", "softmax"):
        _channel[0].send({"op": "stand_in", "name": name, "args": [{"array": 0}, heads], "kwargs": {}}, [np.asarray(x)])
        reply, arrays = _channel[0].receive()
        if reply["op"] == "value":
            return arrays[0]
    raise RuntimeError(reply["message"])
'''


@needs_bubblewrap
def test_the_grader_computes_a_stand_in_only_for_the_call_in_progress(solution):
    """The pipe behind a stand-in, captured while attention is graded and used while split_heads is graded: the
    grader refuses split_heads itself, and anything split_heads may not call."""
    sources = [source for source in solution if "def attention(" not in source and "def split_heads(" not in source]
    verdicts = grade_answers(sources + [FORGES], seed=SEED)
    only_these_lose(verdicts, {"check_split_heads"})
    assert verdicts["check_split_heads"].points == 0
    assert "softmax is not computed for you while split_heads is graded" in verdicts["check_split_heads"].text()


LAZY = {
    "zeros": "np.zeros({shape})",
    "ones": "np.ones({shape})",
    "echo": "{echo}",
}
SHAPES = {  # function: (signature, shape of what it should return, an input of that shape or None)
    "softmax": ("scores", "np.shape(scores)", "scores"),
    "attention": ("queries, keys, values, mask=None", None, None),
    "causal_mask": ("positions", "(positions, positions), dtype=bool", None),
    "average_largest_weight": ("queries, keys, scaled=True", "()", None),
    "split_heads": ("x, heads", "(heads, x.shape[0], x.shape[1] // heads)", None),
    "join_heads": ("x", "(x.shape[1], x.shape[0] * x.shape[2])", None),
    "multi_head_attention": ("x, w_query, w_key, w_value, w_output, heads", None, None),
    "previous_token_weight": ("pattern", "pattern.shape[0]", None),
    "even_previous_weight": ("positions", "()", None),
    "description_positions": ("ids, sep, end_id", "len(ids) - sep - 1", None),
    "far_back_weight": ("pattern, sep, queries", "(pattern.shape[0], len(queries))", None),
    "marker_weight": ("pattern, sep, queries", "(pattern.shape[0], len(queries))", None),
    "even_far_back_weight": ("sep, queries", "len(queries)", "np.asarray(queries, dtype=float)"),
    "even_marker_weight": ("queries", "len(queries)", "np.asarray(queries, dtype=float)"),
    "safe_softmax": ("scores", "np.shape(scores)", "scores"),
}
PAIRS = {
    "attention": ("(*np.shape(queries)[:-1], np.shape(keys)[-2])", "(*np.shape(queries)[:-1], np.shape(values)[-1])"),
    "multi_head_attention": ("(heads, len(x), len(x))", "np.shape(x)"),
}


def lazy_notebook(kind: str) -> list[str]:
    """Every graded function returning zeros, ones or its input, in the shape it should return."""
    cells = []
    for function, (signature, shape, echo) in SHAPES.items():
        if function in PAIRS:
            body = ", ".join(LAZY[kind if kind != "echo" else "zeros"].format(shape=s) for s in PAIRS[function])
        elif kind == "echo" and echo:
            body = echo
        else:
            body = LAZY[kind if kind != "echo" else "zeros"].format(shape=shape)
        cells.append(f"def {function}({signature}):\n    return {body}\n")
    return cells


@pytest.mark.parametrize("kind", ["zeros", "ones", "echo"])
def test_outputs_that_carry_no_computation_earn_nothing(kind):
    """A blank notebook whose functions return zeros, ones or their input, in the right shapes: at most 1 of 29
    (the issue's bound; it earns 0), and the feedback says what the function returns, not a transposition."""
    verdicts = grade_answers(lazy_notebook(kind), seed=SEED)
    total = sum(verdict.points for verdict in verdicts.values())
    assert total <= 1, {check: v.points for check, v in verdicts.items() if v.points}
    assert total == 0
    said = {"zeros": "returns zeros", "ones": "filled with one number", "echo": "returns its input unchanged"}[kind]
    assert said in verdicts["check_softmax"].text(), verdicts["check_softmax"].text()
    assert "transposed" not in "\n".join(v.text() for v in verdicts.values())


def test_the_same_result_for_every_input_earns_nothing(solution):
    """A function that returns the worked example's numbers whatever it is given."""
    constant = "def previous_token_weight(pattern):\n    return np.array([0.41, 0.12, 0.33, 0.08])\n"
    verdicts = grade_answers(replace_cell(solution, "previous_token_weight", constant), seed=SEED)
    assert verdicts["check_previous_token_weight"].points == 0
    assert "returns the same result for different inputs" in verdicts["check_previous_token_weight"].text()


def float32_solution(solution: list[str]) -> list[str]:
    """The solution computed in float32 throughout (the notebook asks for no particular precision)."""
    changed = [
        source.replace("dtype=float)", "dtype=np.float32)").replace("np.sqrt(d)", "np.float32(np.sqrt(d))")
        for source in solution
    ]
    assert sum(source.count("float32") for source in changed) >= 10
    return changed


def test_a_float32_solution_earns_full_marks(solution):
    for seed in (4, SEED):  # seed 4 put the model's logits 1.1e-5 from lib's: within float32's rounding
        verdicts = grade_answers(float32_solution(solution), seed=seed)
        assert lost(verdicts) == {}, {check: verdicts[check].text() for check in lost(verdicts)}


def test_limits_are_cpu_time_not_the_clock(solution):
    """An answer cell that waits 1.5 s by the clock (using no CPU, within the 2 s it may wait) under a 1 s CPU limit
    costs nothing; one that burns CPU is stopped, and the feedback names the cell, the limit and the cause."""
    waits = ["import time\ntime.sleep(1.5)\n" + solution[0], *solution[1:]]
    assert lost(grade_answers(waits, seed=SEED, call_limit=1.0, checks=["check_softmax"])) == {}
    burns = [
        "while True:\n    try:\n        while True:\n            pass\n    except BaseException:\n        pass\n"
        + solution[0],
        *solution[1:],
    ]
    verdicts = grade_answers(burns, seed=SEED, call_limit=1.0, checks=["check_softmax", "check_causal_mask"])
    assert lost(verdicts) == {
        "check_softmax": ["shape", "rows sum to 1 on the last axis", "values", "no overflow on scores ~1e3"]
    }
    assert "answer cell 1 used more than its 1 s of CPU time" in verdicts["check_softmax"].text()


def test_a_large_allocation_on_a_busy_machine_costs_nothing(solution):
    """A correct notebook that allocates 2 GB in its first cell, graded while two processes keep both cores busy."""
    import subprocess
    import sys

    heavy = ["_big = np.ones(2**28)\n_big += 1\n" + solution[0], *solution[1:]]
    burners = [
        subprocess.Popen([sys.executable, "-c", "import time\nend = time.time() + 120\nwhile time.time() < end: pass"])
        for _ in range(2)
    ]
    try:
        verdicts = grade_answers(heavy, seed=SEED)
    finally:
        for burner in burners:
            burner.kill()
    assert lost(verdicts) == {}, {check: verdicts[check].text() for check in lost(verdicts)}


def test_independent_failures_each_cost_only_their_own_check(solution):
    """One submission, six functions failing six ways: each check reports its own reason."""
    broken = edit(solution, "split_heads", "def split_heads(", "def split_head(")
    broken = edit(
        broken, "marker_weight", "def marker_weight(pattern, sep, queries):", "def marker_weight(pattern, sep, queries)"
    )
    broken = edit(
        broken,
        "description_positions",
        "    ### BEGIN SOLUTION\n",
        "    ### BEGIN SOLUTION\n    import os\n    os._exit(3)\n",
    )
    broken = edit(
        broken, "even_previous_weight", "    ### BEGIN SOLUTION\n", "    ### BEGIN SOLUTION\n    np.ones((2**31,))\n"
    )
    broken = edit(
        broken,
        "join_heads",
        "    return x.transpose(1, 0, 2).reshape(positions, heads * size)\n",
        "    return [[1.0, 2.0], [3.0]]\n",
    )
    broken = edit(broken, "even_marker_weight", "return 2.0 /", "2.0 /")
    verdicts = grade_answers(broken, seed=SEED)
    reasons = {
        "check_split_heads": "no function named split_heads in your answers",
        "check_marker_weight": "failed: SyntaxError",
        "check_description_positions": "exited early (exit 3)",
        "check_even_previous_weight": "MemoryError",
        "check_join_heads": "returned list",
        "check_even_marker_weight": "returned None",
    }
    only_these_lose(verdicts, set(reasons))
    for check, reason in reasons.items():
        assert verdicts[check].points == 0 and reason in verdicts[check].text(), verdicts[check].text()


def test_renamed_softmax_costs_the_model_property_only_elsewhere(solution):
    verdicts = grade_answers(edit(solution, "softmax", "def softmax(", "def soft_max("), seed=SEED)
    expected = {"check_softmax"} | ({"check_masked_attention"} if model.available() else set())
    only_these_lose(verdicts, expected)
    if model.available():
        assert lost(verdicts)["check_masked_attention"] == [DRIVE]


def test_infinite_loop_fails_only_its_checks(solution):
    looping = edit(
        solution,
        "even_marker_weight",
        "    ### BEGIN SOLUTION\n",
        "    ### BEGIN SOLUTION\n    while True:\n        pass\n",
    )
    verdicts = grade_answers(looping, seed=SEED, call_limit=1.0)
    only_these_lose(verdicts, {"check_even_marker_weight"})
    assert "used up its 1 s of CPU time" in verdicts["check_even_marker_weight"].text()


def test_loop_that_swallows_the_timeout_is_killed_and_the_rest_still_graded(solution):
    looping = edit(
        solution,
        "previous_token_weight",
        "    ### BEGIN SOLUTION\n",
        "    ### BEGIN SOLUTION\n    while True:\n        try:\n            while True:\n                pass\n       "
        " except BaseException:\n            pass\n",
    )
    verdicts = grade_answers(looping, seed=SEED, call_limit=1.0)
    only_these_lose(verdicts, {"check_previous_token_weight"})
    # the limit of whichever call came first in the seed's order: 1 s for a plain call, 6 s for the model's texts
    assert re.search(
        r"previous_token_weight used more than its [16] s of CPU time", verdicts["check_previous_token_weight"].text()
    )


def test_a_cell_that_never_ends_is_skipped_and_the_others_graded(solution):
    stuck = [
        "while True:\n    try:\n        while True:\n            pass\n    except BaseException:\n        pass\n"
    ] + solution
    assert lost(grade_answers(stuck, seed=SEED, call_limit=1.0)) == {}


def test_magics_are_stripped(solution):
    with_magics = ["%matplotlib inline\n!ls\n" + solution[0], *solution[1:]]
    assert lost(grade_answers(with_magics, seed=SEED)) == {}


def test_unanswered_notebook_earns_zero():
    stubs = [f"def {check.function}(*args, **kwargs):\n    raise NotImplementedError()\n" for check in CHECKS.values()]
    verdicts = grade_answers(stubs, seed=SEED)
    assert all(v.points == 0 for v in verdicts.values())
    assert "NotImplementedError" in verdicts["check_softmax"].text()


def test_feedback_seed_reproduces_the_inputs_and_verdicts(solution):
    unscaled = edit(solution, "attention", " / np.sqrt(d)", "")
    verdicts = grade_answers(unscaled)  # a fresh seed, written in the feedback
    seed = int(re.search(r"seed (\d+)", verdicts["check_attention"].text()).group(1))
    again = grade_answers(unscaled, seed=seed)
    assert [v.text() for v in again.values()] == [v.text() for v in verdicts.values()]
    assert [v.points for v in again.values()] == [v.points for v in verdicts.values()]


def test_the_verdicts_words_are_the_ones_students_read():
    """verdicts.Verdict.text(), character for character as the feedback wrote it before verdicts were data."""
    from autograder.verdicts import Property, Verdict

    verdict = Verdict(
        "check_softmax",
        "softmax",
        1.33,
        2.0,
        (Property("shape", True), Property("values", False, "row 0 sums to 2"), Property("rows", False,
         "row 0 sums to 2"), Property("model", None, "the model is missing")),
        seed=7,
    )  # fmt: skip
    assert verdict.text() == (
        "check_softmax (softmax): 1.33 / 2 points\n"
        "  PASS shape\n"
        "  FAIL values: row 0 sums to 2\n"
        "  FAIL rows: the same failure as above\n"
        "  n/a  model: the model is missing\n"
        "Graded outside your notebook on inputs drawn at grading time (seed 7). To see a failure yourself, call "
        "softmax in your notebook on inputs like the ones named above: arrays of those shapes "
        "(np.random.default_rng(0).normal(size=shape) makes one) and the numbers shown. The seed draws these very "
        "inputs again: quote it to your instructor, who can grade with it."
    )


@needs_bubblewrap
def test_a_students_exception_never_shows_the_hidden_inputs_whole(solution):
    """A softmax that raises with its input in the message: the verdict quotes one line, its numbers rounded."""
    leaking = edit(
        solution,
        "softmax",
        "    ### BEGIN SOLUTION\n",
        "    ### BEGIN SOLUTION\n"
        "    raise ValueError(repr(float(np.asarray(scores).flat[0])) + '\\n' + repr(scores))\n",
    )
    verdict = grade_answers(leaking, seed=SEED, checks=["check_softmax"])["check_softmax"]
    plan = CHECKS["check_softmax"].calls(check_generator(SEED, "check_softmax"))
    drawn = {repr(float(call.args[0].flat[0])) for call in plan}  # the first number of each hidden input
    messages = [p.message for p in verdict.properties if p.passed is False]
    assert messages and all("ValueError: " in m and "\n" not in m for m in messages), messages
    for message in messages:
        assert not any(value in message for value in drawn), message
        assert re.search(r"ValueError: -?\d\.?\d* …", message), message  # the first number, rounded
        assert not re.search(r"\d\.\d{4,}", message), message  # no number with more than 3 significant digits


def test_a_crash_names_its_signal_not_an_exit(solution):
    """Inside bubblewrap a runner killed by a signal exits with 128 + the signal: the verdict names the signal."""
    crashing = edit(
        solution,
        "even_marker_weight",
        "    ### BEGIN SOLUTION\n",
        "    ### BEGIN SOLUTION\n    import ctypes\n    ctypes.string_at(0)\n",
    )
    verdicts = grade_answers(crashing, seed=SEED)
    text = verdicts["check_even_marker_weight"].text()
    assert verdicts["check_even_marker_weight"].points == 0
    assert "crashed (SIGSEGV: a segmentation fault)" in text and "exit(" not in text, text


def test_a_sleeping_function_costs_seconds_and_only_its_own_checks(solution):
    """attention sleeps an hour: its first call is stopped after the 2 s it may wait without computing, its later
    calls are not made, both of its checks say so as data, and every other function keeps its points."""
    from autograder.verdicts import ChecksEnd

    sleeping = edit(
        solution,
        "attention",
        "    ### BEGIN SOLUTION\n",
        "    ### BEGIN SOLUTION\n    import time\n    time.sleep(3600)\n",
    )
    started = time.monotonic()
    verdicts = grade_answers(sleeping, seed=SEED)
    assert time.monotonic() - started < 30  # about 2 s and a runner's start; the clock's backstop was 60 s a call
    only_these_lose(verdicts, {"check_attention", "check_masked_attention"})
    stopped = "stopped: attention waited 2 s without computing (sleep, input or a lock?)"
    for check in ("check_attention", "check_masked_attention"):
        assert verdicts[check].points == 0 and verdicts[check].limit == "idle", verdicts[check].text()
        assert verdicts[check].end == ChecksEnd("idle", "attention", limit=2.0)
        assert verdicts[check].end.what() == stopped and stopped in verdicts[check].text()


def burners(count: int) -> list:
    """``count`` processes that keep a core busy each (a loaded machine), for two minutes at most."""
    import subprocess
    import sys

    burn = "import time\nend = time.time() + 120\nwhile time.time() < end: pass"
    return [subprocess.Popen([sys.executable, "-c", burn]) for _ in range(count)]


def test_a_slow_function_gets_the_same_verdicts_on_a_loaded_machine(solution):
    """Functions that compute slowly (a wrong one, one past its CPU time, a right one) are graded on a quiet machine
    and again while twice as many busy processes as cores run beside them: every check's points, limit and
    properties are the same. Waiting its turn for a core never counts as waiting without computing."""
    slow = "    _t = time.process_time()\n    while time.process_time() - _t < {seconds}:\n        pass\n"
    answers = edit(
        solution, "causal_mask", "    ### BEGIN SOLUTION\n", "    ### BEGIN SOLUTION\n" + slow.format(seconds=0.2)
    )
    answers = edit(
        answers,
        "join_heads",
        "    return x.transpose(1, 0, 2).reshape(positions, heads * size)\n",
        slow.format(seconds=0.3) + "    return x.transpose(1, 0, 2).reshape(heads * size, positions).T\n",
    )
    answers = edit(
        answers, "split_heads", "    ### BEGIN SOLUTION\n", "    ### BEGIN SOLUTION\n" + slow.format(seconds=9)
    )
    answers = ["import time\n" + answers[0], *answers[1:]]
    checks = ["check_causal_mask", "check_join_heads", "check_split_heads", "check_softmax"]

    def graded():
        verdicts = grade_answers(answers, seed=SEED, call_limit=0.5, checks=checks)
        return {c: (v.points, v.limit, [(p.name, p.passed) for p in v.properties]) for c, v in verdicts.items()}

    quiet = graded()
    running = burners(2 * (os.cpu_count() or 1))
    try:
        loaded = graded()
    finally:
        for burner in running:
            burner.kill()
            burner.wait()
    assert loaded == quiet
    assert quiet["check_causal_mask"][0] == CHECKS["check_causal_mask"].points  # right, only slow
    assert quiet["check_join_heads"][0] < CHECKS["check_join_heads"].points  # wrong and slow
    assert quiet["check_split_heads"][:2] == (0, "call")  # past its CPU time on every call


def test_a_syntax_error_says_its_place_once(solution):
    """An answer cell that does not compile: the verdict names the cell and the line once, with Python's message."""
    broken = edit(
        solution,
        "marker_weight",
        "def marker_weight(pattern, sep, queries):",
        "def marker_weight(pattern, sep, queries)",
    )
    cell = cell_of(solution, "marker_weight") + 1
    line = solution[cell - 1].splitlines().index("def marker_weight(pattern, sep, queries):") + 1
    verdict = grade_answers(broken, seed=SEED, checks=["check_marker_weight"])["check_marker_weight"]
    assert {p.message for p in verdict.properties} == {
        "no function named marker_weight in your answers: define it in its answer cell as def marker_weight(...): "
        f"(answer cell {cell} failed: SyntaxError: expected ':' (answer cell {cell}, line {line}))"
    }


# --- a module the notebook writes (%%writefile) is there for the answers, as in the student's kernel ---------------

POSITIONS = REPOSITORY / "source" / "positions"
HELPER = (
    "%%writefile angles_helper.py\nimport numpy as np\n\n\ndef angles(positions, size, base):\n"
    "    return np.arange(positions)[:, None] * base ** (-np.arange(0, size, 2) / size)\n"
)
FROM_HELPER = (
    "def rotation_angles(positions, size, base=10000.0):\n    from angles_helper import angles\n\n"
    "    return angles(positions, size, base)\n"
)


def with_helper(cells: list[str], answer: str) -> list[str]:
    """The solution's answer cells with rotation_angles's replaced by ``answer``, the helper's cell written first."""
    found = next(n for n, cell in enumerate(cells) if "def rotation_angles(" in cell)
    return [HELPER, *cells[:found], answer, *cells[found + 1 :]]


def test_a_module_a_cell_writes_with_writefile_is_imported_by_the_answer_and_credited():
    notebook = {
        "cells": [
            {"cell_type": "code", "metadata": {}, "source": HELPER},  # a cell the student added: no nbgrader metadata
            {"cell_type": "code", "metadata": {"nbgrader": {"solution": True}}, "source": FROM_HELPER},
            {"cell_type": "code", "metadata": {}, "source": "print('a demo')\n"},
        ]
    }
    assert answer_sources(notebook) == [HELPER, FROM_HELPER]
    positions = assignments.load(POSITIONS)
    sources = with_helper(answer_sources(POSITIONS / "positions.ipynb"), FROM_HELPER)
    verdicts = grade_with(positions, sources, seed=3)
    assert {check: verdict.points for check, verdict in verdicts.items()} == {
        "check_rotation_angles": 1.0,
        "check_rotate": 2.0,
        "check_rotated_score": 2.0,
    }


def test_a_module_the_notebook_does_not_write_is_said_in_one_line_with_what_to_do():
    positions = assignments.load(POSITIONS)
    cells = answer_sources(POSITIONS / "positions.ipynb")
    sources = with_helper(cells, FROM_HELPER.replace("angles_helper", "my_helpers"))
    verdict = grade_with(positions, sources, seed=3, checks=["check_rotation_angles"])["check_rotation_angles"]
    assert verdict.points == 0
    assert "No module named 'my_helpers'" in verdict.text()
    assert "a module of your own is there only when a cell of the notebook writes it (%%writefile my_helpers.py)" in (
        verdict.text()
    )
    outside = with_helper(cells, FROM_HELPER)
    outside[0] = HELPER.replace("angles_helper.py", "../angles_helper.py")
    verdict = grade_with(positions, outside, seed=3, checks=["check_rotation_angles"])["check_rotation_angles"]
    assert verdict.points == 0 and "(%%writefile angles_helper.py)" in verdict.text()  # not written outside its folder
