"""What a check is, and how its properties are judged: the framework of every assignment's hidden checks.

An assignment's checks live beside its source notebook, in source/<assignment>/checks.py
(autograder.assignments loads them): one Check per graded test cell (grade_id = check id), run in the
grader's process. A check has two halves, and neither runs student code:

- ``calls(rng)`` draws the inputs at grading time (random sizes, head counts, masks, patterns)
  and lists the calls of the student's function to make on them (the runner makes them, in its
  own process);
- ``properties``: (name, judge) pairs. A judge gets the call results (float64 arrays, as the
  runner converted them with np.asarray) and computes the expected values with lib, here. It
  returns None when the property holds, or a message naming the likely mistake; it raises
  Broken when a result it needs is missing or malformed, Unavailable when the store's model is
  missing.

Points are shared equally between a check's available properties (contracts.md, "Graded test
cells"). Comparisons are np.allclose on float64 arrays, never an object's __eq__, within a tolerance
that follows the precision of what the student returned (``Outputs.tolerance``): 1e-6 for float64;
for float32, float32's rounding of the call's inputs and of the result as well. A check whose outputs
carry no computation (zeros, a constant, the input handed back, the same result whatever the input:
``lazy``) earns nothing, and its feedback says so.
When values are wrong, the judge compares them with known wrong variants (softmax over another
axis, no scaling, the mask after softmax, ...) to say which mistake it most likely is.

Two tiers. The simple one, ``compare(check_id, reference, points=, inputs=, mistakes=, properties=)``, makes the
common check in a few lines: the student's function against a reference on inputs drawn like this, these
properties, these named mistakes (``checks_by_id`` makes CHECKS of them). The full one, ``Check`` with its own
``calls`` and judges, is for checks such as the store's model's (driven calls, statistics over recorded patterns).
docs/authoring.md shows both; docs/checks-api.md is generated from the docstrings here.

What runs at grading time, in the runner (autograder.answers.runner, a bare Python in a sandbox): only the
notebook's answer cells (nbgrader's "Autograded answer" cells, solution: true), in order, after ``import numpy as
np`` (with sys and Path): no setup cell, no test cell, no other locked cell runs, so a helper or an import written
in one of those is absent when the student's function is graded (the notebook passes in Jupyter and fails in
grading): put what the answers need in an answer cell, or have the function import it. A module a cell writes with
``%%writefile helper.py`` is written in the runner's own folder, importable there. ``lib``, checks.py and the
reference cannot be imported there. Each check's calls are made in that process, all checks' calls shuffled
together (``call_order``); everything else, drawing the inputs and judging the results, runs in the grader's.

What a graded function may receive: NumPy arrays of numbers (bool, int, float; a fresh copy for each call), ints,
floats, bools, strings, None, tuples and lists of these (a list arrives as a list), and functions the check passes
(a callback: each call of it from the student's code runs in the grader's process, for the call in progress only;
autograder.answers.stand_ins).
What it may return: an array of numbers, or anything ``np.asarray`` makes one of (a float, a list of numbers); a
tuple of ``items`` of these when a Call says items > 1. None, a string, an object or a function fails the call, and
the verdict says what came back. Every result reaches the judges as a float64 array; the dtype the student
returned is kept (``Outputs.dtype``) and decides the tolerance.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from autograder.coverage import Cover
from autograder.verdicts import Named, named_after

ATOL = 1e-6
SINGLE = 64 * float(np.finfo(np.float32).eps)  # float32 rounding, times what a few dozen operations accumulate


@dataclass(frozen=True)
class Tolerance:
    """np.allclose's atol and rtol for one comparison."""

    atol: float = ATOL
    rtol: float = 0.0


EXACT = Tolerance()  # float64 answers: 1e-6, as the recorded statistics are rounded to 6 decimals


