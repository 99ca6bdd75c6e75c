"""What the grader computes for a student's function while it is graded: stand-ins and callbacks.

A stand-in is a graded function that the student's function may call while it is graded (softmax, while attention
is graded). The runner binds such a name to a proxy that asks the grader over the pipe; the grader computes it with
the assignment's ``stand_in`` (autograder.course.assignments), here, and only for a name that the function in
progress may call (the assignment's ISOLATE).

A callback is a function the check passes as an argument (``Call("residual_block", (x, f))``, f defined in
checks.py): the runner gets {"callback": k} in its place and binds a proxy; each call of the proxy asks the grader,
which runs f here (``Callbacks``), only for the call in progress, at most CALLBACK_CALLS times per call. f's code
meets whatever the student's code passes it (arrays of any shape within the bound, numbers, strings, tuples): it
should treat its arguments as untrusted; what it raises is told to the student as the refusal's reason, in a line.

Both are bounded the same way: a request before any of its bytes are read (``oversized``: at most
answer_budget.STAND_IN_ELEMENTS numbers), a reply too (a function that returns more is refused), and the CPU time
spent computing them counts against the notebook's budget (``serve`` charges it), so a student cannot make the
grader compute without end on their behalf. Nothing of the grader goes back but the values it computed (arrays,
numbers, tuples): never a function or an object.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from autograder.answers import runner as answer_runner
from autograder.answers.budget import CALLBACK_CALLS, STAND_IN_ELEMENTS, Budget


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
) -> tuple[dict, list]:
    """The reply to one stand-in request made while ``function`` is graded: ({"op": "value", "value"}, arrays)
    or ({"op": "refused", "message"}, []). ``compute(function, name)`` gives the stand-in (the assignment's);
    the CPU seconds it takes are charged to ``budget``."""
    name = request.get("name")
    if name not in allowed or compute is None:
        return refusal(
            f"{str(name)[:60]} is not computed for you while {function} is graded "
            f"(what it may call instead: {', '.join(allowed) or 'none'})"
        )
    started = time.thread_time()
    try:
        return computed(name, lambda *args, **kwargs: compute(function, name)(*args, **kwargs), request, received)
    finally:
        budget.charge(time.thread_time() - started)


def computed(name: str, compute: Callable, request: dict, received: list) -> tuple[dict, list]:
    """The reply to one request: ``compute`` called here on the request's arguments, its value packed; a refusal
    naming the error when the arguments do not suit it or what it returns cannot be sent back."""
    try:
        args = [answer_runner.unpack(value, received) for value in request.get("args", [])]
        kwargs = {str(key): answer_runner.unpack(value, received) for key, value in request.get("kwargs", {}).items()}
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

    def __init__(self, function: str, functions: list, budget: Budget, limit: int = CALLBACK_CALLS):
        self.function, self.functions, self.budget, self.limit = function, list(functions), budget, limit
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
            return computed(name, self.functions[index], request, received)
        finally:
            self.budget.charge(time.thread_time() - started)
