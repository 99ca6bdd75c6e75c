"""The course's settings, read in one place from its folder: the gradebook's URL, the limits, the instant checks'
policy and the due date.

    course = Course.read(folder)                    # read(folder, db=url): a --db given on a command line wins
    course.db, course.settings.cell_timeout, course.settings.policy, course.source("attention")
    course.settings.due("attention")                # the policy's due date, else the gradebook's
    course.settings.exchange                        # which exchange the Submits come through (c.ExchangeService.*)

A command reads the course once, into a ``Course`` (its folder, its settings, its gradebook, the folders the
stages read), when it starts (the class run, the grading service, the hub, the report, the LMS export and the LTI
tool, the term and appeals commands), and hands that value to every stage: no stage below the commands reads the
settings itself (tests/autograder/test_architecture.py keeps it so). Which file holds what, and every setting with
its default: docs/configuration.md.

The course's configuration is nbgrader's: the course folder's nbgrader_config.py (the instructor's), which loads
autograder_config.py (what the project generates, autograder.course.config) first. It is read here as nbgrader reads
it, so the class command, the grading service, the LMS export and the LTI tool see what nbgrader's own commands
and Formgrader see, and none of them holds a default of its own: the gradebook is the database
``c.CourseDirectory.db_url`` names, else the course's gradebook.db.

A reader that runs for weeks (the grading service) holds a LiveSettings, made from the Course read at its start: the
files are read again when one of them changes, and the gradebook's due date each time the policy is asked for, so a
changed policy or due date applies without a restart.
"""

from __future__ import annotations

import dataclasses
import datetime
import difflib
import logging
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy
from nbgrader.api import Assignment
from sqlalchemy.engine import make_url
from traitlets import Enum, TraitError, Unicode
from traitlets.config import Config, Configurable, PyFileConfigLoader

from autograder import REPOSITORY
from autograder.policy import InstantChecks
from autograder.term import LateDays, Term
from autograder.timeouts import CHECKS_BUDGET, IDLE_TIMEOUT

INSTRUCTOR_FILE = "nbgrader_config.py"  # the instructor's: written once when missing, never again
GENERATED_FILE = "autograder_config.py"  # the project's: written again by every run, loaded first by the other
CHAIN_FILE = REPOSITORY / "nbgrader_config.py"  # the grading chain, which the generated file loads
PENALTIES = ("none", "zero")  # nbgrader's LateSubmissionPlugin.penalty_method
log = logging.getLogger("autograder.settings")


EXCHANGES = ("folder", "ngshare")  # nbgrader's exchange folder on one machine; the ngshare service (Kubernetes)


class ExchangeService(Configurable):
    """Which exchange a course's Submits come through (``c.ExchangeService.*`` in nbgrader_config.py), for the
    grading service and Collect alike (autograder.exchange.adapter): nbgrader's folder on one machine, or an ngshare
    service (a JupyterHub service, the exchange of a hub on Kubernetes)."""

    kind = Enum(EXCHANGES, "folder", help="'folder': nbgrader's exchange folder; 'ngshare': an ngshare service").tag(
        config=True
    )
    url = Unicode(
        "",
        help="ngshare's API, e.g. http://hub:8000/services/ngshare/ (its JupyterHub service URL; only for 'ngshare')",
    ).tag(config=True)
    token_env = Unicode(
        "JUPYTERHUB_API_TOKEN",
        help="The environment variable holding the hub token of the instructor's account (never the token itself)",
    ).tag(config=True)


class SettingsError(ValueError):
    """The course's settings cannot be read; the message names the file and says what to change."""


def sqlite_url(course: Path) -> str:
    """nbgrader's default database of a course folder (CourseDirectory.db_url's default)."""
    return f"sqlite:///{Path(course).absolute() / 'gradebook.db'}"


def shown_url(url: str) -> str:
    """The database URL without its password, for messages."""
    return make_url(url).render_as_string(hide_password=True)


