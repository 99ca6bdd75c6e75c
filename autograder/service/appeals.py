"""Appeals: a student asks for a review of one verdict line, the instructor re-runs exactly that grade and decides.

One table, ``autograder_appeals``, in the course's database beside the attempts (nbgrader's tables untouched). An
appeal keeps what the grade was made from: the attempt (the Submit's folder in the inbound), the SHA-256 of its
notebook when the student asked, the verdict's seed and the verdict itself (``Verdict.to_dict()``):

    appeals = Appeals(url)
    appeal = appeals.ask(student="ada", attempt=attempt, check="check_softmax", text="...", digest=...)
    rerun = rerun_appeal(appeal, source=..., inbound=...)   # the same notebook (its digest checked), the same seed
    appeals.record_rerun(appeal.id, rerun)                   # its verdicts, and the difference check by check
    appeals.decide(appeal.id, points=2.0, comment="...", db=gradebook_url)   # None: the verdict stands

    python -m autograder.service.appeals --course DIR list [--open]
    python -m autograder.service.appeals --course DIR --exchange DIR/<course id> rerun ID
    python -m autograder.service.appeals --course DIR decide ID [--points P] --comment "..." [--lti tool.json]

A decision that changes the points of the appealed check writes them into nbgrader's gradebook as that check
cell's manual score (what Formgrader writes), when the class run has graded the student; then, at once
(``after_decision``), the student's feedback page is made again (autograder.grading.refresh, as the class command's
--feedback-only: the pages whose hand grades changed) and, where the course is on an LMS (``--lti``, or the
service's own --lti), the changed score goes into the LMS outbox and is sent (autograder.lms.lti.passback).
The text is the student's: hostile, kept as one line of at most TEXT_LONGEST printable characters and shown
escaped; a student has at most MOST_OPEN appeals open at a time.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa
from nbgrader.api import Gradebook, MissingEntry

from autograder.answers.budget import WALL_TOTAL_FACTOR
from autograder.attempts import Attempt, Attempts, metadata, stored_verdicts, utcnow
from autograder.grading import refresh
from autograder.grading.lock import CourseLock
from autograder.grading.task import GradingError
from autograder.service.checking import NotCheckable, NotCheckedYet, cell_points, check_notebook
from autograder.settings import Course, CourseSettings, SettingsError
from autograder.timeouts import CHECKS_BUDGET
from autograder.verdicts import Verdict

TABLE = "autograder_appeals"
MOST_OPEN = 3  # appeals a student may have open at once (all assignments together)
TEXT_LONGEST = 500  # characters of a student's sentence
STATES = ("open", "decided")

appeals_table = sa.Table(
    TABLE,
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("student", sa.String(128), nullable=False, index=True),
    sa.Column("assignment", sa.String(128), nullable=False),
    sa.Column("attempt", sa.Integer, nullable=False),  # autograder_attempts.id
    sa.Column("check", sa.String(128), nullable=False),
    sa.Column("text", sa.String(TEXT_LONGEST), nullable=False),
    sa.Column("digest", sa.String(64), nullable=False),  # the notebook's SHA-256 when the student asked
    sa.Column("seed", sa.BigInteger),  # the verdict's seed: the re-run draws the same inputs
    sa.Column("verdict", sa.Text, nullable=False),  # JSON: Verdict.to_dict() as the student saw it
    sa.Column("asked", sa.DateTime, nullable=False),
    sa.Column("status", sa.String(16), nullable=False, index=True),
    sa.Column("rerun", sa.Text),  # JSON: the re-run's verdicts, or {"error": why it could not run}
    sa.Column("rerun_at", sa.DateTime),
    sa.Column("points", sa.Float),  # the decided points of the check (None: the verdict stands)
    sa.Column("comment", sa.Text, nullable=False, default=""),
    sa.Column("gradebook", sa.Text, nullable=False, default=""),  # what the decision did to the gradebook
    sa.Column("decided", sa.DateTime),
)


class AppealError(ValueError):
    """An appeal that cannot be made or decided; the message says what is wrong and what to do."""


def clean_text(text: str, longest: int = TEXT_LONGEST) -> str:
    """A student's sentence as it is kept: one line of printable characters (others dropped, runs of space made
    one), at most ``longest`` characters. AppealError when nothing is left or it is longer."""
    if not isinstance(text, str):
        raise AppealError("write a sentence saying why this verdict is wrong")
    kept = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    if not kept:
        raise AppealError("write a sentence saying why this verdict is wrong")
    if len(kept) > longest:
        raise AppealError(f"your sentence has {len(kept)} characters: say it in at most {longest}")
    return kept


def notebook_digest(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@dataclass(frozen=True)
class Appeal:
    id: int
    student: str
    assignment: str
    attempt: int
    check: str
    text: str
    digest: str
    seed: int | None
    verdict: Verdict
    asked: datetime.datetime
    status: str
    rerun: tuple[Verdict, ...] | None  # None: not re-run yet
    rerun_error: str
    rerun_at: datetime.datetime | None
    points: float | None
    comment: str
    gradebook: str
    decided: datetime.datetime | None

    @classmethod
    def from_row(cls, row) -> Appeal:
        values = dict(row._mapping)
        values["verdict"] = Verdict.from_dict(json.loads(values["verdict"]))
        rerun = json.loads(values["rerun"]) if values["rerun"] else None
        values["rerun_error"] = rerun.get("error", "") if isinstance(rerun, dict) else ""
        values["rerun"] = stored_verdicts(json.dumps(rerun)) if isinstance(rerun, list) else None
        return cls(**values)


@dataclass(frozen=True)
class Difference:
    """One check's line before and after the re-run."""

    check: str
    before: float | None
    after: float | None
    failed_before: tuple[str, ...]
    failed_after: tuple[str, ...]

    @property
    def changed(self) -> bool:
        return self.before != self.after or self.failed_before != self.failed_after


