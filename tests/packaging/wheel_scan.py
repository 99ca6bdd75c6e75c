"""Look through an installed lib for anything that computes a graded function (run by test_student_wheel.py).

    PYTHONPATH=SITE python wheel_scan.py CASES OUT

CASES: a pickle of [(graded function, args, kwargs, the reference's result)], the hidden checks' own inputs.
Every callable of every lib module found on the path (functions, cached functions, static and class methods,
public or private) is called with each graded function's inputs where its signature takes them, and where it
needs more arguments than those, with the missing ones filled in from numbers the model's own steps take
(FILLERS: a head's size, a rotary base). An answer key is a callable that gives the reference's result, or a
part of it, on every input it runs on (half of them at least), whatever its name and wherever the answer sits in
what it returns: the result itself or any item of a returned tuple or list (PARTS deep), as it is or seen as a
mask (``== 0``, ``!= 0``, finite), against the reference's result or any item of it, as it is or through
cos or sin (a table of cosines is a table of angles). An input it cannot be called with (its signature does not
fit, or it raises) is skipped.
OUT receives JSON: lib's file, the modules and the names each holds, the callables looked at, how many were
called per graded function, the (callable, graded function) pairs found, and for each how ("equal": the same
pairs, "how": a sentence each).

NumPy only (it runs against the installed wheel, not the repository); each call is cut after a few seconds.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import itertools
import json
import pickle
import pkgutil
import signal
import sys
import warnings

import numpy as np

import lib

SECONDS = 5  # a call running longer than this is not an answer key worth waiting for
FILLERS = (32, 10000.0)  # missing arguments: the model's head size and rotary base (lib's own steps take these)
MISSING = 2  # at most this many arguments filled in
PARTS = 2  # how deep into returned tuples and lists the search looks


class TooSlow(Exception):
    pass


def _stop(signum, frame):
    raise TooSlow


def modules() -> list:
    return [lib] + [importlib.import_module(f"lib.{info.name}") for info in pkgutil.iter_modules(lib.__path__)]


def callables(module) -> list[tuple[str, object]]:
    """(name, callable) of what ``module`` holds that lib defines: functions, cached functions, static and class
    methods of lib's classes."""
    found = []
    for name, value in vars(module).items():
        if inspect.isclass(value):
            if value.__module__.startswith("lib"):
                for member, raw in vars(value).items():
                    if isinstance(raw, (staticmethod, classmethod)):
                        found.append((f"{name}.{member}", getattr(value, member)))
        elif callable(value) and not inspect.ismodule(value):
            if getattr(inspect.unwrap(value), "__module__", "").startswith("lib"):
                found.append((name, value))
    return found


def equal(actual, expected) -> bool:
    """The same shape and numbers (within 1e-6), item by item for a pair such as (weights, output)."""
    if isinstance(expected, tuple):
        if not isinstance(actual, (tuple, list)) or len(actual) != len(expected):
            return False
        return all(equal(a, e) for a, e in zip(actual, expected))
    try:
        actual, expected = np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    return actual.shape == expected.shape and bool(np.allclose(actual, expected, rtol=1e-6, atol=1e-6))


def parts(value, depth: int = PARTS, path: str = "") -> list[tuple[str, object]]:
    """(where, item) for ``value`` and every item of the tuples and lists inside it, ``depth`` levels down."""
    found = [(path, value)]
    if depth and isinstance(value, (tuple, list)):
        for number, item in enumerate(value):
            found += parts(item, depth - 1, f"{path}[{number}]")
    return found


def _numbers(value):
    """``value`` as an array of numbers (bool or float), or None when it is not one."""
    if isinstance(value, (tuple, list, dict, str, bytes)) or value is None or callable(value):
        return None
    try:
        array = np.asarray(value)
    except Exception:  # noqa: BLE001 - not array-like
        return None
    return array if array.dtype.kind in "biuf" else None


def seen_as(value) -> list[tuple[str, np.ndarray]]:
    """A returned item as itself and as the masks it makes."""
    array = _numbers(value)
    if array is None:
        return []
    views = [("", array)]
    if array.dtype.kind != "b" and array.ndim >= 2:  # a table of scores to add hides a mask
        views += [(" == 0", array == 0), (" != 0", array != 0), (" finite", np.isfinite(array))]
    return views


