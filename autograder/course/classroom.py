"""A whole class through nbgrader: release, collect, autograde with feedback in parallel, export, the grade table.

    python -m autograder.course                                   # course demo/, the bundled submissions
    python -m autograder.course --course /srv/attention --submissions /srv/collected
    python -m autograder.course --assignment positions --source /srv/assignments   # another assignment
    python -m autograder.course --course ~/ml101 --submissions ~/ml101/collected  # an nbgrader course of yours
    python -m autograder.course --jobs 8                          # 8 local worker processes (default: one per core)
    python -m autograder.course --scheduler tcp://10.0.0.5:8786   # on a Dask cluster
    python -m autograder.course --gateway https://gw.school.edu --gateway-image REG/attention-grader:C --adapt 1,20
    python -m autograder.course --regrade                         # grade every submission again
    python -m autograder.course --cell-timeout 20                 # a shorter per-cell limit in the kernel

The steps (the course folder, the gradebook, release, collection, grading, export, the table and the report)
are autograder.course.run's ``grade_course``; this module is the command line over it: it parses the options
into a ``CourseOptions``, checks the sandbox, and prints the table and where everything is.

One run grades a course at a time: a second one stops, naming the running one (host, process, since when),
or waits for it with ``--wait``; the lock of a run that was killed is taken over (autograder.grading.CourseLock).
The gradebook is the course's gradebook.db (SQLite), or the database ``--db URL`` names (PostgreSQL:
``postgresql://user@host/db``), which is recorded in the course's autograder_config.py (the file the project
generates, loaded by the instructor's nbgrader_config.py) so that nbgrader's own commands and Formgrader use it
too; later runs read it from there, with the rest of the course's settings (autograder.settings).

An assignment is a folder of the source folder: its notebook and its hidden checks (checks.py), chosen with
``--assignment`` (default: the only one there, else every one the submissions hold, graded in turn: one run, table
and report per assignment, into the same gradebook); nothing here knows an assignment by name.

Every upload under the submissions folder is accounted for: each student's notebook (nbgrader's
<student>/<assignment>/<notebook>.ipynb, or the name in another case, a copy such as "attention (1).ipynb", the
notebook directly in the student's folder), and the rest listed as "NOT GRADED: <path>: why", in the table too.
Exit status: 0 all graded; 1 a step failed, or a student could not be graded; 2 every student graded, but some
uploads were not (other notebooks, copies).

The course folder is one this command made, a new one, or an nbgrader course folder of the instructor's (it holds
an nbgrader_config.py: nbgrader's commands run there), which is adopted, its source/ the default --source (see
autograder.course.run). Any other existing, non-empty folder is refused. Nothing is written under the repository's
source/ or examples/, nor into the submissions.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from pathlib import Path

from autograder import REPOSITORY, sandbox
from autograder.course.run import (
    CourseOptions,
    CourseRun,
    PipelineError,
    assignments_to_grade,
    feedback_only,
    grade_course,
    say,
)
from autograder.course.table import show
from autograder.grading import gateway
from autograder.grading.gateway import FLAGS as GATEWAY_FLAGS
from autograder.grading.scheduler import FLAGS as TLS_FLAGS
from autograder.grading.scheduler import access_from
from autograder.grading.task import GradingError
from autograder.lms.files import ExportOptions, export_command
from autograder.lms.lti.passback import passback_lines
from autograder.notebook.pipeline import ChainOptions
from autograder.settings import shown_url

FLAGS = (  # (flags, argparse's settings), in the order --help lists them
    ("--course", dict(type=Path, default=REPOSITORY / "demo", help="the course folder, made on the first run and "
        "kept (default: demo/ in the repository, not committed)")),
    ("--submissions", dict(type=Path, default=REPOSITORY / "examples" / "submissions", help="folder of "
        "<student>/<assignment>/<notebook>.ipynb (default: examples/submissions)")),
    ("--assignment", dict(default=None, help="the assignment to grade: a folder of --source with its notebook and "
        "checks.py (default: the only one there, else each one the submissions hold, in turn)")),
    ("--source", dict(type=Path, default=None, help="the folder holding the assignments (default: the course's own "
        "source/ for an nbgrader course folder of yours, else the repository's source/)")),
    ("--cell-timeout", dict(type=int, default=None, help="seconds per cell in the student's kernel, kept by "
        "later runs (default: the course's c.SurvivingExecute.timeout, else "
        "autograder.timeouts.CELL_TIMEOUT)")),
    ("--jobs", dict(type=int, default=None, help="local worker processes, each grading one notebook at a time "
        "(default: one per core)")),
    ("--scheduler", dict(default=None, help="address of a Dask scheduler (tcp://host:8786, or tls://host:8786 with "
        "the three --tls-* files) whose workers grade; default: this machine")),
    *((flag, dict(dest=name, type=Path, default=None, help=f"with a tls:// --scheduler: {what}"))
      for flag, name, what in TLS_FLAGS),
    *((flag, dict(dest=f"gateway_{name}", type=kind, metavar=shown, default=None, help=what))
      for flag, name, kind, shown, what in GATEWAY_FLAGS),
    ("--regrade", dict(action="store_true", help="grade every submission again, not only new or changed ones")),
    ("--fresh", dict(action="store_true", help="delete the course folder (gradebook included, "
        "not its nbgrader_config.py and autograder_config.py) and start again")),
    ("--db", dict(default=None, metavar="URL", help="the gradebook's database (nbgrader's CourseDirectory.db_url), "
        "e.g. postgresql://grader@dbhost/attention, kept by later runs; default: the one the course's settings name "
        "(c.CourseDirectory.db_url), else the course's gradebook.db (SQLite)")),
    ("--wait", dict(action="store_true", help="when another run is grading this course, wait for it instead of "
        "stopping")),
    ("--unsandboxed", dict(action="store_true", help="grade even without bubblewrap: every student's code can then "
        "read and change anything your user can (the reference, the hidden checks, the gradebook, other "
        "submissions)")),
    ("--feedback-only", dict(action="store_true", help="only make the feedback pages again of the students whose "
        "hand grades (Formgrader) changed since their pages were made; every run does this after grading")),
    ("--export", dict(choices=("canvas", "moodle"), help="only write the LMS's gradebook import file, "
        "lms/<LMS>.csv (autograder.lms.files)")),
    ("--roster", dict(type=Path, help="--export's roster CSV (default: <course>/roster.csv)")),
    ("--lti", dict(type=Path, metavar="CONFIG", help="after grading, send the scores to the LMS (autograder.lms.lti)")),
)  # fmt: skip


def parser() -> argparse.ArgumentParser:
    """The command line's options (FLAGS)."""
    made = argparse.ArgumentParser(prog="python -m autograder.course", description=__doc__.split("\n\n")[0])
    for flag, settings in FLAGS:
        made.add_argument(flag, **settings)
    return made


