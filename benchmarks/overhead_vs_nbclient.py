"""Grading one submission versus only executing the same notebook with nbclient: the overhead, as a ratio.

    .venv/bin/python benchmarks/overhead_vs_nbclient.py                 # the full solution, 5 rounds
    .venv/bin/python benchmarks/overhead_vs_nbclient.py --rounds 5 --student no_sqrt_scaling

Both sides run the same bundled submission (examples/submissions/<student>) in the same process, one after
the other, alternating which goes first:

- execute: nbclient.NotebookClient(...).execute() in the notebook's folder of a course, a plain kernel
  (the usual ipykernel over TCP, no sandbox, no limits), nothing else;
- grade: autograder.grading.worker.grade_submission, what a worker does for one student: a private course folder,
  nbgrader's Autograde (its sanitising steps, the notebook in a sandboxed kernel, the hidden checks in
  their sandboxed runner, the gradebook) and GenerateFeedback (the HTML page), every result read back.

Each round gives grade seconds / execute seconds, twice: for the grade (nbgrader's autograde, up to the
gradebook), the headline (goal: at most 1.3), and with the feedback page made in the same task too (what
a class run does; nbgrader makes it in a separate command, generate_feedback). Both do the same work as
the plain execution: no class-wide cache. A third timing in each round grades the submission as a class
run does, with the class's forward cache (forward.shared_forward_cache, recorded once before the rounds),
the feedback page included; its ratio is printed first. The order of the three rotates each round.
Medians over the rounds.
These machines are noisy (single rounds ranged 1.14 to 1.50 here): read the medians.
"""

from __future__ import annotations

import argparse
import dataclasses
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
ATTENTION = ("attention", "attention")  # the assignment these measure: its name and its notebook
sys.path.insert(0, str(REPOSITORY))
GOAL = 1.3


def prepared_course(scratch: Path) -> Path:
    """A course folder with the assignment released and its gradebook (what grade_submission needs)."""
    from autograder.assignments import Layout
    from autograder.course import run as classroom

    course = scratch / "course"
    classroom.prepare_course(course, source=REPOSITORY / "source", layout=Layout(*ATTENTION))
    classroom.register(course, Layout(*ATTENTION), [])
    classroom.release(course, Layout(*ATTENTION))
    return course


def execute_only(notebook: Path, folder: Path) -> float:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(notebook, as_version=4)
    started = time.monotonic()
    NotebookClient(nb, timeout=120, allow_errors=True, resources={"metadata": {"path": str(folder)}}).execute()
    return time.monotonic() - started


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--student", default="full_solution", help="a bundled submission (default: full_solution)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="the smallest sizes, to check that it runs (tests)")
    args = parser.parse_args(argv)
    warm = not args.quick  # --quick: no unmeasured first grade and run (its figures are not judged)
    if args.quick:
        args.rounds = 1

    from autograder import assignments, sandbox
    from autograder.grading import dispatch, forward, task, worker

    notebook = REPOSITORY / "examples" / "submissions" / args.student / "attention" / "attention.ipynb"
    print(
        f"submission: {notebook.relative_to(REPOSITORY)}; bubblewrap: {'yes' if sandbox.bubblewrap() else 'no'}; "
        f"cores: {os.cpu_count()}"
    )
    with tempfile.TemporaryDirectory(prefix="overhead-") as scratch:
        course = prepared_course(Path(scratch))
        folder = course / "executed" / args.student / "attention"
        folder.mkdir(parents=True)
        shutil.copy(notebook, folder / "attention.ipynb")
        assignment = dispatch.load_assignment(course, "attention")
        declared = assignments.load(course / "source" / "attention").forward_texts
        cache = forward.shared_forward_cache(declared, course=course)
        in_class = dataclasses.replace(assignment, chain=dataclasses.replace(assignment.chain, forward_cache=cache))
        submission = task.Submission(args.student, {"attention.ipynb": notebook.read_bytes()}, "benchmark")
        if warm:
            worker.grade_submission(assignment, submission)  # warm: the model's measurements, imports, caches
            execute_only(notebook, folder)
        ratios, plain, class_ratios = [], [], []  # with the feedback page; the grade alone; as in a class run
        sides = ["execute", "grade", "class"]
        for round_number in range(args.rounds):
            order = sides[round_number % 3 :] + sides[: round_number % 3]
            seconds = {}
            for side in order:
                if side == "execute":
                    seconds[side] = execute_only(notebook, folder)
                else:
                    outcome = worker.grade_submission(assignment if side == "grade" else in_class, submission)
                    seconds[side] = outcome.seconds
                    seconds["feedback" if side == "grade" else "class feedback"] = outcome.feedback_seconds
            ratios.append(seconds["grade"] / seconds["execute"])
            plain.append((seconds["grade"] - seconds["feedback"]) / seconds["execute"])
            class_ratios.append(seconds["class"] / seconds["execute"])
            points = sum(grade["auto_score"] or 0 for grade in outcome.grades)
            print(
                f"round {round_number + 1}: execute {seconds['execute']:.1f} s, grade {seconds['grade']:.1f} s "
                f"(of which feedback {seconds['feedback']:.1f} s; {points:g} points): ratio {ratios[-1]:.2f}; "
                f"as in a class run {seconds['class']:.1f} s: {class_ratios[-1]:.2f}"
            )
    print(f"as in a class run (the class's forward cache; grade and feedback): {statistics.median(class_ratios):.2f}")
    print(f"with the feedback page made in the same task: {statistics.median(ratios):.2f}")
    print(f"grade / execute, per submission: {statistics.median(plain):.2f} (goal <= {GOAL})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