def failed_words(verdict: Verdict | None) -> tuple[str, ...]:
    return () if verdict is None else tuple(p.message or p.name for p in verdict.failed)


def differences(before, after, scale: dict[str, float] | None = None) -> list[Difference]:
    """Check by check (the first run's order, then any the re-run adds): points (on the gradebook's scale with
    ``scale``, {check: the cell's points}) and what failed, before and after."""
    old, new = {v.check: v for v in before}, {v.check: v for v in after}
    checks = list(old) + [check for check in new if check not in old]

    def points(verdict: Verdict | None) -> float | None:
        if verdict is None:
            return None
        return round(verdict.scaled(scale[verdict.check]), 2) if scale and verdict.check in scale else verdict.points

    return [
        Difference(
            check,
            points(old.get(check)),
            points(new.get(check)),
            failed_words(old.get(check)),
            failed_words(new.get(check)),
        )
        for check in checks
    ]


class Appeals:
    """The appeals table of one course database (created when missing)."""

    def __init__(self, url: str):
        self.url = url  # the course's database: the gradebook a decision writes to
        options = {"connect_args": {"timeout": 60}} if url.startswith("sqlite") else {}
        self.engine = sa.create_engine(url, **options)
        metadata.create_all(self.engine, tables=[appeals_table])

    def close(self) -> None:
        self.engine.dispose()

    def ask(self, *, student: str, attempt: Attempt, check: str, text: str, digest: str) -> Appeal:
        """``student``'s appeal of ``check`` in their checked ``attempt`` (AppealError: not theirs, not checked, no
        such line, one open already for that line, MOST_OPEN open already, a sentence that is empty or too long)."""
        if attempt.student != student:
            raise AppealError("a student appeals only their own Submits")
        if attempt.status != "done":
            raise AppealError("only a checked Submit's verdict can be appealed")
        verdict = next((v for v in attempt.verdicts if v.check == check), None)
        if verdict is None:
            raise AppealError(f"your Submit has no verdict line {check!r}")
        text = clean_text(text)
        table = appeals_table
        with self.engine.begin() as connection:
            open_ones = connection.execute(
                sa.select(table.c.attempt, table.c.check).where(table.c.student == student, table.c.status == "open")
            ).all()
            if (attempt.id, check) in {tuple(row) for row in open_ones}:
                raise AppealError(f"you asked for a review of {check} in this Submit already: it is open")
            if len(open_ones) >= MOST_OPEN:
                raise AppealError(
                    f"you have {len(open_ones)} reviews open, the most a student may have: wait for a decision"
                )
            row = dict(
                student=student,
                assignment=attempt.assignment,
                attempt=attempt.id,
                check=check,
                text=text,
                digest=digest,
                seed=verdict.seed,
                verdict=json.dumps(verdict.to_dict()),
                asked=utcnow(),
                status="open",
                comment="",
                gradebook="",
            )
            new_id = connection.execute(table.insert().values(**row)).inserted_primary_key[0]
        return self.get(new_id)

    def get(self, appeal_id: int) -> Appeal | None:
        with self.engine.connect() as connection:
            row = connection.execute(sa.select(appeals_table).where(appeals_table.c.id == appeal_id)).first()
        return None if row is None else Appeal.from_row(row)

    def select(self, *, student: str | None = None, status: str | None = None) -> list[Appeal]:
        query = sa.select(appeals_table).order_by(appeals_table.c.asked, appeals_table.c.id)
        if student is not None:
            query = query.where(appeals_table.c.student == student)
        if status is not None:
            query = query.where(appeals_table.c.status == status)
        with self.engine.connect() as connection:
            return [Appeal.from_row(row) for row in connection.execute(query)]

    def record_rerun(self, appeal_id: int, verdicts: list[Verdict] | str) -> Appeal:
        """The re-run's verdicts (or why it could not run, a sentence) kept with the appeal."""
        value = json.dumps({"error": verdicts} if isinstance(verdicts, str) else [v.to_dict() for v in verdicts])
        statement = appeals_table.update().where(appeals_table.c.id == appeal_id).values(rerun=value, rerun_at=utcnow())
        with self.engine.begin() as connection:
            connection.execute(statement)
        return self.get(appeal_id)

    def decide(self, appeal_id: int, *, points: float | None, comment: str, db: str | None = None) -> Appeal:
        """The instructor's decision, once: ``points`` for the appealed check on the gradebook's scale (None: the
        verdict stands), a comment for the student; with ``db``, changed points go to the gradebook (see
        module)."""
        appeal = self.get(appeal_id)
        if appeal is None:
            raise AppealError(f"no appeal {appeal_id}")
        if appeal.status != "open":
            raise AppealError(f"appeal {appeal_id} is decided already")
        comment = clean_text(comment, longest=2000) if comment and comment.strip() else ""
        said = "the verdict stands: nothing changed in the gradebook"
        if points is not None:
            said = manual_score(db, appeal, float(points)) if db else "no gradebook given: not written"
        statement = (
            appeals_table.update()
            .where(appeals_table.c.id == appeal_id, appeals_table.c.status == "open")
            .values(status="decided", points=points, comment=comment, gradebook=said, decided=utcnow())
        )
        with self.engine.begin() as connection:
            if connection.execute(statement).rowcount != 1:
                raise AppealError(f"appeal {appeal_id} is decided already")
        return self.get(appeal_id)


