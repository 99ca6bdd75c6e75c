"""Functions the grader computes for a student's function while it is graded (autograder.answers.stand_ins): a
function passed as an argument (a callback, ``residual_block(x, f)``) runs in the grader's process, for the call in
progress only, bounded in size and in number of calls; whatever the student's code does with it, the feedback says
what happened and nothing of the grader reaches the student's process."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from autograder import sandbox
from autograder.answers import runner as answer_runner
from autograder.answers.budget import CALLBACK_CALLS, STAND_IN_ELEMENTS, Budget, Limits
from autograder.answers.grading import grade_answers
from autograder.answers.stand_ins import Callbacks, callback_name, oversized
from autograder.assignments import AssignmentChecks
from autograder.checks import Call, Check, checks_by_id, close, compare, describe_call

SEED = 20260101
MARKER = "grader-only-marker-5b1e"  # in the grader's function's code: the student's process must never hold it

needs_bubblewrap = pytest.mark.skipif(
    sandbox.bubblewrap() is None,
    reason=f"bubblewrap is not available ({sandbox.INSTALL}): hostile answers are graded only inside the sandbox",
)


def layer(x):
    """The function the check hands to residual_block: the grader's own."""
    assert MARKER  # its code holds the marker
    return np.tanh(np.asarray(x, dtype=float)) * 0.5


def block_calls(rng):
    return [
        Call("residual_block", (rng.normal(size=(3, 4)), layer)),
        Call("residual_block", (rng.normal(size=(5, 2)),), {"f": layer}),
    ]


def block_values(out):
    for number, call in enumerate(out.calls):
        x = call.args[0]
        if not close(out.value(number), x + layer(x), out.tolerance(number)):
            return f"{describe_call(call)}: expected x + f(x)"
    return None


def square_calls(rng):
    return [Call("square", (rng.normal(size=(2, 3)),))]


def square_values(out):
    return None if close(out.value(0), out.arg(0) ** 2, out.tolerance(0)) else "expected x ** 2"


BLOCK = AssignmentChecks(
    "blocks",
    Path("."),
    {
        "check_residual_block": Check(
            "check_residual_block", "residual_block", 2, block_calls, (("values", block_values),)
        ),
        "check_square": Check("check_square", "square", 1, square_calls, (("values", square_values),)),
    },
)
SQUARE = "def square(x):\n    return x ** 2\n"


def graded(block: str, square: str = SQUARE):
    return grade_answers(BLOCK, [block, square], seed=SEED)


def text(verdicts, check: str = "check_residual_block") -> str:
    return verdicts[check].text()


# --- the grader's side alone ------------------------------------------------------------------------------------


def request(index, *args, **kwargs) -> tuple[dict, list]:
    """A callback request as the runner frames it, read back as the grader reads it."""
    arrays = []
    header = {
        "op": "callback",
        "index": index,
        "args": [answer_runner.pack(a, arrays) for a in args],
        "kwargs": {k: answer_runner.pack(v, arrays) for k, v in kwargs.items()},
    }
    return header, arrays


def test_a_callback_is_computed_here_and_only_its_values_go_back():
    served = Callbacks("residual_block", [layer], Budget(Limits()))
    x = np.arange(6.0).reshape(2, 3)
    reply, arrays = served.serve(*request(0, x))
    assert reply["op"] == "value"
    assert np.array_equal(answer_runner.unpack(reply["value"], arrays), layer(x))
    assert served.names == ("layer",) and served.calls == 1 and served.over == ""


def test_a_callback_not_passed_to_this_call_is_refused():
    served = Callbacks("residual_block", [layer], Budget(Limits()))
    for index in (1, -1, "0", None, True):
        reply, arrays = served.serve(*request(index, np.ones(2)))
        assert reply["op"] == "refused" and arrays == []
        assert "a function passed to an earlier call cannot be called in a later one" in reply["message"]
    assert served.calls == 0


def test_what_the_grader_cannot_compute_is_refused_with_the_error():
    def returns_a_function(x):
        return layer

    def returns_too_much(x):
        return np.zeros(STAND_IN_ELEMENTS + 1)

    served = Callbacks("residual_block", [layer, returns_a_function, returns_too_much], Budget(Limits()))
    assert served.serve(*request(0, "text"))[0]["message"].startswith("layer(...) could not be computed for you: ")
    refused = served.serve(*request(1, np.ones(2)))[0]
    assert refused["op"] == "refused" and "cannot send a value of type function to the grader" in refused["message"]
    refused = served.serve(*request(2, np.ones(2)))[0]
    assert refused["op"] == "refused" and f"returned {STAND_IN_ELEMENTS + 1:,} numbers" in refused["message"]


