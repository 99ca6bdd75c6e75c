"""The course's settings (autograder.settings): every reader (the class command, the grading service, the LMS export,
the LTI tool) sees the same settings, read in one place, a bad line is refused naming it, and the service applies a
changed policy or due date without a restart. The two files they are read from: tests/autograder/course/
test_config.py."""

from __future__ import annotations

import datetime
import os
import pwd
import sys
from pathlib import Path

import pytest
from lms_course import make_gradebook
from nbgrader.api import Gradebook

from autograder.assignments import find
from autograder.course import run as steps
from autograder.settings import (
    INSTRUCTOR_FILE,
    Course,
    CourseSettings,
    LiveSettings,
    SettingsError,
    sqlite_url,
)

REPOSITORY = Path(__file__).resolve().parents[2]
SOURCE = REPOSITORY / "source"
ATTENTION = find(SOURCE, "attention")
POLICY_LINES = (
    "\nc.InstantChecks.attempts = 5\nc.Exchange.root = '/srv/nbgrader/exchange'\nc.SurvivingExecute.timeout = 45\n"
)


def prepare(course: Path, **flags) -> CourseSettings:
    """The class command's first step (autograder.course.run.prepare_course), as every run makes it."""
    return steps.prepare_course(course, source=SOURCE, layout=ATTENTION, **flags)


def append(path: Path, text: str) -> None:
    with open(path, "a") as handle:
        handle.write(text)


def touched_later(path: Path) -> None:
    """The file's modification time a second later, as an editor saving it a moment after the last read would."""
    status = path.stat()
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns + 1_000_000_000))


def test_a_bad_line_in_the_policy_is_refused_naming_it(tmp_path):
    course = tmp_path / "course"
    prepare(course)
    instructor = course / INSTRUCTOR_FILE
    original = instructor.read_text()
    for line, expected in [
        ("c.InstantChecks.attempt = 5", "c.InstantChecks.attempt is not a setting of the policy: did you mean "
         "c.InstantChecks.attempts?"),
        ("c.InstantChecks.before_due = 'everything'", "a c.InstantChecks value is not allowed"),
        ("c.InstantChecks.due = 'next friday'", "c.InstantChecks.due = 'next friday' is not a date"),
        ("c.InstantChecks.attempts = ", "cannot read"),
    ]:  # fmt: skip
        instructor.write_text(original + line + "\n")
        with pytest.raises(SettingsError) as refused:
            CourseSettings.read(course)
        assert expected in str(refused.value) and str(instructor) in str(refused.value)


def test_the_notebooks_budget_is_the_courses_and_reaches_the_kernel(tmp_path):
    """c.SurvivingExecute.notebook_timeout in the instructor's file is the course's budget (CourseSettings), which the
    chain hands to the kernel's runner (ChainOptions.notebook_budget); without it, the chain's default holds."""
    from autograder.notebook.kernel import SurvivingExecute
    from autograder.notebook.pipeline import ChainOptions, chain_config
    from autograder.timeouts import NOTEBOOK_BUDGET

    course = tmp_path / "course"
    prepare(course)
    assert CourseSettings.read(course).notebook_budget is None
    assert SurvivingExecute(config=chain_config()).notebook_timeout == NOTEBOOK_BUDGET
    instructor = course / INSTRUCTOR_FILE
    original = instructor.read_text()
    instructor.write_text(original + "c.SurvivingExecute.notebook_timeout = 30\n")
    budget = CourseSettings.read(course).notebook_budget
    assert budget == 30
    assert SurvivingExecute(config=chain_config(ChainOptions(notebook_budget=budget))).notebook_timeout == 30
    for value in ("0", "'a minute'", "2.5", "True"):
        instructor.write_text(original + f"c.SurvivingExecute.notebook_timeout = {value}\n")
        with pytest.raises(SettingsError, match="notebook_timeout = .* is not a number of seconds: write a whole"):
            CourseSettings.read(course)