def options_from(args: argparse.Namespace) -> CourseOptions:
    """The parsed command line as the library's options: each value where the step that uses it reads it."""
    return CourseOptions(
        course=args.course,
        submissions=args.submissions,
        assignment=args.assignment,
        source=args.source,
        chain=ChainOptions(cell_timeout=args.cell_timeout),
        jobs=args.jobs,
        scheduler=gateway.access_from(args) or access_from(args, args.scheduler),
        regrade=args.regrade,
        fresh=args.fresh,
        db=args.db,
        wait=args.wait,
    )


def sandbox_refusal(unsandboxed: bool) -> str | None:
    """Why grading must not start (no sandbox, and running without one not allowed), or None; with leave to run
    unsandboxed, the kernels and runners this run starts are told so."""
    if sandbox.why_unprotected() is None:
        return None
    if not (unsandboxed or sandbox.unsandboxed_allowed()):  # the flag, or ATTENTION_UNSANDBOXED=1
        return sandbox.refusal()
    os.environ[sandbox.UNSANDBOXED] = "1"  # read by the kernels and runners this run starts, and its local workers
    sandbox.warn_once()
    return None


def closing(run: CourseRun, course: Path, seconds: float) -> int:
    """The table, what was not graded, where everything is; the exit status (0, 1 or 2, as the module says)."""
    say("")
    say(show(run.table))
    say("")
    for student, why in run.summary.failed.items():
        say(f"NOT GRADED: {student}: {why}")
    for path, why in run.uploads.not_graded.items():
        say(f"NOT GRADED: {path}: {why}")
    say(
        f"gradebook {shown_url(run.db)}; grades {course / 'grades.csv'}; per check {course / 'checks.csv'}; "
        f"feedback {course / 'feedback'}/<student>/{run.layout.name}/{run.layout.notebook}.html"
    )
    say(f"report {run.report}")
    steps = ", ".join(f"{name} {value:.0f} s" for name, value in run.seconds.items())
    say(f"done in {seconds:.0f} s ({steps})")
    failed = run.summary.failed or run.uploads.students_not_graded
    return 1 if failed else 2 if run.uploads.not_graded else 0


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    try:
        options = options_from(args)
    except GradingError as error:  # the scheduler's address and its certificates, or the gateway's, do not agree
        print(f"FAILED: {error}", file=sys.stderr, flush=True)
        return 1
    if args.export:  # reads the gradebook only: no sandbox needed
        return export_command(ExportOptions(course=args.course, lms=args.export, db=args.db, roster=args.roster))
    try:
        if args.feedback_only:  # runs no student code: no sandbox needed
            students = feedback_only(options)
            say(
                f"feedback regenerated for {len(students)} students (hand grades changed)"
                + (f": {', '.join(students)}" if students else "")
            )
            return 0
        refusal = sandbox_refusal(args.unsandboxed)
        if refusal is not None:
            print(f"REFUSED: {refusal}", file=sys.stderr, flush=True)
            return 3
        chosen = assignments_to_grade(options)
    except PipelineError as error:
        print(f"FAILED: {error}", file=sys.stderr, flush=True)
        return 1
    statuses = []
    for number, assignment in enumerate(chosen, 1):
        if len(chosen) > 1:
            say(f"=== assignment {assignment} ({number} of {len(chosen)}) ===")
        statuses.append(grade_one(dataclasses.replace(options, assignment=assignment), args))
    return 1 if 1 in statuses else max(statuses)


def grade_one(options: CourseOptions, args: argparse.Namespace) -> int:
    """One assignment's run, its closing lines and its scores to the LMS; the exit status."""
    started = time.monotonic()
    try:
        run = grade_course(options)
    except PipelineError as error:
        print(f"FAILED: {error}", file=sys.stderr, flush=True)
        return 1
    status = closing(run, args.course.absolute(), time.monotonic() - started)
    if args.lti:  # the scores to the LMS's line items; what cannot be sent stays in the course's outbox
        for line in passback_lines(args.lti, args.course.absolute(), run.db):
            say(line)
    return status


if __name__ == "__main__":
    sys.exit(main())
