"""The grading service: a JupyterHub service that checks each Submit and shows the verdicts within seconds.

    python -m autograder.service --course DIR --exchange DIR/<course id> [--workers 2]
    python -m autograder.service ... --assignment attention --assignment positions   # only these (or a,b)
    python -m autograder.service ... --scheduler tcp://10.0.0.5:8786      # the checks on a Dask cluster
    python -m autograder.service ... --scheduler tls://10.0.0.5:8786 --tls-ca-file ca.pem --tls-cert me.pem \
        --tls-key me.key                                                   # over TLS (autograder.grading.scheduler)
    python -m autograder.service ... --gateway URL --adapt 1,20 --workers 20      # a dask-gateway's cluster

It checks every assignment of the course's source/ (autograder.service.checkers: a checker per assignment, each
with its own checks, reference and policy, on one pool of workers); ``--assignment`` keeps only those named.

Pages: ``/services/grading/`` (the reader's own: the instructor's queue and class per assignment, or the student's
Submits under each assignment's name), ``students/<id>`` and ``students/<id>/feedback[/<assignment>]``, and one JSON
answer, ``api/latest``: the asking student's own newest Submit, of any assignment (``?assignment=NAME``: of that
one), and its verdicts as the policy shows them (a student's JupyterLab shows it after Submit, through the server
extension in labextension/, which asks as the student with their server's JupyterHub token; no parameter names
another student, and no CORS header lets another origin read it).

The hub starts it (``c.JupyterHub.services``, see hub/jupyterhub_config.py) and authenticates every request with
its OAuth: a student sees only their own attempts (another student's page answers 403), an instructor (the hub's
admins, or ``--instructors``) sees everyone's and the queue. Each Submit nbgrader places in the exchange's inbound
folder is recorded once (autograder.attempts, in the course's database beside nbgrader's gradebook) and checked
by autograder.service.instant under the course's policy (``c.InstantChecks.*`` in the course's nbgrader_config.py, read
with the course's settings, autograder.settings, and read again when it or the gradebook's due date changes). The
official grade stays the class run's.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import datetime
import json
import logging
import multiprocessing
import os
import time
from dataclasses import dataclass
from pathlib import Path

import jinja2
from jupyterhub.services.auth import HubOAuthCallbackHandler, HubOAuthenticated
from jupyterhub.utils import url_path_join
from nbgrader.api import Gradebook
from nbgrader.utils import notebook_hash
from tornado import ioloop, web

from autograder import assignments, sandbox, students
from autograder.attempts import WAITING, Attempt, Attempts, utcnow
from autograder.course.config import find_alembic
from autograder.exchange.adapter import Folder, open_exchange
from autograder.grading.dispatch import usable_workers
from autograder.grading.gateway import GatewayAccess
from autograder.grading.scheduler import SchedulerAccess, connect
from autograder.grading.task import GradingError
from autograder.policy import explain
from autograder.service.appeals import (
    MOST_OPEN,
    TEXT_LONGEST,
    AppealError,
    Appeals,
    after_decision,
    cell_scale,
    differences,
    notebook_digest,
    rerun_appeal,
)
from autograder.service.checkers import Checkers, ProbeMemory, authoring_trouble, probe_digest
from autograder.service.instant import SHOWN_REFUSED, Broken, Checker, CheckerThread, window_reopens
from autograder.settings import Course, LiveSettings
from autograder.term import Standing, TermError
from autograder.verdicts import Verdict

TEMPLATES = Path(__file__).resolve().parent.parent / "templates" / "service"
log = logging.getLogger("autograder.service.app")


@dataclass(frozen=True)
class ServiceOptions:
    course: Path  # the instructor's course folder: source/<assignment>/, nbgrader_config.py, the gradebook
    exchange: Path  # the exchange's folder of this course (holding inbound/)
    assignments: tuple[str, ...] = ()  # the assignments checked (default: every one of the course's source/)
    db: str | None = None  # the course database's URL (default: the course's settings', autograder.settings)
    workers: int = 2  # checks at the same time on this machine
    # a Dask scheduler (tcp://, or tls:// too), or a dask-gateway's new cluster (GatewayAccess): the checks run there
    scheduler: str | SchedulerAccess | GatewayAccess | None = None
    instructors: tuple[str, ...] = ()  # accounts that see everyone (the hub's admins always do)
    students: tuple[str, ...] = ()  # the class's accounts, besides the students in the gradebook
    own_submissions_only: bool = True  # a Submit must be made by its student's system account (as Collect asks)
    lti: Path | None = (
        None  # the LTI tool's config: instant scores to the LMS when the policy asks (c.InstantChecks.lms)
    )
    port: int = 0  # 0: from JUPYTERHUB_SERVICE_URL


def course_students(db: str, named: tuple[str, ...] = ()):
    """A function giving the class's student ids: ``named`` and the gradebook's (read again on each scan, so
    students added later count)."""

    def students() -> set[str]:
        with Gradebook(db) as gradebook:
            return set(named) | {student.id for student in gradebook.students}

    return students


class HeldTo:
    """A Dask client whose tasks go only to ``workers`` (those with this process's grader: usable_workers), as the
    class run's do when some worker was refused (None: to any worker); closing it closes ``cluster`` too (a
    dask-gateway's, shut down with the service)."""

    def __init__(self, client, workers: list[str] | None, cluster=None):
        self.client, self.workers, self.cluster = client, workers, cluster

    def submit(self, function, *args, **keywords):
        if self.workers is None:
            return self.client.submit(function, *args, **keywords)
        return self.client.submit(function, *args, workers=self.workers, allow_other_workers=False, **keywords)

    def close(self):
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def make_pool(options: ServiceOptions):
    """The checks' workers: this machine's processes, or the Dask scheduler's workers that hold this process's
    grader (a worker with another one is refused with a warning saying why; none left raises GradingError)."""
    if not options.scheduler:
        return concurrent.futures.ProcessPoolExecutor(options.workers, mp_context=multiprocessing.get_context("spawn"))
    if isinstance(options.scheduler, GatewayAccess):  # a new cluster of the gateway's, adapting to the queue
        client, cluster = options.scheduler.open()
    else:
        client, cluster = connect(options.scheduler), None
    try:
        good, refused = usable_workers(client, str(options.scheduler))
    except GradingError:
        client.close()
        if cluster is not None:
            cluster.close()
        raise
    for address, why in refused.items():
        log.warning("Dask worker %s is not used: %s", address, why)
    if refused or cluster is not None:
        return HeldTo(client, good if refused else None, cluster)
    return client


# --- what a page shows ------------------------------------------------------------------------------


def status_words(attempt: Attempt, reopens: datetime.datetime | None = None, broken: Broken | None = None) -> str:
    """The attempt's status in words; a queued one says when the student's window reopens (``reopens``, UTC); one
    waiting while its assignment's own checks fail (``broken``) says so."""
    if broken is not None and attempt.status in WAITING:
        return f"cannot be checked now: {broken.student}; it is checked once the instructor has fixed them"
    if attempt.status == "queued":
        when = f", at {reopens:%H:%M} UTC" if reopens is not None else ""
        return f"queued: checked when your window reopens{when}"
    if attempt.status == "pending" and attempt.message:  # the service cut its check for its own reasons
        return f"not checked yet, waiting for a free checker: {attempt.message}"
    return {
        "pending": "waiting for a free checker",
        "checking": "being checked",
        "done": "checked",
        "refused": f"could not be checked: {attempt.message}",
        "late": f"not checked: {attempt.message}",
        "superseded": f"not checked: {attempt.message}",
    }[attempt.status]


def shown_function(verdict: Verdict, shown: str) -> dict:
    """One function's line under the policy: its points, and what failed when the policy shows it."""
    failed = [p.message or p.name for p in verdict.failed] if shown == "verdicts" else []
    return {
        "function": verdict.function,
        "check": verdict.check,
        "points": f"{verdict.points:g} of {verdict.max_points:g}",
        "failed": list(dict.fromkeys(failed)),
        "full": verdict.passed,
    }


def cut_short(verdicts, shown: str) -> list[str]:
    """How the hidden checks' calls were cut short (each Verdict.end, in words, once), when the policy shows the
    verdicts: "stopped: attention waited 2 s without computing (sleep, input or a lock?)"."""
    if shown != "verdicts":
        return []
    return list(dict.fromkeys(verdict.end.what() for verdict in verdicts if verdict.end is not None))


def shown_attempt(attempt: Attempt, shown: str) -> dict:
    """What a student may see of one attempt under the policy: score, the verdicts' messages, and how the hidden
    checks were cut short."""
    row = {"attempt": attempt, "score": None, "functions": [], "ends": []}
    if attempt.status != "done" or shown == "nothing":
        return row
    row["score"] = f"{attempt.points:g} / {attempt.max_points:g}"
    row["functions"] = [shown_function(verdict, shown) for verdict in attempt.verdicts]
    row["ends"] = cut_short(attempt.verdicts, shown)
    return row


class Page(HubOAuthenticated, web.RequestHandler):
    FRAMES = "frame-ancestors 'none'"  # no page frames the service's (on its own origin: hub/jupyterhub_config.py)

    @property
    def app(self) -> dict:
        return self.settings["grading"]

    def set_default_headers(self) -> None:
        """Every answer, errors included: no page of another origin frames it or keeps a hold on it as a popup."""
        self.set_header("Content-Security-Policy", f"default-src 'none'; {self.FRAMES}")
        self.set_header("Cross-Origin-Opener-Policy", "same-origin")

    def is_instructor(self, user: dict) -> bool:
        return bool(user.get("admin")) or user["name"] in self.app["options"].instructors

    def only_for(self, student: str, what: str) -> None:
        """403 unless the user asking is ``student`` or an instructor."""
        user = self.get_current_user()
        if student != user["name"] and not self.is_instructor(user):
            raise web.HTTPError(403, f"a student sees only their own {what}")

    def write_error(self, status_code: int, **kwargs) -> None:
        """An error as a page a person reads: what happened, why (the reason the handler gave, never a traceback)
        and the way back to their own page and to the hub."""
        error = kwargs.get("exc_info", (None, None, None))[1]
        reason = error.log_message if isinstance(error, web.HTTPError) and error.log_message else ""
        user = self.current_user if isinstance(self.current_user, dict) else None
        self.render_page(
            "error.html.j2",
            status=status_code,
            title=self._reason,
            reason=reason or "the service could not answer this request",
            me=user["name"] if user else None,
        )

    def render_page(self, name: str, **values):
        template = self.app["templates"].get_template(name)
        self.set_header(
            "Content-Security-Policy",
            f"default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; {self.FRAMES}",
        )
        xsrf = self.xsrf_token.decode() if isinstance(self.current_user, dict) else ""  # for the page's forms
        self.finish(template.render(prefix=self.app["prefix"], xsrf=xsrf, **values))


def released_feedback(checker: Checker, student: str) -> Path | None:
    """The feedback page nbgrader's release_feedback handed out to ``student`` (in the exchange, named by the hash
    of their submission's secret), or None while none is released."""
    if not students.is_valid(student):
        return None
    course, exchange = checker.source.parent.parent, checker.inbound.parent
    notebook = Path(checker.notebook).stem
    try:
        secret = (course / "feedback" / student / checker.assignment / "submission_secret.txt").read_text()
    except OSError:
        return None
    page = exchange / "feedback" / f"{notebook_hash(secret=secret, notebook_id=notebook)}.html"
    return page if page.is_file() else None


def own_standing(checker: Checker, student: str) -> Standing | None:
    """The student's own due date and late days for the checker's assignment (None without the course's term)."""
    if checker.term is None or not students.is_valid(student):
        return None
    return checker.term.standing(student=student, assignment=checker.assignment, base=checker.policy.due_date())


def own_due(checker: Checker, standing: Standing | None) -> datetime.datetime | None:
    """The student's due date when it is their own (not the assignment's), else None."""
    if standing is None or standing.due == checker.policy.due_date():
        return None
    return standing.due


def shown_to(checker: Checker, standing: Standing | None, now: datetime.datetime) -> str:
    """What a checked Submit shows now: the policy's before or after the student's own due date."""
    if standing is None:
        return checker.policy.shown(now)
    return checker.policy.after_due if standing.late(now) else checker.policy.before_due


def assignment_values(checker: Checker, student: str, now: datetime.datetime) -> dict:
    """One assignment's part of a student's page: its policy, the student's own due date and late days, their
    attempts newest first, the latest checked one's verdicts, whether its checks cannot run now (in the students'
    words) and its released feedback."""
    standing = own_standing(checker, student)
    shown = shown_to(checker, standing, now)
    attempts = checker.store.select(student=student)
    reopens = window_reopens([a.started for a in attempts if a.started is not None], checker.policy, now)
    rows = [shown_attempt(a, shown) | {"status": status_words(a, reopens, checker.broken)} for a in reversed(attempts)]
    appeals = [appeal_values(appeal) for appeal in reversed(appeals_of(checker, student))]
    return {
        "assignment": checker.assignment,
        "appeals": appeals,
        "appealable": sum(1 for a in appeals if a["status"] == "open") < MOST_OPEN,
        "text_longest": TEXT_LONGEST,
        "reviews": getattr(checker, "appeals", None) is not None,
        "rows": rows,
        "newest": attempts[-1] if attempts else None,
        "waiting": any(a.waiting for a in attempts) and checker.broken is None,
        "latest": next((row for row in rows if row["score"] is not None), None),
        "policy": checker.policy.describe(own_due=own_due(checker, standing)),
        "shown": explain(shown),
        "broken": checker.broken.student if checker.broken is not None else "",
        "feedback": released_feedback(checker, student) is not None,
        "term": standing.describe() if standing is not None else [],
        "spendable": standing is not None and standing.due is not None and standing.left > 0,
        "seen": standing.spent_here if standing is not None else 0,
    }


def appeals_of(checker: Checker, student: str | None = None):
    """The appeals of the checker's assignment (one student's, or everyone's), oldest first; none without a table."""
    appeals = getattr(checker, "appeals", None)
    if appeals is None:
        return []
    return [a for a in appeals.select(student=student) if a.assignment == checker.assignment]


def appeal_values(appeal) -> dict:
    """An appeal as a page shows it: what was asked, its state, the decision."""
    if appeal.status == "open":
        state = "open: waiting for the instructor"
    elif appeal.points is None:
        state = "decided: the verdict stands"
    else:
        state = f"decided: {appeal.check} is now worth {appeal.points:g} points"
    return {
        "id": appeal.id,
        "check": appeal.check,
        "text": appeal.text,
        "asked": appeal.asked,
        "status": appeal.status,
        "state": state,
        "comment": appeal.comment,
        "attempt": appeal.attempt,
    }


def newest_first(sections: list[dict]) -> list[dict]:
    """The assignments with a Submit, the newest Submit's first, then the others by name."""
    submitted = [section for section in sections if section["newest"] is not None]
    submitted.sort(key=lambda section: (section["newest"].submitted, section["newest"].id), reverse=True)
    return submitted + sorted((s for s in sections if s["newest"] is None), key=lambda s: s["assignment"])


def student_values(checkers: Checkers, student: str, now: datetime.datetime, viewer: str | None = None) -> dict:
    """What a student's page shows: each assignment's part (assignment_values), the assignment of their newest
    Submit first (the one their JupyterLab's notification tells of: its part keeps the page's ids, #latest,
    #verdicts, #attempts, #feedback; the others' carry their assignment's name, #verdicts-positions);
    ``viewer``, who reads it (the student themselves when None: "your Submits"; else "<student>'s Submits")."""
    sections = newest_first([assignment_values(checker, student, now) for checker in checkers])
    for number, section in enumerate(sections):
        section["suffix"] = "" if number == 0 else f"-{section['assignment']}"
    return {
        "student": student,
        "own": viewer is None or viewer == student,
        "assignments": [section["assignment"] for section in sections],
        "sections": sections,
        "waiting": any(section["waiting"] for section in sections),
    }


def settings_values(checker: Checker) -> dict:
    """The policy in force, where it is read from, and why a change to it is not applied (a file that cannot be
    read), for the instructor's page."""
    live = checker.settings
    return {
        "policy": checker.policy.describe(),
        "policy_file": str(live.settings.course / "nbgrader_config.py") if live is not None else "",
        "settings_error": live.error if live is not None else "",
    }


def assignment_summary(checker: Checker) -> dict:
    """One assignment's part of the instructor's page: whether its checks run (what to fix when they do not), its
    queue, each student's attempts and scores, the policy in force."""
    attempts = checker.store.select()
    students: dict[str, list[Attempt]] = {}
    for attempt in attempts:
        students.setdefault(attempt.student, []).append(attempt)
    summary = [
        {
            "student": name,
            "attempts": len(items),
            "checked": sum(1 for a in items if a.status == "done"),
            "scores": [f"{a.points:g}" for a in items if a.status == "done"],
        }
        for name, items in sorted(students.items())
    ]
    queue = [a for a in attempts if a.waiting]
    return {
        "assignment": checker.assignment,
        "queue": queue,
        "summary": summary,
        "broken": checker.broken.instructor if checker.broken is not None else "",
        "probing": checker.probing is not None,
        "trouble": checker.trouble,
        "term": own_dates(checker),
        "has_term": checker.term is not None,
        **settings_values(checker),
    }


def own_dates(checker: Checker) -> list[dict]:
    """The students whose due date for the checker's assignment is their own: who, their due date, why."""
    if checker.term is None:
        return []
    standings = checker.term.standings(assignment=checker.assignment, base=checker.policy.due_date())
    return [
        {
            "student": student,
            "due": f"{standing.due:%Y-%m-%d %H:%M} UTC" if standing.due else "no due date",
            "why": standing.why().strip(" ()"),
            "left": f"{standing.left} of {standing.granted}" if standing.granted else "",
        }
        for student, standing in standings.items()
    ]


def instructor_values(checkers: Checkers) -> dict:
    """What the instructor's page shows: each assignment's part (assignment_summary), by name, and the inbound's
    entries that are no Submit checked here."""
    refused_count, refused = checkers.refused_entries(SHOWN_REFUSED)
    term = next((checker.term for checker in checkers if checker.term is not None), None)
    return {
        "late_days": None if term is None else {"tokens": term.rule.tokens, "grants": term.grants()},
        "assignments": [assignment_summary(checker) for checker in checkers],
        "names": checkers.names,
        "refused_count": refused_count,
        "refused": refused,
        "trouble": checkers.trouble,
        "wall": max(checker.wall for checker in checkers),
    }


def latest_values(checkers: Checkers, student: str, now: datetime.datetime, assignment: str | None = None) -> dict:
    """The JSON a student's JupyterLab shows after Submit: their newest Submit, of any assignment (``assignment``:
    of that one), its assignment, its status in words, and its score and the functions that lost points as that
    assignment's policy shows them; or none yet. Only ``student``'s own."""
    checkers = Checkers.of(checkers)
    chosen = [checkers[assignment]] if assignment is not None else list(checkers)
    found = [(checker, checker.store.select(student=student)) for checker in chosen]
    found = [(checker, attempts) for checker, attempts in found if attempts]
    if not found:
        checker = chosen[0]
        return {
            "student": student,
            "assignment": checker.assignment,
            "shown": shown_to(checker, own_standing(checker, student), now),
            "newest": None,
            **term_values(own_standing(checker, student)),
        }
    checker, attempts = max(found, key=lambda pair: (pair[1][-1].submitted, pair[1][-1].id))
    standing = own_standing(checker, student)
    shown = shown_to(checker, standing, now)
    answer = {"student": student, "assignment": checker.assignment, "shown": shown, "newest": None}
    answer |= term_values(standing)
    reopens = window_reopens([a.started for a in attempts if a.started is not None], checker.policy, now)
    newest = attempts[-1]
    row = shown_attempt(newest, shown)
    answer["newest"] = {
        "id": newest.id,
        "received": f"{newest.submitted:%H:%M:%S} UTC",
        "status": newest.status,
        "words": status_words(newest, reopens, checker.broken),
        "waiting": newest.waiting,
        "score": row["score"],
        "lost": lost_points(newest.verdicts, shown) if row["score"] is not None else [],
        "ends": row["ends"],
    }
    return answer


def term_values(standing: Standing | None) -> dict:
    """The student's own due date (ISO, UTC; None: no due date) and late days left (None: the course has none), for
    their JupyterLab; nothing without the course's term."""
    if standing is None:
        return {}
    return {
        "due": standing.due.isoformat() + "Z" if standing.due else None,
        "late_days_left": standing.left if standing.granted else None,
    }


def lost_points(verdicts, shown: str) -> list[dict]:
    """The functions that lost points, each once (a function several checks judge, such as attention, with the
    points of its checks added up), in the order the checks come; what failed when the policy shows it."""
    functions: dict[str, list[Verdict]] = {}
    for verdict in verdicts:
        functions.setdefault(verdict.function, []).append(verdict)
    lost = []
    for function, judged in functions.items():
        if all(verdict.passed for verdict in judged):
            continue
        points, top = sum(v.points for v in judged), sum(v.max_points for v in judged)
        failed = [line for v in judged for line in shown_function(v, shown)["failed"]]
        lost.append({"function": function, "points": f"{points:g} of {top:g}", "failed": list(dict.fromkeys(failed))})
    return lost


class Latest(Page):
    """``api/latest``: the asking student's own newest Submit as JSON, of any assignment or of the one
    ``?assignment=NAME`` names (nobody else's: no parameter names a student)."""

    @web.authenticated
    def get(self):
        user = self.get_current_user()
        checkers, assignment = self.app["checkers"], self.get_query_argument("assignment", None)
        if assignment is not None and assignment not in checkers:
            raise web.HTTPError(404, f"no assignment {assignment!r} is checked here: {', '.join(checkers.names)}")
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.set_header("Cache-Control", "no-store")
        self.finish(json.dumps(latest_values(checkers, user["name"], utcnow(), assignment)))


class Home(Page):
    """The service's front page: the instructor's (the queue, everyone) or the student's own attempts."""

    @web.authenticated
    def get(self):
        user = self.get_current_user()
        if self.is_instructor(user):
            self.render_page("instructor.html.j2", **instructor_values(self.app["checkers"]))
        else:
            self.render_page("student.html.j2", **student_values(self.app["checkers"], user["name"], utcnow()))


class StudentPage(Page):
    """One student's attempts: that student's and the instructors' only (403 for anyone else)."""

    @web.authenticated
    def get(self, student: str):
        self.only_for(student, "attempts")
        viewer = self.get_current_user()["name"]
        self.render_page("student.html.j2", **student_values(self.app["checkers"], student, utcnow(), viewer))


class LateDay(Page):
    """``students/<id>/late-days/<assignment>`` (POST): the student spends one late day on an assignment, for
    themselves only (the hub's identity, never a name in the request; an instructor grants, python -m
    autograder.course.term), with the XSRF token of the page they clicked on and the number of late days that page
    showed spent (``seen``), so a second click, or a replayed request, spends nothing."""

    @web.authenticated
    def post(self, student: str, assignment: str):
        self.check_xsrf_cookie()
        user = self.get_current_user()
        if student != user["name"]:
            raise web.HTTPError(403, "a student spends only their own late days")
        checkers = self.app["checkers"]
        if assignment not in checkers:
            raise web.HTTPError(404, f"no assignment {assignment!r} is checked here")
        checker = checkers[assignment]
        if checker.term is None:
            raise web.HTTPError(404, "this course has no late days")
        try:
            seen = int(self.get_body_argument("seen", ""))
        except ValueError:
            raise web.HTTPError(400, "the request does not say how many late days your page showed") from None
        spent = checker.term.spend(student=student, assignment=assignment, base=checker.policy.due_date(), seen=seen)
        if spent.tokens:
            notice = (
                f"One late day spent on {assignment}: your due date is now {spent.standing.due:%Y-%m-%d %H:%M} UTC."
            )
        else:
            notice = f"No late day spent on {assignment}: {spent.why}."
        log.info("%s: %s", student, notice)
        values = student_values(checkers, student, utcnow())
        self.render_page("student.html.j2", notice=notice, **values)


class Extend(Page):
    """``term/<assignment>`` (POST, instructors only, with the page's XSRF token): a student's own due date, as
    ``python -m autograder.course.term extend`` sets it (``student``, and ``hours`` or ``due``, or ``remove``)."""

    @web.authenticated
    def post(self, assignment: str):
        self.check_xsrf_cookie()
        if not self.is_instructor(self.get_current_user()):
            raise web.HTTPError(403, "only an instructor gives extensions")
        checkers = self.app["checkers"]
        if assignment not in checkers or checkers[assignment].term is None:
            raise web.HTTPError(404, f"no assignment {assignment!r} with a term here")
        term, student = checkers[assignment].term, self.get_body_argument("student", "").strip()
        hours, due = self.get_body_argument("hours", "").strip(), self.get_body_argument("due", "").strip()
        try:
            if self.get_body_argument("remove", ""):
                term.extend(student=student, assignment=assignment)
                notice = f"{student}: back to the due date of {assignment}."
            elif bool(hours) == bool(due):
                raise TermError("give the extension as hours or as a due date (one of them)")
            else:
                when = None
                if due:
                    try:
                        when = datetime.datetime.fromisoformat(due)
                    except ValueError:
                        raise TermError(f"{due[:40]!r} is not a date: write it as 2026-12-16 17:00 (UTC)") from None
                try:
                    extra = float(hours) if hours else None
                except ValueError:
                    raise TermError(f"{hours[:20]!r} is not a number of hours") from None
                term.extend(student=student, assignment=assignment, hours=extra, due=when)
                notice = f"{student}: an extension on {assignment} is set."
        except TermError as error:
            notice = f"Nothing changed: {error}."
        self.render_page("instructor.html.j2", notice=notice, **instructor_values(checkers))


class Grant(Page):
    """``term`` (POST, instructors only, with the page's XSRF token): a student's late days for the term, as
    ``python -m autograder.course.term grant`` sets them (``student``, ``tokens``)."""

    @web.authenticated
    def post(self):
        self.check_xsrf_cookie()
        if not self.is_instructor(self.get_current_user()):
            raise web.HTTPError(403, "only an instructor grants late days")
        checkers = self.app["checkers"]
        term = next((checker.term for checker in checkers if checker.term is not None), None)
        if term is None:
            raise web.HTTPError(404, "this course has no term here")
        student, given = self.get_body_argument("student", "").strip(), self.get_body_argument("tokens", "").strip()
        try:
            try:
                tokens = int(given)
            except ValueError:
                raise TermError(f"{given[:20]!r} is not a whole number of late days") from None
            term.grant(student=student, tokens=tokens)
            notice = f"{student}: {tokens} late days for the term."
        except TermError as error:
            notice = f"Nothing changed: {error}."
        self.render_page("instructor.html.j2", notice=notice, **instructor_values(checkers))


class AppealAsk(Page):
    """``students/<id>/appeals/<assignment>`` (POST): the student asks for a review of one verdict line of one of
    their checked Submits, with a sentence (``attempt``, ``check``, ``text``); theirs only, with the page's XSRF
    token. What the grade was made from is kept (the notebook's digest, the seed, the verdict)."""

    @web.authenticated
    def post(self, student: str, assignment: str):
        self.check_xsrf_cookie()
        if student != self.get_current_user()["name"]:
            raise web.HTTPError(403, "a student asks for reviews of their own verdicts only")
        checkers = self.app["checkers"]
        if assignment not in checkers or getattr(checkers[assignment], "appeals", None) is None:
            raise web.HTTPError(404, f"no assignment {assignment!r} takes reviews here")
        checker = checkers[assignment]
        try:
            attempt = checker.store.get(int(self.get_body_argument("attempt", "")))
        except ValueError:
            raise web.HTTPError(400, "the request does not name one of your Submits") from None
        if attempt is None or attempt.student != student or attempt.assignment != assignment:
            raise web.HTTPError(403, "a student asks for reviews of their own Submits only")
        try:
            digest = notebook_digest(checker.inbound / attempt.key / checker.notebook)
        except OSError:
            raise web.HTTPError(409, "this Submit's notebook is no longer there to be graded again") from None
        try:
            appeal = checker.appeals.ask(
                student=student,
                attempt=attempt,
                check=self.get_body_argument("check", ""),
                text=self.get_body_argument("text", ""),
                digest=digest,
            )
        except AppealError as error:
            notice = f"No review asked: {error}."
        else:
            notice = f"Your review of {appeal.check} is asked; the instructor's decision will be shown here."
        self.render_page("student.html.j2", notice=notice, **student_values(checkers, student, utcnow()))


def find_appeal(checkers: Checkers, appeal_id: str):
    """(checker, appeal) of an appeal's id, or 404."""
    for checker in checkers:
        appeals = getattr(checker, "appeals", None)
        appeal = appeals.get(int(appeal_id)) if appeals is not None and appeal_id.isdigit() else None
        if appeal is not None and appeal.assignment == checker.assignment:
            return checker, appeal
    raise web.HTTPError(404, f"no appeal {appeal_id}")


def queue_values(checkers: Checkers) -> dict:
    """The instructor's queue of appeals: open first, each with its re-run's difference check by check."""
    shown = []
    for checker in checkers:
        scale = cell_scale(checker.source)
        for appeal in appeals_of(checker):
            attempt = checker.store.get(appeal.attempt)
            rerun = [] if appeal.rerun is None else differences(attempt.verdicts, appeal.rerun, scale)
            shown.append(
                appeal_values(appeal)
                | {
                    "student": appeal.student,
                    "assignment": appeal.assignment,
                    "seed": appeal.seed,
                    "digest": appeal.digest,
                    "was": f"{attempt.points:g} / {attempt.max_points:g}"
                    if attempt and attempt.points is not None
                    else "",
                    "worth": scale.get(appeal.check),
                    "differences": rerun,
                    "rerun_error": appeal.rerun_error,
                    "rerun_at": appeal.rerun_at,
                    "gradebook": appeal.gradebook,
                }
            )
    shown.sort(key=lambda a: (a["status"] != "open", a["asked"]))
    return {"appeals": shown}


class AppealQueue(Page):
    """``appeals``: the instructor's queue of appeals (instructors only)."""

    @web.authenticated
    def get(self):
        if not self.is_instructor(self.get_current_user()):
            raise web.HTTPError(403, "the appeals' queue is the instructors'")
        self.render_page("appeals.html.j2", **queue_values(self.app["checkers"]))


class AppealAction(Page):
    """``appeals/<id>/rerun`` and ``appeals/<id>/decide`` (POST, instructors only, with the page's XSRF token):
    exactly that grade again (the same notebook, its digest checked, the same seed), or the decision (``points``
    for the appealed check, empty: the verdict stands; a ``comment``), which reaches the gradebook."""

    @web.authenticated
    async def post(self, appeal_id: str, action: str):
        self.check_xsrf_cookie()
        if not self.is_instructor(self.get_current_user()):
            raise web.HTTPError(403, "only an instructor re-runs or decides an appeal")
        checker, appeal = find_appeal(self.app["checkers"], appeal_id)
        notice = ""
        try:
            if action == "rerun":
                attempt = checker.store.get(appeal.attempt)
                started = time.monotonic()
                verdicts = await asyncio.get_running_loop().run_in_executor(
                    None, lambda: rerun_appeal(appeal, attempt, source=checker.source, inbound=checker.inbound)
                )
                checker.appeals.record_rerun(appeal.id, verdicts)
                took = time.monotonic() - started
                notice = f"Appeal {appeal.id} graded again in {took:.1f} s" + (
                    f": {verdicts}" if isinstance(verdicts, str) else ""
                )
            elif action == "decide":
                given = self.get_body_argument("points", "").strip()
                try:
                    points = float(given) if given else None
                except ValueError:
                    raise web.HTTPError(400, f"{given[:20]!r} is not a number of points") from None
                decided = checker.appeals.decide(
                    appeal.id, points=points, comment=self.get_body_argument("comment", ""), db=checker.appeals.url
                )
                options = self.app["options"]
                lti = decision_lti(options)
                then = await asyncio.get_running_loop().run_in_executor(
                    None, lambda: after_decision(options.course, decided, db=checker.appeals.url, lti=lti)
                )
                notice = "; ".join([f"Appeal {appeal.id} decided: {decided.gradebook}", *then])
            else:
                raise web.HTTPError(404, f"no action {action!r}")
        except AppealError as error:
            notice = f"Appeal {appeal.id}: {error}"
        self.render_page("appeals.html.j2", notice=notice, **queue_values(self.app["checkers"]))


class FeedbackPage(Page):
    """A student's released feedback page of an assignment, one click from their checks (theirs and the
    instructors' only); without an assignment's name, that of the first assignment on their page (the newest
    Submit's) whose feedback is released.

    The page was made from the autograded notebook, whose student content was made inert when it was graded
    (autograder.notebook.sanitise); it is served in a sandbox (its own origin, no script) all the same."""

    @web.authenticated
    def get(self, student: str, assignment: str | None = None):
        self.only_for(student, "feedback")
        checkers = self.app["checkers"]
        if assignment is not None and assignment not in checkers:
            raise web.HTTPError(404, f"no assignment {assignment!r} is checked here")
        if assignment is None:
            order = [section["assignment"] for section in student_values(checkers, student, utcnow())["sections"]]
        else:
            order = [assignment]
        page = next((found for name in order if (found := released_feedback(checkers[name], student))), None)
        if page is None:
            raise web.HTTPError(404, "no feedback has been released to you yet")
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.set_header(
            "Content-Security-Policy",
            f"sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:; {self.FRAMES}",
        )
        self.finish(page.read_bytes())


def make_app(options: ServiceOptions, checkers: Checkers | Checker) -> web.Application:
    """The service's pages over ``checkers`` (every assignment's, or one Checker's)."""
    prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/services/grading/")
    templates = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True)
    grading = {"options": options, "checkers": Checkers.of(checkers), "templates": templates, "prefix": prefix}
    return web.Application(
        [
            (prefix, Home),
            (url_path_join(prefix, "api", "latest"), Latest),
            (url_path_join(prefix, "students", r"([^/]+)"), StudentPage),
            (url_path_join(prefix, "students", r"([^/]+)", "late-days", r"([^/]+)"), LateDay),
            (url_path_join(prefix, "students", r"([^/]+)", "appeals", r"([^/]+)"), AppealAsk),
            (url_path_join(prefix, "appeals"), AppealQueue),
            (url_path_join(prefix, "term"), Grant),
            (url_path_join(prefix, "term", r"([^/]+)"), Extend),
            (url_path_join(prefix, "appeals", r"([^/]+)", r"(rerun|decide)"), AppealAction),
            (url_path_join(prefix, "students", r"([^/]+)", "feedback"), FeedbackPage),
            (url_path_join(prefix, "students", r"([^/]+)", "feedback", r"([^/]+)"), FeedbackPage),
            (url_path_join(prefix, "oauth_callback"), HubOAuthCallbackHandler),
        ],
        cookie_secret=os.urandom(32),
        grading=grading,
    )


