"""A course folder's two configuration files (autograder.course.config): what the project generates lives in
autograder_config.py, written again by every run; the instructor's nbgrader_config.py is written once and never
again; nbgrader's own commands read both; an old generated file is migrated once without losing a line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from autograder.assignments import find
from autograder.course import config, formgrader, guard
from autograder.course import run as steps
from autograder.course.config import generated_text
from autograder.course.uploads import PipelineError
from autograder.settings import (
    GENERATED_FILE,
    INSTRUCTOR_FILE,
    CourseSettings,
    SettingsError,
    course_config,
    sqlite_url,
)

REPOSITORY = Path(__file__).resolve().parents[3]
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


NO_VENV_PATH = "/usr/bin:/bin"  # a shell's PATH without the virtual environment's bin/ (where alembic is)


@pytest.mark.parametrize("where", ["the repository's nbgrader_config.py", "a course folder"])
def test_nbgrader_s_commands_find_alembic_without_a_path_change(tmp_path, where):
    """`.venv/bin/nbgrader generate_assignment` from a shell whose PATH lacks .venv/bin: nbgrader makes the gradebook
    with `alembic`, which the configuration finds beside the Python running it (find_alembic); before, this failed
    with FileNotFoundError: 'alembic'. Both ways nbgrader's commands run: with the repository's configuration (here a
    copy of the root, source/positions in it) and in a course folder the class command made."""
    course = tmp_path / "course"
    if where == "a course folder":
        steps.prepare_course(course, source=SOURCE, layout=find(SOURCE, "positions"))
    else:
        (course / "source").mkdir(parents=True)
        config = (REPOSITORY / "nbgrader_config.py").read_text()
        (course / "nbgrader_config.py").write_text(
            config.replace("os.path.dirname(os.path.abspath(__file__))", repr(str(REPOSITORY)))
        )
        subprocess.run(["cp", "-r", str(SOURCE / "positions"), str(course / "source")], check=True)
    assert "alembic" not in os.listdir("/usr/bin") and "alembic" not in os.listdir("/bin")
    done = nbgrader_release(course)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "alembic" not in done.stderr
    released = course / "release" / "positions"
    assert sorted(path.name for path in released.iterdir()) == [
        "positions.ipynb",
        "visible_checks.json",
    ]  # checks.py is never released
    assert (
        released.joinpath("positions.ipynb").read_bytes()
        == (REPOSITORY / "release" / "positions" / "positions.ipynb").read_bytes()
    )


@pytest.mark.parametrize("fault", ["the engine cannot be imported", "autograder_config.py is missing"])
def test_a_configuration_that_cannot_load_stops_nbgrader_before_it_releases_the_answer_key(tmp_path, fault):
    """nbgrader logs an error in a configuration file and goes on with its defaults, and those release checks.py and
    reference.py beside the notebook. The project's configuration files stop it instead (SystemExit, the one thing
    it lets through), saying which file and that nothing was done: no release folder is made. Found by an
    instructor's trial, with an import of the engine failing while it was being edited."""
    course = tmp_path / "course"
    steps.prepare_course(course, source=SOURCE, layout=find(SOURCE, "positions"))
    if fault == "the engine cannot be imported":
        # a copy of the repository's configuration beside an `autograder` package that fails to import
        broken = tmp_path / "broken"
        (broken / "autograder").mkdir(parents=True)
        (broken / "autograder" / "__init__.py").write_text("raise ImportError('half-edited module')\n")
        (broken / "nbgrader_config.py").write_text((REPOSITORY / "nbgrader_config.py").read_text())
        generated = course / GENERATED_FILE
        text = generated.read_text()
        assert repr(str(REPOSITORY / "nbgrader_config.py")) in text
        generated.write_text(
            text.replace(repr(str(REPOSITORY / "nbgrader_config.py")), repr(str(broken / "nbgrader_config.py")))
        )
        said = "ImportError: half-edited module"
    else:
        (course / GENERATED_FILE).unlink()
        said = "autograder_config.py is missing"
    done = nbgrader_release(course)
    assert done.returncode != 0
    assert said in done.stderr and "nothing was done" in done.stderr.lower(), done.stderr[-2000:]
    assert not (course / "release" / "positions").exists()
    if fault == "autograder_config.py is missing":  # (in this process the engine is imported already)
        with pytest.raises(SettingsError, match="SystemExit: .*autograder_config.py is missing"):
            course_config(course)