def manual_score(db: str, appeal: Appeal, points: float) -> str:
    """The appealed check cell's manual score in nbgrader's gradebook, as Formgrader writes it; what was done."""
    with Gradebook(db) as gradebook:
        try:
            submission = gradebook.find_submission(appeal.assignment, appeal.student)
        except MissingEntry:
            return "the class run has not graded this student yet: the gradebook is unchanged (decide again after it)"
        for notebook in submission.notebooks:
            try:
                grade = gradebook.find_grade(appeal.check, notebook.name, appeal.assignment, appeal.student)
            except MissingEntry:
                continue
            if not 0 <= points <= grade.max_score:
                raise AppealError(f"{points:g} points: {appeal.check} is worth 0 to {grade.max_score:g}")
            grade.manual_score = points
            gradebook.db.commit()
            return f"{appeal.check} of {appeal.student} is now {points:g} / {grade.max_score:g} in the gradebook"
    return f"the gradebook has no cell {appeal.check} for {appeal.student}: unchanged"


def after_decision(course: Path, appeal: Appeal, *, db: str, lti=None) -> list[str]:
    """What a decision that changed the gradebook sets off at once, as lines for the instructor: the student's
    feedback page made again, and (``lti``: the course's LtiConfig) the scores the LMS lacks sent through the
    outbox. Nothing for a decision that changed nothing."""
    if not appeal.gradebook.startswith(f"{appeal.check} of {appeal.student} is now"):
        return []
    said = []
    try:
        with CourseLock(course, wait=False, say=lambda *_: None):
            made = refresh.refresh(Course.read(course, db=db), appeal.assignment)
        said.append(
            f"feedback page of {appeal.student} made again"
            if appeal.student in made
            else f"no feedback page of {appeal.student} to make again (the class run has not made one yet)"
        )
    except GradingError as error:  # a class run holds the course: it makes the page itself when it ends
        said.append(f"the feedback page was not made again now: {error}")
    except Exception as error:  # noqa: BLE001 - the decision is recorded; the page can be made again later
        said.append(f"the feedback page was not made again ({type(error).__name__}: {str(error)[:200]})")
    if lti is not None:
        from autograder.lms.lti.passback import PassbackOptions, send_scores  # only on an LMS: the LTI tool's

        result = send_scores(PassbackOptions(config=lti, db=db))
        said += [f"LMS: {line}" for line in result.summary()]
    return said


