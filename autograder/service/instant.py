"""Instant checks: each Submit in nbgrader's exchange gets the hidden checks' verdicts within seconds.

The checks are the class run's own (autograder.answers.grading.grade_answers: the answer cells run in the bare
sandboxed runner, the verdicts are judged in the grader); the student's kernel never runs, so a check costs
about a second of CPU. What the instructor decides is a ``InstantChecks`` (autograder.policy, read with the
course's settings as ``c.InstantChecks.*``): how many Submits are checked per student per period, what the
page shows before and after the due date, and that nothing is checked after it.

    settings = LiveSettings(course, "attention")    # autograder.settings: the policy in force, read again on change
    checker = Checker(source=..., inbound=..., policy=settings.policy(), settings=settings, store=Attempts(url), ...)
    checker.step(pool)                              # one round: new inbound entries judged (Submits -> attempts,
                                                    # the rest -> checker.refused), finished checks recorded, what
                                                    # the policy allows started (one per student, fair)
    checker.warm(pool)                              # at start: each worker imports the checks and checks the
                                                    # release's blank notebook, so the first Submit waits for none
    checker.start_probe(pool)                       # with probe=...: the assignment's own checks tried first; while
                                                    # they fail (checker.broken) its Submits wait, queued (not run
                                                    # when memory=... remembers them passing with today's digest)

What a worker runs (check_notebook, warm_up) is autograder.service.checking, which imports no more than a check
needs. One Checker checks one assignment; autograder.service.checkers runs one per assignment of the course, on one
pool.

A student's newest waiting Submit is the one checked: when a later Submit arrives while an earlier one still
waits, the earlier one is ``superseded`` (never checked, so it costs no check of the window), and the class
run's grade, which is the last Submit's, is the one the student sees coming.

The official grade stays the class run's (autograder.course.classroom); an attempt's points are the same sum of the
same verdicts on the gradebook's scale, so the class run's automatic score equals the last instant score.
"""

from __future__ import annotations

import datetime
import logging
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from autograder.attempts import Attempt, Attempts, utcnow
from autograder.exchange.adapter import Exchange, Folder, Submit
from autograder.exchange.inbound import NotTheirs, shown_name
from autograder.policy import InstantChecks
from autograder.service.checking import WALL, NotCheckable, NotCheckedYet, check_notebook, warm_up
from autograder.service.checking import check_answers as check_answers  # one check, by its older name here

log = logging.getLogger("autograder.service.instant")

RACY = 1.0  # seconds: an inbound listed this soon after it changed is listed again (a change in the same tick)
RELIST = 60.0  # seconds: the inbound is listed at least this often, changed or not
RETRY = 60.0  # seconds between two looks at the class's students for Submits refused as not in the class
POLL = 0.25  # seconds between two rounds of the checker when no check finishes (a finished one wakes it at once)
BACKOFF = 30.0  # seconds between two rounds at most, while rounds fail
SHOWN_REFUSED = 100  # refused inbound entries the instructor's page lists (the newest; all are counted)
CUT_AGAIN = 2  # times a check the service's clock cut is started again before it is left to the class run


# --- a Submit in the exchange --------------------------------------------------------------------------


@dataclass(frozen=True)
class Refused:
    """An inbound entry that is not a Submit the service checks: shown to the instructor only, with why."""

    name: str  # the entry's name as a page may show it (shown_name)
    reason: str
    seen: datetime.datetime  # when the service first saw it (UTC)
    unknown: str = ""  # the student it names, when the only reason is that they are not (yet) in the class


def examine(exchange: Exchange | Path, raw: bytes, assignment: str, notebook: str) -> Submit | str | None:
    """One entry of an exchange (an inbound folder: nbgrader's folder exchange), judged alone by the exchange
    (autograder.exchange.adapter): a Submit of ``assignment``, else why it is not one, or None: another's."""
    exchange = Folder(exchange) if isinstance(exchange, Path) else exchange
    return exchange.examine(raw, assignment, notebook)


