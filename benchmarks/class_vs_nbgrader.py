"""A class graded by this project versus by `nbgrader autograde` run the usual way: wall-clock ratio, same run.

    .venv/bin/python benchmarks/class_vs_nbgrader.py                  # 200 generated submissions (about an hour here)
    .venv/bin/python benchmarks/class_vs_nbgrader.py --students 20 --project-only   # only this side, for tuning
    .venv/bin/python benchmarks/class_vs_nbgrader.py --students 24    # a smaller class, same mix

The class is generated from the bundled submissions (examples/submissions), cycling through a mix: correct
(the full solution), partly wrong (the four bundled mistakes) and broken (the blank release, a kernel that
dies, a file that is not JSON). One course folder is prepared (gradebook, release, every submission
collected) and copied twice, so both sides start from the same bytes:

- nbgrader, the usual way: ``nbgrader autograde attention`` then ``nbgrader generate_feedback attention``,
  one command each, with this course's nbgrader_config.py (the same preprocessors, the same limits);
- this project: ``autograder.grading.grade_class``, on every core (--jobs, default one per core), which
  also records lib's forward passes of the notebook's 300 texts once for the class
  (forward.shared_forward_cache), so each kernel reads them instead of recomputing them.

The seed of the hidden checks' inputs is fixed for both (ExternalVerdicts.seed), so the grades must be
identical wherever both sides graded a student (nbgrader cannot grade the file that is not JSON; this project
grades it as blank, with a note). The headline is nbgrader's seconds over this project's (goal: at least
2.5 on a 2-core machine). The floor is what no scheduling can beat: the CPU seconds of the notebooks' kernels
and the hidden checks' runners (each worker's ended children, recorded in the ledger as children_cpu) over the
cores; the class's wall-clock over it is the engine's overhead (goal: at most 1.2).
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

REPOSITORY = Path(__file__).resolve().parent.parent
ATTENTION = ("attention", "attention")  # the assignment these measure: its name and its notebook
sys.path.insert(0, str(REPOSITORY))
GOAL = 2.5  # nbgrader serial autograde over this project, wall-clock (issue 17)
FLOOR_GOAL = 1.2  # this project's wall-clock over the floor (kernels' and runners' CPU over the cores)
SEED = 20261129
MIX = [
    "full_solution",
    "mask_after_softmax",
    "full_solution",
    "no_sqrt_scaling",
    "blank_release",
    "previous_token_off_by_one",
    "full_solution",
    "split_heads_reshape_order",
    "kernel_crash",
    "not_json",
]


def generate_class(folder: Path, count: int) -> dict[str, str]:
    """``count`` submissions in ``folder``/<student>/attention/; returns {student: the kind it is}."""
    bundled = REPOSITORY / "examples" / "submissions"
    kinds = {}
    for number, kind in zip(range(count), itertools.cycle(MIX)):
        student = f"s{number:03d}_{kind}"
        target = folder / student / "attention"
        target.mkdir(parents=True)
        if kind == "not_json":
            (target / "attention.ipynb").write_text("my answers are in a Word file\n")
        else:
            shutil.copy(bundled / kind / "attention" / "attention.ipynb", target / "attention.ipynb")
        kinds[student] = kind
    return kinds


def prepare(course: Path, submissions: Path, students: list[str]) -> None:
    from autograder.assignments import Layout
    from autograder.course import run as classroom
    from autograder.course import uploads

    classroom.prepare_course(course, source=REPOSITORY / "source", layout=Layout(*ATTENTION))
    classroom.register(course, Layout(*ATTENTION), students)
    classroom.release(course, Layout(*ATTENTION))
    uploads.collect(course, submissions, Layout(*ATTENTION), students)


def points(course: Path) -> dict:
    """{student: {grade_id: auto_score}} of the students that were graded: a submission in the gradebook with
    a score for every check (nbgrader leaves the scores empty when it fails on a notebook)."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        graded = {
            s.student.id: {g.name: g.auto_score for g in s.notebooks[0].grades}
            for s in gradebook.find_assignment("attention").submissions
        }
    return {
        student: scores
        for student, scores in graded.items()
        if all(score is not None for name, score in scores.items() if name.startswith("check_"))
    }


def report_seconds(course: Path, grading: float) -> None:
    """The instructor's report of the graded class (autograder.report) and its similarity part alone, timed;
    the report's share of the class's grading time (goal: under 10%) and the pairs compared per minute."""
    from autograder.report import read_course, write_report
    from autograder.report.tables import similar_submissions

    started = time.monotonic()
    similar = similar_submissions(read_course(course=course, assignment="attention"))
    compared, pairs = similar.compared, similar.pairs
    similarity = time.monotonic() - started
    started = time.monotonic()
    page = write_report(course=course, assignment="attention").page
    whole = time.monotonic() - started
    print(
        f"similarity: {compared} notebooks, {compared * (compared - 1) // 2} pairs, {len(pairs)} flagged, "
        f"{similarity:.1f} s with reading the course (goal < 60 s)"
    )
    print(f"autograder.report: {whole:.1f} s, {100 * whole / grading:.1f}% of the grading time (goal < 10%); {page}")