def rerun_appeal(appeal: Appeal, attempt: Attempt, *, source: Path, inbound: Path) -> list[Verdict] | str:
    """Exactly that grade again: the same Submit's notebook (refused when its digest is not the appeal's), the
    assignment's checks, the verdict's seed. The verdicts, or why it could not run (a sentence)."""
    notebook = sorted(Path(source).glob("*.ipynb"))[0].name
    path = Path(inbound) / attempt.key / notebook
    try:
        if notebook_digest(path) != appeal.digest:
            return "the Submit's notebook is not the one appealed (its digest differs): it cannot be graded again"
        _, _, verdicts = check_notebook(
            source=Path(source),
            notebook_path=path,
            received=attempt.submitted,
            seed=appeal.seed,
            wall=WALL_TOTAL_FACTOR * CHECKS_BUDGET,  # the class run's clock: the instructor waits for this one
        )
    except (NotCheckable, NotCheckedYet) as error:
        return str(error)
    except OSError as error:
        return f"the Submit's notebook cannot be read ({error.strerror})"
    return verdicts


def cell_scale(source: Path) -> dict[str, float]:
    """{check: its cell's points in the gradebook} of the assignment in ``source``."""
    return cell_points(next(Path(source).glob("*.ipynb")))


def main(argv=None) -> int:
    """The instructor's queue from a terminal: list, grade again (showing the difference check by check), decide."""
    parser = argparse.ArgumentParser(prog="python -m autograder.service.appeals", description=__doc__.splitlines()[0])
    parser.add_argument("--course", type=Path, required=True, help="the course folder")
    parser.add_argument("--exchange", type=Path, help="the exchange's folder of this course (for rerun)")
    parser.add_argument("--db", help="the course database's URL (default: the one the course's settings name)")
    commands = parser.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("list", help="the appeals, oldest first")
    listing.add_argument("--open", action="store_true", help="the open ones only")
    again = commands.add_parser("rerun", help="exactly that grade again: the same notebook, the same seed")
    again.add_argument("id", type=int)
    decide = commands.add_parser("decide", help="the decision: points for the appealed check, or the verdict stands")
    decide.add_argument("id", type=int)
    decide.add_argument("--points", type=float, help="the check's points (default: the verdict stands)")
    decide.add_argument("--comment", default="", help="for the student")
    decide.add_argument("--lti", type=Path, help="the LTI tool's config: a changed score is sent to the LMS at once")
    args = parser.parse_args(argv)
    try:
        settings = CourseSettings.read(args.course, db=args.db)
    except SettingsError as error:
        parser.exit(2, f"{parser.prog}: {error}\n")
    if not settings.has_gradebook():
        parser.exit(2, f"{parser.prog}: {args.course} has no gradebook yet\n")
    appeals = Appeals(settings.db)
    try:
        if args.command == "list":
            for appeal in appeals.select(status="open" if args.open else None):
                print(f"{appeal.id} {appeal.student} {appeal.assignment} {appeal.check} {appeal.status}: {appeal.text}")
            return 0
        appeal = appeals.get(args.id)
        if appeal is None:
            parser.exit(2, f"{parser.prog}: no appeal {args.id}\n")
        if args.command == "rerun":
            if args.exchange is None:
                parser.exit(2, f"{parser.prog}: rerun needs --exchange (the Submit's notebook is in its inbound)\n")
            store = Attempts(settings.db)
            attempt = store.get(appeal.attempt)
            source = settings.course / "source" / appeal.assignment
            verdicts = rerun_appeal(appeal, attempt, source=source, inbound=args.exchange / "inbound")
            appeals.record_rerun(appeal.id, verdicts)
            if isinstance(verdicts, str):
                print(f"appeal {appeal.id}: not graded again: {verdicts}")
                return 1
            for line in differences(attempt.verdicts, verdicts, cell_scale(source)):
                mark = "CHANGED" if line.changed else "same"
                print(f"{line.check}: {line.before} -> {line.after} {mark}")
        else:
            lti = None
            if args.lti is not None:
                from autograder.lms.lti.config import ConfigError, load_config  # only with --lti

                try:
                    lti = load_config(args.lti)
                except ConfigError as error:
                    parser.exit(2, f"{parser.prog}: {error}\n")
            decided = appeals.decide(appeal.id, points=args.points, comment=args.comment, db=settings.db)
            print(f"appeal {decided.id} decided: {decided.gradebook}")
            for line in after_decision(settings.course, decided, db=settings.db, lti=lti):
                print(line)
    except AppealError as error:
        parser.exit(2, f"{parser.prog}: {error}\n")
    finally:
        appeals.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