def answers(expected) -> list[tuple[str, np.ndarray]]:
    """The reference's result and its items, as themselves and, for angles, through cos and sin."""
    found = []
    for where, item in parts(expected):
        array = _numbers(item)
        if array is None:
            continue
        named = f"the result{where}"
        found.append((named, array))
        if array.dtype.kind == "f":
            found += [(f"cos of {named}", np.cos(array)), (f"sin of {named}", np.sin(array))]
    return found


def same(actual: np.ndarray, expected: np.ndarray) -> bool:
    """Equal arrays: a mask only to a mask, numbers to numbers within 1e-6."""
    if actual.shape != expected.shape or (actual.dtype.kind == "b") != (expected.dtype.kind == "b"):
        return False
    if expected.dtype.kind == "b":
        return bool(np.array_equal(actual, expected))
    return bool(np.allclose(actual.astype(np.float64), expected.astype(np.float64), rtol=1e-6, atol=1e-6))


def matches(actual, expected) -> set[tuple[str, str]]:
    """(where in what a callable returned, which part of the reference's result) pairs that agree on this call."""
    found = set()
    for where, item in parts(actual):
        for view, shown in seen_as(item):
            for answer, wanted in answers(expected):
                if same(shown, wanted):
                    found.add((f"its result{where}{view}", answer))
    return found


def calls(signature, args, kwargs) -> list[tuple[tuple, dict]]:
    """The ways to call a callable of this signature with a case's inputs: as they are, or with up to MISSING
    required positional arguments filled in from FILLERS."""
    try:
        signature.bind(*args, **kwargs)
        return [(args, kwargs)]
    except TypeError:
        pass
    ways = []
    for extra in range(1, MISSING + 1):
        for filled in itertools.product(FILLERS, repeat=extra):
            try:
                signature.bind(*args, *filled, **kwargs)
            except TypeError:
                continue
            ways.append(((*args, *filled), kwargs))
        if ways:
            return ways
    return ways


def agrees(function, cases) -> tuple[int, list[str]]:
    """(how many of the cases ``function`` could be called with, the ways it gave the reference's result or a part
    of it on each of them: "its result[0] == cos of the result" and the like)."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return 0, []
    ran, held, filled, varied, values = 0, None, False, False, set()
    for _, args, kwargs, expected in cases:
        found_here, called = set(), False
        for given_args, given_kwargs in calls(signature, args, kwargs):
            signal.alarm(SECONDS)
            try:
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore")
                    actual = function(*copy.deepcopy(given_args), **copy.deepcopy(given_kwargs))
            except BaseException:  # noqa: BLE001 - anything it raises (SystemExit included): not called with these
                continue
            finally:
                signal.alarm(0)
            called = True
            found = matches(actual, expected) | ({("its result", "the result")} if equal(actual, expected) else set())
            filled = filled or (bool(found) and len(given_args) > len(args))
            found_here |= found
        if not called:
            continue
        ran += 1
        held = found_here if held is None else held & found_here
        if not held:
            return ran, []
        for _, wanted in answers(expected):  # an answer that is one number, the same on every input, proves nothing
            varied = varied or np.unique(wanted).size > 1
            values.update(np.unique(wanted).tolist()[:1])
    if held is None or not (varied or len(values) > 1):
        return ran, []
    ways = [f"{way} is {answer}" for way, answer in sorted(held)]
    return ran, ways + (["called with arguments filled in from FILLERS"] if filled else [])


def main(cases_file: str, out: str) -> None:
    signal.signal(signal.SIGALRM, _stop)
    with open(cases_file, "rb") as opened:
        cases = pickle.load(opened)
    by_function: dict[str, list] = {}
    for case in cases:
        by_function.setdefault(case[0], []).append(case)
    found = {module.__name__: callables(module) for module in modules()}
    seen, called, equals, how = set(), {name: 0 for name in by_function}, [], []
    for module, members in found.items():
        for name, function in members:
            if id(function) in seen:
                continue
            seen.add(id(function))
            for graded, its_cases in by_function.items():
                ran, ways = agrees(function, its_cases)
                called[graded] += ran > 0
                if ways and ran * 2 >= len(its_cases):  # an answer wherever it runs, on half the inputs at least
                    equals.append([f"{module}.{name}", graded])
                    how.append(f"{module}.{name}: {'; '.join(ways)}, of {graded}, on {ran} of its inputs")
    report = {
        "lib": lib.__file__,
        "names": {module.__name__: sorted(vars(module)) for module in modules()},
        "callables": sorted(f"{module}.{name}" for module, members in found.items() for name, _ in members),
        "called": called,
        "equal": equals,
        "how": how,
    }
    with open(out, "w") as opened:
        json.dump(report, opened)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