class OwnLines(PyFileConfigLoader):
    """A configuration file's own lines, without the files it loads with ``load_subconfig``."""

    def load_subconfig(self, fname, path=None):
        return None


class CourseLines(PyFileConfigLoader):
    """The course's configuration files as nbgrader reads them, but for the repository's grading chain: it sets
    none of the settings read here (the limits' defaults are autograder.timeouts'), and
    loading it imports the whole chain into the reader (the service, the LMS export, the LTI tool)."""

    def load_subconfig(self, fname, path=None):
        if Path(path or self.path, fname).resolve() != CHAIN_FILE.resolve():
            super().load_subconfig(fname, path)


def load_file(path: Path, loader: type[PyFileConfigLoader] = PyFileConfigLoader) -> Config:
    """One configuration file as nbgrader reads it (``loader``: OwnLines for its own lines only)."""
    try:
        return loader(path.name, path=str(path.parent)).load_config()
    except (Exception, SystemExit) as error:  # noqa: BLE001 - any error in the instructor's Python, or the
        # course configuration's own refusal to load half (a SystemExit, which nbgrader lets through): say which file
        raise SettingsError(
            f"cannot read {path}: {type(error).__name__}: {error}; correct it (nbgrader's commands and Formgrader "
            "read it too)"
        ) from None


def course_config(course: Path, loader: type[PyFileConfigLoader] = PyFileConfigLoader) -> Config:
    """The course's configuration: its nbgrader_config.py (which loads autograder_config.py), or autograder_config.py
    alone while the instructor's file is missing, or nothing (an empty Config) in a folder with neither.
    ``loader``: CourseLines to leave the repository's grading chain out."""
    for name in (INSTRUCTOR_FILE, GENERATED_FILE):
        if (Path(course) / name).is_file():
            return load_file(Path(course) / name, loader)
    return Config()


def own_lines(path: Path) -> Config:
    """The settings ``path`` itself writes (none when it does not exist), without the files it loads."""
    return load_file(path, OwnLines) if path.is_file() else Config()


def file_stamps(course: Path) -> tuple:
    """(name, modification time, size) of each file the settings are read from: a change to one changes this."""
    stamps = []
    for name in (INSTRUCTOR_FILE, GENERATED_FILE):
        try:
            status = (Path(course) / name).stat()
        except OSError:
            continue
        stamps.append((name, status.st_mtime_ns, status.st_size))
    return tuple(stamps)


def checked_names(config: Config, source: Path, kind: type, what: str) -> None:
    """SettingsError naming the line for a ``c.<kind>.<name>`` that is not one of ``kind``'s settings (``what``)."""
    names, section = set(kind.class_trait_names(config=True)), kind.__name__
    for name in config[section] if section in config else ():
        if name not in names:
            near = difflib.get_close_matches(name, names, n=1)
            hint = f"did you mean c.{section}.{near[0]}?" if near else f"{what}'s names: {', '.join(sorted(names))}"
            raise SettingsError(f"{source}: c.{section}.{name} is not a setting of {what}: {hint}")


def checked_late_days(config: Config, source: Path) -> LateDays:
    """The course's late days (c.LateDays.*); SettingsError naming the line for a value or name it cannot take."""
    checked_names(config, source, LateDays, "the late days")
    try:
        rule = LateDays(config=config)
    except TraitError as error:
        raise SettingsError(f"{source}: a c.LateDays value is not allowed: {error}") from None
    if rule.tokens < 0 or not 0 < rule.hours <= 24 * 366:
        raise SettingsError(
            f"{source}: c.LateDays.tokens = {rule.tokens!r}, c.LateDays.hours = {rule.hours!r}: tokens are 0 or more, "
            "hours above 0 and at most a year"
        )
    return rule


