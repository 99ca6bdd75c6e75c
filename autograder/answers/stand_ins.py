"""What the grader computes for a student's function while it is graded: stand-ins and callbacks.

A stand-in is a graded function that the student's function may call while it is graded (softmax, while attention
is graded). The runner binds such a name to a proxy that asks the grader over the pipe; the grader computes it with
the assignment's ``stand_in`` (autograder.assignments), here, and only for a name that the function in
progress may call (the assignment's ISOLATE).

A callback is a function the check passes as an argument (``Call("residual_block", (x, f))``, f defined in
checks.py): the runner gets {"callback": k} in its place and binds a proxy; each call of the proxy asks the grader,
which runs f here (``Callbacks``), only for the call in progress, at most CALLBACK_CALLS times per call. f's code
meets whatever the student's code passes it (arrays of any shape within the bound, numbers, strings, tuples): it
should treat its arguments as untrusted; what it raises is told to the student as the refusal's reason, in a line.

Both are bounded the same way, before any work: a request before any of its bytes are read (``oversized``: at most
answer_budget.STAND_IN_ELEMENTS numbers), then its arguments against the call in progress (``Scale``: no array
dimension and no number larger than SIZE_FACTOR times the largest size among the check's own arguments, so two
integers cannot ask for 120 million positions, nor a (8000, 8000) array for an attention the check drew at 20
positions); a reply too (a function that returns more is refused), and the CPU time spent computing them counts
against the notebook's budget (``serve`` charges it), so a student cannot make the grader compute without end, nor
hold more memory than the check's own inputs call for, on their behalf. Nothing of the grader goes back but the
values it computed (arrays, numbers, tuples): never a function or an object.
"""

from __future__ import annotations

import inspect
import math
import numbers
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from autograder.answers import runner as answer_runner
from autograder.answers.budget import CALLBACK_CALLS, SIZE_FACTOR, SMALLEST_SCALE, STAND_IN_ELEMENTS, Budget


def request_elements(header: dict) -> int:
    """How many numbers the arrays a message declares hold (ValueError when the declaration is malformed)."""
    declared = header.get("arrays", [])
    if not isinstance(declared, list):
        raise ValueError("a message whose arrays are not a list")
    total = 0
    for entry in declared:
        if not isinstance(entry, list) or len(entry) != 2 or not isinstance(entry[1], list):
            raise ValueError(f"an array declared as {str(entry)[:80]}")
        count = 1
        for n in entry[1]:
            if not isinstance(n, int) or isinstance(n, bool) or n < 0:
                raise ValueError(f"an array of shape {str(entry[1])[:80]}")
            count *= n
        total += count
    return total


def oversized(header: dict, callbacks: tuple = ()) -> str:
    """Why a stand-in or callback request is refused before its arrays are read ("" when it is within the bound);
    callbacks: the names of the functions passed to the call in progress."""
    if header.get("op") == "stand_in":
        name = str(header.get("name"))[:60]
    elif header.get("op") == "callback":
        name = callback_label(header.get("index"), callbacks)
    else:
        return ""
    elements = request_elements(header)
    if elements <= STAND_IN_ELEMENTS:
        return ""
    bound = f"{STAND_IN_ELEMENTS:,}"
    return f"{name}(...) was asked for on {elements:,} numbers; the grader computes it for you on at most {bound}"


def largest_size(value) -> int:
    """The largest size a check's arguments name: each array's dimensions and each number's magnitude (integers and
    floats, inside tuples, lists and dicts too); 0 for none. An argument read from a file (checks.Mapped) counts
    its shape."""
    if isinstance(value, np.ndarray):
        return max(value.shape, default=0)
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple) and not isinstance(value, np.generic):
        return max((int(n) for n in shape), default=0)
    if isinstance(value, dict):
        return max((largest_size(item) for item in value.values()), default=0)
    if isinstance(value, (tuple, list)):
        return max((largest_size(item) for item in value), default=0)
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value):
        return min(int(abs(value)), 2**62)
    return 0


@dataclass(frozen=True)
class Scale:
    """The sizes a stand-in or callback request may name during one call: the call's own largest size (``of``, from
    its arguments: the scale the check drew) times SIZE_FACTOR, at least SMALLEST_SCALE."""

    of: int

    @classmethod
    def of_call(cls, args, kwargs) -> "Scale":
        return cls(max(largest_size(tuple(args)), largest_size(dict(kwargs))))

    @property
    def limit(self) -> int:
        return max(SIZE_FACTOR * self.of, SMALLEST_SCALE)

    def beyond(self, name: str, function: str, args: list, kwargs: dict, defaults: tuple = ()) -> str:
        """Why a request (its arguments unpacked) is refused before it is computed ("" when none): an array with a
        dimension past the limit, or a number past it that is none of the function's own defaults (a rotation's
        base of 10,000 stays allowed)."""
        found = first_beyond((*args, *kwargs.values()), self.limit, defaults)
        if found is None:
            return ""
        what = f"an array of shape {found}" if isinstance(found, tuple) else f"the number {found:,}"
        return (
            f"{name}(...) was asked for with {what}: while {function} is checked on sizes up to {self.of:,}, the "
            f"grader computes {name} for you on sizes up to {self.limit:,} only (call it on the arrays and sizes your "
            "function was given)"
        )


