"""The grade does not depend on the draw, and each named mistake fires for its mistake only.

The hidden checks draw their inputs from a seed at grading time. Every property a check reports must be decided
on every draw: a mistake that a draw cannot see (weights @ keys when the values are as wide as the keys) would
cost points under one seed and nothing under another, and the instant check and the class run would disagree.
So the bundled examples (examples/submissions), the hostile submissions (tests/hostile.py) and the mutants
(tests/mutants.py: the classic wrong implementations of each graded function) are graded under 20 seeds, and
each check's points must be the same under all of them; the examples and hostile cases must also earn the
points written by hand for them, and each mutant must lose exactly its own checks, with its own message, on
every draw.

Grading goes through autograder.answers.grading.grade_seeds: the answer cells in the runner, every seed's calls in
one runner process, the store's model driven from the grader. Mutants are graded without the driven calls (the
model's properties are the same on every seed for them but for the one text check_masked_attention draws, which
the examples and hostile cases try); test_the_store_s_model_notices_a_wrong_softmax tries that text for them.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hostile import Context, build
from mutants import LIST, MUTANTS, Mutant, cell_of

from autograder import assignments, model, sandbox
from autograder.answers.grading import answer_sources, grade_seeds

REPOSITORY = Path(__file__).resolve().parents[2]
NOTEBOOK = REPOSITORY / "source" / "attention" / "attention.ipynb"
SUBMISSIONS = REPOSITORY / "examples" / "submissions"
ATTENTION = assignments.load(NOTEBOOK.parent)
CHECKS = ATTENTION.checks
SOLUTION = answer_sources(NOTEBOOK)
EXPECTED = json.loads((REPOSITORY / "examples" / "expected.json").read_text())
FULL = EXPECTED["students"]["full_solution"]["points"]
SEEDS = range(20)
DRIVE = "drives the store's model"
OWN = {
    check.function: [c for c, other in CHECKS.items() if other.function == check.function] for check in CHECKS.values()
}
HAS_BUBBLEWRAP = sandbox.bubblewrap() is not None


MARKERS = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", re.M)


def function_of(source: str) -> str | None:
    """The function an answer cell defines first (None: it defines none)."""
    found = re.search(r"^def (\w+)\(", source, re.M)
    return found and found.group(1)


def answers(sources: list[str]) -> list[str]:
    """The answer cells without nbgrader's solution markers (a submission's cells have none)."""
    return [MARKERS.sub("", source).rstrip() for source in sources]


def checks_to_grade(sources: list[str], points: dict) -> list[str]:
    """The checks a submission's answers can change: those of the functions whose answer cell is not the solution's,
    and those whose points are written as other than the full solution's; every check when the cells are not the
    solution's cells, one for one."""
    if len(sources) != len(SOLUTION) or answers(sources) == answers(SOLUTION):
        return list(CHECKS)
    changed = {function_of(mine) for mine, theirs in zip(answers(SOLUTION), answers(sources)) if mine != theirs}
    return [
        check_id
        for check_id, check in CHECKS.items()
        if check.function in changed or points.get(check_id, FULL[check_id]) != FULL[check_id]
    ]


def submissions() -> dict[str, tuple[list[str], dict]]:
    """{name: (answer sources, the points written for them)}: the examples and, where the sandbox exists, the hostile
    cases whose answers differ from every example's (a file that is not a notebook is graded as the blank one)."""
    found, seen = {}, set()
    for folder in sorted(SUBMISSIONS.iterdir()):
        sources = answer_sources(folder / "attention" / "attention.ipynb")
        if tuple(sources) not in seen:
            seen.add(tuple(sources))
            found[f"example {folder.name}"] = (sources, EXPECTED["students"][folder.name]["points"])
    if not HAS_BUBBLEWRAP:  # hostile answers run only in the sandbox
        return found
    nowhere = Path("/nonexistent-course")
    for name, case in build(Context(course=nowhere, canary=nowhere / "canary.txt", port=9)).items():
        try:
            notebook = json.loads(case.notebook)
        except ValueError:
            continue
        if "cells" not in notebook:  # nbformat 3: its cells are converted by nbgrader, then they are the solution's
            continue
        sources = answer_sources(notebook)
        if sorted(map(str, map(function_of, sources))) != sorted(map(function_of, SOLUTION)):
            continue  # answer cells re-flagged or duplicated: nbgrader repairs them before grading (tests/end_to_end)
        if tuple(sources) not in seen:
            seen.add(tuple(sources))
            found[f"hostile {name}"] = (sources, case.points)
    return found


SUBMITTED = submissions()