def checked_exchange(config: Config, source: Path) -> ExchangeService:
    """The course's exchange (c.ExchangeService.*); SettingsError naming the line for a value or name it cannot
    take."""
    checked_names(config, source, ExchangeService, "the exchange")
    try:
        exchange = ExchangeService(config=config)
    except TraitError as error:
        raise SettingsError(f"{source}: a c.ExchangeService value is not allowed: {error}") from None
    if exchange.kind == "ngshare" and not exchange.url.startswith(("http://", "https://")):
        raise SettingsError(
            f"{source}: c.ExchangeService.kind = 'ngshare' needs c.ExchangeService.url, ngshare's API (its "
            f"JupyterHub service URL, e.g. 'http://hub:8000/services/ngshare/'); it is {exchange.url!r}"
        )
    return exchange


def checked_policy(config: Config, source: Path) -> InstantChecks:
    """The instant checks' policy in ``config``; SettingsError naming the line for a value or name it cannot take."""
    checked_names(config, source, InstantChecks, "the policy")
    try:
        policy = InstantChecks(config=config)
        policy.due_date()
    except TraitError as error:
        raise SettingsError(f"{source}: a c.InstantChecks value is not allowed: {error}") from None
    except ValueError:
        raise SettingsError(
            f"{source}: c.InstantChecks.due = {policy.due!r} is not a date: write it as ISO 8601, "
            "e.g. '2026-12-14T17:00:00+01:00' (UTC when it names no zone), or remove it to use the gradebook's"
        ) from None
    return policy


def gradebook_exists(url: str) -> bool:
    """Whether the gradebook is there to read: a SQLite file is looked for, another database is taken to exist."""
    parsed = make_url(url)
    if not parsed.drivername.startswith("sqlite") or parsed.database in (None, "", ":memory:"):
        return True
    return parsed.query.get("mode") == "memory" or Path(parsed.database).is_file()


class GradebookDates:
    """The assignments' due dates in the gradebook (nbgrader's ``assignment`` table), on one connection pool, so
    asking each round costs one small query; nothing is created where there is no gradebook yet."""

    def __init__(self, url: str):
        self.url, self.engine = url, None

    def due(self, assignment: str) -> datetime.datetime | None:
        """The assignment's due date (naive UTC, as nbgrader keeps it), None without one or without a gradebook."""
        if not gradebook_exists(self.url):
            return None
        try:
            if self.engine is None:
                self.engine = sqlalchemy.create_engine(self.url)
            with self.engine.connect() as connection:
                if not sqlalchemy.inspect(connection).has_table(Assignment.__tablename__):
                    return None
                query = sqlalchemy.select(Assignment.duedate).where(Assignment.name == assignment)
                return connection.execute(query).scalar()
        except sqlalchemy.exc.SQLAlchemyError as error:
            raise SettingsError(
                f"cannot read the due date of {assignment} from the gradebook {shown_url(self.url)}: "
                f"{type(error).__name__}: {error}"
            ) from None

    def close(self) -> None:
        if self.engine is not None:
            self.engine.dispose()


