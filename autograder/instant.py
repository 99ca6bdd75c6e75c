"""Instant checks: each Submit in nbgrader's exchange gets the hidden checks' verdicts within seconds.

The checks are the class run's own (autograder.answer_grading.grade_answers: the answer cells run in the bare
sandboxed runner, the verdicts are judged in the grader); the student's kernel never runs, so a check costs
about a second of CPU. What the instructor decides is a ``InstantChecks`` (traitlets, read from the course's
nbgrader_config.py as ``c.InstantChecks.*``): how many Submits are checked per student per period, what the
page shows before and after the due date, and that nothing is checked after it.

    policy = load_policy(course)                    # c.InstantChecks.attempts = 3, period = 3600, ...
    checker = Checker(course=course, exchange=exchange_course_folder, policy=policy, store=Attempts(url))
    checker.scan()                                  # new Submits -> attempts (pending, queued or late)
    checker.run_once(pool)                          # start what the policy allows, fair per student

The official grade stays the class run's (autograder.classroom); an attempt's points are the same sum of the
same verdicts on the gradebook's scale, so the class run's automatic score equals the last instant score.
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

import nbformat
from traitlets import Bool, Enum, Float, Integer, Unicode
from traitlets.config import Configurable, PyFileConfigLoader

from autograder import assignments
from autograder.answer_grading import answer_sources, grade_answers
from autograder.attempts import Attempt, Attempts, utcnow
from autograder.grading.worker import unreadable

log = logging.getLogger("autograder.instant")

SHOWN = ("verdicts", "score", "nothing")  # what a student's page shows of a checked attempt
LARGEST = 20 * 2**20  # bytes: a submitted notebook larger than this is not checked
INBOUND = re.compile(r"^(?P<student>[^+/]+)\+(?P<assignment>[^+/]+)\+(?P<timestamp>[^+/]+)(\+[^/]*)?$")


class InstantChecks(Configurable):
    """The instructor's policy for instant checks (``c.InstantChecks.*``); the student's page states it."""

    enabled = Bool(True, help="Check Submits instantly at all").tag(config=True)
    attempts = Integer(3, help="Submits checked per student per period (later ones wait, shown as queued)").tag(
        config=True
    )
    period = Float(3600.0, help="The period, in seconds, that 'attempts' counts over").tag(config=True)
    before_due = Enum(SHOWN, "verdicts", help="What a checked attempt shows before the due date").tag(config=True)
    after_due = Enum(SHOWN, "score", help="What a checked attempt shows after the due date").tag(config=True)
    due = Unicode("", help="The due date (ISO, UTC unless it names a zone); default: the gradebook's").tag(config=True)
    check_after_due = Bool(False, help="Check Submits made after the due date too (default: never)").tag(config=True)
    lms = Bool(
        False,
        help="Send each instant score to the LMS as Pending (autograder.lti; the service's --lti names the tool's "
        "config); the class run's score replaces it",
    ).tag(config=True)

    def due_date(self) -> datetime.datetime | None:
        if not self.due:
            return None
        value = datetime.datetime.fromisoformat(self.due)
        if value.tzinfo is not None:
            value = value.astimezone(datetime.UTC).replace(tzinfo=None)
        return value

    def shown(self, now: datetime.datetime) -> str:
        due = self.due_date()
        return self.after_due if due is not None and now > due else self.before_due

    def describe(self) -> list[str]:
        """The policy in sentences, for the student's page."""
        hours = self.period / 3600
        period = f"{hours:g} hour" + ("s" if hours != 1 else "") if self.period >= 3600 else f"{self.period:g} s"
        lines = [
            f"Up to {self.attempts} Submits are checked per {period}; later ones are queued and checked when "
            "the window reopens.",
            f"Before the due date a checked Submit shows {explain(self.before_due)}; after it, "
            f"{explain(self.after_due)}.",
        ]
        due = self.due_date()
        if due is not None:
            checked = "are checked too" if self.check_after_due else "are not checked"
            lines.append(f"Submits after the due date ({due:%Y-%m-%d %H:%M} UTC) {checked}.")
        lines.append("Your grade is the instructor's class run; these checks tell you early what it will say.")
        return lines


def explain(shown: str) -> str:
    return {
        "verdicts": "the score per function and what failed",
        "score": "the score per function only",
        "nothing": "only that it was received",
    }[shown]


def load_policy(course: Path) -> InstantChecks:
    """The policy in the course folder's nbgrader_config.py (``c.InstantChecks.*``), else the defaults."""
    config_file = Path(course) / "nbgrader_config.py"
    if not config_file.is_file():
        return InstantChecks()
    return InstantChecks(config=PyFileConfigLoader(config_file.name, str(config_file.parent)).load_config())


# --- a Submit in the exchange --------------------------------------------------------------------------


@dataclass(frozen=True)
class Submit:
    key: str  # the inbound folder's name: student+assignment+timestamp+random
    student: str
    assignment: str
    submitted: datetime.datetime
    folder: Path


