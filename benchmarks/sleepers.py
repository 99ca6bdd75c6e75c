"""A class with sleeping notebooks against the same class without them: the kernel's idle limit and budget at work.

    .venv/bin/python benchmarks/sleepers.py                          # 200 students, 10 of them sleep (over an hour)
    .venv/bin/python benchmarks/sleepers.py --students 40 --sleepers 2    # the same share, smaller
    .venv/bin/python benchmarks/sleepers.py --quick                  # 1 student, who sleeps; a budget of 8 s
    .venv/bin/python benchmarks/sleepers.py --in-attention           # the sleepers' attention sleeps too
    .venv/bin/python benchmarks/sleepers.py --idle 0                 # no idle limit: the budget alone stops them

A sleeping notebook is the full solution with SLEEPING_CELLS extra cells that each sleep an hour: each would be
cut at the cell's limit (60 s), so without a budget for the whole notebook it holds a worker for 15 minutes. The
kernel is stopped when its first sleeping cell has waited the idle limit without computing or printing
(autograder.timeouts.IDLE_TIMEOUT, 5 s, or a course's c.SurvivingExecute.idle_timeout; here --idle), and in any
case when the notebook's wall-clock budget is spent (NOTEBOOK_BUDGET, or c.SurvivingExecute.notebook_timeout; here
--budget; --idle 0 measures the budget alone). The hidden checks run outside the kernel, so a sleeper still gets the
full solution's points.

With --in-attention each sleeper's graded function ``attention`` sleeps an hour as well, so the hidden checks meet a
function that waits: each call of it is stopped after the 2 s it may wait without computing
(autograder.answers.budget.IDLE_LIMIT) and its later calls are not made, so the hidden checks end within the
kernel's budget instead of holding the worker (before that bound they kept 60 s by the clock per call, up to 300 s
a notebook). A sleeper then loses exactly attention's two checks, check_attention and check_masked_attention, and
the table's note says why ("hidden checks: stopped: attention waited 2 s without computing ...").

The class is generated from the bundled submissions (benchmarks/class_vs_nbgrader.py's mix); the sleepers are
spread evenly through it. The same class is graded twice, from the same prepared course, with
``autograder.grading.grade_class`` on --jobs workers (default 2) and the same seed: once with the sleepers' notebooks
as plain full solutions, once sleeping. It prints both wall-clock times and sleepers / without (goal: at most
1.25), each sleeper's seconds and the note the class's table shows for it (from the kernel's ends stored as data),
and exits 1 when a sleeper's points differ from the same notebook without the sleeping cells (but for attention's
checks, 0, with --in-attention) or its note does not say that the idle limit or the budget stopped it (and, with
--in-attention, that the hidden checks stopped attention).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))
sys.path.insert(0, str(REPOSITORY / "benchmarks"))
GOAL = 1.25  # the class with sleepers over the class without them, wall-clock (issue 27)
SLEEPING_CELLS = 15
SEED = 20261201
ATTENTION_CHECKS = ("check_attention", "check_masked_attention")  # what a sleeping attention loses
ATTENTION_NOTE = "hidden checks: stopped: attention waited"


def sleeping(notebook: dict, in_attention: bool = False) -> dict:
    """``notebook`` with SLEEPING_CELLS cells that sleep an hour each, after its first code cell (the setup); with
    ``in_attention``, its function attention sleeps an hour too, first thing."""
    if in_attention:
        for cell in notebook["cells"]:
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            if cell["cell_type"] == "code" and "\ndef attention(" in "\n" + source:
                lines = source.split("\n")
                at = next(number for number, line in enumerate(lines) if line.startswith("def attention("))
                lines[at + 1 : at + 1] = ["    import time", "    time.sleep(3600)"]
                cell["source"] = "\n".join(lines)
    first = next(number for number, cell in enumerate(notebook["cells"]) if cell["cell_type"] == "code")
    cells = [
        {
            "cell_type": "code",
            "execution_count": None,
            "id": f"sleep-{number}",
            "metadata": {},
            "outputs": [],
            "source": "import time\ntime.sleep(3600)",
        }
        for number in range(SLEEPING_CELLS)
    ]
    if (notebook.get("nbformat"), notebook.get("nbformat_minor", 0)) < (4, 5):  # cell ids came with nbformat 4.5
        for cell in cells:
            del cell["id"]
    notebook["cells"][first + 1 : first + 1] = cells
    return notebook


def sleeper_names(students: list[str], count: int) -> list[str]:
    """``count`` of the full solutions among ``students``, spread evenly through the class."""
    solutions = [s for s in students if s.endswith("_full_solution")]
    if count > len(solutions):
        raise SystemExit(f"--sleepers {count}: the class has only {len(solutions)} full solutions to make sleep")
    step = len(solutions) / count if count else 1
    return [solutions[int(i * step)] for i in range(count)]


def grade(course: Path, students: list[str], jobs: int, budget: int | None, idle: float | None) -> tuple[float, object]:
    from autograder.grading import dispatch
    from autograder.notebook.pipeline import ChainOptions

    started = time.monotonic()
    chain = ChainOptions(seed=SEED, notebook_budget=budget, idle_timeout=idle)
    options = dispatch.ClassOptions(jobs=jobs, chain=chain, progress=False, forward_cache=True)
    summary = dispatch.grade_class(course, "attention", students, options=options)
    return time.monotonic() - started, summary


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--sleepers", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=2, help="local workers (default 2)")
    parser.add_argument(
        "--budget", type=int, default=None, help="the notebook's budget, s (default: the course's, else the chain's)"
    )
    parser.add_argument(
        "--idle", type=float, default=None, help="a cell's idle limit, s (default: the chain's, 5; 0: none)"
    )
    parser.add_argument("--rounds", type=int, default=1, help="rounds of both sides, in alternating order")
    parser.add_argument("--quick", action="store_true", help="the smallest sizes, to check that it runs (tests)")
    parser.add_argument(
        "--in-attention", action="store_true", help="the sleepers' graded function attention sleeps an hour too"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.students, args.sleepers, args.budget = 1, 1, args.budget or 8  # the class twice: 2 notebooks graded

    from class_vs_nbgrader import generate_class, points, prepare

    from autograder.assignments import Layout
    from autograder.course.table import kernel_notes
    from autograder.grading import dispatch
    from autograder.grading.ledger import entries
    from autograder.timeouts import IDLE_TIMEOUT as IDLE_LIMIT
    from autograder.timeouts import NOTEBOOK_BUDGET

    budget = args.budget or NOTEBOOK_BUDGET
    idle = IDLE_LIMIT if args.idle is None else args.idle
    with tempfile.TemporaryDirectory(prefix="sleepers-benchmark-") as scratch:
        scratch = Path(scratch)
        kinds = generate_class(scratch / "submissions", args.students)
        students = sorted(kinds)
        sleepers = sleeper_names(students, args.sleepers)
        print(
            f"{len(students)} submissions on {args.jobs} workers, {len(sleepers)} of them sleeping "
            f"({SLEEPING_CELLS} cells of time.sleep(3600) each); a cell's idle limit: "
            f"{f'{idle:g} s' if idle else 'none'}; the notebook's budget: {budget} s"
        )
        prepare(scratch / "prepared", scratch / "submissions", students)
        # the class's forward cache built before either side is timed (shared per user, keyed by its digests)
        prepared = dispatch.load_assignment(scratch / "prepared", "attention")
        dispatch.prepared(
            scratch / "prepared", prepared, new=len(students), options=dispatch.ClassOptions(forward_cache=True)
        )
        seconds, worker_seconds = {"without": 0.0, "sleepers": 0.0}, {"without": 0.0, "sleepers": 0.0}
        for round_number in range(args.rounds):  # sides alternate (A B, B A, ...): a load that drifts cancels
            order = ("without", "sleepers") if round_number % 2 == 0 else ("sleepers", "without")
            for side in order:
                course = scratch / f"{side}-{round_number}"
                shutil.copytree(scratch / "prepared", course, symlinks=True)
                for student in sleepers if side == "sleepers" else []:
                    path = course / "submitted" / student / "attention" / "attention.ipynb"
                    path.write_text(json.dumps(sleeping(json.loads(path.read_text()), args.in_attention)))
                took, summary = grade(course, students, args.jobs, args.budget, args.idle)
                seconds[side] += took
                worker_seconds[side] += sum(e["seconds"] for e in entries(course, "attention").values())
                print(f"round {round_number + 1}, {side}: {took:.1f} s (graded {len(summary.graded)}, failed "
                      f"{len(summary.failed)})", flush=True)  # fmt: skip
                for student, error in summary.failed.items():
                    print(f"  failed: {student}: {error}")

        last = args.rounds - 1
        without, slept_course = scratch / f"without-{last}", scratch / f"sleepers-{last}"
        notes = kernel_notes(slept_course, Layout("attention", "attention"), sleepers)
        ledger = entries(slept_course, "attention")
        plain_seconds = [entry["seconds"] for entry in entries(without, "attention").values()]
        median = statistics.median(plain_seconds)
        print(
            f"a worker's seconds per notebook without sleepers (the ledger): median {median:.1f}, "
            f"max {max(plain_seconds):.1f}; workers' seconds in all, sleepers / without: "
            f"{worker_seconds['sleepers'] / worker_seconds['without']:.2f}"
        )
        extra = sum(ledger.get(student, {}).get("seconds", 0.0) - median for student in sleepers) / args.jobs
        predicted = 1 + extra / (seconds["without"] / args.rounds)
        plain, slept = points(without), points(slept_course)
        wrong = []
        stopped = [
            f"stopped after {budget} s, the notebook's budget",
            *([f"waited {idle:g} s without computing"] if idle else []),
        ]
        for student in sleepers:
            note = notes.get(student, "")
            print(f"  {student}: {ledger.get(student, {}).get('seconds', float('nan')):.1f} s; table: {note}")
            expected = dict(plain.get(student, {}))
            if args.in_attention:
                expected.update({check: 0.0 for check in ATTENTION_CHECKS if check in expected})
            if (
                expected != slept.get(student)
                or not any(said in note for said in stopped)
                or (args.in_attention and ATTENTION_NOTE not in note)
            ):
                wrong.append(student)
    ratio = seconds["sleepers"] / seconds["without"]
    print(f"without sleepers: {seconds['without']:.1f} s; with {len(sleepers)} sleepers: {seconds['sleepers']:.1f} s")
    # what the sleepers cost, from the workers' own seconds: each sleeper's seconds over a plain notebook's, spread
    # over the workers, against the class's wall-clock (less noisy than two wall-clocks on a shared machine)
    print(f"from the ledger: 1 + sleepers' extra seconds / workers / the class's time = {predicted:.2f}")
    print(f"sleepers / without, wall-clock: {ratio:.2f} (goal <= {GOAL})")
    if wrong:
        print(f"sleepers whose points or note are wrong: {', '.join(wrong)}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