def test_calls_past_the_limit_are_refused_and_fail_the_call():
    served = Callbacks("residual_block", [layer], Budget(Limits()), limit=3)
    replies = [served.serve(*request(0, np.ones(2)))[0]["op"] for _ in range(5)]
    assert replies == ["value"] * 3 + ["refused"] * 2
    assert "more than 3 times in one call" in served.over


def test_a_callback_request_is_bounded_before_it_is_read():
    header = {"op": "callback", "index": 0, "arrays": [["<f8", [STAND_IN_ELEMENTS + 1]]]}
    assert oversized(header, ("layer",)).startswith(f"layer(...) was asked for on {STAND_IN_ELEMENTS + 1:,} numbers")
    assert oversized(dict(header, arrays=[["<f8", [STAND_IN_ELEMENTS]]]), ("layer",)) == ""


def test_the_grader_side_packs_a_function_as_a_callback_and_the_runner_side_refuses_one():
    arrays, functions = [], []
    assert answer_runner.pack((np.ones(2), layer), arrays, functions) == {"items": [{"array": 0}, {"callback": 0}]}
    assert functions == [layer]
    with pytest.raises(TypeError, match="cannot send a value of type function"):
        answer_runner.pack(layer, [])
    with pytest.raises(TypeError, match="dtype <U1"):
        answer_runner.pack(np.array(["a"]), [])
    with pytest.raises(TypeError, match="more than 64 bits"):
        answer_runner.pack(10**30, [])
    assert callback_name(layer) == "layer" and callback_name(lambda x: x) == "callback"
    assert (
        describe_call(Call("residual_block", (np.ones((3, 4)), layer)))
        == "residual_block(array of shape (3, 4), layer)"
    )


# --- through the sandboxed runner ------------------------------------------------------------------------------


@needs_bubblewrap
def test_a_function_argument_is_graded_as_written():
    right = graded("def residual_block(x, f):\n    return x + f(x)\n")
    assert right["check_residual_block"].points == 2, text(right)
    wrong = graded("def residual_block(x, f):\n    return f(x)\n")
    assert wrong["check_residual_block"].points == 0 and "expected x + f(x)" in text(wrong)
    assert wrong["check_square"].points == 1


@needs_bubblewrap
def test_hostile_arguments_to_the_callback_are_refused_and_said():
    """An object, a string array, the callback itself, a huge array: each is reported, and the other check is
    graded as usual."""
    cases = {
        "f(object())": "layer(...) is computed by the grader, on NumPy arrays and numbers only: cannot send a value of",
        "f(np.array(['a', 'b']))": "cannot send an array of dtype <U1 to the grader",
        "f(f)": "cannot send a value of type function to the grader",
        "f({'x': x})": "cannot send a value of type dict to the grader",
    }
    for call, message in cases.items():
        verdicts = graded(f"def residual_block(x, f):\n    return x + {call}\n")
        assert verdicts["check_residual_block"].points == 0 and message in text(verdicts), (call, text(verdicts))
        assert verdicts["check_square"].points == 1
    long_list = graded("def residual_block(x, f):\n    return x + f(list(range(10**6)))\n")
    assert "called with" in text(long_list) and "bytes of numbers and lists outside arrays" in text(long_list)
    assert long_list["check_square"].points == 1  # the grading went on
    huge = graded("def residual_block(x, f):\n    return x + f(np.zeros(2**23))[: x.size].reshape(x.shape)\n")
    assert f"layer(...) was asked for on {2**23:,} numbers" in text(huge), text(huge)
    assert huge["check_residual_block"].limit == "stand-in" and huge["check_square"].points == 1


@needs_bubblewrap
def test_calling_the_callback_too_often_fails_the_call_and_says_why():
    verdicts = graded(
        "def residual_block(x, f):\n"
        f"    for _ in range({CALLBACK_CALLS + 5}):\n"
        "        try:\n"
        "            y = f(x)\n"
        "        except Exception:\n"
        "            pass\n"
        "    return x + y\n"
    )
    verdict = verdicts["check_residual_block"]
    assert verdict.points == 0 and verdict.limit == "callbacks"
    assert f"more than {CALLBACK_CALLS:,} times in one call" in verdict.text()
    assert verdicts["check_square"].points == 1