def test_a_cells_idle_limit_is_the_courses_and_reaches_the_kernel(tmp_path):
    """c.SurvivingExecute.idle_timeout in the instructor's file (seconds a cell may wait without computing or
    printing; 0: no limit) is the course's (CourseSettings.idle_timeout), handed to the kernel's runner by the chain
    (ChainOptions.idle_timeout); without it, timeouts.IDLE_TIMEOUT holds; a value that is no such number is refused."""
    from autograder.notebook.kernel import SurvivingExecute
    from autograder.notebook.pipeline import ChainOptions, chain_config
    from autograder.timeouts import IDLE_TIMEOUT as IDLE_LIMIT

    course = tmp_path / "course"
    prepare(course)
    assert CourseSettings.read(course).idle_timeout is None
    assert SurvivingExecute(config=chain_config()).idle_timeout == IDLE_LIMIT == 5.0
    instructor = course / INSTRUCTOR_FILE
    original = instructor.read_text()
    for value, expected in (("12", 12.0), ("2.5", 2.5), ("0", 0.0)):
        instructor.write_text(original + f"c.SurvivingExecute.idle_timeout = {value}\n")
        idle = CourseSettings.read(course).idle_timeout
        assert idle == expected
        assert SurvivingExecute(config=chain_config(ChainOptions(idle_timeout=idle))).idle_timeout == expected
    for value in ("-1", "'a while'", "True"):
        instructor.write_text(original + f"c.SurvivingExecute.idle_timeout = {value}\n")
        with pytest.raises(SettingsError, match="idle_timeout = .* is not a number of seconds: write the seconds"):
            CourseSettings.read(course)


def test_the_hidden_checks_cpu_budget_is_the_courses_and_reaches_their_step(tmp_path):
    """c.ExternalVerdicts.timeout in the instructor's file is the CPU seconds of all of a notebook's hidden checks
    (CourseSettings.checks_budget), which the chain hands to the steps that run them (ChainOptions.checks_budget);
    without it, the chain's default holds."""
    from autograder.notebook.autograde import ExternalVerdicts, StartVerdicts
    from autograder.notebook.pipeline import ChainOptions, chain_config
    from autograder.timeouts import CHECKS_BUDGET as TIMEOUT

    course = tmp_path / "course"
    prepare(course)
    assert CourseSettings.read(course).checks_budget is None
    assert ExternalVerdicts(config=chain_config()).timeout == TIMEOUT
    instructor = course / INSTRUCTOR_FILE
    original = instructor.read_text()
    instructor.write_text(original + "c.ExternalVerdicts.timeout = 30\n")
    budget = CourseSettings.read(course).checks_budget
    assert budget == 30.0
    config = chain_config(ChainOptions(checks_budget=budget))
    assert ExternalVerdicts(config=config).timeout == StartVerdicts(config=config).timeout == 30.0
    for value in ("0", "'a minute'", "-5", "True"):
        instructor.write_text(original + f"c.ExternalVerdicts.timeout = {value}\n")
        with pytest.raises(SettingsError, match="ExternalVerdicts.timeout = .* is not a number of seconds: write"):
            CourseSettings.read(course)


# --- every reader takes the course's gradebook: none assumes SQLite's gradebook.db --------------------------------


def test_the_lms_export_the_lti_tool_and_passback_read_the_gradebook_the_course_names(tmp_path, monkeypatch):
    from autograder.lms import files as lms
    from autograder.lms.lti import passback, tool

    elsewhere = tmp_path / "database"
    elsewhere.mkdir()
    url = make_gradebook(elsewhere, monkeypatch)  # ps1 (3 points) and ps2 (1), ada, bob, cy and a hostile id
    course = tmp_path / "course"
    prepare(course, db=url)
    assert not (course / "gradebook.db").exists()

    exported = lms.export_lms(lms.ExportOptions(course=course, lms="canvas"))
    rows = (course / "lms" / "canvas.csv").read_text().splitlines()
    assert (
        exported.rows == 4
        and rows[0].endswith(",ps1,ps2")
        and any(row.startswith('"Lovelace, Ada"') or "ada" in row for row in rows)
    )

    class Config:  # what the tool and passback read of an LtiConfig here: the course folder
        pass

    config = Config()
    config.course = course
    assert tool.course_assignments(config)["attention"] == 0.0  # source/ has attention; the gradebook knows ps1/ps2
    (course / "source" / "ps1").mkdir()
    assert tool.course_assignments(config)["ps1"] == 3.0
    result = passback.PassbackResult()
    passback.queue_scores(config, None, {"pending": {}, "sent": {}}, result)
    assert sorted(result.not_placed) == ["ps1", "ps2"]


def test_without_a_gradebook_the_export_says_to_grade_first(tmp_path):
    from autograder.lms import files as lms

    course = tmp_path / "course"
    prepare(course)
    with pytest.raises(lms.ExportError) as refused:
        lms.export_lms(lms.ExportOptions(course=course, lms="canvas"))
    assert "grade the class first" in str(refused.value)