def inbound_submits(inbound: Path, assignment: str, notebook: str = "") -> list[Submit]:
    """The Submits of ``assignment`` in an exchange's inbound folder, first received first (other entries,
    and entries that are not Submits, left out)."""
    exchange = Folder(Path(inbound))
    found = [examine(exchange, raw, assignment, notebook or f"{assignment}.ipynb") for raw in exchange.names()]
    submits = [submit for submit in found if isinstance(submit, Submit)]
    return sorted(submits, key=lambda submit: (submit.observed, submit.key))


# --- the policy's window and the fair queue ---------------------------------------------------------------


def window_reopens(
    started: list[datetime.datetime], policy: InstantChecks, now: datetime.datetime
) -> datetime.datetime | None:
    """None when the student may have a Submit checked now, else when the window reopens (``started``: when
    their checks started)."""
    period = datetime.timedelta(seconds=policy.period)
    started = sorted(s for s in started if now - s < period)
    if len(started) < policy.attempts:
        return None
    return started[len(started) - policy.attempts] + period


def next_in_line(waiting: list[Attempt], started: dict[str, datetime.datetime]) -> list[Attempt]:
    """One attempt per student (``waiting``: each student's newest waiting one, Attempts.waiting_heads), the
    student served longest ago first, then the Submit received first.

    A student who hammers Submit has one attempt in line at a time, behind everyone served before them.
    """
    first: dict[str, Attempt] = {}
    for attempt in waiting:
        first.setdefault(attempt.student, attempt)
    never = datetime.datetime.min
    return sorted(first.values(), key=lambda a: (started.get(a.student, never), a.submitted, a.id))


# --- checking one notebook ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Broken:
    """Why an assignment's own checks cannot check anyone now (the instructor's mistake, never a student's): what
    its students read (``student``: no code of the checks, no input) and what the instructor reads (``instructor``:
    each mistake, where it is and what to fix). ``lasting``: it stays until the assignment's files change (an
    authoring mistake); else (the probe itself failed, e.g. no sandbox) it is probed again every RETRY seconds."""

    student: str
    instructor: str
    lasting: bool = True


def source_stamp(folder: Path) -> tuple:
    """The assignment folder's files as (name, size, modification time): a change of checks.py, reference.py or the
    notebook changes it (a stat of each file: cheap enough for every round)."""
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError:
        return ()
    stamp = []
    for entry in entries:
        try:
            if entry.is_file(follow_symlinks=False):
                status = entry.stat(follow_symlinks=False)
                stamp.append((entry.name, status.st_size, status.st_mtime_ns))
        except OSError:
            continue
    return tuple(stamp)


# --- the loop: find Submits, start what the policy allows, record what finished --------------------------


