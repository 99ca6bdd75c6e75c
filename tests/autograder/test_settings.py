"""The course's settings (autograder.settings, autograder.course.config): what the project generates lives in
autograder_config.py, the instructor's nbgrader_config.py is written once and never again, every reader (the class
command, nbgrader's own commands, the grading service, the LMS export, the LTI tool) sees the same settings, and
the service applies a changed policy or due date without a restart."""

from __future__ import annotations

import datetime
import os
import pwd
import subprocess
import sys
from pathlib import Path

import pytest
from lms_course import make_gradebook
from nbgrader.api import Gradebook

from autograder.course import run as steps
from autograder.course.assignments import find
from autograder.course.config import generated_text
from autograder.course.uploads import PipelineError
from autograder.settings import (
    GENERATED_FILE,
    INSTRUCTOR_FILE,
    CourseSettings,
    LiveSettings,
    SettingsError,
    course_config,
    sqlite_url,
)

REPOSITORY = Path(__file__).resolve().parents[2]
SOURCE = REPOSITORY / "source"
ATTENTION = find(SOURCE, "attention")
POLICY_LINES = (
    "\nc.InstantChecks.attempts = 5\nc.Exchange.root = '/srv/nbgrader/exchange'\nc.SurvivingExecute.timeout = 45\n"
)

# nbgrader_config.py as the project wrote it, whole, before autograder_config.py (autograder.notebook.pipeline's
# COURSE_CONFIG, with --cell-timeout and --db), and two lines an instructor added below it
OLD_CONFIG = '''"""nbgrader configuration of this course folder, for nbgrader's own commands and Formgrader: the
repository's ({repository}), rooted here. Written by autograder; grading does not read it."""
import os

c = get_config()  # noqa: F821 (nbgrader provides it)
_repository_config = {repository!r}
if not os.path.exists(_repository_config):  # load_subconfig would skip a missing file without a word
    raise FileNotFoundError(f"the course configuration {{_repository_config}} is missing")
load_subconfig(_repository_config)  # noqa: F821
c.CourseDirectory.root = {root!r}

# --cell-timeout
c.SurvivingExecute.timeout = 20

# --db: the gradebook, for nbgrader's commands and Formgrader too
c.CourseDirectory.db_url = {db!r}
c.InstantChecks.before_due = "score"  # the instructor's
c.Exchange.root = "/srv/exchange"
'''


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


# --- the files: generated, the instructor's, migrated ---------------------------------------------------------


def test_a_new_course_gets_the_instructors_file_once_and_the_generated_one_on_every_run(tmp_path):
    course = tmp_path / "course"
    settings = prepare(course)
    instructor, generated = course / INSTRUCTOR_FILE, course / GENERATED_FILE
    assert generated.read_text() == generated_text(course.absolute())
    assert "c.CourseDirectory.root" not in instructor.read_text() and GENERATED_FILE in instructor.read_text()
    assert (settings.db, settings.cell_timeout, settings.policy.attempts) == (sqlite_url(course), None, 3)
    config = course_config(course)
    assert config.CourseDirectory.root == str(course.absolute())
    assert "ExternalVerdicts" in [step.__name__ for step in config.Autograde.autograde_preprocessors]

    append(instructor, POLICY_LINES)
    mine = instructor.read_text()
    generated.write_text("broken by hand")
    with pytest.raises(PipelineError) as refused:  # it may have named the gradebook: never guessed
        prepare(course)
    assert "It is autograder's own file: delete it and run again (with --db URL" in str(refused.value)
    generated.unlink()
    for _ in range(2):  # two class runs: the instructor's file as they left it, the generated one made again
        settings = prepare(course)
        assert instructor.read_text() == mine
        assert generated.read_text() == generated_text(course.absolute())
    assert (settings.policy.attempts, settings.cell_timeout) == (5, 45)
    assert course_config(course).Exchange.root == "/srv/nbgrader/exchange"