# --- the grading service: the policy in force, read again when changed ----------------------------------------


@pytest.fixture
def service():
    return pytest.importorskip(
        "autograder.service.app", reason="the grading service needs JupyterHub: pip install -e '.[hub]'"
    )


class NoChecks:
    """A pool no check reaches in these tests (no Submit is in the inbound)."""

    def submit(self, *args, **kwargs):  # pragma: no cover - a Submit would be a mistake of the test
        raise AssertionError("nothing should be checked")


def set_due(url: str, due: datetime.datetime) -> None:
    """What Formgrader's Edit of the assignment does: the due date in the gradebook."""
    with Gradebook(url) as gradebook:
        gradebook.update_or_create_assignment("attention", duedate=due)


def test_a_changed_policy_and_due_date_apply_without_a_restart(tmp_path, service, monkeypatch):
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    course, exchange = tmp_path / "course", tmp_path / "exchange"
    (exchange / "inbound").mkdir(parents=True)
    settings = prepare(course)
    first = datetime.datetime(2026, 12, 14, 16, 0)
    set_due(settings.db, first)
    checker = service.make_checkers(service.ServiceOptions(course=course, exchange=exchange))["attention"]
    assert (checker.policy.attempts, checker.policy.due_date()) == (3, first)

    append(course / INSTRUCTOR_FILE, "c.InstantChecks.attempts = 1\nc.InstantChecks.before_due = 'nothing'\n")
    later = datetime.datetime(2026, 12, 21, 16, 0)
    set_due(settings.db, later)
    checker.step(NoChecks())
    assert (checker.policy.attempts, checker.policy.before_due, checker.policy.due_date()) == (1, "nothing", later)
    page = service.assignment_summary(checker)
    assert page["policy"][0].startswith("Up to 1 Submit is checked per 1 hour")
    assert "after the due date (2026-12-21 16:00 UTC) are not checked" in page["policy"][2]
    assert page["policy_file"] == str(course.absolute() / INSTRUCTOR_FILE) and page["settings_error"] == ""

    # the instructor's due date in the policy wins over the gradebook's
    append(course / INSTRUCTOR_FILE, "c.InstantChecks.due = '2026-12-24T12:00:00+01:00'\n")
    touched_later(course / INSTRUCTOR_FILE)
    checker.step(NoChecks())
    assert checker.policy.due_date() == datetime.datetime(2026, 12, 24, 11, 0)


def test_a_change_that_cannot_be_read_keeps_the_last_policy_and_the_page_says_why(tmp_path, service):
    course, exchange = tmp_path / "course", tmp_path / "exchange"
    (exchange / "inbound").mkdir(parents=True)
    prepare(course)
    append(course / INSTRUCTOR_FILE, "c.InstantChecks.attempts = 4\n")
    checker = service.make_checkers(service.ServiceOptions(course=course, exchange=exchange))["attention"]
    assert checker.policy.attempts == 4
    kept = (course / INSTRUCTOR_FILE).read_text()
    (course / INSTRUCTOR_FILE).write_text(kept + "c.InstantChecks.attempts = (\n")
    checker.step(NoChecks())
    checker.step(NoChecks())
    assert checker.policy.attempts == 4
    error = service.assignment_summary(checker)["settings_error"]
    assert f"cannot read {course.absolute() / INSTRUCTOR_FILE}: SyntaxError" in error
    assert "The settings read before stay in force." in error
    (course / INSTRUCTOR_FILE).write_text(kept + "c.InstantChecks.attempts = 2\n")
    checker.step(NoChecks())
    assert checker.policy.attempts == 2 and service.assignment_summary(checker)["settings_error"] == ""


def test_live_settings_return_the_same_policy_while_nothing_changed(tmp_path):
    course = tmp_path / "course"
    prepare(course)
    live = LiveSettings(Course.read(course), "attention")
    assert live.policy() is live.policy()
    append(course / INSTRUCTOR_FILE, "c.InstantChecks.period = 1800\n")
    assert live.policy().period == 1800.0


# --- the hub: its course preparation keeps the instructor's lines, and its service applies them ---------------