def first_beyond(values, limit: int, defaults: tuple):
    """The first array shape (a tuple) or number in ``values`` past ``limit``, or None; an array of one integer is
    that integer (np.zeros(np.array([n])) takes it as a size). Float arrays are values (a masked score of -1e9)."""
    for value in values:
        if isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "iu":  # a size as an array
            value = value.reshape(()).item()
        if isinstance(value, np.ndarray):
            if any(n > limit for n in value.shape):
                return tuple(int(n) for n in value.shape)
        elif isinstance(value, (tuple, list)):
            found = first_beyond(value, limit, defaults)
            if found is not None:
                return found
        elif isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value):
            if abs(value) > limit and value not in defaults:
                return int(value) if float(value).is_integer() else float(value)
    return None


def defaults_of(function) -> tuple:
    """The numbers among ``function``'s default arguments (the sizes and constants it is written with)."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return ()
    return tuple(
        p.default for p in parameters if isinstance(p.default, numbers.Real) and not isinstance(p.default, bool)
    )


def refusal(message: str) -> tuple[dict, list]:
    return {"op": "refused", "message": message}, []


def serve(
    request: dict,
    received: list,
    *,
    function: str,
    allowed: tuple,
    compute: Callable | None,
    budget: Budget,
    scale: Scale | None = None,
) -> tuple[dict, list]:
    """The reply to one stand-in request made while ``function`` is graded: ({"op": "value", "value"}, arrays)
    or ({"op": "refused", "message"}, []). ``compute(function, name)`` gives the stand-in (the assignment's); a
    request past ``scale`` is refused before it is computed; the CPU seconds it takes are charged to ``budget``."""
    name = request.get("name")
    if name not in allowed or compute is None:
        return refusal(
            f"{str(name)[:60]} is not computed for you while {function} is graded "
            f"(what it may call instead: {', '.join(allowed) or 'none'})"
        )
    started = time.thread_time()
    try:
        target = compute(function, name)
        return computed(name, target, request, received, bounded=(scale, function))
    except Exception as error:  # noqa: BLE001 - the assignment's stand_in refused the name
        return refusal(f"{name}(...) could not be computed for you: {type(error).__name__}: {str(error)[:200]}")
    finally:
        budget.charge(time.thread_time() - started)


def computed(
    name: str, compute: Callable, request: dict, received: list, bounded: tuple = (None, "")
) -> tuple[dict, list]:
    """The reply to one request: ``compute`` called here on the request's arguments, its value packed; a refusal
    naming the error when the arguments do not suit it or what it returns cannot be sent back. bounded: (Scale or
    None, the graded function in progress): arguments past the scale are refused before ``compute`` runs."""
    scale, function = bounded
    try:
        args = [answer_runner.unpack(value, received) for value in request.get("args", [])]
        kwargs = {str(key): answer_runner.unpack(value, received) for key, value in request.get("kwargs", {}).items()}
        reason = scale.beyond(name, function, args, kwargs, defaults_of(compute)) if scale is not None else ""
        if reason:
            return refusal(reason)
        value = compute(*args, **kwargs)
        arrays = []
        packed = answer_runner.pack(value, arrays)
    except Exception as error:  # noqa: BLE001 - the student's call was malformed, or the function refused it
        return refusal(f"{name}(...) could not be computed for you: {type(error).__name__}: {str(error)[:200]}")
    returned = sum(array.size for array in arrays)
    if returned > STAND_IN_ELEMENTS:
        return refusal(
            f"{name}(...) returned {returned:,} numbers; the grader sends back at most {STAND_IN_ELEMENTS:,}: call it "
            "on smaller arrays"
        )
    return {"op": "value", "value": packed}, arrays


def callback_name(function) -> str:
    """How a function passed as an argument is named to the student: its name, or "callback" (a lambda's)."""
    name = getattr(function, "__name__", "")
    return name if isinstance(name, str) and name.isidentifier() and not name.startswith("_") else "callback"


def callback_label(index, names: tuple) -> str:
    return names[index] if type(index) is int and 0 <= index < len(names) else "callback"


class Callbacks:
    """The functions the grader passed as arguments to one call of the student's ``function``, served on request:
    only those of this call, at most ``limit`` times in all (``over`` then says so, and the call fails), their CPU
    seconds charged to ``budget``."""

    def __init__(
        self, function: str, functions: list, budget: Budget, limit: int = CALLBACK_CALLS, scale: Scale | None = None
    ):
        self.function, self.functions, self.budget, self.limit = function, list(functions), budget, limit
        self.scale = scale  # the sizes a request may name during this call (stand-ins' too), None for no bound
        self.names = tuple(callback_name(f) for f in self.functions)
        self.calls, self.over = 0, ""

    def serve(self, request: dict, received: list) -> tuple[dict, list]:
        """The reply to one callback request: ({"op": "value", "value"}, arrays) or ({"op": "refused", ...}, [])."""
        index = request.get("index")
        if type(index) is not int or not 0 <= index < len(self.functions):
            return refusal(
                f"no function was passed to this call of {self.function} as callback {str(index)[:20]}: a function "
                "passed to an earlier call cannot be called in a later one"
            )
        name = self.names[index]
        self.calls += 1
        if self.calls > self.limit:
            self.over = self.over or (
                f"{self.function} called the functions passed to it more than {self.limit:,} times in one call "
                f"({name} among them): the grader computes them at most {self.limit:,} times per call (call {name} "
                "on a whole array at once)"
            )
            return refusal(self.over)
        started = time.thread_time()
        try:
            return computed(name, self.functions[index], request, received, bounded=(self.scale, self.function))
        finally:
            self.budget.charge(time.thread_time() - started)
