"""The reference of each graded function tried on the checks' inputs (it raises, returns NaN, depends on
np.random, computes in float32), and its mutants graded: each must lose points (autograder.mutation).
"""

from __future__ import annotations

import random

import numpy as np

from autograder import assignments, mutation
from autograder.answers.grading import check_generator
from autograder.checks import (
    Call,
    Tolerance,
    close,
    computed,
    describe_call,
    largest_difference,
)
from autograder.validate.findings import Finding
from autograder.validate.notebook import checks_place, closest

REFERENCE_KINDS = ("reference-raises", "reference-nan", "reference-random", "reference-float32")


def reference_problem(function, call) -> tuple[str, str] | None:
    """(kind, what is wrong) of the reference ``function`` on ``call``'s inputs, or None: it raises, returns NaN,
    depends on np.random's state, or computes in float32 (all its numbers float32's, or other numbers for the same
    inputs given in float32: compared within 1e-3, inputs up to 100, where float32's rounding is far smaller)."""
    saved, saved_python = np.random.get_state(), random.getstate()

    def run(args, kwargs, state):
        np.random.seed(state)
        random.seed(state)
        return computed(function, Call(call.function, args, kwargs), call.items)

    try:
        try:
            first = run(call.args, call.kwargs, 1)
        except Exception as error:  # noqa: BLE001 - the instructor's reference: said with its place
            return "reference-raises", f"raises {type(error).__name__}: {error}"
        if any(np.isnan(value).any() for value in first):
            return "reference-nan", "returns NaN"
        try:
            second = run(call.args, call.kwargs, 2)
        except Exception as error:  # noqa: BLE001 - the instructor's reference: said with its place
            return "reference-random", f"raises {type(error).__name__} once np.random's state changes: {error}"
        if not all(close(a, b, Tolerance(0.0)) for a, b in zip(first, second)):
            return "reference-random", (
                "returns other numbers once np.random's state changes: it draws from the global random generator; a "
                "reference is the answer, the same on every call (draw inputs in the check, from its rng)"
            )
        fractions = np.concatenate([value[np.isfinite(value) & (value != np.round(value))] for value in first])
        if fractions.size >= 4 and (fractions.astype(np.float32).astype(np.float64) == fractions).all():
            return "reference-float32", (
                "returns only numbers that float32 can hold: it computes in float32; compute in float64, "
                "np.asarray(x, dtype=np.float64)"
            )
        floats = [a for a in (*call.args, *call.kwargs.values()) if isinstance(a, np.ndarray) and a.dtype == np.float64]
        for label in range(len(call.args)) if fractions.size >= 4 else ():
            # float64 arithmetic follows a change of an input far below float32's rounding: a reference whose result
            # follows a change of 1e-4 but not one of 1e-9 computes with that input in float32
            if not (isinstance(call.args[label], np.ndarray) and call.args[label].dtype == np.float64):
                continue
            same = [
                all(np.array_equal(a, b, equal_nan=True) for a, b in zip(first, run(*nudge(call, label, step), 1)))
                for step in (NUDGE, 1e-4)
            ]
            if same == [True, False]:
                return "reference-float32", (
                    f"returns the very same numbers when argument {label + 1} changes by {NUDGE:.1g} of itself, "
                    "which float64 arithmetic follows (it follows a change of 1e-4): it computes in float32 (or "
                    "less); compute in float64, np.asarray(x, dtype=np.float64)"
                )
        if floats and all(np.abs(a[np.isfinite(a)]).max(initial=0.0) <= 100 for a in floats):

            def single(value):
                return (
                    value.astype(np.float32) if isinstance(value, np.ndarray) and value.dtype == np.float64 else value
                )

            args = tuple(single(a) for a in call.args)
            kwargs = {key: single(value) for key, value in call.kwargs.items()}
            try:
                third = run(args, kwargs, 1)
            except Exception as error:  # noqa: BLE001 - the instructor's reference: said with its place
                return "reference-float32", f"raises {type(error).__name__} on the same inputs in float32: {error}"
            if not all(close(a, b, Tolerance(1e-3, 1e-3)) for a, b in zip(first, third)):
                return "reference-float32", (
                    f"gives other numbers for the same inputs in float32 ({largest_difference(third[0], first[0])}): "
                    "convert its inputs, np.asarray(x, dtype=np.float64), and compute in float64"
                )
        return None
    finally:
        np.random.set_state(saved)
        random.setstate(saved_python)


NUDGE = 2.0**-30  # a relative change of the inputs that float64 keeps and float32 (about 6e-8) rounds away


def nudge(call: Call, label: int, step: float) -> tuple[tuple, dict]:
    """The call's arguments with argument ``label`` times (1 + step), the others as they are."""
    args = tuple(value * (1.0 + step) if number == label else value for number, value in enumerate(call.args))
    return args, dict(call.kwargs)


