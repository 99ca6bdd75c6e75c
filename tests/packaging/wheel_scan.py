"""Look through an installed lib for anything that computes a graded function (run by test_student_wheel.py).

    PYTHONPATH=SITE python wheel_scan.py CASES OUT

CASES: a pickle of [(graded function, args, kwargs, the reference's result)], the hidden checks' own inputs.
Every callable of every lib module found on the path (functions, cached functions, static and class methods,
public or private) is called with each graded function's inputs where its signature takes them; one that gives
the reference's results on every input it runs on (half of them at least) is an answer key, whatever its name.
An input it cannot be called with (its signature does not fit, or it raises) is skipped.
OUT receives JSON: lib's file, the modules and the names each holds, the callables looked at, how many were
called per graded function, and the (callable, graded function) pairs that are equal.

NumPy only (it runs against the installed wheel, not the repository); each call is cut after a few seconds.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import json
import pickle
import pkgutil
import signal
import sys
import warnings

import numpy as np

import lib

SECONDS = 5  # a call running longer than this is not an answer key worth waiting for


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


def agrees(function, cases) -> tuple[int, bool]:
    """(how many of the cases ``function`` could be called with, whether it gave the reference's result on each)."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return 0, False
    ran = 0
    for _, args, kwargs, expected in cases:
        try:
            signature.bind(*args, **kwargs)
        except TypeError:
            continue
        signal.alarm(SECONDS)
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                actual = function(*copy.deepcopy(args), **copy.deepcopy(kwargs))
        except BaseException:  # noqa: BLE001 - anything it raises (SystemExit included): not called with these
            continue
        finally:
            signal.alarm(0)
        ran += 1
        if not equal(actual, expected):
            return ran, False
    return ran, True


def main(cases_file: str, out: str) -> None:
    signal.signal(signal.SIGALRM, _stop)
    with open(cases_file, "rb") as opened:
        cases = pickle.load(opened)
    by_function: dict[str, list] = {}
    for case in cases:
        by_function.setdefault(case[0], []).append(case)
    found = {module.__name__: callables(module) for module in modules()}
    seen, called, equals = set(), {name: 0 for name in by_function}, []
    for module, members in found.items():
        for name, function in members:
            if id(function) in seen:
                continue
            seen.add(id(function))
            for graded, its_cases in by_function.items():
                ran, same = agrees(function, its_cases)
                called[graded] += ran > 0
                if same and ran * 2 >= len(its_cases):  # equal wherever it runs, on half the inputs at least
                    equals.append([f"{module}.{name}", graded])
    report = {
        "lib": lib.__file__,
        "names": {module.__name__: sorted(vars(module)) for module in modules()},
        "callables": sorted(f"{module}.{name}" for module, members in found.items() for name, _ in members),
        "called": called,
        "equal": equals,
    }
    with open(out, "w") as opened:
        json.dump(report, opened)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