def decision_lti(options: ServiceOptions):
    """The LTI tool's config an appeal's changed score is sent with (the service's --lti), or None."""
    if not options.lti:
        return None
    from autograder.lms.lti.config import load_config  # only with --lti: the LMS's tool

    return load_config(options.lti)


def lms_sender(options: ServiceOptions, policy):
    """None, or a function that sends a checked attempt's score to the LMS on a thread of its own (an LMS that is
    slow or down never holds the checks; what is not taken waits in the course's outbox), when the policy in
    force for its assignment (``policy(assignment)``, read when the score is ready) asks for it. Only a Submit
    checked as its student's own (own_submissions_only) is sent: under --any-owner a folder made in a classmate's
    name would put a score on their LMS grade, so nothing is sent then."""
    if not options.lti:
        return None
    if not options.own_submissions_only:
        log.warning("instant scores are not sent to the LMS: with --any-owner no Submit is known to be its student's")
        return None
    from autograder.lms.lti.config import load_config  # only with --lti: the LMS's tool, not needed to check Submits
    from autograder.lms.lti.passback import send_instant  # only with --lti, as above

    config, sending = load_config(options.lti), concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="lms")

    def send(attempt):
        if not policy(attempt.assignment).lms:
            return

        def work():
            try:
                send_instant(
                    config,
                    student=attempt.student,
                    assignment=attempt.assignment,
                    points=attempt.points,
                    maximum=attempt.max_points,
                )
            except Exception:
                log.exception("the instant score of attempt %s was not sent to the LMS", attempt.id)

        sending.submit(work)

    return send