@dataclass(frozen=True)
class CourseSettings:
    """What a course folder sets, read once (``read``): every command takes this instead of a default of its own."""

    course: Path
    db: str  # the gradebook's URL (and the grading service's attempts, beside it)
    cell_timeout: (
        int | None
    )  # seconds per cell in the student's kernel (c.SurvivingExecute.timeout); None: timeouts.CELL_TIMEOUT
    policy: InstantChecks  # the instant checks' policy (c.InstantChecks.*), its due date as written (maybe none)
    stamps: tuple = ()  # the files' stamps when read (file_stamps)
    notebook_budget: int | None = None  # the notebook's wall-clock seconds in the student's kernel, every cell
    # together (c.SurvivingExecute.notebook_timeout); None: timeouts.NOTEBOOK_BUDGET
    checks_budget: float | None = None  # CPU seconds for all of a notebook's hidden checks
    # (c.ExternalVerdicts.timeout); None: timeouts.CHECKS_BUDGET
    idle_timeout: float | None = None  # seconds a cell of the student's kernel may wait without computing or printing
    # (c.SurvivingExecute.idle_timeout; 0: no limit); None: timeouts.IDLE_TIMEOUT
    late_days: LateDays = dataclasses.field(default_factory=LateDays)  # the course's late days (c.LateDays.*)
    late_penalty: str | None = None  # c.LateSubmissionPlugin.penalty_method ("none", "zero"); None: nbgrader's
    exchange: ExchangeService = dataclasses.field(
        default_factory=ExchangeService
    )  # where Submits come from (c.ExchangeService.*)

    @classmethod
    def read(cls, course: Path, *, db: str | None = None) -> CourseSettings:
        """The settings of ``course``; ``db``: a gradebook named on a command line, over the configuration's.
        SettingsError when a file cannot be read or a value is not allowed."""
        course = Path(course).absolute()
        stamps = file_stamps(course)
        config = course_config(course, CourseLines)
        named = config.CourseDirectory.get("db_url") if "CourseDirectory" in config else None
        timeout = config.SurvivingExecute.get("timeout") if "SurvivingExecute" in config else None
        budget = config.SurvivingExecute.get("notebook_timeout") if "SurvivingExecute" in config else None
        if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget < 1):
            raise SettingsError(
                f"{course / INSTRUCTOR_FILE}: c.SurvivingExecute.notebook_timeout = {budget!r} is not a number of "
                "seconds: write a whole number of seconds of at least 1 (the notebook's wall-clock budget)"
            )
        idle = config.SurvivingExecute.get("idle_timeout") if "SurvivingExecute" in config else None
        if idle is not None and (isinstance(idle, bool) or not isinstance(idle, (int, float)) or not 0 <= idle < 1e6):
            raise SettingsError(
                f"{course / INSTRUCTOR_FILE}: c.SurvivingExecute.idle_timeout = {idle!r} is not a number of seconds: "
                "write the seconds a cell may wait without computing or printing, 0 or more (0: no limit; the "
                f"default: {IDLE_TIMEOUT:g})"
            )
        checks = config.ExternalVerdicts.get("timeout") if "ExternalVerdicts" in config else None
        if checks is not None and (isinstance(checks, bool) or not isinstance(checks, (int, float)) or checks <= 0):
            raise SettingsError(
                f"{course / INSTRUCTOR_FILE}: c.ExternalVerdicts.timeout = {checks!r} is not a number of seconds: "
                "write the CPU seconds all of a notebook's hidden checks may use, a number above 0 "
                f"(the default: {CHECKS_BUDGET:g})"
            )
        policy = checked_policy(config, course / INSTRUCTOR_FILE)
        late_days = checked_late_days(config, course / INSTRUCTOR_FILE)
        exchange = checked_exchange(config, course / INSTRUCTOR_FILE)
        penalty = config.LateSubmissionPlugin.get("penalty_method") if "LateSubmissionPlugin" in config else None
        if penalty is not None and penalty not in PENALTIES:
            raise SettingsError(
                f"{course / INSTRUCTOR_FILE}: c.LateSubmissionPlugin.penalty_method = {penalty!r} is not one of "
                f"nbgrader's: {', '.join(map(repr, PENALTIES))}"
            )
        return cls(
            course=course,
            db=str(db or named or sqlite_url(course)),
            cell_timeout=None if timeout is None else int(timeout),
            policy=policy,
            stamps=stamps,
            notebook_budget=budget,
            checks_budget=None if checks is None else float(checks),
            idle_timeout=None if idle is None else float(idle),
            late_days=late_days,
            late_penalty=penalty,
            exchange=exchange,
        )

    def has_gradebook(self) -> bool:
        return gradebook_exists(self.db)

    def term(self) -> Term:
        """The term's tables in the course's database (each student's own due date, their late days), under the
        course's c.LateDays."""
        return Term(self.db, rule=self.late_days)

    def due(self, assignment: str, dates: GradebookDates | None = None) -> datetime.datetime | None:
        """The due date in force for ``assignment``: the policy's (c.InstantChecks.due), else the gradebook's."""
        return self.policy.due_date() or (dates or GradebookDates(self.db)).due(assignment)

    def policy_for(self, assignment: str, dates: GradebookDates | None = None) -> InstantChecks:
        """The policy with the due date in force for ``assignment`` (a new object; this one is left as read)."""
        due = self.due(assignment, dates)
        return InstantChecks(config=self.policy.config, due=due.isoformat() if due else "")


