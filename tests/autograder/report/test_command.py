"""The report's command line (autograder.report.command), in process: the options it hands to write_report (the
report itself is test_report's), its refusals with their exit status, and one real run on a two-assignment sqlite
gradebook on tmp_path (nothing graded).

Pinned here: a course without a gradebook is refused with what to do, a Formgrader URL that is not http(s) is
refused naming the option, every assignment of the gradebook by default and the --assignment ones otherwise,
--student / --out / --db / --formgrader-url reach the options, each page's path printed, a stale notice on stderr.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from autograder.report import ReportOptions, Written
from autograder.report import command as report_command
from autograder.report.command import main, parser

pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")  # nbgrader's add_submission, SQLAlchemy 2


@pytest.fixture(autouse=True)
def alembic_on_path(monkeypatch):
    """A new gradebook runs `alembic` from PATH: the one next to this Python."""
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))


def two_assignments(tmp_path: Path) -> Path:
    """A course folder whose gradebook holds ps2 and ps1 (added in that order), one check each, and one student."""
    course = tmp_path / "course"
    course.mkdir()
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for name in ("ps2", "ps1"):
            gradebook.add_assignment(name)
            gradebook.add_notebook("problems", name)
            gradebook.add_grade_cell("check_a", "problems", name, max_score=1, cell_type="code")
        gradebook.add_student("ada")
    return course


@pytest.fixture
def calls(monkeypatch) -> list:
    """write_report replaced: each call's (course, assignment, options) is recorded, ps2's page has stale verdicts."""
    made = []

    def write_report(*, course, assignment, options):
        made.append((course, assignment, options))
        stale = "1 of 1 submitted notebooks were autograded before verdicts" if assignment == "ps2" else ""
        return Written(page=Path("/pages") / f"{assignment}.html", stale_message=stale)

    monkeypatch.setattr(report_command, "write_report", write_report)
    return made


def test_a_course_without_a_gradebook_is_refused_with_what_to_do(tmp_path, capsys, calls):
    assert main(["--course", str(tmp_path / "nowhere")]) == 1
    error = capsys.readouterr().err
    assert error.startswith(f"no gradebook {(tmp_path / 'nowhere' / 'gradebook.db').absolute()}: ")
    assert "grade the class first (python -m autograder.course)" in error and calls == []
    assert main(["--course", str(tmp_path), "--db", f"sqlite:///{tmp_path / 'other.db'}"]) == 1
    assert f"no gradebook {tmp_path / 'other.db'}" in capsys.readouterr().err


def test_a_formgrader_url_that_is_not_http_is_refused_naming_the_option(tmp_path, capsys, calls):
    course = two_assignments(tmp_path)
    assert main(["--course", str(course), "--formgrader-url", "javascript:alert(1)"]) == 1
    error = capsys.readouterr().err
    assert error.startswith("--formgrader-url: the Formgrader URL 'javascript:alert(1)' is not an http or https")
    assert calls == []


def test_every_assignment_by_default_and_the_options_reach_write_report(tmp_path, capsys, calls):
    course = two_assignments(tmp_path)
    assert main(["--course", str(course)]) == 0
    assert [assignment for _, assignment, _ in calls] == ["ps1", "ps2"], "the gradebook's order (due date, name)"
    options = calls[0][2]
    assert options == ReportOptions(db=f"sqlite:///{course.absolute() / 'gradebook.db'}")
    printed = capsys.readouterr()
    assert [line.split(" (")[0] for line in printed.out.splitlines()] == ["/pages/ps1.html", "/pages/ps2.html"]
    assert printed.out.splitlines()[0].endswith(" s)")
    assert printed.err == "stale verdicts: 1 of 1 submitted notebooks were autograded before verdicts\n"


def test_chosen_assignments_students_folder_and_formgrader(tmp_path, capsys, calls):
    course = two_assignments(tmp_path)
    argv = ["--course", str(course), "--assignment", "ps1", "--student", "ada", "--student", "bob"]
    argv += ["--out", str(tmp_path / "pages"), "--formgrader-url", "https://hub.example/user/me"]
    assert main(argv) == 0
    [(given, assignment, options)] = calls
    assert (given, assignment) == (course, "ps1")
    assert options.students == ("ada", "bob") and options.out == tmp_path / "pages"
    assert options.formgrader_url == "https://hub.example/user/me"
    assert capsys.readouterr().err == "", "ps1 has no stale verdicts"


def test_the_course_is_required():
    with pytest.raises(SystemExit) as exit_:
        parser().parse_args([])
    assert exit_.value.code == 2


def test_a_real_run_writes_each_page(tmp_path, capsys):
    course = two_assignments(tmp_path)
    assert main(["--course", str(course), "--out", str(tmp_path / "pages")]) == 0
    assert sorted(path.name for path in (tmp_path / "pages").glob("*.html")) == ["ps1.html", "ps2.html"]
    assert (tmp_path / "pages" / "ps1" / "totals.csv").read_text().splitlines()[1].startswith("ada,not submitted,")
    assert str(tmp_path / "pages" / "ps2.html") in capsys.readouterr().out