# --- the framework ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One call of the student's function: function(*args, **kwargs); args are arrays, ints, floats, None, or
    functions defined in checks.py (run in the grader's process each time the student's function calls them:
    autograder.answers.stand_ins, callbacks).

    items: how many values it should return (2 for (weights, output)); slow: its CPU time limit in units of
    the call limit. drive: instead of one plain call, a function run in the grader's process that calls the
    student's function as often as it needs (the store's model driven by the student's attention):
    drive(student, function, *args, seconds=..., **kwargs) -> Result, where student(function, args, kwargs,
    stand_ins, items, seconds) -> (Result, CPU seconds used), and student.many(function, [(args, kwargs)], stand_ins,
    items, seconds) -> [(Result, CPU seconds used)] makes many calls that do not depend on each other at once
    (``seconds`` for them all; after the first that fails, the others are "not run"); about: how a driven call reads
    in the feedback.
    """

    function: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    items: int = 1
    slow: float = 1.0
    drive: Callable | None = None
    about: str = ""
    role: str = ""  # what this call is for, so that a judge names the calls it reads ("near 1000", "masked")
    files: tuple = ()  # .npy files of inputs its driver sends as Mapped (shown read-only to the runner)
    drawn: dict = field(default_factory=dict)  # the sizes it was drawn with, {"cover": key, name: size, "kind": ...}


@dataclass(frozen=True)
class Mapped:
    """An argument the runner reads from a file of inputs instead of the pipe: elements offset..offset+count of
    the flat .npy ``file`` (one of its Call's ``files``), as float64 of ``shape``."""

    file: str
    offset: int
    count: int
    shape: tuple


@dataclass(frozen=True)
class Result:
    """What one call gave back: an error message, or the returned values as float64 arrays."""

    error: str | None
    values: tuple = ()
    returned: tuple = ()  # per value: {"type", "dtype", "shape"} as the student returned it
    changed: tuple = ()  # the array arguments the call changed in place: positions (int, from 0) and keyword names


class Broken(Exception):
    """A result a property needs is missing or malformed; the message says what and why."""


class Unavailable(Exception):
    """The property cannot be judged here (the store's model is missing)."""


class Outputs:
    """A check's calls and their results, by position in the check's call list."""

    def __init__(self, calls: list[Call], results: list[Result]):
        self.calls, self.results = calls, results

    def arg(self, number: int, position: int = 0):
        """Argument ``position`` of call ``number``, as the check drew it (the grader's own, never the student's)."""
        return self.calls[number].args[position]

    def numbers(self, *roles: str) -> list[int]:
        """The numbers of the calls with these roles (none given: every plain call, the driven ones left out)."""
        if not roles:
            return [n for n, call in enumerate(self.calls) if call.drive is None]
        return [n for n, call in enumerate(self.calls) if call.role in roles]

    def number(self, role: str) -> int:
        """The number of the one call with this role; Unavailable when the check made no such call (the store's
        model missing here)."""
        found = self.numbers(role)
        if len(found) != 1:
            raise Unavailable(f"not available: no {role!r} call was made here")
        return found[0]

    def value(self, number: int, item: int = 0) -> np.ndarray:
        """Item ``item`` returned by call ``number``; raises Broken if the call failed or returned too few."""
        call, result = self.calls[number], self.results[number]
        if result.error is not None:
            raise Broken(f"{describe_call(call)} failed: {result.error}")
        if len(result.values) != call.items:
            expected = "one array" if call.items == 1 else f"a tuple of {call.items} items"
            raise Broken(f"{describe_call(call)} returned {len(result.values)} item(s); expected {expected}")
        return result.values[item]

    def dtype(self, number: int, item: int = 0) -> str:
        """The dtype of item ``item`` of call ``number`` as the student returned it ("bool", "int64", "float32"),
        before it became float64; raises Broken as ``value`` does."""
        self.value(number, item)
        return self.results[number].returned[item]["dtype"]

    def tolerance(self, number: int) -> Tolerance:
        """How close call ``number``'s results must be: float64's 1e-6, or float32's rounding of the inputs and result.

        A result in float32 (or less) is compared within what float32 arithmetic gets wrong: relative
        SINGLE of the expected values, plus SINGLE times the largest finite number of the call's
        float inputs (a softmax of scores near 1000 is off by 1000 x float32's rounding). Anything less
        precise than float32 (float16) is not accepted: Broken, naming the dtype found and what is accepted,
        whatever the draw (float16's rounding passes a loose comparison on some inputs and not on others).
        """
        returned = self.results[number].returned
        coarse = [
            r["dtype"] for r in returned if np.dtype(r["dtype"]).kind == "f" and np.dtype(r["dtype"]).itemsize < 4
        ]
        if coarse:
            raise Broken(coarse_message(self.calls[number], coarse[0]))
        single = any(np.dtype(r["dtype"]).kind == "f" and np.dtype(r["dtype"]).itemsize < 8 for r in returned)
        if not single:
            return EXACT
        inputs = [
            value
            for value in (*self.calls[number].args, *self.calls[number].kwargs.values())
            if isinstance(value, np.ndarray) and value.dtype.kind == "f"
        ]
        finite = [np.abs(value[np.isfinite(value)]).max(initial=0.0) for value in inputs]
        return Tolerance(ATOL + SINGLE * max([1.0, *finite]), SINGLE)


ACCEPTED = "the checks accept float64, or float32 within its rounding"


def coarse_message(call: Call, dtype: str) -> str:
    """Why a result in a float type less precise than float32 fails: the dtype found, and what is accepted."""
    return (
        f"{describe_call(call)} returned {dtype} numbers, which keep about "
        f"{np.finfo(np.dtype(dtype)).precision} significant digits: {ACCEPTED}; compute in float64 "
        "(np.asarray(x, dtype=float))"
    )


def describe_argument(value) -> str:
    """An argument as feedback shows it: a short vector written out, a larger array by its shape, and its dtype
    named unless it is float64 ('int64 array of shape (3, 4)', 'float32 array of shape (5,)')."""
    if isinstance(value, np.ndarray):
        if value.ndim == 1 and value.size <= 12 and value.dtype.kind in "biuf":
            written = np.array2string(value, separator=", ")
            return written if value.dtype in (np.float64, np.int64) else f"{written} ({value.dtype})"
        kind = "" if value.dtype == np.float64 else f"{value.dtype} "
        return f"{kind}array of shape {value.shape}"
    if callable(value):  # a function the grader passes (a callback): its name, never its repr
        return getattr(value, "__name__", "a function")
    return repr(value)


def describe_call(call: Call) -> str:
    """'softmax(array of shape (3, 4))': how a call looked, for feedback."""
    if call.about:
        return call.about
    parts = [describe_argument(a) for a in call.args] + [f"{k}={describe_argument(v)}" for k, v in call.kwargs.items()]
    return f"{call.function}({', '.join(parts)})"


Judge = Callable[[Outputs], "str | None"]


@dataclass(frozen=True)
class Check:
    check_id: str
    function: str
    points: float
    calls: Callable[[np.random.Generator], list[Call]]
    properties: tuple[tuple[str, Judge], ...]
    covers: dict = field(default_factory=dict)  # {key: coverage.Cover}: the classes the calls drawn with key cover


def close(actual, expected, tolerance: Tolerance = EXACT) -> bool:
    """Same shape and equal within ``tolerance`` (float64, NaN never equal).

    rtol is relative to the expected array's largest finite number (rounding errors of a computation
    scale with its largest values, not with each element's own size).
    """
    actual, expected = np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    if actual.shape != expected.shape:
        return False
    scale = np.abs(expected[np.isfinite(expected)]).max(initial=0.0)
    return bool(np.allclose(actual, expected, rtol=0.0, atol=tolerance.atol + tolerance.rtol * scale))


def diagnose(actual, variants, otherwise: str, tolerance: Tolerance = EXACT) -> str:
    """The message of the first known wrong variant that ``actual`` matches, else ``otherwise``. A variant's
    message comes back Named (verdicts.Named: the mistake's stable id travels with it, named after its words unless
    the variant's message is Named already)."""
    for message, expected in variants:
        try:
            with np.errstate(all="ignore"):  # a wrong variant may well overflow or divide by zero
                if close(actual, expected(), tolerance):
                    return message if isinstance(message, Named) else Named(message, named_after(message))
        except (ValueError, IndexError, ZeroDivisionError):
            continue  # that variant does not apply to these inputs
    return otherwise


def mistake(out: "Outputs", number: int, actual, expected, variants, otherwise: str) -> str | None:
    """None when call ``number``'s ``actual`` equals ``expected`` within its tolerance; else the message of the
    known wrong variant it matches (diagnose), or ``otherwise``. The shape every values property shares."""
    tolerance = out.tolerance(number)
    if close(actual, expected, tolerance):
        return None
    return diagnose(actual, variants, otherwise, tolerance)


def largest_difference(actual, expected) -> str:
    actual, expected = np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    if actual.shape != expected.shape:
        return f"shape {actual.shape}, expected {expected.shape}"
    gaps = np.abs(actual - expected)
    if np.isnan(gaps).any():
        return f"{int(np.isnan(gaps).sum())} NaN value(s)"
    return f"largest difference {gaps.max(initial=0.0):.3g}"


def require_shape(actual: np.ndarray, shape: tuple, what: str):
    if actual.shape != tuple(shape):
        raise Broken(f"{what} has shape {actual.shape}, expected {tuple(shape)}")


def scalar(value: np.ndarray, what: str) -> np.ndarray:
    """A result that should be one number, as a 0-d array; Broken if it is more than one number."""
    if value.size != 1:
        raise Broken(f"{what} returned shape {value.shape}; expected one number (a float)")
    return value.reshape(())


def flat_kind(value: np.ndarray, inputs: list) -> str | None:
    """How one returned array carries no computation ("zeros", "constant", "input"; "one": a single number,
    which cannot tell), or None when it may carry one."""
    if value.size < 2:
        return "one"  # one number: it tells nothing alone (comparing calls does: lazy's "same")
    if not np.isnan(value).any() and (value == value.flat[0]).all():
        return "zeros" if value.flat[0] == 0 else "constant"
    if any(given.shape == value.shape and np.array_equal(given, value) for given in inputs):
        return "input"
    return None


LAZY = {
    "zeros": "returns zeros whatever the input",
    "constant": "returns an array filled with one number whatever the input",
    "input": "returns its input unchanged",
    "same": "returns the same result for different inputs",
}


def lazy(out: Outputs) -> str | None:
    """Why the check's outputs carry no computation (None when they may): every plain call returned zeros,
    one repeated number, or its input; or every call returned the very same result. Then no property earns.

    Driven calls are left out (their results are the grader's computation around the student's function).
    """
    plain = [
        (call, result)
        for call, result in zip(out.calls, out.results)
        if call.drive is None and result.error is None and len(result.values) == call.items
    ]
    if not plain:
        return None
    kinds = set()
    for call, result in plain:
        inputs = [a for a in (*call.args, *call.kwargs.values()) if isinstance(a, np.ndarray)]
        found = [flat_kind(value, inputs) for value in result.values]
        if any(kind is None for kind in found):
            kinds = None
            break
        kinds.update(found)
    kinds = kinds and kinds - {"one"}
    if kinds:
        kind = "zeros" if kinds == {"zeros"} else "input" if "input" in kinds else "constant"
        return f"{out.calls[0].function} {LAZY[kind]}: write the computation"
    first = plain[0][1].values
    if len(plain) >= 2 and all(
        len(result.values) == len(first)
        and all(
            value.shape == other.shape and np.array_equal(value, other) for value, other in zip(result.values, first)
        )
        for _, result in plain[1:]
    ):
        return f"{out.calls[0].function} {LAZY['same']}: write the computation"
    return None


# --- the order of the calls, and what they did to their inputs ----------------------------------------

ORDER = 0x0D3E  # the stream of the seed that draws the calls' order (each check draws its inputs from its own)


def call_order(plans: dict[str, list[Call]], seed: int) -> list[tuple[str, int]]:
    """Every planned call as (check id, number in its check), in an order drawn from ``seed``.

    The calls of all checks are shuffled together and made in one runner process, so a function meets its
    calls in no fixed order, between other functions' calls: one that counts its calls, or answers a shape it
    has seen with what it returned before, meets inputs it cannot have remembered. The same seed gives the
    same order (a TA reproduces a run with it).
    """
    pairs = [(check_id, number) for check_id, calls in plans.items() for number in range(len(calls))]
    order = np.random.default_rng([seed, ORDER]).permutation(len(pairs))
    return [pairs[int(k)] for k in order]


def describe_changed(label) -> str:
    return f"argument {label + 1}" if isinstance(label, int) else f"argument {label}="


def changed_inputs(calls: list[Call], results: list[Result]) -> str | None:
    """A note for the feedback when the student's function changed an input array in place (None when it never
    did): the runner compares each array argument's bytes before and after the call. It costs no points here,
    but a caller's array changed behind its back breaks the code that uses it next."""
    changed = [(call, result) for call, result in zip(calls, results) if result.changed]
    if not changed:
        return None
    labels = sorted({label for _, result in changed for label in result.changed}, key=str)
    first = changed[0][0]
    return (
        f"Note: {first.function} changed its input array ({', '.join(describe_changed(x) for x in labels)}) in "
        f"place in {len(changed)} of {len(calls)} calls, e.g. {describe_call(first)}: code that calls it sees its "
        "own arrays altered; compute into a new array (scores = scores - m, not scores -= m)"
    )


# --- helpers for driven calls --------------------------------------------------------------------------


class StudentFailed(Exception):
    """A call of the student's function inside a driven call failed; the message says how."""


def lowest_precision(returned) -> str:
    """The least precise float dtype among the student's returns ("float64" when all are)."""
    floats = [np.dtype(r["dtype"]) for r in returned if np.dtype(r["dtype"]).kind == "f"]
    return str(min(floats, key=lambda dtype: dtype.itemsize)) if floats else "float64"


class Budget:
    """CPU seconds shared by the student's calls inside one driven call."""

    def __init__(self, seconds: float):
        self.left = seconds

    def charge(self, result: Result, used: float) -> Result:
        """The result of one call, its CPU seconds taken off; StudentFailed when the call failed."""
        self.left -= used
        if result.error is not None:
            raise StudentFailed(result.error)
        return result


def driven_result(value: np.ndarray, returned) -> Result:
    """A driven call's Result: one float64 array, in the least precise dtype the student returned along the way."""
    value = np.asarray(value, dtype=np.float64)
    return Result(
        None, (value,), ({"type": "numpy.ndarray", "dtype": lowest_precision(returned), "shape": list(value.shape)},)
    )


# --- the simple tier: compare with a reference ----------------------------------------------------------------


class Args:
    """The arguments of one call, as an inputs function returns them: ``Args(x, gain, bias, eps=0.1)``.

    A plain tuple ``(x, gain, bias)`` is the same as ``Args(x, gain, bias)``. What an argument may be is what a
    graded function may receive (the module's docstring): arrays of numbers, ints, floats, bools, strings, None,
    tuples of these, and functions (run in the grader's process when the student's code calls them).
    """

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


def arguments(drawn, case: str) -> tuple[tuple, dict]:
    """(args, kwargs) of what an inputs function returned; TypeError saying what it must return otherwise."""
    if isinstance(drawn, Args):
        return tuple(drawn.args), dict(drawn.kwargs)
    if isinstance(drawn, tuple):
        return drawn, {}
    raise TypeError(
        f"the inputs function of {case!r} returned a {type(drawn).__name__}: return the call's arguments as a tuple "
        "(x, gain) or as Args(x, gain, eps=0.1)"
    )


@dataclass(frozen=True)
class Shaped:
    """Inputs drawn on declared sizes: on every seed, the designed sizes of ``cover`` (each size odd, even and 1, each
    compared pair equal, smaller and larger, each value kind, no constant of the model: autograder.coverage), then
    ``extra`` random ones. ``build(rng, **sizes)`` returns the call's arguments (a tuple or Args); with kinds, sizes
    holds ``kind`` too (coverage.values draws numbers of that kind).

        Shaped(lambda rng, positions, size: (rng.normal(size=(positions, size)),),
               Cover({"positions": Size(1, 12), "size": Size(2, 16, "even")}, pairs=(("positions", "size"),)))
    """

    build: Callable
    cover: Cover
    extra: int = 2


def sketch(function: str, args: tuple, kwargs: dict) -> str:
    """How a call of the simple tier reads in the feedback: each array by its shape, each number rounded to 3
    significant digits, "layer_norm(array of shape (5, 8), array of shape (8,), eps=0.183)"; with the seed, what a
    student needs to make such inputs again (the values themselves are drawn at grading time)."""

    def one(value) -> str:
        if isinstance(value, np.ndarray):
            return f"array of shape {value.shape}"
        if isinstance(value, float):
            return f"{value:.3g}"
        return describe_argument(value)

    return f"{function}({', '.join([*map(one, args), *(f'{k}={one(v)}' for k, v in kwargs.items())])})"


def fresh(value):
    """A copy of an argument, so that a reference or a mistake that changes its input changes no other call's."""
    return value.copy() if isinstance(value, np.ndarray) else value


def items_of(value, items: int) -> tuple:
    """A function's result as a tuple of ``items`` float64 arrays (one result: a tuple of one)."""
    values = tuple(value) if items > 1 else (value,)
    if len(values) != items:
        raise ValueError(f"the reference returned {len(values)} items; the check says {items}")
    return tuple(np.asarray(v, dtype=np.float64) for v in values)


def computed(function: Callable, call: Call, items: int) -> tuple:
    """What ``function`` (a reference or a named mistake, in the grader's process) returns on ``call``'s inputs."""
    with np.errstate(all="ignore"):  # a mistake may well divide by zero; the comparison says what came out
        result = function(*(fresh(a) for a in call.args), **{k: fresh(v) for k, v in call.kwargs.items()})
    return items_of(result, items)


def tried(wrong: Callable, call: Call, items: int) -> tuple:
    """A named mistake's result on ``call``'s inputs; ValueError (which diagnose passes over) when it raises: a
    mistake that does not apply to these inputs names nothing, and never costs the student (validate reports a
    mistake that raises on the solution's inputs, ``mistake-raises``)."""
    try:
        return computed(wrong, call, items)
    except Exception as error:  # the instructor's mistake function: validate reports it instead
        raise ValueError(f"the mistake does not apply: {error}") from error


@dataclass(frozen=True)
class Compared(Check):
    """A Check made by ``compare``: its reference, named mistakes and inputs are kept, so that
    ``python -m autograder.validate`` can run each mistake and say when no draw tells it from the reference."""

    reference: Callable | None = None
    mistakes: tuple = ()  # ((message, wrong function), ...)
    cases: tuple = ()  # the names of the properties that compare with the reference
    items: int = 1


def compare(
    check_id: str,
    reference: Callable,
    *,
    points: float,
    inputs: dict,
    mistakes: dict | None = None,
    properties: dict | None = None,
    judges: tuple = (),
    function: str | None = None,
    draws: int = 2,
    items: int = 1,
) -> Compared:
    """A check that compares the student's function with ``reference`` on inputs drawn at grading time.

        compare("check_rms_norm", rms_norm, points=2,
                inputs={"values": typical, "eps inside the square root": flat_rows},
                mistakes={"ignores eps: add it to the mean square, inside the root": lambda x, gain, eps: ...})

    check_id: the grade id of the notebook's test cell for this function (its ``points`` must be the cell's);
    reference: a correct function, run in the grader's process; the graded function is the one of the same name
    (``function=`` when the names differ); inputs: {property: draw(rng) -> a tuple of arguments or Args(...)}:
    each entry is one property, "the student's function returns what the reference returns on inputs drawn like
    this", drawn ``draws`` times per grading (each time new values, and new sizes if draw picks them), or a Shaped
    (the sizes declared: on every seed the designed sizes that cover each class, then a few random; the way to
    write a check whose function's correctness depends on sizes, which is most of them); mistakes:
    {message: a function computing that mistake}, tried in order when a property fails, so the verdict names the
    mistake ("the variance is taken over axis 0 (as batch norm does)") instead of a difference; properties:
    {name: holds(result, *args, **kwargs) -> None, or a message saying what is wrong}, judged on every call;
    judges: more (name, judge) pairs of the full API (a judge reads the checks' Outputs); items: how many values
    the function returns (2 for a tuple of two).

    Points are shared equally between the properties (inputs first, then properties, then judges). A result is
    compared as float64 within Outputs.tolerance (1e-6; float32's rounding for a float32 result), its shape
    included; a result with no computation in it (zeros, a constant, the input, the same for every input) earns
    nothing (lazy).
    """
    if not inputs:
        raise ValueError(f"{check_id}: give inputs, {{property name: a function drawing the arguments from rng}}")
    name = function or reference.__name__
    mistakes = tuple((mistakes or {}).items())
    holds = tuple((properties or {}).items())
    cases = tuple(inputs)

    def calls(rng: np.random.Generator) -> list[Call]:
        made = []
        for case, draw in inputs.items():
            if isinstance(draw, Shaped):
                for sizes in draw.cover.draw(rng, extra=draw.extra):
                    args, kwargs = arguments(draw.build(rng, **sizes), case)
                    about = sketch(name, args, kwargs)
                    made.append(
                        Call(name, args, kwargs, items=items, about=about, role=case, drawn={"cover": case, **sizes})
                    )
                continue
            for _ in range(draws):
                args, kwargs = arguments(draw(rng), case)
                made.append(Call(name, args, kwargs, items=items, about=sketch(name, args, kwargs), role=case))
        return made

    def agrees(case: str) -> Judge:
        def judge(out: Outputs) -> str | None:
            for number in out.numbers(case):
                call = out.calls[number]
                actual = tuple(out.value(number, item) for item in range(items))
                expected = computed(reference, call, items)
                for item, (value, wanted) in enumerate(zip(actual, expected)):
                    what = describe_call(call) + (f"'s item {item}" if items > 1 else "")
                    variants = [
                        (message, lambda wrong=wrong, item=item: tried(wrong, call, items)[item])
                        for message, wrong in mistakes
                    ]
                    found = mistake(out, number, value, wanted, variants, largest_difference(value, wanted))
                    if found is not None:
                        said = f"{what}: {found}"
                        return Named(said, found.mistake) if isinstance(found, Named) else said
            return None

        return judge

    def judged(holds_for: Callable) -> Judge:
        def judge(out: Outputs) -> str | None:
            for number in out.numbers():
                call = out.calls[number]
                result = tuple(out.value(number, item) for item in range(items))
                message = holds_for(result if items > 1 else result[0], *call.args, **call.kwargs)
                if message:
                    return f"{describe_call(call)}: {message}"
            return None

        return judge

    judged_properties = (
        tuple((case, agrees(case)) for case in cases)
        + tuple((label, judged(holds_for)) for label, holds_for in holds)
        + tuple(judges)
    )
    covers = {case: draw.cover for case, draw in inputs.items() if isinstance(draw, Shaped)}
    return Compared(check_id, name, points, calls, judged_properties, covers, reference, mistakes, cases, items)


def checks_by_id(*checks: Check) -> dict[str, Check]:
    """CHECKS for checks.py: {check id: check}; ValueError when two checks share an id."""
    found: dict[str, Check] = {}
    for check in checks:
        if check.check_id in found:
            raise ValueError(f"two checks have the id {check.check_id!r}: each graded test cell has one check")
        found[check.check_id] = check
    return found
