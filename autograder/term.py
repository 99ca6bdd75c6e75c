"""Each student's own due date, kept in the course's database beside nbgrader's gradebook: extensions and late days.

Three tables of their own (nbgrader's are never touched), in the gradebook's database (SQLite or PostgreSQL, by
URL), so every process that grades reads the same fact and none writes a file another reads:

    autograder_extensions        (student, assignment) -> a due date of their own, or hours added to the assignment's
    autograder_late_day_grants   student -> the late-day tokens they have for the term (else c.LateDays.tokens)
    autograder_late_days_spent   (student, ordinal) -> the assignment a token was spent on, when, and how

    term = Term(url, rule=LateDays(tokens=3))
    term.extend(student="ada", assignment="attention", hours=48)      # or due=datetime(...); neither: removed
    standing = term.standing(student="ada", assignment="attention", base=due)   # base: the assignment's due date
    standing.due, standing.left, standing.extension                   # her own due date, tokens left, for nbgrader
    term.spend(student="ada", assignment="attention", base=due, seen=standing.spent_here)   # her click: one token
    term.cover(student="ada", assignment="attention", base=due, at=received)   # automatic: what covers a late Submit

A token moves one assignment's due date of one student by ``c.LateDays.hours`` (24 by default). A student's own
due date is their extension's (its due date, or the assignment's plus its hours), plus their tokens spent on that
assignment. Spending is atomic and once: each token spent is a row whose (student, ordinal) is unique, so two
Submits racing at the deadline (two processes, two machines) cannot both take the same token; the one that loses
reads again, finds the Submit covered, and spends nothing. A student's click names how many tokens they saw spent
(``seen``): a second click of the same page, or a replayed request, spends nothing.
"""

from __future__ import annotations

import datetime
import math
import time
from dataclasses import dataclass

import sqlalchemy as sa
from traitlets import Bool, Float, Integer
from traitlets.config import Configurable

from autograder.students import RULE, is_valid

EXTENSIONS, GRANTS, SPENT = "autograder_extensions", "autograder_late_day_grants", "autograder_late_days_spent"
LONGEST_HOURS = 24 * 366  # an extension longer than a year is a typing mistake
MOST_TOKENS = 1000
RETRIES = 20  # a spend that lost a race reads again, at most this often

metadata = sa.MetaData()
extensions_table = sa.Table(
    EXTENSIONS,
    metadata,
    sa.Column("student", sa.String(128), primary_key=True),
    sa.Column("assignment", sa.String(128), primary_key=True),
    sa.Column("due", sa.DateTime),  # their own due date (naive UTC), or
    sa.Column("hours", sa.Float),  # hours added to the assignment's
    sa.Column("changed", sa.DateTime, nullable=False),
)
grants_table = sa.Table(
    GRANTS,
    metadata,
    sa.Column("student", sa.String(128), primary_key=True),
    sa.Column("tokens", sa.Integer, nullable=False),
    sa.Column("changed", sa.DateTime, nullable=False),
)
spent_table = sa.Table(
    SPENT,
    metadata,
    sa.Column("student", sa.String(128), primary_key=True),
    sa.Column("ordinal", sa.Integer, primary_key=True),  # the student's 1st, 2nd... token: taken once
    sa.Column("assignment", sa.String(128), nullable=False),
    sa.Column("spent", sa.DateTime, nullable=False),
    sa.Column("how", sa.String(16), nullable=False),  # "student" (their click) or "automatic" (a late Submit)
)


class LateDays(Configurable):
    """The course's late days (``c.LateDays.*`` in its nbgrader_config.py): how many, how long, who spends them."""

    tokens = Integer(
        0, help="Late-day tokens each student has for the term (python -m autograder.course.term grant: one student's)"
    ).tag(config=True)
    hours = Float(24.0, help="Hours one token moves a student's due date of one assignment").tag(config=True)
    automatic = Bool(
        False,
        help="A Submit received after the student's due date spends the tokens that cover it, when they have enough "
        "(default: the student spends them on their checks page)",
    ).tag(config=True)


class TermError(ValueError):
    """A change to the term that cannot be made; the message says what is wrong and what to do."""


def utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