def checked_names(source: Path, chosen: tuple[str, ...] = ()) -> list[str]:
    """The assignments the service checks: every one of the course's ``source`` folder (a folder with a notebook
    and its checks.py), or those ``chosen`` (each must be there). Raises assignments.NoAssignment saying which
    are there."""
    found = assignments.names(source)
    if not found:
        raise assignments.NoAssignment(
            f"{source} holds no assignment (a folder with its notebook and its {assignments.CHECKS_FILE}): "
            "make the course first (python -m autograder.course, or the hub)"
        )
    unknown = [name for name in chosen if name not in found]
    if unknown:
        raise assignments.NoAssignment(
            f"no assignment {', '.join(map(repr, unknown))} in {source}; there: {', '.join(found)}"
        )
    return [name for name in found if not chosen or name in chosen]


def make_checkers(options: ServiceOptions) -> Checkers:
    """A checker per assignment (checked_names), each with its own checks, policy and attempts, on one database;
    each assignment's checks tried before its first Submit (authoring_trouble), unless they passed before with the
    same files, engine and model (ProbeMemory in the course folder). An assignment added to source/ while the
    service runs gets its checker at the next look (Checkers' discover)."""
    source_root = options.course / "source"
    names = checked_names(source_root, options.assignments)
    course = Course.read(options.course, db=options.db)  # read once at the start; each policy again on change
    live = {name: LiveSettings(course, name) for name in names}
    db = live[names[0]].db
    find_alembic()  # a new gradebook runs alembic by name
    with Gradebook(db):  # nbgrader's tables first, stamped by its alembic: the service's own table goes beside them
        pass  # (made first, it would leave nbgrader a database it cannot migrate: "no such table: alembic_version")
    store, students = Attempts(db), course_students(db, options.students)
    term = live[names[0]].settings.term()  # each student's own due date and late days, read at each Submit
    appeals = Appeals(db)  # the students' requests for a review, beside the attempts
    send = lms_sender(options, lambda assignment: live[assignment].current)
    memory = ProbeMemory(options.course)  # passing probes remembered: a restart with nothing changed skips them
    # the course's exchange (c.ExchangeService.*: nbgrader's folder, or ngshare), one for every assignment
    exchange = open_exchange(live[names[0]].settings.exchange, folder=options.exchange, course_id=options.exchange.name)
    own = options.own_submissions_only or not isinstance(exchange, Folder)  # ngshare: the hub proves who, files judged

    def checker(name: str) -> Checker:
        if name not in live:  # an assignment added while the service runs
            live[name] = LiveSettings(course, name)
        made = Checker(
            source=source_root / name,
            exchange=exchange,
            store=store.scoped(name),
            policy=live[name].policy(),
            settings=live[name],
            students=students,
            slots=options.workers,
            admit=exchange.refusal if own else None,
            checked=send,
            probe=authoring_trouble,
            memory=memory,
            digest=probe_digest,
            term=term,
        )
        made.appeals = appeals
        return made

    def added(known: frozenset) -> dict[str, Checker]:
        """The assignments of source/ (those of --assignment only, when given) that have no checker yet; one
        whose checker cannot be made yet (its folder still being copied) is left for the next look."""
        made = {}
        for name in assignments.names(source_root):
            if name in known or (options.assignments and name not in options.assignments):
                continue
            try:
                made[name] = checker(name)
            except Exception as error:  # noqa: BLE001 - half a folder: looked at again next time
                log.warning("assignment %s is not checked yet: %s: %s", name, type(error).__name__, error)
        return made

    return Checkers({name: checker(name) for name in names}, slots=options.workers, discover=added)


