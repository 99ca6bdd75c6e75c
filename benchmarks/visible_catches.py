"""How many of the mistakes the grade catches the notebook's visible checks catch first: before issue 35 (the check
cells as the base commit had them, loaded from git) and now (lib.check on visible_checks.json), in the same run.

    .venv/bin/python benchmarks/visible_catches.py [--base COMMIT] [--mutant-seeds 2]
    .venv/bin/python benchmarks/visible_catches.py --quick      # positions' named mistakes only (tests)

For each assignment of source/: its named mistakes (a compare(...) check's ``mistakes``, each run as the student's
function), the mutants of reference.py that the hidden checks kill (autograder.mutation, graded under the seeds
given; each run as the student's function) and, for attention, the mutant table (tests/mutants.py, each one edit
of the solution's answer cell; those the hidden checks accept left out). A mistake is caught when a visible check
cell of its function fails on it; "named" when the failure says the hidden checks' words for it. The other answer
cells are the solution's, so each line measures one wrong function at a time.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import re
import subprocess
import sys
import warnings
from pathlib import Path

import nbformat
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from autograder import assignments, mutation  # noqa: E402
from autograder.answers.grading import answer_sources, check_generator  # noqa: E402
from autograder.checks import Compared  # noqa: E402
from lib.check import FILE, callees_first, check  # noqa: E402

HIDDEN = re.compile(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS", re.S)


def check_cells(notebook) -> dict[str, str]:
    """{grade id: the visible part of its test cell}."""
    return {
        cell.metadata["nbgrader"]["grade_id"]: HIDDEN.sub("", cell.source)
        for cell in notebook.cells
        if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("grade")
    }


def failures(cells: dict, sources: list[str], folder: Path, replace: dict | None = None, only=None) -> dict:
    """{grade id: the message its visible check fails with} for these answer cells (``replace``: functions put in
    place of the cells' own after they ran; ``only``: the grade ids to run)."""
    namespace = {
        "np": np,
        "check": functools.partial(check, path=folder / FILE),
        "callees_first": functools.partial(callees_first, path=folder / FILE),
    }
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        for source in sources:
            exec(source, namespace)  # the course's own answers
        namespace.update(replace or {})
        failed = {}
        for grade_id, source in cells.items():
            if only is not None and grade_id not in only:
                continue
            try:
                exec(source, namespace)
            except AssertionError as error:
                failed[grade_id] = str(error)
            except Exception as error:  # noqa: BLE001 - a wrong answer may fail any way
                failed[grade_id] = f"{type(error).__name__}: {error}"
    return failed


def base_notebook(base: str, name: str):
    text = subprocess.run(
        ["git", "show", f"{base}:source/{name}/{name}.ipynb"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return nbformat.reads(text, as_version=4)


def tally(label: str, cases: list, before: dict, after: dict) -> None:
    """cases: [(name, grade ids, words that name it or None)]."""
    caught_before = sum(any(g in failures_ for g in ids) for (_, ids, _), failures_ in zip(cases, before.values()))
    caught_after = [any(g in failures_ for g in ids) for (_, ids, _), failures_ in zip(cases, after.values())]
    named = sum(
        bool(words) and any(any(w in failures_.get(g, "") for w in words) for g in ids)
        for (_, ids, words), failures_ in zip(cases, after.values())
    )
    print(f"  {label}: {len(cases)}; caught before {caught_before}, after {sum(caught_after)} (named {named})")
    for (name, _, _), caught in zip(cases, caught_after):
        if not caught:
            print(f"    still passes: {name}")


def measure(name: str, base: str, mutant_seeds: int) -> None:
    folder = ROOT / "source" / name
    notebook = nbformat.read(folder / f"{name}.ipynb", as_version=4)
    solution = answer_sources(notebook)
    now, then = check_cells(notebook), check_cells(base_notebook(base, name))
    loaded = assignments.load(folder)
    by_function: dict[str, list[str]] = {}
    for check_id, entry in loaded.checks.items():
        by_function.setdefault(entry.function, []).append(check_id)
    print(f"{name}:")
    assert failures(now, solution, folder) == {} and failures(then, solution, folder) == {}, "the solution fails"

    named = [
        (f"{entry.function}: {message}", by_function[entry.function], (message.split(":")[0],), wrong, entry.function)
        for entry in loaded.checks.values()
        if isinstance(entry, Compared)
        for message, wrong in entry.mistakes
    ]
    if named:
        cases = [(label, ids, words) for label, ids, words, _, _ in named]
        runs = {
            "before": {label: failures(then, solution, folder, {f: w}, ids) for label, ids, _, w, f in named},
            "after": {label: failures(now, solution, folder, {f: w}, ids) for label, ids, _, w, f in named},
        }
        tally("named mistakes of checks.py", cases, runs["before"], runs["after"])

    if mutant_seeds:
        module = assignments.reference(folder)
        usable = dict(loaded.checks)
        drawn = mutation.plans(usable, range(mutant_seeds), check_generator)
        _, outcomes = mutation.mutate(
            module,
            folder / assignments.REFERENCE_FILE,
            usable,
            drawn,
            references=loaded.references,
            task_sizes=loaded.task_sizes,
        )
        killed = [o for o in outcomes if o.survived is None]
        graded_of = {mutation.reference_name(c, loaded.references): c.function for c in loaded.checks.values()}
        cases, before, after = [], {}, {}
        for outcome in killed:
            function = graded_of.get(outcome.mutant.function)
            if function != outcome.mutant.function:
                continue  # a reference another graded function is compared with (safe_softmax's softmax)
            wrong = mutation.compiled(outcome.mutant, module)
            ids = by_function[function]
            cases.append((outcome.mutant.key, ids, None))
            before[outcome.mutant.key] = failures(then, solution, folder, {function: wrong}, ids)
            after[outcome.mutant.key] = failures(now, solution, folder, {function: wrong}, ids)
        tally(f"mutants of reference.py the hidden checks kill ({mutant_seeds} seeds)", cases, before, after)

    if name == "attention":
        from mutants import LIST

        table = [m for m in LIST if not m.keeps]
        cases = [(m.name, list(m.says), tuple(f for k in m.says for f in m.fragments(k))) for m in table]
        before = {m.name: failures(then, m.sources(solution), folder, None, list(m.says)) for m in table}
        after = {m.name: failures(now, m.sources(solution), folder, None, list(m.says)) for m in table}
        tally("the mutant table (tests/mutants.py)", cases, before, after)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="main", help="the commit whose check cells are 'before' (default: main)")
    parser.add_argument("--mutant-seeds", type=int, default=2, help="seeds the mutants are graded under (0: none)")
    parser.add_argument("--assignment", action="append", help="only these (default: every one of source/)")
    parser.add_argument("--quick", action="store_true", help="positions' named mistakes only, to check that it runs")
    options = parser.parse_args(argv)
    if options.quick:
        options.assignment, options.mutant_seeds, options.base = ["positions"], 0, "HEAD"
    for name in options.assignment or assignments.names(ROOT / "source"):
        measure(name, options.base, options.mutant_seeds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