@dataclass(frozen=True)
class Standing:
    """One student's due date for one assignment and their tokens, as the database held them when read."""

    student: str
    assignment: str
    base: datetime.datetime | None  # the assignment's due date (None: it has none)
    extension_due: datetime.datetime | None  # the due date their extension sets
    extension_hours: float | None  # or the hours it adds
    spent_here: int  # tokens spent on this assignment
    granted: int  # tokens they have for the term
    spent: int  # tokens spent on every assignment
    hours: float  # what one token adds

    @property
    def left(self) -> int:
        return max(0, self.granted - self.spent)

    @property
    def due(self) -> datetime.datetime | None:
        """Their own due date (None when neither the assignment nor their extension has one)."""
        if self.extension_due is not None:
            due = self.extension_due
        elif self.base is not None:
            due = self.base + datetime.timedelta(hours=self.extension_hours or 0)
        else:
            return None
        return due + datetime.timedelta(hours=self.hours * self.spent_here)

    @property
    def extension(self) -> datetime.timedelta | None:
        """Their due date less the assignment's: nbgrader's SubmittedAssignment.extension (None when they are the
        same, or the assignment has no due date, which nbgrader cannot extend)."""
        due = self.due
        if self.base is None or due is None or due == self.base:
            return None
        return due - self.base

    def late(self, at: datetime.datetime) -> bool:
        due = self.due
        return due is not None and at > due

    def needed(self, at: datetime.datetime) -> int:
        """Tokens more that would make a Submit received ``at`` on time (0 when it is)."""
        due = self.due
        if due is None or at <= due:
            return 0
        return math.ceil((at - due).total_seconds() / (self.hours * 3600))

    def describe(self) -> list[str]:
        """Their due date and tokens in sentences, for their checks page."""
        due = self.due
        lines = [f"Your due date: {due:%Y-%m-%d %H:%M} UTC" + self.why() + "." if due else "No due date."]
        if self.granted:
            lines.append(
                f"Late days: {self.left} of {self.granted} left for the term "
                f"({self.spent_here} spent on {self.assignment}); each moves your due date by {self.hours:g} hours."
            )
        return lines

    def why(self) -> str:
        parts = []
        if self.extension_due is not None or self.extension_hours:
            parts.append("an extension")
        if self.spent_here:
            parts.append(f"{self.spent_here} late day{'s' if self.spent_here != 1 else ''}")
        return f" ({' and '.join(parts)})" if parts else ""


@dataclass(frozen=True)
class Spent:
    """What a spend did: how many tokens it took (0: none), the standing after it, and why none when none."""

    tokens: int
    standing: Standing
    why: str = ""


def checked_names(student: str, assignment: str) -> None:
    for kind, name in (("student", student), ("assignment", assignment)):
        if not isinstance(name, str) or not is_valid(name):
            raise TermError(f"{name!r} is not a {kind} id ({RULE})")