@needs_bubblewrap
def test_recursion_through_the_callback_is_the_students_error():
    verdicts = graded("def residual_block(x, f):\n    return residual_block(f(x), f)\n")
    verdict = verdicts["check_residual_block"]
    assert verdict.points == 0
    assert "RecursionError" in verdict.text() or f"more than {CALLBACK_CALLS:,} times" in verdict.text()
    assert verdicts["check_square"].points == 1


STORES = """
_kept = []


def residual_block(x, f):
    _kept.append(f)
    return x + f(x)


def square(x):
    for f in _kept:
        try:
            f(x)
        except Exception as error:
            raise RuntimeError(str(error)) from None
    return x ** 2
"""


@needs_bubblewrap
def test_a_stored_callback_is_dead_after_its_call():
    verdicts = grade_answers(BLOCK, [STORES], seed=SEED)
    assert verdicts["check_residual_block"].points == 2  # its own calls may use f
    square = verdicts["check_square"]
    if square.points == 0:  # the order of the calls is drawn: square ran after residual_block kept f
        assert "was passed to residual_block for one call, which has returned" in square.text(), square.text()


FORGED = """
import gc


def residual_block(x, f):
    channel = dict(zip(f.__code__.co_freevars, f.__closure__))["channel"].cell_contents
    channel.send({"op": "callback", "index": 7, "args": [{"array": 0}], "kwargs": {}}, [x])
    reply, _ = channel.receive()
    raise RuntimeError(reply["message"])
"""


@needs_bubblewrap
def test_a_forged_callback_request_is_refused():
    verdicts = graded(FORGED)
    assert "a function passed to an earlier call cannot be called in a later one" in text(verdicts), text(verdicts)
    assert verdicts["check_square"].points == 1


SEARCHES = f"""
import gc
import sys

MARKER = "".join(reversed({MARKER[::-1]!r}))  # built here: this cell's own code does not hold it


def holds_marker(value, depth=0):
    if depth > 4:
        return False
    if isinstance(value, str):
        return MARKER in value
    code = getattr(value, "__code__", None)
    if code is not None and any(holds_marker(c, depth + 1) for c in code.co_consts):
        return True
    cells = getattr(value, "__closure__", None) or ()
    return any(holds_marker(cell.cell_contents, depth + 1) for cell in cells)


def residual_block(x, f):
    found = holds_marker(f) or any(holds_marker(o) for o in gc.get_objects())
    found = found or any(MARKER in str(vars(m)) for m in list(sys.modules.values()))
    return x + f(x) + (1000.0 if found else 0.0)
"""


@needs_bubblewrap
def test_nothing_of_the_graders_function_reaches_the_students_process():
    verdicts = graded(SEARCHES)
    assert verdicts["check_residual_block"].points == 2, text(verdicts)


def residual_block(x, f):
    """The reference: the input plus the layer's output."""
    return x + f(x)


SIMPLE = AssignmentChecks(
    "blocks",
    Path("."),
    checks_by_id(
        compare(
            "check_residual_block",
            residual_block,
            points=2,
            inputs={"a matrix and a layer": lambda rng: (rng.normal(size=(3, int(rng.integers(2, 6)))), layer)},
            mistakes={"returns f(x) alone: add the input back, x + f(x)": lambda x, f: f(x)},
        )
    ),
)


@needs_bubblewrap
def test_the_simple_tier_passes_a_function_and_names_the_mistake():
    assert (
        grade_answers(SIMPLE, ["def residual_block(x, f):\n    return f(x) + x\n"], seed=SEED)[
            "check_residual_block"
        ].points
        == 2
    )
    wrong = grade_answers(SIMPLE, ["def residual_block(x, f):\n    return f(x)\n"], seed=SEED)["check_residual_block"]
    assert wrong.points == 0 and "returns f(x) alone: add the input back" in wrong.text(), wrong.text()
    assert "residual_block(array of shape (3, " in wrong.text() and ", layer)" in wrong.text()


# --- a stand-in's request is bounded by the check's own sizes, before the grader computes anything ---------------


def table(positions, size, base=10000.0):
    """The grader's stand-in: a (positions, size // 2) table of angles, as rotation_angles computes one."""
    return np.outer(np.arange(positions), base ** (-np.arange(0, size, 2) / size))


def turn_calls(rng):
    return [Call("turn", (rng.normal(size=(12, 8)),)), Call("turn", (rng.normal(size=(30, 4)),))]


