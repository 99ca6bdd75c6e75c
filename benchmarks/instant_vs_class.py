"""The instant service's verdicts against the class run's, check by check, for the same notebooks and seed, on a
quiet machine and on a loaded one.

    .venv/bin/python benchmarks/instant_vs_class.py                 # the examples and every mutant, load 4 (2 cores)
    .venv/bin/python benchmarks/instant_vs_class.py --load 0        # a quiet machine
    .venv/bin/python benchmarks/instant_vs_class.py --limit 10      # the first 10 notebooks only
    .venv/bin/python benchmarks/instant_vs_class.py --quick         # 2 notebooks, 1 busy process (tests)

Each notebook (the bundled submissions, then the single-mistake mutants of tests/mutants.py) is graded with one
seed twice, in turn: by the service's check (autograder.service.checking.check_answers: its clock WALL, the course's
CPU budget) and by the class run's (the hidden checks as autograder.notebook.autograde.ExternalVerdicts calls them:
the CPU budget, the call limit, its clock of 2.5 x the CPU budget). --load N busy processes keep the machine loaded
meanwhile (a hub's students' kernels). The points of each check are compared; a check the service's clock cut is
counted apart ("not checked yet": no verdict, no check spent), never as a disagreement, since it gives no points.

The last line is `agreed: A of C checks (R), not checked yet: K notebooks`; exit status 1 when a check disagrees.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time
from pathlib import Path

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))
sys.path.insert(0, str(REPOSITORY / "tests"))
SOURCE = REPOSITORY / "source" / "attention"
SEED = 20261202


def burn(stop) -> None:  # one busy process: the load a student's kernel puts on the machine
    while not stop.is_set():
        sum(i * i for i in range(10_000))


def notebooks(limit: int | None) -> dict[str, list[str]]:
    """{name: answer sources}: the bundled submissions, then each mutant of tests/mutants.py on the solution."""
    from mutants import LIST

    from autograder.answers.grading import answer_sources

    found = {}
    for folder in sorted((REPOSITORY / "examples" / "submissions").iterdir()):
        found[f"example {folder.name}"] = answer_sources(folder / "attention" / "attention.ipynb")
    solution = answer_sources(SOURCE / "attention.ipynb")
    for mutant in LIST:
        found[f"mutant {mutant.name}"] = mutant.sources(solution)
    return dict(list(found.items())[:limit]) if limit else found


def as_notebook(sources: list[str]):
    import nbformat

    notebook = nbformat.read(SOURCE / "attention.ipynb", as_version=4)
    cells = iter(sources)
    for cell in notebook.cells:
        if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = next(cells, cell.source)
    return notebook


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--load", type=int, default=4, help="busy processes meanwhile (default 4)")
    parser.add_argument("--limit", type=int, default=None, help="the first N notebooks only")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--quick", action="store_true", help="2 notebooks, 1 busy process, to check that it runs")
    options = parser.parse_args()
    if options.quick:
        options.limit, options.load = 2, min(options.load, 1)

    from autograder import assignments
    from autograder.answers.budget import CALL_LIMIT
    from autograder.answers.grading import grade_answers
    from autograder.service.checking import WALL, NotCheckedYet, check_answers
    from autograder.timeouts import CHECKS_BUDGET

    checks = assignments.load(SOURCE)
    stop = multiprocessing.Event()
    burners = [multiprocessing.Process(target=burn, args=(stop,), daemon=True) for _ in range(options.load)]
    for process in burners:
        process.start()
    agreed = total = cut = 0
    service_seconds, class_seconds, differences = [], [], []
    try:
        for name, sources in notebooks(options.limit).items():
            began = time.monotonic()
            try:
                _, _, service = check_answers(SOURCE, as_notebook(sources), wall=WALL, seed=options.seed)
            except NotCheckedYet:
                cut += 1
                service = None
            service_seconds.append(time.monotonic() - began)
            began = time.monotonic()
            graded = grade_answers(checks, sources, seed=options.seed, timeout=CHECKS_BUDGET, call_limit=CALL_LIMIT)
            class_seconds.append(time.monotonic() - began)
            if service is None:
                print(f"{name}: not checked yet by the service (its clock)")
                continue
            for verdict in service:
                total += 1
                theirs = graded[verdict.check]
                if theirs.points == verdict.points:
                    agreed += 1
                else:
                    differences.append(f"{name} {verdict.check}: service {verdict.points:g}, class {theirs.points:g}")
    finally:
        stop.set()
        for process in burners:
            process.join(5)
    load = os.getloadavg()[0]
    print(f"load average at the end: {load:.1f} ({options.load} busy processes on {os.cpu_count()} cores)")
    print(
        f"seconds per notebook, median: service {sorted(service_seconds)[len(service_seconds) // 2]:.1f}, "
        f"class {sorted(class_seconds)[len(class_seconds) // 2]:.1f}"
    )
    for line in differences:
        print("DIFFERS", line)
    print(f"agreed: {agreed} of {total} checks ({agreed / max(total, 1):.3f}), not checked yet: {cut} notebooks")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