class ServiceError(RuntimeError):
    """The service cannot start; the message says what is missing and what to do."""


def said_if_failed(warming) -> None:
    """A warm-up that failed is logged (the first Submit then pays for the start, and its check says why if the
    cause stays)."""
    if warming.exception() is not None:
        log.warning("a worker's warm-up failed: %s", warming.exception())


def serve(options: ServiceOptions) -> None:
    if sandbox.bubblewrap() is None and not sandbox.unsandboxed_allowed():
        raise ServiceError(sandbox.refusal())
    checkers = make_checkers(options)
    pool = make_pool(options)
    for warming in checkers.warm(pool):  # the workers started and ready now, not at the first Submit
        warming.add_done_callback(said_if_failed)
    thread = CheckerThread(checkers, pool)
    thread.start()
    app = make_app(options, checkers)
    url = os.environ.get("JUPYTERHUB_SERVICE_URL", f"http://127.0.0.1:{options.port or 10101}")
    port = options.port or int(url.rsplit(":", 1)[1].split("/")[0])
    app.listen(port, address="127.0.0.1")
    try:
        ioloop.IOLoop.current().start()
    finally:
        thread.stop()
        if isinstance(pool, concurrent.futures.Executor):
            pool.shutdown()
        else:  # a Dask client
            pool.close()