def test_the_line_survives_the_class_runs_and_hub_restarts_and_the_service_applies_it(tmp_path, service, monkeypatch):
    """The issue's steps: the hub made the course, the instructor added a policy line, the class ran twice, the hub
    was started again; the line is there and the service's checker applies it, with the hub's --due."""
    from autograder.hub import launch as hub

    me = pwd.getpwuid(os.getuid())  # the accounts and groups are the hub tests' (test_hub.py): here, this user
    monkeypatch.setattr(hub, "ensure_account", lambda name, home: me)
    monkeypatch.setattr(hub, "join_groups", lambda instructor, students: None)
    monkeypatch.setattr(hub, "why_unreachable", lambda state: None)
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    state, due = tmp_path / "state", datetime.datetime(2026, 12, 14, 17, 0)
    course = hub.prepare(state, ["student1"], due)
    append(course / INSTRUCTOR_FILE, POLICY_LINES)
    for _ in range(2):
        prepare(course)
    assert hub.prepare(state, ["student1"], due) == course
    assert (course / INSTRUCTOR_FILE).read_text().endswith(POLICY_LINES)
    exchange = state / "exchange" / hub.COURSE_ID
    checkers = service.make_checkers(service.ServiceOptions(course=course, exchange=exchange))  # every assignment
    for checker in checkers:
        assert (checker.policy.attempts, checker.policy.due_date()) == (5, due)
        assert service.assignment_summary(checker)["policy"][0].startswith("Up to 5 Submits")
    assert checkers.names == ["attention", "positions"]


# --- the class run itself ------------------------------------------------------------------------------------


@pytest.mark.skipif(
    not (Path(sys.executable).parent / "nbgrader").exists(), reason="nbgrader is not installed next to this Python"
)
def test_the_class_run_twice_keeps_the_line_and_grades_with_the_courses_cell_limit(tmp_path, monkeypatch):
    """Two real class runs (autograder.course.run.grade_course) of one student: the instructor's lines are there after
    each, and the run grades with the cell limit the course's settings name (c.SurvivingExecute.timeout)."""
    import shutil

    from autograder.course.run import CourseOptions, grade_course

    course, submissions = tmp_path / "course", tmp_path / "submissions"
    shutil.copytree(  # attention only: one assignment, so the run needs no --assignment
        REPOSITORY / "examples" / "submissions" / "full_solution",
        submissions / "ada",
        ignore=shutil.ignore_patterns("positions"),
    )
    prepare(course)
    append(course / INSTRUCTOR_FILE, POLICY_LINES)
    limits, real = [], steps.grade_class

    def spy(course_folder, assignment, students, *, options):
        limits.append(options.chain.cell_timeout)
        return real(course_folder, assignment, students, options=options)

    monkeypatch.setattr(steps, "grade_class", spy)
    for _ in range(2):
        run = grade_course(CourseOptions(course=course, submissions=submissions, jobs=1, progress=False))
        assert (course / INSTRUCTOR_FILE).read_text().endswith(POLICY_LINES)
    assert limits == [45, 45]
    assert run.db == sqlite_url(course.absolute()) and run.summary.skipped == ["ada"]
    assert run.table.loc["ada", "auto"] == "29 / 29"


def test_the_exchange_is_the_courses_and_a_line_it_cannot_take_is_refused_naming_it(tmp_path):
    course = tmp_path / "course"
    prepare(course)
    instructor = course / INSTRUCTOR_FILE
    original = instructor.read_text()
    assert CourseSettings.read(course).exchange.kind == "folder"  # nbgrader's folder exchange, as on one machine
    instructor.write_text(original + "c.ExchangeService.kind = 'ngshare'\nc.ExchangeService.url = 'http://hub/ng/'\n")
    chosen = CourseSettings.read(course).exchange
    assert (chosen.kind, chosen.url, chosen.token_env) == ("ngshare", "http://hub/ng/", "JUPYTERHUB_API_TOKEN")
    for line, expected in [
        ("c.ExchangeService.kind = 'ngshare'", "c.ExchangeService.kind = 'ngshare' needs c.ExchangeService.url"),
        ("c.ExchangeService.kind = 'nbexchange'", "a c.ExchangeService value is not allowed"),
        ("c.ExchangeService.urll = 'http://hub/'", "did you mean c.ExchangeService.url?"),
    ]:
        instructor.write_text(original + line + "\n")
        with pytest.raises(SettingsError) as refused:
            CourseSettings.read(course)
        assert expected in str(refused.value) and str(instructor) in str(refused.value)
