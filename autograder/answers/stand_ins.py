"""Stand-ins: a graded function that the student's function may call while it is graded, computed by the grader.

The runner binds such a name (softmax, while attention is graded) to a proxy that asks the grader over the
pipe; the grader computes it with the assignment's ``stand_in`` (autograder.course.assignments), here, and only for
a name that the function in progress may call (the assignment's ISOLATE). A request is bounded before any of
its bytes are read (``oversized``: at most answer_budget.STAND_IN_ELEMENTS numbers), and the CPU time spent
computing it counts against the notebook's budget (``serve`` charges it), so a student cannot make the grader
compute without end on their behalf.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from autograder.answers import runner as answer_runner
from autograder.answers.budget import STAND_IN_ELEMENTS, Budget


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


def oversized(header: dict) -> str:
    """Why a stand-in request is refused before its arrays are read ("" when it is within the bound)."""
    if header.get("op") != "stand_in":
        return ""
    elements = request_elements(header)
    if elements <= STAND_IN_ELEMENTS:
        return ""
    return (
        f"{str(header.get('name'))[:60]}(...) was asked for on {elements:,} numbers; the grader computes it for "
        f"you on at most {STAND_IN_ELEMENTS:,}"
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
        args = [answer_runner.unpack(value, received) for value in request.get("args", [])]
        kwargs = {str(key): answer_runner.unpack(value, received) for key, value in request.get("kwargs", {}).items()}
        value = compute(function, name)(*args, **kwargs)
        arrays = []
        packed = answer_runner.pack(value, arrays)
    except Exception as error:  # noqa: BLE001 - the student's call of the stand-in was malformed
        return refusal(f"{name}(...) could not be computed for you: {type(error).__name__}: {str(error)[:200]}")
    finally:
        budget.charge(time.thread_time() - started)
    return {"op": "value", "value": packed}, arrays