def test_nbgrader_s_own_commands_read_the_generated_gradebook_and_the_instructors_lines(tmp_path):
    """`nbgrader db student add` run in the course folder (as an instructor would) writes into the gradebook that
    --db named, recorded in autograder_config.py; the course's own gradebook.db is never made."""
    course, elsewhere = tmp_path / "course", tmp_path / "elsewhere"
    elsewhere.mkdir()
    url = f"sqlite:///{elsewhere / 'grades.db'}"
    prepare(course, db=url)
    prepare(course)  # a later run without --db keeps it
    assert CourseSettings.read(course).db == url
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    done = subprocess.run(
        [str(Path(sys.executable).parent / "nbgrader"), "db", "student", "add", "ada", "--last-name=Lovelace"],
        cwd=course,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    with Gradebook(url) as gradebook:
        assert [student.id for student in gradebook.students] == ["ada"]
    assert not (course / "gradebook.db").exists()


def test_a_flag_that_contradicts_the_instructors_line_is_refused_with_what_to_do(tmp_path):
    course = tmp_path / "course"
    prepare(course)
    append(course / INSTRUCTOR_FILE, POLICY_LINES)
    with pytest.raises(PipelineError) as refused:
        prepare(course, cell_timeout=20)
    message = str(refused.value)
    assert "--cell-timeout 20 differs from c.SurvivingExecute.timeout = 45" in message
    assert "change or remove that line, or run without --cell-timeout" in message
    assert prepare(course, cell_timeout=45).cell_timeout == 45  # the same value is no contradiction


def test_an_old_generated_config_is_migrated_once_and_no_line_is_lost(tmp_path):
    course = tmp_path / "course"
    course.mkdir()
    (course / ".classroom").write_text("made by an earlier version\n")
    db = f"sqlite:///{tmp_path / 'elsewhere.db'}"
    old = OLD_CONFIG.format(repository=str(REPOSITORY / "nbgrader_config.py"), root=str(course), db=db)
    (course / INSTRUCTOR_FILE).write_text(old)
    settings = prepare(course)
    migrated = (course / INSTRUCTOR_FILE).read_text()
    assert (course / f"{INSTRUCTOR_FILE}.bak").read_text() == old
    assert migrated.endswith(
        'c.InstantChecks.before_due = "score"  # the instructor\'s\nc.Exchange.root = "/srv/exchange"\n'
    )
    assert "_repository_config" not in migrated and "Written by autograder" not in migrated
    # what the earlier runs were given (--db, --cell-timeout) is now recorded in the generated file
    assert (settings.db, settings.cell_timeout, settings.policy.before_due) == (db, 20, "score")
    assert course_config(course).Exchange.root == "/srv/exchange"
    prepare(course)
    assert (course / INSTRUCTOR_FILE).read_text() == migrated
    assert sorted(p.name for p in course.glob(f"{INSTRUCTOR_FILE}*")) == [INSTRUCTOR_FILE, f"{INSTRUCTOR_FILE}.bak"]


def test_fresh_keeps_the_course_s_configuration(tmp_path):
    course = tmp_path / "course"
    prepare(course)
    append(course / INSTRUCTOR_FILE, POLICY_LINES)
    (course / "grades.csv").write_text("old grades")
    settings = prepare(course, fresh=True)
    assert not (course / "grades.csv").exists()
    assert (course / INSTRUCTOR_FILE).read_text().endswith(POLICY_LINES)
    assert settings.policy.attempts == 5


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
    checker = service.make_checker(service.ServiceOptions(course=course, exchange=exchange))
    assert (checker.policy.attempts, checker.policy.due_date()) == (3, first)

    append(course / INSTRUCTOR_FILE, "c.InstantChecks.attempts = 1\nc.InstantChecks.before_due = 'nothing'\n")
    later = datetime.datetime(2026, 12, 21, 16, 0)
    set_due(settings.db, later)
    checker.step(NoChecks())
    assert (checker.policy.attempts, checker.policy.before_due, checker.policy.due_date()) == (1, "nothing", later)
    page = service.instructor_values(checker)
    assert page["policy"][0].startswith("Up to 1 Submits are checked per 1 hour")
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
    checker = service.make_checker(service.ServiceOptions(course=course, exchange=exchange))
    assert checker.policy.attempts == 4
    kept = (course / INSTRUCTOR_FILE).read_text()
    (course / INSTRUCTOR_FILE).write_text(kept + "c.InstantChecks.attempts = (\n")
    checker.step(NoChecks())
    checker.step(NoChecks())
    assert checker.policy.attempts == 4
    error = service.instructor_values(checker)["settings_error"]
    assert f"cannot read {course.absolute() / INSTRUCTOR_FILE}: SyntaxError" in error
    assert "The settings read before stay in force." in error
    (course / INSTRUCTOR_FILE).write_text(kept + "c.InstantChecks.attempts = 2\n")
    checker.step(NoChecks())
    assert checker.policy.attempts == 2 and service.instructor_values(checker)["settings_error"] == ""


def test_live_settings_return_the_same_policy_while_nothing_changed(tmp_path):
    course = tmp_path / "course"
    prepare(course)
    live = LiveSettings(course, "attention")
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
    options = service.ServiceOptions(course=course, exchange=state / "exchange" / hub.COURSE_ID)
    checker = service.make_checker(options)
    assert (checker.policy.attempts, checker.policy.due_date()) == (5, due)
    assert service.instructor_values(checker)["policy"][0].startswith("Up to 5 Submits")


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
    shutil.copytree(REPOSITORY / "examples" / "submissions" / "full_solution", submissions / "ada")
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