@pytest.mark.parametrize(
    "line",
    [
        "c.Exchange.root = EXCHANGE  # a name never defined\n",
        "c.InstantChecks.attempts = int('three')\n",
        "import a_module_that_is_not_installed\n",
    ],
)
def test_a_failing_line_of_the_instructors_releases_no_answer_key(tmp_path, line):
    """A line of the instructor's that raises makes nbgrader log the error and drop the whole course file, the
    project's ignore list with it. The environment's own file (autograder.course.guard, written by make and the
    hub's runtime) still holds that list: the release has the notebook alone, and nbgrader said what failed."""
    said = guard.write_guard(Path(sys.prefix))
    assert "WARNING" not in said and guard.guard_path(Path(sys.prefix)).read_text() == guard.GUARD
    course = tmp_path / "course"
    steps.prepare_course(course, source=SOURCE, layout=find(SOURCE, "positions"))
    append(course / INSTRUCTOR_FILE, "\n" + line)
    done = nbgrader_release(course)
    assert "nbgrader_config.py" in done.stderr and "Traceback" in done.stderr, done.stderr[-2000:]
    released = course / "release" / "positions"
    assert sorted(path.name for path in released.iterdir()) == ["positions.ipynb", "visible_checks.json"]


def test_the_guard_is_written_once_kept_in_place_and_never_replaces_a_file_of_someone_elses(tmp_path):
    prefix = tmp_path / "env"
    assert "written" in guard.write_guard(prefix)
    path = guard.guard_path(prefix)
    assert path == prefix / "etc" / "jupyter" / "nbgrader_config.py"
    text = path.read_text()
    # the ignore list names the hidden checks (a file or a package) and the reference; it loads without the engine
    assert "'checks.py', 'checks', 'reference.py'" in text and "import" not in text.split('"""')[-1]
    assert guard.write_guard(prefix).endswith("in place")
    path.write_text(text + "c.Extra = 1\n")  # an edit to the guard: written again
    assert "written" in guard.write_guard(prefix) and path.read_text() == guard.GUARD
    theirs = "c = get_config()\nc.Exchange.root = '/srv/exchange'\n"
    path.write_text(theirs)
    said = guard.write_guard(prefix)
    assert said.startswith("WARNING") and "c.CourseDirectory.ignore" in said and "left as it is" in said
    assert path.read_text() == theirs


# --- a course folder an earlier version configured: names of modules that have moved since ------------------------

# autograder_config.py as a version before the engine's packages might have left it: the chain imported by its old
# name, autograder.pipeline (autograder.notebook.pipeline now), with the gradebook and cell limit runs were given
STALE_GENERATED = """import os

c = get_config()  # noqa: F821
from autograder.pipeline import chain_config

c.merge(chain_config())
c.CourseDirectory.root = {root!r}

# --cell-timeout
c.SurvivingExecute.timeout = 20

# --db: the gradebook, for nbgrader's commands and Formgrader too
c.CourseDirectory.db_url = {db!r}
"""


def stale_course(tmp_path: Path) -> tuple[Path, str]:
    course, url = tmp_path / "course", f"sqlite:///{tmp_path / 'grades.db'}"
    steps.prepare_course(course, source=SOURCE, layout=find(SOURCE, "positions"))
    (course / GENERATED_FILE).write_text(STALE_GENERATED.format(root=str(course), db=url))
    return course, url


def nbgrader_release(course: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(Path(sys.executable).parent / "nbgrader"), "generate_assignment", "positions"],
        cwd=course,
        env={"HOME": os.environ.get("HOME", "/root"), "PATH": NO_VENV_PATH},
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_the_names_of_moved_modules_are_found_in_imports_and_values_not_in_messages(tmp_path):
    path = tmp_path / "nbgrader_config.py"
    path.write_text(
        "import autograder.pipeline\n"
        "from autograder.notebook.pipeline import chain_config\n"
        "c.ExchangeFactory.collect = 'autograder.collect.OwnCollect'\n"
        "c.ExchangeFactory.release = 'autograder.hub.collect.OwnCollect'\n"
        "from autograder.course import grade_course\n"
        "raise SystemExit('run python -m autograder.classroom on this course')  # a message, not a name\n"
        "# from autograder.answer_runner import x\n"
    )
    assert config.removed_names(path) == [
        (1, "autograder.pipeline", "autograder.notebook.pipeline"),
        (3, "autograder.collect", "autograder.hub.collect"),
        (5, "autograder.course.grade_course", ""),
    ]
    path.write_text("this is not Python (\n")
    assert config.removed_names(path) == []  # loading it says what is wrong