def turn_values(out):
    for number, call in enumerate(out.calls):
        x = call.args[0]
        expected = x + table(*x.shape).sum()
        if not close(out.value(number), expected, out.tolerance(number)):
            return f"{describe_call(call)}: expected x + the table's sum"
    return None


TURNS = AssignmentChecks(
    "turns",
    Path("."),
    {"check_turn": Check("check_turn", "turn", 2, turn_calls, (("values", turn_values),))},
    isolate={"turn": ("table",)},
    stand_in=lambda graded, name: table,
)
TABLE_STUB = "def table(positions, size, base=10000.0):\n    raise NotImplementedError\n"


def turned(body: str):
    return grade_answers(TURNS, [TABLE_STUB, "def turn(x):\n" + body], seed=SEED)["check_turn"]


def test_a_stand_in_on_the_calls_own_sizes_is_computed_and_its_defaults_stay_allowed():
    verdict = turned("    return x + table(x.shape[0], x.shape[1], base=10000.0).sum()\n")
    assert verdict.points == 2, verdict.text()


@needs_bubblewrap
@pytest.mark.parametrize(
    ("body", "named"),
    [
        ("    table(120_000_000, 8)\n    return x + table(*x.shape).sum()\n", "the number 120,000,000"),
        ("    table(1.2e8, 8)\n    return x + table(*x.shape).sum()\n", "the number 120,000,000"),
        ("    table(x.shape[0], 2**40)\n    return x + table(*x.shape).sum()\n", "the number 1,099,511,627,776"),
        ("    table(np.zeros((8000, 2)), 8)\n    return x + table(*x.shape).sum()\n", "an array of shape (8000, 2)"),
        ("    table(positions=(3, 5_000_000), size=8)\n    return x + table(*x.shape).sum()\n", "the number 5,000,000"),
        ("    table(np.array(120_000_000), 8)\n    return x + table(*x.shape).sum()\n", "the number 120,000,000"),
        ("    table(np.array([3_000_000_000]), 8)\n    return x + table(*x.shape).sum()\n", "the number 3,000,000,000"),
    ],
)
def test_a_stand_in_asked_past_the_checks_sizes_is_refused_before_it_is_computed(body, named):
    verdict = turned("    import numpy as np\n" + body)
    assert verdict.points == 0
    said = verdict.text()
    assert "table(...) was asked for with " + named in said, said
    assert "checked on sizes up to 12" in said and "sizes up to 64 only" in said, said


def test_the_scale_of_a_call_is_its_largest_dimension_or_number():
    from autograder.answers.stand_ins import Scale, largest_size
    from autograder.checks import Mapped

    assert largest_size((np.zeros((3, 17)), 4, (2.5, [40]))) == 40
    assert largest_size({"x": Mapped("f.npy", 0, 10, (5, 200))}) == 200
    assert largest_size((layer, True, float("nan"), "text")) == 0
    scale = Scale.of_call((np.zeros((100, 8)),), {"heads": 4})
    assert (scale.of, scale.limit) == (100, 200)
    assert scale.beyond("f", "g", [np.zeros((200, 3)), 199, -200.0], {}) == ""
    assert "an array of shape (201, 3)" in scale.beyond("f", "g", [np.zeros((201, 3))], {})
    assert "the number -201" in scale.beyond("f", "g", [], {"n": -201})
    assert scale.beyond("f", "g", [10000.0], {}, defaults=(10000.0,)) == ""
    assert scale.beyond("f", "g", [np.array([[-1e9]])], {}) == ""  # a masked score is a value, not a size
    assert "the number 5,000" in scale.beyond("f", "g", [np.array(5000)], {})  # an integer in an array is a size
    assert Scale.of_call((), {}).limit == 64


@needs_bubblewrap
def test_the_grader_holds_no_more_memory_for_an_oversized_request_than_for_the_check():
    """The grading process's allocations (tracemalloc: Python's and NumPy's, whatever the machine's load) while a
    function asks for a (120 million, 4) table: the check's own, not the 3.8 GB the table would take."""
    import tracemalloc

    tracemalloc.start()
    try:
        verdict = turned("    table(120_000_000, 8)\n    return x\n")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert verdict.points == 0, verdict.text()
    assert "table(...) was asked for with the number 120,000,000" in verdict.text()
    assert peak < 64 * 2**20, f"the grading process allocated {peak / 2**20:.0f} MiB at its peak"