@dataclass(frozen=True)
class Course:
    """One course, read once by the command that serves it (``Course.read``) and handed to every stage: its folder,
    its settings, its gradebook and the folders nbgrader's layout gives each stage (the stages ask this value for
    them instead of reading the settings again)."""

    folder: Path  # the course folder, absolute
    settings: CourseSettings  # read from the folder's configuration (settings.course == folder)

    @classmethod
    def read(cls, folder: Path, *, db: str | None = None) -> Course:
        """The course in ``folder``; ``db``: a gradebook named on a command line, over the configuration's.
        SettingsError when a file cannot be read or a value is not allowed."""
        settings = CourseSettings.read(folder, db=db)
        return cls(settings.course, settings)

    @property
    def db(self) -> str:
        """The gradebook's URL (the grading service's attempts, the term's tables and the appeals beside it)."""
        return self.settings.db

    def source(self, assignment: str) -> Path:
        """source/<assignment>/: the assignment's notebook, checks.py and reference.py (never released)."""
        return self.folder / "source" / assignment

    def release(self, assignment: str) -> Path:
        """release/<assignment>/: the student version, made by nbgrader generate_assignment."""
        return self.folder / "release" / assignment

    def submitted(self, student: str, assignment: str) -> Path:
        return self.folder / "submitted" / student / assignment

    def autograded(self, student: str, assignment: str) -> Path:
        return self.folder / "autograded" / student / assignment

    def feedback(self, student: str, assignment: str) -> Path:
        return self.folder / "feedback" / student / assignment


class LiveSettings:
    """The course's settings as they are now, for the grading service: ``policy()`` reads the files again when
    one changed (its modification time or size) and the gradebook's due date each time, and returns the same
    object while nothing changed. A file that cannot be read keeps the last settings in force, and ``error`` says
    why (the instructor's page shows it) until the file is corrected. The gradebook stays the one read first."""

    def __init__(self, course: Course, assignment: str):
        self.assignment = assignment
        self.settings = course.settings
        self.dates = GradebookDates(self.settings.db)
        self.error, self.failed_stamps = "", None
        self.due = self.settings.due(assignment, self.dates)
        self.current = self.settings.policy_for(assignment, self.dates)

    @property
    def db(self) -> str:
        return self.settings.db

    @property
    def course(self) -> Course:
        """The course with the settings in force now (its gradebook the one read first)."""
        return Course(self.settings.course, self.settings)

    def reread(self) -> bool:
        """The files read again if one changed since; returns whether the settings changed."""
        stamps = file_stamps(self.settings.course)
        if stamps in (self.settings.stamps, self.failed_stamps):
            return False
        try:
            settings = CourseSettings.read(self.settings.course)
        except SettingsError as error:
            self.error, self.failed_stamps = f"{error}. The settings read before stay in force.", stamps
            log.warning("%s", self.error)
            return False
        self.error, self.failed_stamps = "", None
        if settings.db != self.settings.db:
            self.error = (
                f"the gradebook is now {shown_url(settings.db)} in {settings.course / INSTRUCTOR_FILE}: the service "
                f"goes on with {shown_url(self.settings.db)} until it is restarted"
            )
        self.settings = dataclasses.replace(settings, db=self.settings.db)
        return True

    def policy(self) -> InstantChecks:
        """The policy in force now, with its due date (the policy's, else the gradebook's)."""
        changed = self.reread()
        try:
            due = self.settings.due(self.assignment, self.dates)
        except SettingsError as error:  # the gradebook is unreachable for a moment: the last due date stays
            log.warning("%s", error)
            due = self.due
        if changed or due != self.due:
            self.due = due
            self.current = InstantChecks(config=self.settings.policy.config, due=due.isoformat() if due else "")
        return self.current