def test_a_generated_file_naming_a_moved_module_is_written_again_with_its_gradebook_and_cell_limit(tmp_path, capsys):
    """The class command, the hub and Formgrader write it again (prepare_course, formgrader.configured); for nbgrader's
    own commands, `python -m autograder.course.config --course DIR` does, without grading."""
    course, url = stale_course(tmp_path)
    with pytest.raises(SettingsError, match="No module named 'autograder.pipeline'"):
        course_config(course)  # as nbgrader's commands read it today
    assert config.main(["--course", str(course)]) == 0
    printed = capsys.readouterr().out
    assert f"{course / GENERATED_FILE} was written by an earlier version and named autograder.pipeline" in printed
    assert "written again (its gradebook and cell limit kept)" in printed
    assert (course / GENERATED_FILE).read_text() == generated_text(course.absolute(), db=url, cell_timeout=20)
    settings = CourseSettings.read(course)
    assert (settings.db, settings.cell_timeout) == (url, 20)
    assert "ExternalVerdicts" in [step.__name__ for step in course_config(course).Autograde.autograde_preprocessors]
    (course / GENERATED_FILE).write_text(STALE_GENERATED.format(root=str(course), db=url))
    assert formgrader.configured(course)[0].endswith("written again (its gradebook and cell limit kept)")
    assert CourseSettings.read(course).db == url
    assert formgrader.configured(tmp_path) == [] and not (tmp_path / GENERATED_FILE).exists()  # not a course of ours


def test_nbgrader_in_a_course_whose_generated_file_names_a_moved_module_stops_and_says_what_to_run(tmp_path):
    """Before, nbgrader logged the ImportError and released with its defaults (checks.py and reference.py beside the
    notebook). The instructor's file stops it, naming the command that writes the file again; after that command,
    nbgrader releases the notebook alone."""
    course, _ = stale_course(tmp_path)
    done = nbgrader_release(course)
    assert done.returncode != 0
    said = f"{course / GENERATED_FILE} cannot be loaded (ModuleNotFoundError: No module named 'autograder.pipeline')"
    assert said in done.stderr and f"run python -m autograder.course.config --course {course}; nothing was done" in (
        done.stderr
    ), done.stderr[-2000:]
    assert not (course / "release" / "positions").exists()
    assert config.main(["--course", str(course)]) == 0
    done = nbgrader_release(course)
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(path.name for path in (course / "release" / "positions").iterdir()) == [
        "positions.ipynb",
        "visible_checks.json",
    ]


def test_an_instructors_file_naming_a_moved_module_is_refused_with_each_line_and_where_it_is_now(tmp_path, capsys):
    course = tmp_path / "course"
    prepare(course)
    append(course / INSTRUCTOR_FILE, "\nfrom autograder.pipeline import chain_config\nc.merge(chain_config())\n")
    mine = (course / INSTRUCTOR_FILE).read_text()
    line = mine.splitlines().index("from autograder.pipeline import chain_config") + 1
    with pytest.raises(PipelineError) as refused:
        prepare(course)
    message = str(refused.value)
    assert message.startswith(f"{course.absolute() / INSTRUCTOR_FILE} names modules of autograder that have moved")
    assert f"line {line}: autograder.pipeline is autograder.notebook.pipeline now" in message
    assert "change each name to where it is now, or delete a line that loads the grading chain" in message
    assert (course / INSTRUCTOR_FILE).read_text() == mine  # the instructor's: never rewritten
    assert config.main(["--course", str(course)]) == 1
    assert f"line {line}: autograder.pipeline is autograder.notebook.pipeline now" in capsys.readouterr().err