def parse_timestamp(text: str) -> datetime.datetime:
    """nbgrader's timestamp ('2026-12-01 10:00:00.123456 UTC') as naive UTC."""
    text = text.strip()
    if text.endswith(" UTC"):
        text = text[: -len(" UTC")]
    value = datetime.datetime.fromisoformat(text)
    return value.astimezone(datetime.UTC).replace(tzinfo=None) if value.tzinfo else value


def inbound_submits(inbound: Path, assignment: str) -> list[Submit]:
    """The Submits of ``assignment`` in an exchange's inbound folder, oldest first (other entries ignored)."""
    found = []
    try:
        entries = list(inbound.iterdir())
    except FileNotFoundError:
        return []
    for entry in entries:
        match = INBOUND.match(entry.name)
        if not match or match["assignment"] != assignment or entry.is_symlink() or not entry.is_dir():
            continue
        try:
            submitted = parse_timestamp(match["timestamp"])
        except ValueError:
            continue
        found.append(Submit(entry.name, match["student"], assignment, submitted, entry))
    return sorted(found, key=lambda submit: (submit.submitted, submit.key))


# --- the policy's window and the fair queue ---------------------------------------------------------------


def window_reopens(history: list[Attempt], policy: InstantChecks, now: datetime.datetime) -> datetime.datetime | None:
    """None when the student may have a Submit checked now, else when the window reopens."""
    period = datetime.timedelta(seconds=policy.period)
    started = sorted(a.started for a in history if a.started is not None and now - a.started < period)
    if len(started) < policy.attempts:
        return None
    return started[len(started) - policy.attempts] + period


def next_in_line(waiting: list[Attempt], started: dict[str, datetime.datetime]) -> list[Attempt]:
    """Each student's oldest waiting attempt, the student served longest ago first (then the oldest Submit).

    A student who hammers Submit has one attempt in line at a time, behind everyone served before them.
    """
    first: dict[str, Attempt] = {}
    for attempt in waiting:
        first.setdefault(attempt.student, attempt)
    never = datetime.datetime.min
    return sorted(first.values(), key=lambda a: (started.get(a.student, never), a.submitted, a.id))


# --- checking one notebook ------------------------------------------------------------------------------


class NotCheckable(ValueError):
    """The Submit cannot be checked; the message says why, in words for the student."""


