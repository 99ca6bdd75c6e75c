"""The instructor's report of a graded assignment: what the class got wrong, what was slow, who to look at.

    python -m autograder.report --course /srv/attention                      # every assignment in the gradebook
    python -m autograder.report --course /srv/attention --assignment attention
    python -m autograder.report --course demo --formgrader-url http://localhost:8888
    python -m autograder.report --course demo --student ada --student bob --out /tmp/section-a   # some students

    from autograder.report import ReportOptions, write_report
    written = write_report(course=Path("demo"), assignment="attention", options=ReportOptions(students=("ada",)))
    written.page, written.stale_message          # the page's path; what to do if verdicts are stale ("" if none)

Written by every ``python -m autograder.course`` run too. For each assignment it writes, in the course
folder, ``reports/<assignment>.html`` (one self-contained page: plots embedded, no script, no network) and
beside it ``reports/<assignment>/<table>.csv``, one CSV per table of the page:

- totals.csv: each student's automatic total, written answers, state (answered, blank, unreadable, not submitted), their
  own due date (an extension or late days: autograder.course.term), when they submitted and how many hours late;
- checks.csv: per graded function (check): students with full points, mean share, difficulty, discrimination;
- properties.csv: per property of a check: passed, failed, not applicable, difficulty, discrimination;
- mistakes.csv: the named mistakes, most frequent first, with the functions they hit and an example line;
- failures.csv: every failed property (check, property, mistake id), an example of its message (a row's messages
  differ in the numbers and calls they quote) and how many students it was shown to;
- problems.csv: notebooks that timed out, crashed or could not be read, with the cell and reason;
- written.csv: written answers waiting for a grader, with a link into Formgrader;
- timing.csv and slow_cells.csv: seconds per notebook (in the kernel, outside it, the hidden checks' own, which run
  beside the kernel, making the feedback) and the cells that took longest;
- similarity.csv: pairs of students whose answer code is similar (autograder.report.similarity).

The modules, one job each: ``course`` reads the graded course into data (the gradebook, the verdicts the
hidden checks stored in the autograded notebooks, autograder.verdicts; no sentence is parsed), ``tables``
computes the statistics and tables, ``mistakes`` names the class's mistakes, ``page`` renders the page with
Jinja (autograder/templates/report/, autoescaping on: everything a student wrote is text), ``command`` is the
command line. A course graded before verdicts were stored gets a notice at the top of the page and on the
command line saying to grade the class again (``python -m autograder.course --regrade``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from autograder.files import atomic_path, write_atomic
from autograder.report.course import GradedAssignment, assignments_of, database_url, read_course
from autograder.report.page import render
from autograder.report.tables import Tables, make_tables, spreadsheet_safe

__all__ = ["ReportOptions", "Written", "assignments_of", "database_url", "read_course", "write_report"]


@dataclass(frozen=True)
class ReportOptions:
    """How to make a report. formgrader_url: where the instructor's Jupyter server runs Formgrader (http or
    https); db: the gradebook's URL (default: the course's, database_url); students: only these (default: all);
    out: the folder of the pages (default: the course's reports/)."""

    formgrader_url: str = "http://localhost:8888"
    db: str | None = None
    students: tuple[str, ...] | None = None
    out: Path | None = None

    def __post_init__(self):
        if urlsplit(self.formgrader_url).scheme not in ("http", "https"):
            raise ValueError(
                f"the Formgrader URL {self.formgrader_url!r} is not an http or https address: give the address of "
                "the instructor's Jupyter server, for instance http://localhost:8888"
            )


@dataclass(frozen=True)
class Written:
    """A report written: its page, and what to do when some notebooks' verdicts are stale ("" when none is)."""

    page: Path
    stale_message: str = ""

    def summary(self) -> str:
        """One line for a command's closing words: the page, and the stale notice if there is one."""
        return f"{self.page} ({self.stale_message})" if self.stale_message else str(self.page)


def write_tables(tables: Tables, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, frame in tables.frames().items():
        safe = spreadsheet_safe(frame)
        with atomic_path(folder / f"{name}.csv") as temporary:  # a reader sees the old file or the new one
            safe.to_csv(temporary, index=False)


def write_report(*, course: Path, assignment: str, options: ReportOptions | None = None) -> Written:
    """Write <out>/<assignment>.html and <out>/<assignment>/*.csv (``out``: the course's reports/ unless the
    options name another folder)."""
    options = options or ReportOptions()
    started = time.perf_counter()
    course = Path(course)
    out = Path(options.out) if options.out is not None else course / "reports"
    only = None if options.students is None else set(options.students)
    graded: GradedAssignment = read_course(course=course, assignment=assignment, db=options.db, only=only)
    tables = make_tables(graded, formgrader=options.formgrader_url)
    write_tables(tables, out / assignment)
    page = render(graded, tables, formgrader=options.formgrader_url, seconds=time.perf_counter() - started)
    path = out / f"{assignment}.html"
    write_atomic(path, page)
    return Written(page=path, stale_message=graded.stale_message())