class Term:
    """The term's tables in the course database at ``url`` (created when missing), under the course's ``rule``."""

    def __init__(self, url: str, *, rule: LateDays | None = None):
        options = {"connect_args": {"timeout": 60}} if url.startswith("sqlite") else {}
        self.engine = sa.create_engine(url, **options)  # reads, and the instructor's one-statement changes
        self.spender = self.engine  # spending: read, decide, insert in one transaction
        self.rule = rule or LateDays()
        if self.engine.dialect.name == "sqlite":  # a spender takes the lock first: no stale read upgraded to a write
            self.spender = sa.create_engine(url, **options)
            sa.event.listen(self.spender, "connect", _sqlite_own_transactions)
            sa.event.listen(self.spender, "begin", lambda connection: connection.exec_driver_sql("BEGIN IMMEDIATE"))
        metadata.create_all(self.engine)

    def close(self) -> None:
        self.engine.dispose()
        self.spender.dispose()

    # --- the instructor's changes ----------------------------------------------------------------------------

    def extend(
        self,
        *,
        student: str,
        assignment: str,
        due: datetime.datetime | None = None,
        hours: float | None = None,
        now: datetime.datetime | None = None,
    ) -> None:
        """Give ``student`` their own due date for ``assignment`` (``due``, naive UTC) or ``hours`` more than the
        assignment's; neither removes their extension. One replaces another (extensions do not add up)."""
        checked_names(student, assignment)
        if due is not None and hours is not None:
            raise TermError("give the extension as a due date or as hours, not both")
        if hours is not None and not (isinstance(hours, (int, float)) and 0 < hours <= LONGEST_HOURS):
            raise TermError(f"hours = {hours!r}: an extension is a number of hours above 0, at most {LONGEST_HOURS}")
        if due is not None and due.tzinfo is not None:
            due = due.astimezone(datetime.UTC).replace(tzinfo=None)
        table = extensions_table
        with self.engine.begin() as connection:
            connection.execute(table.delete().where(table.c.student == student, table.c.assignment == assignment))
            if due is not None or hours is not None:
                row = dict(student=student, assignment=assignment, due=due, hours=hours, changed=now or utcnow())
                connection.execute(table.insert().values(**row))

    def grant(self, *, student: str, tokens: int, now: datetime.datetime | None = None) -> None:
        """``student`` has ``tokens`` late days for the term (over the course's c.LateDays.tokens); those spent stay
        spent, so fewer than they spent leaves them none."""
        checked_names(student, "term")
        if isinstance(tokens, bool) or not isinstance(tokens, int) or not 0 <= tokens <= MOST_TOKENS:
            raise TermError(f"tokens = {tokens!r}: a whole number from 0 to {MOST_TOKENS}")
        with self.engine.begin() as connection:
            connection.execute(grants_table.delete().where(grants_table.c.student == student))
            connection.execute(grants_table.insert().values(student=student, tokens=tokens, changed=now or utcnow()))

    # --- reading -----------------------------------------------------------------------------------------------

    def standing(self, *, student: str, assignment: str, base: datetime.datetime | None) -> Standing:
        with self.engine.connect() as connection:
            return self.read(connection, student, assignment, base)

    def read(self, connection, student: str, assignment: str, base) -> Standing:
        extension = connection.execute(
            sa.select(extensions_table.c.due, extensions_table.c.hours).where(
                extensions_table.c.student == student, extensions_table.c.assignment == assignment
            )
        ).first()
        granted = connection.execute(sa.select(grants_table.c.tokens).where(grants_table.c.student == student)).scalar()
        spent = connection.execute(sa.select(spent_table.c.assignment).where(spent_table.c.student == student)).all()
        return Standing(
            student=student,
            assignment=assignment,
            base=base,
            extension_due=extension.due if extension else None,
            extension_hours=extension.hours if extension else None,
            spent_here=sum(1 for (name,) in spent if name == assignment),
            granted=self.rule.tokens if granted is None else granted,
            spent=len(spent),
            hours=self.rule.hours,
        )

    def standings(self, *, assignment: str, base: datetime.datetime | None) -> dict[str, Standing]:
        """{student: Standing} of every student whose due date for ``assignment`` is their own (an extension or
        tokens spent on it); every other student's is the assignment's."""
        with self.engine.connect() as connection:
            named = set(
                connection.execute(
                    sa.select(extensions_table.c.student).where(extensions_table.c.assignment == assignment)
                ).scalars()
            )
            named |= set(
                connection.execute(
                    sa.select(spent_table.c.student).where(spent_table.c.assignment == assignment)
                ).scalars()
            )
            return {student: self.read(connection, student, assignment, base) for student in sorted(named)}

    def assignments(self) -> list[str]:
        """The assignments some student has an extension of, or late days spent on."""
        with self.engine.connect() as connection:
            named = set(connection.execute(sa.select(extensions_table.c.assignment).distinct()).scalars())
            named |= set(connection.execute(sa.select(spent_table.c.assignment).distinct()).scalars())
        return sorted(named)

    def grants(self) -> dict[str, int]:
        """{student: their late days for the term} of the students granted their own number."""
        with self.engine.connect() as connection:
            rows = connection.execute(sa.select(grants_table.c.student, grants_table.c.tokens))
            return dict(sorted(rows.all()))

    # --- spending ----------------------------------------------------------------------------------------------

    def spend(
        self,
        *,
        student: str,
        assignment: str,
        base: datetime.datetime | None,
        seen: int,
        now: datetime.datetime | None = None,
    ) -> Spent:
        """The student's click: one token on ``assignment``, if they still have one and the tokens spent on it are
        the ``seen`` their page showed (else nothing: the same click again, or a stale page)."""
        checked_names(student, assignment)

        def decide(standing: Standing) -> tuple[int, str]:
            if standing.spent_here != seen:
                return 0, f"already done: {standing.spent_here} late days are spent on {assignment}"
            if standing.due is None:
                return 0, f"{assignment} has no due date to move"
            if standing.left < 1:
                return 0, "you have no late day left"
            return 1, ""

        return self.take(student, assignment, base, decide, "student", now)

    def cover(
        self,
        *,
        student: str,
        assignment: str,
        base: datetime.datetime | None,
        at: datetime.datetime,
        now: datetime.datetime | None = None,
    ) -> Spent:
        """A Submit received ``at``: the tokens that make it on time, spent when the student has that many (none
        when it is on time, or when they have too few: a token that would not cover it is not wasted)."""
        checked_names(student, assignment)

        def decide(standing: Standing) -> tuple[int, str]:
            needed = standing.needed(at)
            if needed and needed > standing.left:
                return 0, f"{needed} late days would cover it; {standing.left} left"
            return needed, ""

        return self.take(student, assignment, base, decide, "automatic", now)

    def take(self, student, assignment, base, decide, how: str, now) -> Spent:
        """Spend what ``decide(standing)`` says, in one transaction; a race lost (another process took the same
        ordinal) is read again and decided again."""
        for attempt in range(RETRIES):
            try:
                with self.spender.begin() as connection:
                    standing = self.read(connection, student, assignment, base)
                    count, why = decide(standing)
                    if count:
                        rows = [
                            dict(
                                student=student,
                                ordinal=standing.spent + number,
                                assignment=assignment,
                                spent=now or utcnow(),
                                how=how,
                            )
                            for number in range(1, count + 1)
                        ]
                        connection.execute(spent_table.insert(), rows)
                        standing = self.read(connection, student, assignment, base)
                return Spent(count, standing, why)
            except (sa.exc.IntegrityError, sa.exc.OperationalError):  # another took that token first: read again
                time.sleep(0.01 * (attempt + 1))
        raise TermError(f"the late days of {student} could not be spent: the database stayed busy; try again")


def _sqlite_own_transactions(connection, _record):
    connection.isolation_level = None  # BEGIN is ours (SQLAlchemy's recipe for pysqlite), so BEGIN IMMEDIATE holds