def grade_many(jobs: dict) -> dict:
    """{name: {seed: {check: Verdict}}} for jobs {name: keyword arguments of grade_seeds}, two at a time."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {name: pool.submit(grade_seeds, ATTENTION, seeds=SEEDS, **job) for name, job in jobs.items()}
        return {name: future.result() for name, future in futures.items()}


@pytest.fixture(scope="module")
def graded_submissions() -> dict:
    return grade_many(
        {
            name: {"sources": sources, "checks": checks_to_grade(sources, points)}
            for name, (sources, points) in SUBMITTED.items()
        }
    )


@pytest.fixture(scope="module")
def graded_mutants() -> dict:
    return grade_many(
        {
            mutant.name: {"sources": mutant.sources(SOLUTION), "checks": OWN[mutant.function], "driven": False}
            for mutant in LIST
        }
    )


def differing(by_seed: dict) -> dict[str, dict]:
    """{check: {points: [seeds]}} for every check whose points are not the same under every seed."""
    found = {}
    for check_id in next(iter(by_seed.values())):
        seen = {}
        for seed, verdicts in by_seed.items():
            seen.setdefault(verdicts[check_id].points, []).append(seed)
        if len(seen) > 1:
            found[check_id] = seen
    return found


def explain(by_seed: dict, check_id: str) -> str:
    return "\n\n".join(f"seed {seed}:\n{verdicts[check_id].text()}" for seed, verdicts in list(by_seed.items())[:3])


# --- the grade does not depend on the draw --------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SUBMITTED))
def test_a_submission_earns_its_points_whatever_the_draw(graded_submissions, name):
    by_seed = graded_submissions[name]
    varies = differing(by_seed)
    assert not varies, f"{name}: points depend on the seed {varies}\n{explain(by_seed, next(iter(varies)))}"
    if not model.available():  # the points written by hand hold with the store's model
        return
    _, points = SUBMITTED[name]
    earned = {check_id: verdict.points for check_id, verdict in by_seed[SEEDS[0]].items()}
    assert earned == {check_id: points[check_id] for check_id in earned}


@pytest.mark.parametrize("name", [mutant.name for mutant in LIST])
def test_a_mutant_loses_the_same_points_whatever_the_draw(graded_mutants, name):
    by_seed = graded_mutants[name]
    varies = differing(by_seed)
    assert not varies, f"{name}: points depend on the seed {varies}\n{explain(by_seed, next(iter(varies)))}"


def test_the_examples_and_hostile_cases_are_all_tried():
    names = {name.split(" ", 1)[1] for name in SUBMITTED if name.startswith("example ")}
    assert {"full_solution", "blank_release", "mask_after_softmax", "no_sqrt_scaling"} <= names
    if HAS_BUBBLEWRAP:
        assert sum(name.startswith("hostile ") for name in SUBMITTED) >= 8, sorted(SUBMITTED)


# --- each named mistake, for its mistake only ------------------------------------------------------------------


def test_the_table_holds_every_function_and_the_known_cases():
    assert len(LIST) >= 60
    assert {mutant.function for mutant in LIST} == {check.function for check in CHECKS.values()}
    for name in ("attention: weights @ keys", "softmax: float16", "softmax: the column's max subtracted"):
        assert name in MUTANTS
    for mutant in LIST:
        assert set(mutant.says) <= set(OWN[mutant.function]), mutant.name
        assert mutant.keeps != bool(mutant.says), f"{mutant.name}: a mistake names a message, a right answer none"
        cell_of(mutant.sources(SOLUTION), mutant.function)  # the edit applies and keeps the function's name


@pytest.mark.parametrize("mutant", LIST, ids=[mutant.name for mutant in LIST])
def test_a_mutant_loses_its_own_checks_with_its_message_on_every_draw(graded_mutants, mutant: Mutant):
    for seed, verdicts in graded_mutants[mutant.name].items():
        losing = {check_id for check_id, verdict in verdicts.items() if verdict.points < verdict.max_points}
        assert losing == set(mutant.says), (
            f"{mutant.name}, seed {seed}: lost {sorted(losing)}, expected {sorted(mutant.says)}\n"
            + "\n".join(verdicts[check_id].text() for check_id in losing ^ set(mutant.says))
        )
        for check_id in mutant.says:
            for fragment in mutant.fragments(check_id):
                assert fragment in verdicts[check_id].text(), f"seed {seed}: {verdicts[check_id].text()}"


def test_each_named_message_fires_for_its_mistake_only(graded_mutants, graded_submissions):
    """A mutant's message appears in a check's feedback only for the mutants that name it there (never for the
    solution, nor for another mistake of the same function)."""
    for mutant in LIST:
        for check_id, fragment in ((c, f) for c in mutant.says for f in mutant.fragments(c)):
            expected = {other.name for other in LIST if fragment in other.fragments(check_id)}
            fired = {
                other.name
                for other in LIST
                if check_id in OWN[other.function]
                and any(fragment in verdicts[check_id].text() for verdicts in graded_mutants[other.name].values())
            }
            assert fired == expected, f"{check_id}: {fragment!r} fires for {sorted(fired - expected)} too"
            solution = graded_submissions["example full_solution"]
            assert not any(fragment in verdicts[check_id].text() for verdicts in solution.values())


def test_the_store_s_model_notices_a_wrong_softmax():
    """The one property that runs the student's attention with their own softmax: it fails for exactly the softmax
    mutants marked drives, on a text drawn from the seed."""
    if not model.available():
        pytest.skip(model.UNAVAILABLE)
    softmaxes = [mutant for mutant in LIST if mutant.function == "softmax"]
    with ThreadPoolExecutor(max_workers=2) as pool:
        graded = pool.map(
            lambda mutant: grade_seeds(
                ATTENTION, mutant.sources(SOLUTION), [SEEDS[0]], checks=["check_masked_attention"]
            )[SEEDS[0]]["check_masked_attention"],
            softmaxes,
        )
        for mutant, verdict in zip(softmaxes, graded):
            failed = [p.name for p in verdict.properties if p.passed is False]
            assert failed == ([DRIVE] if mutant.drives else []), (mutant.name, verdict.text())
