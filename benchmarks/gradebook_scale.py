"""The gradebook at scale (issue 12, parts 5 and 6): what recording one result costs in a gradebook of 100
students and of 10,000, on SQLite and on PostgreSQL, against the copy-and-rename it replaced; the
coordinator's own rate (a class with an instant grading task on Dask); and how long a re-run with nothing
new takes to decide that every student of a class of 10,000 is up to date.

    .venv/bin/python benchmarks/gradebook_scale.py                      # SQLite, and PostgreSQL when it can start one
    .venv/bin/python benchmarks/gradebook_scale.py --large 2000 --class-size 500   # quicker
    .venv/bin/python benchmarks/gradebook_scale.py --only scale --repeats 7        # the scale goal alone

Results are synthetic: the real notebook's grade and solution cells (read from source/attention/attention.ipynb),
scores drawn at random, small files; no kernel runs. The large gradebook is made by recording the small one's
students through the real path, then copying their rows under new ids with INSERT ... SELECT (recording
10,000 one by one would only measure the same thing for longer), and no statistics are gathered after the
copy (as after a bulk import, or before PostgreSQL's autovacuum has looked; it is turned off for them). The
exit status is 1 when a database measured misses a goal (the scale ratio, the coordinator's rate), each miss
said on the last lines.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))
sys.path.insert(0, str(REPOSITORY / "tests"))
os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])

from gradebooks import Server, why_no_postgres  # noqa: E402 - the tests' throwaway server
from nbgrader import api  # noqa: E402

from autograder import files  # noqa: E402
from autograder.grading import dispatch, task  # noqa: E402
from autograder.grading import gradebook as gradebook_writer  # noqa: E402
from autograder.grading import ledger as books  # noqa: E402

SCALE_GOAL = 1.5  # per-result time in a gradebook of 10,000 over one of 100, at most
RATE_GOAL = 50  # results the coordinator records per second, at least

ASSIGNMENT = NOTEBOOK = "attention"
PER_STUDENT = {
    "student": ["id"],
    "submitted_assignment": ["id", "student_id"],
    "submitted_notebook": ["id", "assignment_id"],
    "grade": ["id", "notebook_id"],
    "comment": ["id", "notebook_id"],
}


@functools.cache
def notebook_cells() -> tuple[list, list]:
    """(grade cells [(grade_id, points, cell_type)], solution cell ids) of the real source notebook."""
    cells = json.loads((REPOSITORY / "source" / ASSIGNMENT / f"{NOTEBOOK}.ipynb").read_text())["cells"]
    grades, solutions = [], []
    for cell in cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade"):
            grades.append((meta["grade_id"], float(meta.get("points", 0)), cell["cell_type"]))
        if meta.get("solution"):
            solutions.append(meta["grade_id"])
    return grades, solutions


def structure(url: str):
    from nbgrader.api import Gradebook

    grades, solutions = notebook_cells()
    with Gradebook(url) as gradebook:
        gradebook.add_assignment(ASSIGNMENT)
        gradebook.add_notebook(NOTEBOOK, ASSIGNMENT)
        for name, points, kind in grades:
            gradebook.add_grade_cell(name, NOTEBOOK, ASSIGNMENT, max_score=points, cell_type=kind)
        for name in solutions:
            gradebook.add_solution_cell(name, NOTEBOOK, ASSIGNMENT)


def synthetic(student: str, fingerprint: str = "0" * 64, rng=random) -> task.Outcome:
    grades, solutions = notebook_cells()
    return task.Outcome(
        student,
        fingerprint,
        ASSIGNMENT,
        autograded={f"{NOTEBOOK}.ipynb": b"{}" * 200},
        feedback={f"{NOTEBOOK}.html": b"<p>ok</p>" * 200},
        grades=[
            {
                "notebook": NOTEBOOK,
                "name": name,
                "auto_score": None if kind == "markdown" else rng.choice([0.0, points]),
                "needs_manual_grade": kind == "markdown",
            }
            for name, points, kind in grades
        ],
        comments=[
            {"notebook": NOTEBOOK, "name": name, "auto_comment": "No response." if rng.random() < 0.5 else None}
            for name in solutions
        ],
        worker="bench:1",
    )


def multiply(url: str, base: int, times: int):
    """Copy every per-student row ``times - 1`` times under new ids (the first 26 characters of the id, then
    _00001 and so on: ids are 32 characters at most): base * times students. On PostgreSQL, autovacuum is
    turned off for these tables first: otherwise it gathers their statistics at a moment of its choosing
    (within a minute of the copy), and the same code measures as either case from one repetition to the next."""
    from nbgrader.api import Base
    from sqlalchemy import create_engine, func, insert, literal, select

    tables = {t.name: t for t in Base.metadata.sorted_tables}
    engine = create_engine(url)
    with engine.begin() as connection:
        if engine.dialect.name == "postgresql":  # no statistics while measuring, not some of the time
            for name in PER_STUDENT:
                connection.exec_driver_sql(f"ALTER TABLE {name} SET (autovacuum_enabled = false)")
        for k in range(1, times):
            for name in PER_STUDENT:  # parents first
                table = tables[name]
                columns = [
                    (func.substr(c, 1, 26) + literal(f"_{k:05d}")).label(c.name) if c.name in PER_STUDENT[name] else c
                    for c in table.columns
                ]
                source = select(*columns).where(~table.c.id.like("%\\_%", escape="\\"))  # the base rows
                connection.execute(insert(table).from_select([c.name for c in table.columns], source))
    engine.dispose()


def per_result(course: Path, url: str, students: list[str], rounds: int, repetition: int = 0) -> float:
    """Seconds per result of ledger.record, new students and re-recorded ones, half each (the new ones named
    after ``repetition``, so that each repetition's are new)."""
    writer = gradebook_writer.GradebookWriter(url)
    rng = random.Random(1 + repetition)
    try:
        started = time.perf_counter()
        for n in range(rounds):
            student = f"new{repetition}_{n}" if n % 2 == 0 else rng.choice(students)
            books.record(course, synthetic(student, rng=rng), writer)
        return (time.perf_counter() - started) / rounds
    finally:
        writer.close()


def copy_and_rename(course: Path, students: list[str], rounds: int) -> float:
    """Seconds per result of the old way: copy gradebook.db, update the copy, fsync, rename it over."""
    rng = random.Random(2)
    original = course / "gradebook.db"
    started = time.perf_counter()
    for n in range(rounds):
        copy = course / ".grading" / "gradebook.copy.db"
        copy.parent.mkdir(exist_ok=True)
        with grading_sqlite_checkpointed(original):
            shutil.copyfile(original, copy)
        writer = gradebook_writer.GradebookWriter(f"sqlite:///{copy}")
        try:
            writer.write(synthetic(f"old{n}" if n % 2 == 0 else rng.choice(students), rng=rng))
        finally:
            writer.close()
        with open(copy, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(copy, original)
        for suffix in ("-wal", "-shm"):
            Path(f"{copy}{suffix}").unlink(missing_ok=True)
    return (time.perf_counter() - started) / rounds


class grading_sqlite_checkpointed:
    """Folds the write-ahead log into the main file first (the old way copied the main file alone)."""

    def __init__(self, path):
        self.path = path

    def __enter__(self):
        import sqlite3

        connection = sqlite3.connect(self.path)
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        connection.execute("PRAGMA journal_mode=DELETE")
        connection.close()

    def __exit__(self, *_):
        pass


def gradebook_of(root: Path, url: str, base: int, times: int) -> tuple[Path, list[str]]:
    course = root / "course"
    course.mkdir(parents=True, exist_ok=True)
    structure(url)
    writer = gradebook_writer.GradebookWriter(url)
    rng = random.Random(0)
    try:
        for n in range(base):
            writer.write(synthetic(f"s{n:05d}", rng=rng))
    finally:
        writer.close()
    if times > 1:
        multiply(url, base, times)
    return course, [f"s{n:05d}" + (f"_{k:05d}" if k else "") for k in range(times) for n in range(base)]


def scale(kind: str, make_url, small: int, large: int, rounds: int, repeats: int) -> float:
    """Per-result time in a gradebook of ``large`` over one of ``small``: both gradebooks made first and
    recorded into once unmeasured (a fifth of ``rounds``: the first reads after the bulk copy), then measured
    in turn ``repeats`` times (small, large, small, large, ...). Each repetition's ratio compares two
    measurements taken a second apart, so the machine's load falls on both alike; returns the median of these
    ratios, and prints each (the spread)."""
    with tempfile.TemporaryDirectory(prefix="gradebook-scale-") as scratch:
        made = {}
        for size in (small, large):
            root = Path(scratch) / str(size)
            url = make_url(root)
            started = time.perf_counter()
            course, students = gradebook_of(root, url, small, size // small)
            made[size] = (course, url, students)
            print(f"{kind:10s} {len(students):6d} students: made in {time.perf_counter() - started:5.1f} s", flush=True)
        for size in (small, large):
            per_result(made[size][0], made[size][1], made[size][2], max(1, rounds // 5), repetition=-1)
        times = {small: [], large: []}
        for repetition in range(repeats):
            for size in (small, large):
                course, url, students = made[size]
                times[size].append(per_result(course, url, students, rounds, repetition))
            print(
                f"{kind:10s} repetition {repetition + 1}: record {times[small][-1] * 1000:7.2f} ms/result at {small},"
                f" {times[large][-1] * 1000:7.2f} at {large}: ratio {times[large][-1] / times[small][-1]:.2f}",
                flush=True,
            )
        ratios = [at_large / at_small for at_small, at_large in zip(times[small], times[large], strict=True)]
        ratio = median(ratios)
        line = (
            f"{kind:10s} per-result time at {large} / at {small}: {ratio:.2f} (goal <= {SCALE_GOAL}; the median of"
            f" the repetitions' ratios, {min(ratios):.2f}-{max(ratios):.2f}); median times"
            f" {median(times[small]) * 1000:.2f} and {median(times[large]) * 1000:.2f} ms"
        )
        if kind == "sqlite":
            old = {size: copy_and_rename(made[size][0], made[size][2], max(4, rounds // 10)) for size in (small, large)}
            line += (
                f"; copy-and-rename {old[small] * 1000:.1f} -> {old[large] * 1000:.1f} ms/result"
                f" ({old[large] / old[small]:.1f})"
            )
        print(line, flush=True)
        return ratio


def instant(assignment, submission):
    result = synthetic(submission.student, submission.fingerprint)
    return result


def coordinator(size: int, jobs: int, kind: str = "sqlite", make_url=None):
    """A class of ``size`` with an instant grading task on a local Dask cluster: results recorded per second, and
    where the coordinator's time goes (each step's wall-clock; for recording, also this thread's CPU time: the
    difference is waiting for the disk, the database or the cores the workers share)."""
    with tempfile.TemporaryDirectory(prefix="gradebook-scale-") as scratch:
        root = Path(scratch)
        course = root / "course"
        course.mkdir()
        url = make_url(root) if make_url else f"sqlite:///{course / 'gradebook.db'}"
        structure(url)
        for folder in ("source", "release"):
            (course / folder / ASSIGNMENT).mkdir(parents=True)
            (course / folder / ASSIGNMENT / f"{NOTEBOOK}.ipynb").write_text("{}")
        students = [f"c{n:05d}" for n in range(size)]
        for student in students:
            (course / "submitted" / student / ASSIGNMENT).mkdir(parents=True)
            (course / "submitted" / student / ASSIGNMENT / f"{NOTEBOOK}.ipynb").write_text(student)
        spent = {}
        steps = {
            "record": (dispatch, "record"),  # patched where the coordinator calls it (dispatch imports the name)
            "journal and ledger": (books, "write_json"),
            "files": (books, "place_folder"),
            "gradebook transaction": (gradebook_writer.GradebookWriter, "write"),
            "loading submissions": (dispatch, "load_submission"),
            "finding who is up to date": (dispatch, "students_in_gradebook"),
            "cluster start": (dispatch, "make_client"),
            "checking workers": (dispatch, "usable_workers"),
        }
        originals = {name: getattr(owner, attribute) for name, (owner, attribute) in steps.items()}

        def timed(name, function):
            def run(*args, **kwargs):
                started, cpu = time.perf_counter(), time.thread_time()
                try:
                    return function(*args, **kwargs)
                finally:
                    wall, used = spent.get(name, (0.0, 0.0))
                    spent[name] = (wall + time.perf_counter() - started, used + time.thread_time() - cpu)

            return run

        for name, (owner, attribute) in steps.items():
            setattr(owner, attribute, timed(name, originals[name]))
        try:
            summary = dispatch.grade_class(
                course,
                "attention",
                students,
                options=dispatch.ClassOptions(jobs=jobs, progress=False, db=url, task=instant),
            )
        finally:
            for name, (owner, attribute) in steps.items():
                setattr(owner, attribute, originals[name])
        assert len(summary.graded) == size, summary.failed
        print(
            f"{kind:10s} coordinator: {size} results in {summary.seconds:.1f} s, {size / summary.seconds:.0f} "
            f"results/s (goal >= {RATE_GOAL}); where the time goes (wall-clock s, per result ms, the threads' CPU s):",
            flush=True,
        )
        setup = 0.0
        for name in steps:
            wall, cpu = spent.get(name, (0.0, 0.0))
            inside = "  of which " if name in ("journal and ledger", "files", "gradebook transaction") else ""
            print(f"  {inside + name:34s} {wall:7.1f} s {wall / size * 1000:7.2f} ms/result  cpu {cpu:6.1f} s")
            setup += wall if name not in ("record", "journal and ledger", "files", "gradebook transaction") else 0.0
        if "record" not in spent:  # a renamed step would otherwise print zeros
            raise SystemExit("the coordinator never called the patched ledger.record: patch the name dispatch calls")
        record_wall, record_cpu = spent["record"]
        print(
            f"  (recording runs on {dispatch.RECORDERS} threads, so its seconds add up to more than the wall-clock; "
            f"its CPU, {record_cpu / size * 1000:.1f} ms a result, is what it costs on an idle core)\n"
            f"  {'after the setup above':34s} {summary.seconds - setup:7.1f} s: "
            f"{size / max(summary.seconds - setup, 1e-9):.0f} results/s",
            flush=True,
        )
        return size / summary.seconds


def rerun(size: int, small: int):
    """A re-run with nothing new, class of ``size``: the time grade_class takes to find everyone up to date."""
    with tempfile.TemporaryDirectory(prefix="gradebook-scale-") as scratch:
        root = Path(scratch)
        url = f"sqlite:///{root / 'course' / 'gradebook.db'}"
        course, students = gradebook_of(root, url, small, size // small)
        for folder in ("source", "release"):
            (course / folder / ASSIGNMENT).mkdir(parents=True)
            (course / folder / ASSIGNMENT / f"{NOTEBOOK}.ipynb").write_text("{}")
        assignment = dispatch.load_assignment(course, "attention", db=url)
        for student in students:
            folder = course / "submitted" / student / ASSIGNMENT
            folder.mkdir(parents=True)
            (folder / f"{NOTEBOOK}.ipynb").write_bytes(b'{"cells": []}' * 3000)  # ~40 kB, a notebook's order
            (course / "autograded" / student / ASSIGNMENT).mkdir(parents=True)
            (course / "autograded" / student / ASSIGNMENT / f"{NOTEBOOK}.ipynb").write_text("{}")
            submission = dispatch.load_submission(course, student, assignment)
            files.write_json(
                books.ledger_path(course, "attention", student),
                {"student": student, "fingerprint": submission.fingerprint},
            )
        started = time.perf_counter()
        summary = dispatch.grade_class(
            course, "attention", students, options=dispatch.ClassOptions(progress=False, db=url, task=instant)
        )
        seconds = time.perf_counter() - started
        assert len(summary.skipped) == len(students), (len(summary.skipped), len(students))
        print(f"re-run with nothing new, {len(students)} students: {seconds:.1f} s to find all up to date", flush=True)


def postgres_then(measure, what: str):
    """``measure(make_url)`` on a throwaway PostgreSQL server; None, after saying why, when none can start."""
    why = why_no_postgres()
    if why:
        print(f"postgresql {what}: not measured: {why}")
        return None
    server = Server().start()
    try:
        return measure(lambda root: server.create_database())
    finally:
        server.stop()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--large", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=60, help="results recorded per measurement")
    parser.add_argument("--repeats", type=int, default=5, help="measurements of each gradebook, taken in turn")
    parser.add_argument("--class-size", type=int, default=2000, help="the coordinator's class")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", choices=["scale", "coordinator", "rerun"], default=None)
    parser.add_argument("--quick", action="store_true", help="the smallest sizes, to check that it runs (tests)")
    args = parser.parse_args(argv)
    if args.quick:
        # rounds 2: a new student and one recorded again; one worker: a local cluster's start is most of it
        args.small, args.large, args.rounds, args.repeats, args.class_size, args.jobs = 5, 10, 2, 1, 4, 1
    if args.large < args.small or args.large % args.small or min(args.small, args.rounds, args.repeats) < 1:
        parser.error("--large must be a multiple of --small; --small, --rounds and --repeats at least 1")
    version = api.get_alembic_version()
    api.get_alembic_version = lambda: version  # asked once: nbgrader runs `alembic` for each new gradebook
    missed = []
    if args.only in (None, "scale"):
        sizes = (args.small, args.large, args.rounds, args.repeats)
        ratios = {"sqlite": scale("sqlite", lambda root: f"sqlite:///{root / 'course' / 'gradebook.db'}", *sizes)}
        ratios["postgresql"] = postgres_then(lambda make_url: scale("postgresql", make_url, *sizes), "scale")
        missed += [
            f"{kind}: per-result time at {args.large} / at {args.small} is {ratio:.2f}, over {SCALE_GOAL}"
            for kind, ratio in ratios.items()
            if ratio is not None and ratio > SCALE_GOAL
        ]
    if args.only in (None, "rerun"):
        rerun(args.large, args.small)
    if args.only in (None, "coordinator"):
        rates = {"sqlite": coordinator(args.class_size, args.jobs)}
        rates["postgresql"] = postgres_then(
            lambda make_url: coordinator(args.class_size, args.jobs, "postgresql", make_url), "coordinator"
        )
        missed += [
            f"{kind}: the coordinator recorded {rate:.0f} results/s, under {RATE_GOAL}"
            for kind, rate in rates.items()
            if rate is not None and rate < RATE_GOAL
        ]
    for miss in missed:
        print(f"goal missed: {miss}")
    if args.quick and missed:
        print("--quick: sizes too small to judge the goals")
        return 0
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
