"""The gradebook at scale (issue 12, parts 5 and 6): what recording one result costs in a gradebook of 100
students and of 10,000, on SQLite and on PostgreSQL, against the copy-and-rename it replaced; the
coordinator's own rate (a class with an instant grading task on Dask); and how long a re-run with nothing
new takes to decide that every student of a class of 10,000 is up to date.

    .venv/bin/python benchmarks/gradebook_scale.py                      # SQLite, and PostgreSQL when it can start one
    .venv/bin/python benchmarks/gradebook_scale.py --large 2000 --class-size 500   # quicker

Results are synthetic: the real notebook's grade and solution cells (read from source/attention/attention.ipynb),
scores drawn at random, small files; no kernel runs. The large gradebook is made by recording the small one's
students through the real path, then copying their rows under new ids with INSERT ... SELECT (recording
10,000 one by one would only measure the same thing for longer). It prints ratios; it asserts nothing.
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

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))
sys.path.insert(0, str(REPOSITORY / "tests"))
os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])

from autograder.grading import dispatch, task  # noqa: E402
from autograder.grading import gradebook as gradebook_writer  # noqa: E402
from autograder.grading import ledger as books  # noqa: E402

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
    _00001 and so on: ids are 32 characters at most): base * times students."""
    from nbgrader.api import Base
    from sqlalchemy import create_engine, func, insert, literal, select

    tables = {t.name: t for t in Base.metadata.sorted_tables}
    engine = create_engine(url)
    with engine.begin() as connection:
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


def per_result(course: Path, url: str, students: list[str], rounds: int) -> float:
    """Seconds per result of books.record, new students and re-recorded ones, half each."""
    writer = gradebook_writer.GradebookWriter(url)
    rng = random.Random(1)
    try:
        started = time.perf_counter()
        for n in range(rounds):
            student = f"new{n}" if n % 2 == 0 else rng.choice(students)
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


def scale(kind: str, make_url, small: int, large: int, rounds: int):
    times = {}
    for size in (small, large):
        with tempfile.TemporaryDirectory(prefix="gradebook-scale-") as scratch:
            url = make_url(Path(scratch))
            started = time.perf_counter()
            course, students = gradebook_of(Path(scratch), url, small, size // small)
            made = time.perf_counter() - started
            times[size] = per_result(course, url, students, rounds)
            line = (
                f"{kind:10s} {len(students):6d} students (made in {made:5.1f} s): record {times[size] * 1000:7.2f}"
                " ms/result"
            )
            if kind == "sqlite":
                old = copy_and_rename(course, students, max(4, rounds // 10))
                times[("old", size)] = old
                line += f"; copy-and-rename {old * 1000:8.1f} ms/result"
            print(line, flush=True)
    print(
        f"{kind:10s} per-result time at {large} / at {small}: {times[large] / times[small]:.2f} (goal <= 1.5)"
        + (f"; copy-and-rename: {times[('old', large)] / times[('old', small)]:.1f}" if kind == "sqlite" else ""),
        flush=True,
    )


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
            "record": (books, "record"),
            "journal and ledger": (books, "write_json"),
            "files": (books, "place_folder"),
            "gradebook transaction": (gradebook_writer.GradebookWriter, "write"),
            "loading submissions": (dispatch, "load_submission"),
            "finding who is up to date": (gradebook_writer, "students_in_gradebook"),
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
            f"results/s (goal >= 50); where the time goes (wall-clock s, per result ms, the threads' CPU s):",
            flush=True,
        )
        setup = 0.0
        for name in steps:
            wall, cpu = spent.get(name, (0.0, 0.0))
            inside = "  of which " if name in ("journal and ledger", "files", "gradebook transaction") else ""
            print(f"  {inside + name:34s} {wall:7.1f} s {wall / size * 1000:7.2f} ms/result  cpu {cpu:6.1f} s")
            setup += wall if name not in ("record", "journal and ledger", "files", "gradebook transaction") else 0.0
        record_wall, record_cpu = spent["record"]
        print(
            f"  (recording runs on {dispatch.RECORDERS} threads, so its seconds add up to more than the wall-clock; "
            f"its CPU, {record_cpu / size * 1000:.1f} ms a result, is what it costs on an idle core)\n"
            f"  {'after the setup above':34s} {summary.seconds - setup:7.1f} s: "
            f"{size / max(summary.seconds - setup, 1e-9):.0f} results/s",
            flush=True,
        )


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
            books.write_json(
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--large", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=60, help="results recorded per measurement")
    parser.add_argument("--class-size", type=int, default=2000, help="the coordinator's class")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", choices=["scale", "coordinator", "rerun"], default=None)
    args = parser.parse_args()
    from nbgrader import api
    from test_gradebook_servers import Server, alembic_version_once, why_no_postgres  # noqa: F401

    version = api.get_alembic_version()
    api.get_alembic_version = lambda: version  # asked once: nbgrader runs `alembic` for each new gradebook
    if args.only in (None, "scale"):
        scale(
            "sqlite", lambda root: f"sqlite:///{root / 'course' / 'gradebook.db'}", args.small, args.large, args.rounds
        )
        why = why_no_postgres()
        if why:
            print(f"postgresql: not measured: {why}")
        else:
            server = Server().start()
            try:
                scale("postgresql", lambda root: server.create_database(), args.small, args.large, args.rounds)
            finally:
                server.stop()
    if args.only in (None, "rerun"):
        rerun(args.large, args.small)
    if args.only in (None, "coordinator"):
        coordinator(args.class_size, args.jobs)
        why = why_no_postgres()
        if why:
            print(f"postgresql coordinator: not measured: {why}")
        else:
            server = Server().start()
            try:
                coordinator(args.class_size, args.jobs, "postgresql", lambda root: server.create_database())
            finally:
                server.stop()


if __name__ == "__main__":
    main()