def submitted_bytes(path: Path) -> bytes:
    """The bytes of the Submit's file at ``path``, never through a link: the Submit's folder and the file are
    opened without following one, so a student who swaps either for a link after the scan (they own both) reads
    nothing of the instructor's through the verdict. Raises NotCheckable for a link, a missing file, anything
    but a plain file, and a file over LARGEST."""
    try:
        folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            handle = os.open(path.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
        finally:
            os.close(folder)
    except FileNotFoundError:
        raise NotCheckable(f"the Submit holds no {path.name}: submit the assignment's notebook") from None
    except OSError:  # ELOOP or ENOTDIR: a link where the Submit's folder or notebook should be
        raise NotCheckable(f"{path.name} is not a plain file in its Submit: submit the notebook itself") from None
    with os.fdopen(handle, "rb") as file:
        status = os.fstat(file.fileno())
        if not stat.S_ISREG(status.st_mode):
            raise NotCheckable(f"{path.name} is not a plain file in its Submit: submit the notebook itself")
        if status.st_size > LARGEST:
            raise NotCheckable(
                f"{path.name} is {status.st_size / 2**20:.1f} MB, over the {LARGEST // 2**20} MB that is checked: "
                "clear the outputs (Edit > Clear Outputs of All Cells), save and submit again"
            )
        return file.read(LARGEST + 1)


def read_notebook(path: Path) -> nbformat.NotebookNode:
    data = submitted_bytes(path)
    reason = unreadable(data)  # the class run's rule (grading.worker): empty, not text, not a notebook, format
    if reason:
        raise NotCheckable(f"{path.name}: {reason}; open it in JupyterLab, save it and submit again")
    return nbformat.reads(data.decode("utf-8"), as_version=4)


def cell_points(source_notebook: Path) -> dict[str, float]:
    """{grade id: points} of the source notebook's grade cells: the gradebook's scale."""
    notebook = json.loads(source_notebook.read_text(encoding="utf-8"))
    points = {}
    for cell in notebook["cells"]:
        flags = cell.get("metadata", {}).get("nbgrader", {})
        if flags.get("grade"):
            points[flags["grade_id"]] = float(flags.get("points", 0))
    return points


def check_notebook(*, source: Path, notebook_path: Path) -> tuple[float, float, list[dict]]:
    """(points, max points, [verdict as dict]) of one submitted notebook, by the assignment in ``source``.

    Runs the class run's hidden checks (grade_answers) on the notebook's answer cells; points are on the
    gradebook's scale. Raises NotCheckable with a reason for the student.
    """
    checks = assignments.load(source)
    notebook = read_notebook(notebook_path)
    scale = cell_points(next(source.glob("*.ipynb")))
    verdicts = grade_answers(checks, answer_sources(notebook))
    points = sum(verdict.scaled(scale.get(check, verdict.max_points)) for check, verdict in verdicts.items())
    top = sum(scale.get(check, verdict.max_points) for check, verdict in verdicts.items())
    return round(points, 2), top, [verdict.to_dict() for verdict in verdicts.values()]


# --- the loop: find Submits, start what the policy allows, record what finished --------------------------


class Checker:
    """Finds the Submits of one assignment in the exchange and checks them on a pool, fair per student.

    pool: anything with ``submit(function, **keywords) -> future`` (concurrent.futures' executors, or a Dask
    ``distributed.Client`` to scale out); students: a function returning the known student ids; admit: a
    function (folder, student) -> why the folder is not that student's own Submit, or None (on a server with an
    account per student, autograder.collect.refusal: the same rule as the instructor's Collect); checked: a
    function called with each attempt once its verdicts are recorded (the service sends its score to the LMS).
    """

    def __init__(
        self,
        *,
        source: Path,
        inbound: Path,
        store: Attempts,
        policy: InstantChecks,
        students,
        slots=2,
        admit=None,
        checked=None,
    ):
        self.source, self.inbound, self.store, self.policy = Path(source), Path(inbound), store, policy
        self.admit, self.checked = admit, checked
        self.assignment = self.source.name
        self.notebook = next(self.source.glob("*.ipynb")).name
        self.students, self.slots = students, slots
        self.running: dict[int, object] = {}  # attempt id -> future
        self.store.recover()  # a stop mid-check: those attempts are checked again, once

    def scan(self, now: datetime.datetime | None = None) -> int:
        """Record the Submits not seen before: pending, late (after the due date) or refused (unknown student)."""
        now = now or utcnow()
        known, added = self.store.known_keys(), 0
        due, students = self.policy.due_date(), None
        for submit in inbound_submits(self.inbound, self.assignment):
            if submit.key in known:
                continue
            students = self.students() if students is None else students
            status, message = "pending", ""
            forged = self.admit(submit.folder, submit.student) if self.admit else None
            if submit.student not in students:
                status = "refused"
                message = f"{submit.student} is not a student of this course: ask the instructor to add the account"
            elif forged:
                status, message = "refused", f"not checked: {forged}"
            elif due is not None and submit.submitted > due and not self.policy.check_after_due:
                status, message = "late", "submitted after the due date: not checked (the class run grades it)"
            added += self.store.add(
                key=submit.key,
                student=submit.student,
                assignment=submit.assignment,
                submitted=submit.submitted,
                status=status,
                message=message,
                now=now,
            )
        return added

    def due_to_start(self, now: datetime.datetime) -> list[Attempt]:
        """The attempts to start now (at most the free slots); those over their window are marked queued."""
        everything = self.store.select()
        history: dict[str, list[Attempt]] = {}
        last_started: dict[str, datetime.datetime] = {}
        for attempt in everything:
            history.setdefault(attempt.student, []).append(attempt)
            if attempt.started is not None:
                last_started[attempt.student] = max(attempt.started, last_started.get(attempt.student, attempt.started))
        waiting = [a for a in everything if a.status in ("pending", "queued")]
        chosen, free = [], self.slots - len(self.running)
        for attempt in next_in_line(waiting, last_started):
            if window_reopens(history[attempt.student], self.policy, now) is not None:
                for same in (a for a in waiting if a.student == attempt.student and a.status == "pending"):
                    self.store.set_status(same.id, "queued", expect=("pending",))
            elif len(chosen) < free:
                chosen.append(attempt)
        return chosen

    def collect(self, now: datetime.datetime | None = None) -> int:
        """Record every finished check (verdicts, or the reason it could not be checked)."""
        finished = [attempt_id for attempt_id, future in self.running.items() if future.done()]
        for attempt_id in finished:
            future = self.running.pop(attempt_id)
            try:
                points, top, verdicts = future.result()
            except NotCheckable as reason:
                self.store.refuse(attempt_id, str(reason), now=now)
            except Exception as error:
                log.exception("checking attempt %s failed", attempt_id)
                self.store.refuse(
                    attempt_id,
                    f"the checks could not run ({type(error).__name__}); it is graded as usual by the class run",
                    now=now,
                )
            else:
                recorded = self.store.finish(attempt_id, points=points, max_points=top, verdicts=verdicts, now=now)
                if recorded and self.checked is not None:
                    self.checked(self.store.get(attempt_id))
        return len(finished)

    def step(self, pool, now: datetime.datetime | None = None) -> int:
        """One round: scan, record what finished, start what may start. Returns the checks started."""
        now = now or utcnow()
        self.scan(now)
        self.collect(now)
        started = 0
        for attempt in self.due_to_start(now):
            if not self.store.start(attempt.id, now=now):
                continue
            notebook_path = self.inbound / attempt.key / self.notebook
            self.running[attempt.id] = pool.submit(check_notebook, source=self.source, notebook_path=notebook_path)
            started += 1
        return started