def machine_busy() -> float:
    """The CPU seconds this machine has spent busy since it started, every process counted (/proc/stat: all but
    idle and iowait); the difference over a side's run is what the side used, its sandboxed processes too."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def busy_line(side: str, busy: float, wall: float) -> str:
    cores = os.cpu_count() or 1
    return f"{side}: the machine busy {busy:.0f} CPU s in {wall:.0f} s, {busy / wall:.2f} of {cores} cores on average"


def floor(course: Path, students: list[str], wall: float, jobs: int | None) -> float:
    """Print and return the floor: the kernels' and runners' CPU seconds (the ledger's children_cpu) over the
    cores the workers can use (the machine's, or fewer with fewer --jobs); and the class's wall-clock over it
    (goal: FLOOR_GOAL)."""
    from autograder.grading.ledger import ledger

    cores = min(jobs or os.cpu_count() or 1, os.cpu_count() or 1)
    cpu = sum(ledger(course, "attention", student).get("children_cpu", 0.0) for student in students)
    least = cpu / cores
    print(
        f"floor: kernels and runners {cpu:.0f} CPU s over {cores} cores = {least:.0f} s; "
        f"the class's wall-clock over it: {wall / least if least else float('nan'):.2f} (goal <= {FLOOR_GOAL})"
    )
    return least


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=None, help="this project's local workers (default: one per core)")
    parser.add_argument(
        "--project-only",
        action="store_true",
        help="time only this project's side (for tuning it; no ratio, no comparison of grades)",
    )
    parser.add_argument("--quick", action="store_true", help="the smallest sizes, to check that it runs (tests)")
    args = parser.parse_args(argv)
    if args.quick:
        args.students = min(args.students, 1)  # the full solution, graded and compared by both sides

    from autograder.course import run as classroom
    from autograder.course.config import write_course_files
    from autograder.grading import dispatch
    from autograder.notebook.pipeline import ChainOptions

    with tempfile.TemporaryDirectory(prefix="class-benchmark-") as scratch:
        scratch = Path(scratch)
        kinds = generate_class(scratch / "submissions", args.students)
        students = sorted(kinds)
        print(
            f"{len(students)} submissions: "
            + ", ".join(f"{kind} {list(kinds.values()).count(kind)}" for kind in dict.fromkeys(MIX))
        )
        prepare(scratch / "prepared", scratch / "submissions", students)
        for side in ("nbgrader", "project"):
            shutil.copytree(scratch / "prepared", scratch / side, symlinks=True)
            write_course_files(scratch / side)  # autograder_config.py, and the instructor's nbgrader_config.py
            with open(scratch / side / "nbgrader_config.py", "a") as handle:  # nbgrader's side reads it
                handle.write(f"\n# the same inputs on both sides\nc.ExternalVerdicts.seed = {SEED}\n")

        seconds, busy = {}, {}
        started, busy_before = time.monotonic(), machine_busy()
        for step in [] if args.project_only else (["autograde", "attention"], ["generate_feedback", "attention"]):
            step_started = time.monotonic()
            done = subprocess.run(
                [str(Path(sys.executable).parent / "nbgrader"), *step],
                cwd=scratch / "nbgrader",
                env=classroom.nbgrader_environment(),
                capture_output=True,
                text=True,
            )
            print(f"nbgrader {step[0]}: exit {done.returncode}, {time.monotonic() - step_started:.0f} s")
        seconds["nbgrader"], busy["nbgrader"] = time.monotonic() - started, machine_busy() - busy_before
        print(f"nbgrader autograde + generate_feedback: {seconds['nbgrader']:.0f} s")
        if not args.project_only:
            print(busy_line("nbgrader", busy["nbgrader"], seconds["nbgrader"]))

        started, busy_before, coordinator = time.monotonic(), machine_busy(), time.process_time()
        summary = dispatch.grade_class(
            scratch / "project",
            "attention",
            students,
            options=dispatch.ClassOptions(jobs=args.jobs, chain=ChainOptions(seed=SEED), progress=True),
        )
        seconds["project"], busy["project"] = time.monotonic() - started, machine_busy() - busy_before
        coordinator = time.process_time() - coordinator
        print(
            f"autograder.grading.grade_class: {seconds['project']:.0f} s "
            f"(graded {len(summary.graded)}, failed {len(summary.failed)})"
        )
        print(busy_line("this project", busy["project"], seconds["project"]))
        print(f"this project's coordinator (dispatch, the scheduler, recording): {coordinator:.1f} CPU s")
        floor(scratch / "project", students, seconds["project"], args.jobs)
        report_seconds(scratch / "project", seconds["project"])

        if args.project_only:
            print(f"this project only: {seconds['project']:.1f} s for {len(students)} submissions, no ratio")
            return 0
        theirs, ours = points(scratch / "nbgrader"), points(scratch / "project")
        both = sorted(set(theirs) & set(ours))
        differ = [student for student in both if theirs[student] != ours[student]]
        only_ours = sorted(set(ours) - set(theirs))
        print(f"graded by both: {len(both)}; identical grades: {len(both) - len(differ)}; differ: {differ or 'none'}")
        print(
            f"graded only by this project: {len(only_ours)} ({', '.join(sorted({kinds[s] for s in only_ours})) or '-'})"
        )
    print(f"nbgrader / this project, wall-clock: {seconds['nbgrader'] / seconds['project']:.2f} (goal >= {GOAL})")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
