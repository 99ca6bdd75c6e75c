"""The command line of the instructor's report: python -m autograder.report --course DIR [options].

It writes each assignment's report (autograder.report.write_report) and prints the page's path; a notebook
graded before verdicts were stored is said on stderr with what to do (grade the class again). Exit status:
0 when every report was written, 1 when the course has no gradebook or an option is wrong.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from autograder.report import ReportOptions, write_report
from autograder.report.course import assignments_of, database_url


def parser() -> argparse.ArgumentParser:
    parsing = argparse.ArgumentParser(
        prog="python -m autograder.report",
        description="The instructor's report of a graded assignment: what the class got wrong, what was slow, "
        "who to look at.",
    )
    parsing.add_argument("--course", type=Path, required=True, help="a graded course folder (with gradebook.db)")
    parsing.add_argument("--assignment", action="append", help="the assignment (default: every one in the gradebook)")
    parsing.add_argument(
        "--formgrader-url",
        default="http://localhost:8888",
        help="where the instructor's Jupyter server runs Formgrader (default http://localhost:8888)",
    )
    parsing.add_argument("--student", action="append", help="only this student (repeat it for more; default: all)")
    parsing.add_argument(
        "--out", type=Path, default=None, help="the folder of the pages (default: the course's reports/)"
    )
    parsing.add_argument(
        "--db",
        default=None,
        metavar="URL",
        help="the gradebook's database (default: the one the course's settings name, else its gradebook.db)",
    )
    return parsing


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    db = args.db or database_url(args.course)
    if db.startswith("sqlite:///") and not Path(db.removeprefix("sqlite:///")).exists():
        print(
            f"no gradebook {db.removeprefix('sqlite:///')}: grade the class first (python -m autograder.course)",
            file=sys.stderr,
        )
        return 1
    try:
        options = ReportOptions(
            formgrader_url=args.formgrader_url,
            db=db,
            students=None if args.student is None else tuple(args.student),
            out=args.out,
        )
    except ValueError as error:
        print(f"--formgrader-url: {error}", file=sys.stderr)
        return 1
    for assignment in args.assignment or assignments_of(course=args.course, db=db):
        started = time.perf_counter()
        written = write_report(course=args.course, assignment=assignment, options=options)
        print(f"{written.page} ({time.perf_counter() - started:.1f} s)")
        if written.stale_message:
            print(f"stale verdicts: {written.stale_message}", file=sys.stderr)
    return 0