def reference_findings(checks: assignments.AssignmentChecks, kept: dict) -> list[Finding]:
    """Each reference function of reference.py that, called here on the inputs its checks drew, raises, returns
    NaN, depends on the global random generator or computes in float32: the instructor's mistake, named at
    reference.py, not a student's (reference_problem)."""
    path = checks.folder / assignments.REFERENCE_FILE
    if not path.is_file():
        return []
    module = assignments.reference(checks.folder)
    lines = {name: node.lineno for name, node in mutation.reference_functions(path).items()}
    found: dict = {}
    for seed, outputs in kept.items():
        for check_id, out in outputs.items():
            check = checks.checks[check_id]
            name = mutation.reference_name(check, checks.references)
            function = getattr(check, "reference", None) or getattr(module, name, None)
            if not callable(function):
                continue
            for call in out.calls:
                if call.drive is not None or any((name, kind) in found for kind in REFERENCE_KINDS):
                    continue
                problem = reference_problem(function, call)
                if problem is not None:
                    kind, said = problem
                    found[(name, kind)] = Finding(
                        kind,
                        f"{path}:{lines.get(name, 1)}",
                        f"the reference {name} {said}, on {describe_call(call)} ({check_id}, seed {seed}): every "
                        "student is judged against it; correct reference.py",
                        check_id,
                    )
    return list(found.values())


def mutant_findings(checks: assignments.AssignmentChecks, usable: list, seeds: int) -> tuple[dict, list[Finding]]:
    """The assignment's checks proved by mutating its reference (autograder.mutation): ({reference function: its
    counts}, a finding per mutant that earns full points on a seed and is not in EQUIVALENT_MUTANTS, per marked one
    that is not made or is killed, and per reference function that loses points on its own checks here)."""
    reference_path = checks.folder / assignments.REFERENCE_FILE
    checks_path = assignments.checks_path(checks.folder)
    if not reference_path.is_file():
        return {}, []
    module = assignments.reference(checks.folder)
    chosen = {check_id: checks.checks[check_id] for check_id in usable}
    drawn = mutation.plans(chosen, range(seeds), check_generator)
    short, outcomes = mutation.mutate(
        module, reference_path, chosen, drawn, references=checks.references, task_sizes=checks.task_sizes
    )
    lines = {name: node.lineno for name, node in mutation.reference_functions(reference_path).items()}
    findings = [
        Finding(
            "reference-below-full",
            f"{reference_path}:{lines.get(name, 1)}",
            f"the reference {name}, called here on its checks' inputs, loses points on them (seed {seed}): the "
            "reference or its checks are wrong; correct reference.py (or the check), then validate again",
        )
        for name, seed in short.items()
        if seed is not None
    ]
    counts: dict = {}
    equivalent = checks.equivalent_mutants or {}
    made = {outcome.mutant.key for outcome in outcomes}
    for outcome in outcomes:
        mutant = outcome.mutant
        tally = counts.setdefault(mutant.function, {"made": 0, "killed": 0, "equivalent": 0, "survived": 0})
        tally["made"] += 1
        if outcome.survived is None:
            tally["killed"] += 1
            if mutant.key in equivalent:
                findings.append(
                    Finding(
                        "equivalent-unknown",
                        checks_place(checks_path, "EQUIVALENT_MUTANTS"),
                        f"EQUIVALENT_MUTANTS marks {mutant.key!r}, which the checks kill on every seed: it is not "
                        "equivalent; remove it",
                    )
                )
        elif mutant.key in equivalent and str(equivalent[mutant.key]).strip():
            tally["equivalent"] += 1
        else:
            tally["survived"] += 1
            findings.append(
                Finding(
                    "mutant-survives",
                    f"{reference_path}:{lines.get(mutant.function, 1)}",
                    f"the mutant {mutant.key!r} ({mutant.operator}) earns full points on {', '.join(outcome.checks)} "
                    f"under seed {outcome.survived}: draw inputs on which it is wrong (autograder.coverage), or, if "
                    "no input of the task tells it from the reference, add it to EQUIVALENT_MUTANTS in checks.py "
                    f"with why:\n{mutant.diff}",
                )
            )
    for key, reason in equivalent.items():
        if key not in made or not str(reason).strip():
            findings.append(
                Finding(
                    "equivalent-unknown",
                    checks_place(checks_path, "EQUIVALENT_MUTANTS"),
                    f"EQUIVALENT_MUTANTS marks {key!r}, "
                    + ("without a reason: say why no input tells it apart" if key in made else "which is no mutant")
                    + f"{closest(key, made)}",
                )
            )
    return counts, findings