class Checker:
    """Finds the Submits of one assignment in the exchange and checks them on a pool, fair per student.

    pool: anything with ``submit(function, **keywords) -> future`` (concurrent.futures' executors, or a Dask
    ``distributed.Client`` to scale out); students: a function returning the known student ids; admit: a
    function (folder, student) -> why the folder is not that student's own Submit, or None (on a server with an
    account per student, autograder.hub.collect.refusal: the same rule as the instructor's Collect; a
    collect.NotTheirs reason, made by another account, is shown to the instructor only); checked: a function
    called with each attempt once its verdicts are recorded (the service sends its score to the LMS); wall:
    seconds by the clock one check may take; settings: anything whose ``policy()`` returns the policy in force
    (autograder.settings.LiveSettings), asked at the start of each round, so a changed policy or due date
    applies without a restart; probe: a function (source) -> Broken | None run on the pool by ``start_probe`` and
    again when the assignment's files change (autograder.service.checkers.authoring_trouble): while it runs, or says
    the checks are broken, no Submit is started (they wait, queued, and the pages say why); memory: where passing
    probes are remembered (autograder.service.checkers.ProbeMemory, with ``digest``: source -> the digest of what
    the probe depends on), so a probe that passed with the same digest is not run again; term: the course's
    autograder.term.Term, whose student's own due date (an extension, late days) decides whether their
    Submit is late (None: the assignment's due date for everyone).

    Each inbound entry is judged once, alone, when first seen: a Submit of a student of the class, made by
    their account, is recorded (autograder.attempts); anything else is kept in ``refused`` (name, reason) for
    the instructor's page, and no entry, whatever its name or content, stops a round. The inbound is listed
    again only when it changed, and a round reads only the waiting students' rows, so a round's cost grows
    neither with the entries already seen nor with the attempts stored (benchmarks/service_rounds.py).
    """

    def __init__(
        self,
        *,
        source: Path,
        inbound: Path | None = None,
        store: Attempts,
        policy: InstantChecks,
        students,
        slots=2,
        admit=None,
        checked=None,
        wall: float = WALL,
        settings=None,
        probe=None,
        memory=None,
        digest=None,
        term=None,
        exchange: Exchange | None = None,
    ):
        self.exchange = exchange if exchange is not None else Folder(Path(inbound))  # where Submits come from
        self.source, self.inbound, self.store, self.policy = Path(source), self.exchange.inbound, store, policy
        self.term = term  # each student's own due date (autograder.term.Term); None: the assignment's
        self.settings = settings
        self.admit, self.checked, self.wall = admit, checked, wall
        self.assignment = self.source.name
        self.notebook = sorted(self.source.glob("*.ipynb"))[0].name
        self.students, self.slots = students, slots
        self.running: dict[int, object] = {}  # attempt id -> future
        self.busy = lambda: len(self.running)  # checks on the pool now (service.checkers: every assignment's)
        self.probe = probe  # (source) -> Broken | None, run on the pool before any check and when the files change
        self.memory, self.digest = memory, digest  # passing probes remembered by digest (both or neither)
        self.probing_digest: str | None = None  # the digest of what the running probe tries
        self.probes_run = 0  # probes started on the pool (not those skipped as remembered)
        self.probing = None  # the probe's future while it runs: no check starts meanwhile
        self.probed: tuple | None = None  # the folder's source_stamp when last probed
        self.probed_at = 0.0
        self.broken: Broken | None = None  # why this assignment's checks cannot run now (its Submits wait, queued)
        self.seen: set[bytes] = set()  # the inbound's entries judged already (recorded, refused or another's)
        self.refused: dict[bytes, Refused] = {}  # entry -> why it is not checked, for the instructor
        self.stamp, self.listed_at = None, 0.0  # the inbound's (inode, mtime) when last listed, and when
        self.class_seen: frozenset | None = None  # the class's students when Submits were last judged
        self.retried = time.monotonic()
        self.trouble = ""  # why the last round failed ("" when it did not), for the instructor's page
        self.wake = threading.Event()  # set when a check finishes: the service's thread records it at once
        self.cuts: dict[int, int] = {}  # attempt id -> times the service's own clock cut its check
        self.store.recover()  # a stop mid-check: those attempts are checked again, once
        self.store.supersede(self.store.students_in("pending") | self.store.students_in("queued"))

    # finding Submits ----------------------------------------------------------------------------------

    def listing(self) -> set[bytes] | None:
        """The inbound's entries (names as bytes), or None when it has not changed since the last listing: its
        modification time is the same and that listing began RACY seconds after it (so a change in the same
        tick of the clock is not missed); listed at least every RELIST seconds all the same."""
        marker = self.exchange.marker()  # (stamp, when it last changed), None: no inbound yet
        if marker is None:
            return set()
        (stamp, changed), clock = marker, time.time()
        settled = self.listed_at - changed > RACY
        if stamp == self.stamp and settled and clock - self.listed_at < RELIST:
            return None
        names = self.exchange.names()
        self.stamp, self.listed_at = stamp, clock
        return names

    def scan(self, now: datetime.datetime | None = None) -> int:
        """Judge the inbound entries not seen before; record the Submits among them (pending, late after the due
        date, or refused with the student's own reason); returns how many were recorded."""
        now = now or utcnow()
        self.look_again_at_unknown()
        names = self.listing()
        if names is None:
            return 0
        for gone in self.seen - names:  # removed from the inbound: forgotten
            self.seen.discard(gone)
            self.refused.pop(gone, None)
        new = sorted(names - self.seen)
        return self.judge(new, now) if new else 0

    def judge(self, names: list[bytes], now: datetime.datetime) -> int:
        submits: list[Submit] = []
        for raw in names:
            try:
                found = examine(self.exchange, raw, self.assignment, self.notebook)
            except Exception as error:  # one entry never stops the round
                log.warning("inbound entry %s could not be examined", shown_name(raw), exc_info=True)
                found = f"it could not be examined ({type(error).__name__})"
            if isinstance(found, Submit):
                submits.append(found)
            elif found is not None:
                self.refuse(raw, found, now)
        rows, keys = [], {}
        if submits:
            students = self.class_now()
            for submit in sorted(submits, key=lambda s: (s.observed, s.key)):
                raw = os.fsencode(submit.key)
                try:
                    row = self.attempt_row(submit, students, now)
                except Exception as error:  # one entry never stops the round
                    log.warning("inbound entry %s could not be judged", shown_name(raw), exc_info=True)
                    row = f"it could not be judged ({type(error).__name__})"
                if isinstance(row, dict):
                    rows.append(row)
                    keys[submit.key] = raw
                else:
                    self.refuse(raw, row, now, unknown=submit.student if submit.student not in students else "")
        failed = self.store.add_many(rows, now=now) if rows else {}
        for key, reason in failed.items():
            self.refuse(keys[key], reason, now)
        self.store.supersede({row["student"] for row in rows if row["key"] not in failed}, now=now)
        self.seen.update(names)
        return len(rows) - len(failed)

    def attempt_row(self, submit: Submit, students: frozenset, now: datetime.datetime) -> dict | str:
        """The attempt to record for a Submit, or why it is refused (shown to the instructor only)."""
        if submit.student not in students:
            return f"{submit.student} is not a student of this course: add the account to the class to check it"
        why = self.admit(submit.folder, submit.student) if self.admit else None
        if isinstance(why, NotTheirs):  # made in the student's name by someone else: never on their page
            return f"not that student's own Submit: {why}"
        status, message = "pending", ""
        submitted = min(now, submit.observed)  # when the grader received it; never the time its name states
        if why:
            status, message = "refused", f"not checked: {why}"
        elif (late := self.late(submit.student, submitted)) and not self.policy.check_after_due:
            # late() first in any case: with c.LateDays.automatic it spends the tokens that cover the Submit
            status, message = "late", f"received after {late}: not checked (the class run grades it)"
        return dict(
            key=submit.key,
            student=submit.student,
            assignment=submit.assignment,
            submitted=submitted,
            status=status,
            message=message,
        )

    def late(self, student: str, submitted: datetime.datetime) -> str:
        """ "" when a Submit received at ``submitted`` is on time for ``student``, else after what (their own due date:
        the assignment's, their extension, their late days; with c.LateDays.automatic, the tokens that cover it
        are spent first, once, atomically: autograder.term)."""
        due = self.policy.due_date()
        if self.term is None:
            return "the due date" if due is not None and submitted > due else ""
        standing = self.term.standing(student=student, assignment=self.assignment, base=due)
        if standing.late(submitted) and self.term.rule.automatic:
            spent = self.term.cover(student=student, assignment=self.assignment, base=due, at=submitted)
            if spent.tokens:
                log.info("%s spent %d late days on %s", student, spent.tokens, self.assignment)
            standing = spent.standing
        if not standing.late(submitted):
            return ""
        left = f"; {standing.left} late day{'s' if standing.left != 1 else ''} left" if standing.granted else ""
        return f"your due date ({standing.due:%Y-%m-%d %H:%M} UTC{left})"

    def refuse(self, raw: bytes, reason: str, now: datetime.datetime, unknown: str = ""):
        self.refused[raw] = Refused(shown_name(raw), reason, now, unknown)

    def class_now(self) -> frozenset:
        self.class_seen = frozenset(self.students())
        return self.class_seen

    def look_again_at_unknown(self):
        """Submits refused because their student was not in the class are judged again (as new) once the class
        has changed: looked at every RETRY seconds, and only while there are such Submits."""
        if time.monotonic() - self.retried < RETRY:
            return
        self.retried = time.monotonic()
        waiting = [raw for raw, refused in self.refused.items() if refused.unknown]
        if not waiting or frozenset(self.students()) == self.class_seen:
            return
        for raw in waiting:
            self.seen.discard(raw)
            del self.refused[raw]
        self.stamp = None  # list the inbound again, to judge them

    def blank_notebook(self) -> Path:
        """The release's blank notebook (the course's release/<assignment>/), else the source's."""
        released = self.source.parent.parent / "release" / self.assignment / self.notebook
        return released if released.is_file() else self.source / self.notebook

    def warm(self, pool) -> list:
        """Each of the pool's workers started and made ready at once (warm_up on the blank notebook), so the
        first Submit after a start is checked as fast as any other; the futures (their seconds)."""
        blank = self.blank_notebook()
        return [pool.submit(warm_up, source=self.source, notebook_path=blank) for _ in range(self.slots)]

    def refused_entries(self) -> tuple[int, list[Refused]]:
        """(how many inbound entries are refused, the newest SHOWN_REFUSED of them, newest first)."""
        newest = list(self.refused.values())[-SHOWN_REFUSED:]
        return len(self.refused), newest[::-1]

    # the assignment's own checks -------------------------------------------------------------------------

    def start_probe(self, pool, remembered: bool = True) -> None:
        """The assignment's checks tried on the pool (``probe``: autograder.service.checkers.authoring_trouble, the
        class run's check before grading); no Submit of it is started until the answer is in. Not tried when the
        memory holds a pass with the digest of what it depends on now (``remembered``: False after a probe that
        could not run, whose cause lies outside those files: tried for real)."""
        if self.probe is None:
            return
        self.probed, self.probed_at = source_stamp(self.source), time.monotonic()
        self.probing_digest = self.current_digest()
        if remembered and self.probing_digest is not None and self.memory.passed(self.assignment, self.probing_digest):
            if self.broken is not None:
                log.info("the checks of %s run again (they passed before with these files)", self.assignment)
            self.broken = None  # passed with exactly these files, engine and model: not tried again
            return
        self.probes_run += 1
        self.probing = pool.submit(self.probe, source=self.source)
        self.probing.add_done_callback(lambda _: self.wake.set())

    def current_digest(self) -> str | None:
        """The digest of what the probe depends on now, or None without a memory (or when it cannot be read: the
        probe runs, and nothing is remembered)."""
        if self.memory is None or self.digest is None:
            return None
        try:
            return self.digest(self.source)
        except OSError as error:
            log.warning("the files the checks of %s depend on cannot be read: %s", self.assignment, error)
            return None

    def remember_passed(self) -> None:
        """The probe that just passed remembered under its digest, if the files are still those it tried."""
        if self.probing_digest is not None and self.current_digest() == self.probing_digest:
            self.memory.remember(self.assignment, self.probing_digest)

    def watch_source(self, pool) -> None:
        """The probe's answer taken when it is in; once probed (start_probe, at the service's start), the assignment
        probed again when its files change (the instructor fixed, or broke, its checks) or, after a probe that itself
        failed, every RETRY seconds."""
        if self.probe is None or self.probed is None:
            return
        if self.probing is None:
            stale = self.broken is not None and not self.broken.lasting and time.monotonic() - self.probed_at > RETRY
            changed = source_stamp(self.source) != self.probed
            if stale or changed:
                self.start_probe(pool, remembered=changed)
        if self.probing is not None and self.probing.done():
            future, self.probing = self.probing, None
            try:
                broken = future.result()
            except Exception as error:  # noqa: BLE001 - the probe could not run: said, and tried again later
                broken = Broken(
                    f"the instructor's checks for {self.assignment} could not be tried ({type(error).__name__})",
                    f"the checks of {self.assignment} could not be tried: {type(error).__name__}: {error}",
                    lasting=False,
                )
            if broken is None:
                self.remember_passed()
            if broken != self.broken:
                if broken is None:
                    log.info("the checks of %s run again", self.assignment)
                else:
                    log.warning("the checks of %s cannot run: %s", self.assignment, broken.instructor)
            self.broken = broken

    # starting and recording checks ---------------------------------------------------------------------

    def due_to_start(self, now: datetime.datetime) -> list[Attempt]:
        """The attempts to start now (at most the free slots, one per student: none for a student whose check
        is running); a student over their window has their pending attempts marked queued. Reads each waiting
        student's first attempt and their starts, never the whole table."""
        heads = self.store.waiting_heads()
        if not heads or self.probing is not None:  # the assignment's own checks are being tried: wait for them
            return []
        if self.broken is not None:  # the instructor's checks fail: every waiting Submit waits for the fix, queued
            for student in self.store.students_in("pending"):
                self.store.queue_pending(student)
            return []
        busy = self.store.students_in("checking")
        pending = self.store.students_in("pending")
        since = now - datetime.timedelta(seconds=self.policy.period)
        recent, latest = self.store.starts((a.student for a in heads), since)
        chosen, free = [], self.slots - self.busy()
        for attempt in next_in_line(heads, latest):
            if attempt.student in busy:  # one check per student at a time
                continue
            if window_reopens(recent.get(attempt.student, []), self.policy, now) is not None:
                if attempt.student in pending:
                    self.store.queue_pending(attempt.student)
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
            except NotCheckedYet as reason:  # the service's reason: no verdict, and no check of the window spent
                self.cuts[attempt_id] = self.cuts.get(attempt_id, 0) + 1
                if self.cuts[attempt_id] <= CUT_AGAIN:
                    self.store.check_again(attempt_id, str(reason))
                else:
                    self.store.leave_to_class_run(attempt_id, f"{reason} (the class run grades it as usual)", now=now)
                    del self.cuts[attempt_id]
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

    def checks_budget(self) -> float | None:
        """The class run's CPU seconds for a notebook's hidden checks (the course's; None: the default), so that a
        check is cut here where the class run cuts it."""
        settings = getattr(self.settings, "settings", None)
        return getattr(settings, "checks_budget", None)

    def step(self, pool, now: datetime.datetime | None = None) -> int:
        """One round: scan, record what finished, start what may start. Returns the checks started."""
        now = now or utcnow()
        if self.settings is not None:  # the policy in force: the course's settings, read again when changed
            self.policy = self.settings.policy()
            if self.term is not None:
                self.term.rule = self.settings.settings.late_days
        self.scan(now)
        self.collect(now)
        self.watch_source(pool)
        started = 0
        for attempt in self.due_to_start(now):
            if not self.store.start(attempt.id, now=now):
                continue
            future = pool.submit(
                check_notebook,
                source=self.source,
                notebook_path=self.inbound / attempt.key / self.notebook,
                received=attempt.submitted if self.exchange.settles else None,  # else a copy only the grader wrote
                wall=self.wall,
                timeout=self.checks_budget(),
            )
            self.running[attempt.id] = future
            future.add_done_callback(lambda _: self.wake.set())  # recorded, and the next one started, at once
            started += 1
        return started


class CheckerThread(threading.Thread):
    """Runs the checker's rounds beside the web server until stopped: every ``poll`` seconds, and at once when a
    check finishes (``checker.wake``), so a verdict is recorded and the next Submit started without waiting for
    the next round."""

    def __init__(self, checker: Checker, pool, poll: float = POLL):
        super().__init__(name="instant-checks", daemon=True)
        self.checker, self.pool, self.poll, self.stopping = checker, pool, poll, threading.Event()
        self.wake = getattr(checker, "wake", None) or threading.Event()

    def stop(self, timeout: float = 10) -> None:
        self.stopping.set()
        self.wake.set()
        self.join(timeout)

    def run(self):
        failures = 0
        while not self.stopping.is_set():
            try:
                self.checker.step(self.pool)
            except Exception as error:
                failures += 1
                trouble = f"{type(error).__name__}: {str(error)[:300]}"
                if trouble != self.checker.trouble:  # the traceback once, not every round
                    log.exception("a round of instant checks failed; trying again")
                self.checker.trouble = trouble
            else:
                failures, self.checker.trouble = 0, ""
            self.wake.wait(min(self.poll * 2**failures, BACKOFF))  # a failing round is tried less often
            self.wake.clear()
