"""The last minutes before a deadline: Submits arrive in bursts and the instant checks answer each one.

    .venv/bin/python benchmarks/deadline_rush.py                              # 200 students over 10 minutes
    .venv/bin/python benchmarks/deadline_rush.py --students 40 --minutes 2    # a smaller rush

200 students, a third of them twice (267 Submits), arrive over ``--minutes`` as a rush does: the rate grows
towards the deadline and half of the Submits come in bursts (several students in the same second). Each Submit is
written into an exchange's inbound folder the way nbgrader's submit names it; the grading service's checker
(autograder.service.instant.Checker: the same checks, sandbox and runner as the class run), run by the service's
own thread (autograder.service.app.CheckerThread: a round every 0.25 s, and at once when a check finishes) on
``--workers`` processes warmed at start as the service warms them, finds it and checks it. Printed: p50, p95 and
max seconds from Submit to the student's verdict (a Submit superseded by the same student's later one gets its
verdict with that one's), the check's own seconds (the rest is waiting for a free worker), the throughput; the
first check after a start, with workers cold and warmed at start, in the same run; and (``--nbgrader N``, default
10) the seconds per notebook of ``nbgrader autograde`` run the usual way on N notebooks of the same mix, and what
the rush's Submits would take so. Exit status 1 when p95 is over the goal (2 s).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import itertools
import multiprocessing
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))

from autograder.attempts import Attempts  # noqa: E402
from autograder.service.instant import Checker, CheckerThread, InstantChecks  # noqa: E402

GOAL = 2.0  # seconds, p95 from Submit to verdict
ANSWERED = ("done", "refused")  # a verdict, or the reason there is none
MIX = ["full_solution", "mask_after_softmax", "no_sqrt_scaling", "previous_token_off_by_one",
       "split_heads_reshape_order", "blank_release", "full_solution", "kernel_crash"]  # fmt: skip


def arrivals(students: int, seconds: float, seed: int = 7) -> list[tuple[float, str]]:
    """(offset in seconds, student) of every Submit, in order: a third of the students submit twice (the second
    after the first); the rate grows towards the deadline (density rising linearly), half of the Submits in
    bursts (one burst per ten students, all of its Submits in the same second)."""
    rng = np.random.default_rng(seed)
    bursts = np.sqrt(rng.uniform(0, 1, max(1, students // 10))) * seconds

    def draw(after: float = 0.0) -> float:
        if rng.uniform() < 0.5:
            later = bursts[bursts >= after]
            if len(later):
                return float(rng.choice(later))
        return after + float(np.sqrt(rng.uniform()) * (seconds - after))

    schedule = []
    for number in range(students):
        name = f"s{number:03d}"
        first = draw()
        schedule.append((first, name))
        if number % 3 == 0:
            schedule.append((draw(first), name))
    return sorted(schedule)


def submit_now(inbound: Path, student: str, notebook: Path) -> str:
    now = datetime.datetime.now(datetime.UTC)
    key = f"{student}+attention+{now:%Y-%m-%d %H:%M:%S.%f} UTC+{os.urandom(4).hex()}"
    staging = inbound.parent / "staging" / key
    staging.mkdir(parents=True)
    shutil.copy(notebook, staging / "attention.ipynb")
    staging.rename(inbound / key)  # appears whole, as nbgrader's submit's copy does
    return key


def service(scratch: Path, students: set[str], workers: int, warm: bool = True):
    """A checker over ``scratch``/inbound on a pool of ``workers`` processes, run by the service's own thread; the
    workers warmed first (``warm``), as the service does at start. Returns (checker, pool, thread), the thread
    running."""
    inbound = scratch / "inbound"
    inbound.mkdir(parents=True)
    checker = Checker(
        source=REPOSITORY / "source" / "attention",
        inbound=inbound,
        store=Attempts(f"sqlite:///{scratch / 'gradebook.db'}"),
        policy=InstantChecks(attempts=3, period=3600),
        students=lambda: students,
        slots=workers,
    )
    pool = concurrent.futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
    if warm:
        for future in checker.warm(pool):
            future.result()
    thread = CheckerThread(checker, pool)
    thread.start()
    return checker, pool, thread


def student_latencies(attempts, submitted: dict[str, float]) -> list[float]:
    """Seconds from each Submit to its student's verdict: its own, or, superseded, that of the later Submit of
    theirs checked in its place (the first verdict recorded for a Submit of theirs at or after it)."""
    epoch = datetime.datetime(1970, 1, 1)
    latencies = []
    for attempt in attempts:
        answers = [
            (later.checked - epoch).total_seconds()
            for later in attempts
            if later.student == attempt.student and later.id >= attempt.id and later.status in ANSWERED
        ]
        if answers and attempt.key in submitted:
            latencies.append(min(answers) - submitted[attempt.key])
    return sorted(latencies)


def first_check(scratch: Path, workers: int, warm: bool) -> float:
    """Seconds from the first Submit after a start to its verdict: the workers cold (started by that Submit) or
    warmed at start (the Submit arrives once the warm-up is over, as on a hub started before its students)."""
    checker, pool, thread = service(scratch, {"s000"}, workers, warm)
    notebook = REPOSITORY / "examples" / "submissions" / "no_sqrt_scaling" / "attention" / "attention.ipynb"
    submit_now(checker.inbound, "s000", notebook)
    began = time.monotonic()
    while not checker.store.select(status=ANSWERED):
        time.sleep(0.02)
    took = time.monotonic() - began
    thread.stop()
    pool.shutdown()
    checker.store.close()
    return took


def run_rush(args, scratch: Path) -> dict:
    schedule = arrivals(args.students, args.minutes * 60)
    students = {student for _, student in schedule}
    checker, pool, thread = service(scratch, students, args.workers)
    store, inbound = checker.store, checker.inbound
    submitted: dict[str, float] = {}
    kinds = itertools.cycle(MIX)
    bundled = REPOSITORY / "examples" / "submissions"
    started = time.monotonic()
    for offset, student in schedule:
        delay = started + offset - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        key = submit_now(inbound, student, bundled / next(kinds) / "attention" / "attention.ipynb")
        submitted[key] = time.time()
    while len(store.select(status=(*ANSWERED, "superseded"))) < len(schedule):
        if time.monotonic() - started > args.minutes * 60 + 600:
            print("gave up waiting for the last verdicts (10 minutes after the last Submit)")
            break
        time.sleep(0.2)
    wall = time.monotonic() - started
    thread.stop()
    pool.shutdown()
    attempts = store.select()
    checks = sorted((a.checked - a.started).total_seconds() for a in attempts if a.checked and a.started)
    return {
        "submits": len(schedule),
        "checked": sum(1 for a in attempts if a.status == "done"),
        "refused": sum(1 for a in attempts if a.status == "refused"),
        "superseded": sum(1 for a in attempts if a.status == "superseded"),
        "latencies": student_latencies(attempts, submitted),
        "wall": wall,
        "checks": checks,
        "last_offset": schedule[-1][0],
    }


def nbgrader_seconds(count: int) -> float:
    """Seconds per notebook of ``nbgrader autograde`` run the usual way (one command, one notebook after the
    other) on ``count`` notebooks of the same mix (benchmarks/class_vs_nbgrader.py prepares the course)."""
    from class_vs_nbgrader import generate_class, prepare

    from autograder.course import run as classroom
    from autograder.course.config import write_course_files

    with tempfile.TemporaryDirectory(prefix="deadline-nbgrader-") as scratch:
        scratch = Path(scratch)
        students = sorted(generate_class(scratch / "submissions", count))
        prepare(scratch / "course", scratch / "submissions", students)
        write_course_files(scratch / "course")
        started = time.monotonic()
        subprocess.run(
            [str(Path(sys.executable).parent / "nbgrader"), "autograde", "attention"],
            cwd=scratch / "course",
            env=classroom.nbgrader_environment(),
            capture_output=True,
            check=False,
        )
        return (time.monotonic() - started) / count


def percentile(values: list[float], share: float) -> float:
    return values[min(len(values) - 1, int(round(share * (len(values) - 1))))]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument(
        "--nbgrader", type=int, default=10, help="notebooks nbgrader autograde grades for the comparison (0: none)"
    )
    parser.add_argument("--quick", action="store_true", help="the smallest sizes, to check that it runs (tests)")
    args = parser.parse_args(argv)
    if args.quick:
        args.students, args.minutes, args.nbgrader = (
            min(args.students, 2),  # 3 Submits: one student twice, another once
            min(args.minutes, 0.1),
            min(args.nbgrader, 1),
        )
    with tempfile.TemporaryDirectory(prefix="deadline-rush-") as scratch:
        cold = first_check(Path(scratch) / "cold", args.workers, warm=False)
        warmed = first_check(Path(scratch) / "warmed", args.workers, warm=True)
        result = run_rush(args, Path(scratch) / "rush")
    print(
        f"the first check after a start: workers cold {cold:.1f} s, warmed at start {warmed:.1f} s "
        f"(cold / warmed {cold / warmed:.1f})"
    )
    latencies = result["latencies"]
    print(
        f"{result['submits']} Submits from {args.students} students over {args.minutes:g} minutes, "
        f"{args.workers} workers: {result['checked']} checked, {result['refused']} refused, "
        f"{result['superseded']} superseded by the same student's later Submit"
    )
    print(
        f"seconds from Submit to verdict: p50 {statistics.median(latencies):.1f}, "
        f"p95 {percentile(latencies, 0.95):.1f}, max {latencies[-1]:.1f} (goal: p95 <= {GOAL:g})"
    )
    checks = result["checks"]
    print(
        f"the check itself (started to recorded): p50 {statistics.median(checks):.1f}, "
        f"p95 {percentile(checks, 0.95):.1f}; the rest of each latency is the wait for a free worker"
    )
    print(f"throughput: {result['checked'] / result['wall'] * 60:.1f} checks per minute over {result['wall']:.0f} s")
    if args.nbgrader:
        per_notebook = nbgrader_seconds(args.nbgrader)
        whole = per_notebook * result["submits"]
        print(
            f"nbgrader autograde, the usual way, on {args.nbgrader} of the same notebooks: {per_notebook:.1f} s per "
            f"notebook; the {result['submits']} Submits so, one after the other: {whole / 60:.0f} minutes"
        )
    if args.quick:
        print("--quick: sizes too small to judge the goal")
        return 0
    return 0 if percentile(latencies, 0.95) <= GOAL else 1


if __name__ == "__main__":
    raise SystemExit(main())
