"""Every instant check of a Submit, recorded in the course's database beside nbgrader's gradebook.

One table, ``autograder_attempts``, in the same database as the gradebook (SQLite or PostgreSQL, by URL);
nbgrader's own tables are never touched. A row is one Submit that nbgrader placed in the exchange, keyed by
its inbound folder's name, so finding the same Submit again never makes a second row:

    store = Attempts("sqlite:////srv/course/gradebook.db")
    store.add(key="ada+attention+2026-12-01 10:00:00.000000 UTC+x1", student="ada", assignment="attention",
              submitted=datetime(...))
    attempt = store.claim(now=...)            # the next one to check, fair per student (see instant.Queue)
    store.finish(attempt.id, points=..., max_points=..., verdicts=[Verdict(...), ...])
    store.select(student="ada")[-1].verdicts[0].passed   # autograder.verdicts.Verdict, read back as data

States: ``pending`` (waiting for a worker), ``queued`` (over the policy's window: checked when it reopens),
``checking`` (a worker has it), ``done`` (verdicts recorded), ``refused`` (could not be checked: the message
says why), ``late`` (after the due date: never checked), ``superseded`` (a later Submit of the same student was
waiting too: only a student's newest waiting Submit is checked, ``supersede``). A row is written in one
transaction; a service stopped while ``checking`` puts its rows back to ``pending`` on restart (``recover``), so
each Submit is checked at most once.

A course's assignments share the table; the service's checker of each reads and changes its own rows only
(``Attempts(url).scoped(name)``): the queue, the window, superseding and recovering are per student per
assignment.

``submitted`` is when the grader received the Submit: its folder's (and notebook's) change time as the service
first observed it, never later than when it first saw it (``received``); the timestamp a student's folder name
states is never trusted. A round of the checker reads only what it needs (each student's first waiting attempt,
the starts within the policy's period of the students waiting), never the whole table, so its cost does not
grow with the attempts stored. Verdicts are stored as ``Verdict.to_dict()`` and read back as
``autograder.verdicts.Verdict``: nobody here re-implements what a verdict means.
"""

from __future__ import annotations

import copy
import datetime
import json
from dataclasses import dataclass

import sqlalchemy as sa

from autograder.verdicts import StaleVerdicts, Verdict

TABLE = "autograder_attempts"
STATES = ("pending", "queued", "checking", "done", "refused", "late", "superseded")
WAITING = ("pending", "queued")  # states of a Submit not yet started
CHUNK = 500  # keys or students per IN (...) of one query

metadata = sa.MetaData()
attempts_table = sa.Table(
    TABLE,
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("key", sa.String(400), nullable=False, unique=True),  # the Submit's inbound folder name
    sa.Column("student", sa.String(128), nullable=False, index=True),
    sa.Column("assignment", sa.String(128), nullable=False),
    sa.Column("submitted", sa.DateTime, nullable=False),  # when the grader received it (UTC; never the name's time)
    sa.Column("received", sa.DateTime, nullable=False),  # when the service first saw it (UTC)
    sa.Column("status", sa.String(16), nullable=False, index=True),
    sa.Column("started", sa.DateTime),
    sa.Column("checked", sa.DateTime),
    sa.Column("points", sa.Float),
    sa.Column("max_points", sa.Float),
    sa.Column("verdicts", sa.Text),  # JSON: [Verdict.to_dict(), ...]
    sa.Column("message", sa.Text, nullable=False, default=""),
)


def utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


@dataclass(frozen=True)
class Attempt:
    id: int
    key: str
    student: str
    assignment: str
    submitted: datetime.datetime
    received: datetime.datetime
    status: str
    started: datetime.datetime | None
    checked: datetime.datetime | None
    points: float | None
    max_points: float | None
    verdicts: tuple[Verdict, ...]
    message: str

    @classmethod
    def from_row(cls, row) -> Attempt:
        values = dict(row._mapping)
        values["verdicts"] = stored_verdicts(values["verdicts"])
        return cls(**values)

    @property
    def waiting(self) -> bool:
        return self.status in (*WAITING, "checking")


def stored_verdicts(text: str | None) -> tuple[Verdict, ...]:
    """The verdicts a row holds, as Verdicts; none from a row stored in another format (it shows its score only)."""
    try:
        return tuple(Verdict.from_dict(value) for value in json.loads(text)) if text else ()
    except (StaleVerdicts, TypeError, ValueError):
        return ()


class Attempts:
    """The attempts table of one course database (created when missing); with ``assignment``, that assignment's
    attempts only: every read and every change of many rows (the queue, the window, supersede, recover) stays
    within it, so a student's Submits of two assignments never supersede or queue each other.

        store = Attempts(url)                           # every assignment's
        positions = store.scoped("positions")           # one assignment's, on the same connections
    """

    def __init__(self, url: str, assignment: str | None = None):
        # SQLite: wait for another writer (the class run, Formgrader) instead of failing at once
        options = {"connect_args": {"timeout": 60}} if url.startswith("sqlite") else {}
        self.engine = sa.create_engine(url, **options)
        self.assignment = assignment
        metadata.create_all(self.engine, tables=[attempts_table])

    def scoped(self, assignment: str) -> Attempts:
        """The same table, on the same connections, seen as ``assignment``'s attempts only."""
        view = copy.copy(self)
        view.assignment = assignment
        return view

    def mine(self, query):
        """``query`` (a select, update or delete of the table) limited to this store's assignment, if it has one."""
        return query if self.assignment is None else query.where(attempts_table.c.assignment == self.assignment)

    def close(self):
        self.engine.dispose()

    def add(
        self,
        *,
        key: str,
        student: str,
        assignment: str,
        submitted: datetime.datetime,
        status: str = "pending",
        message: str = "",
        now: datetime.datetime | None = None,
    ) -> bool:
        """Record a Submit once (False: it was already recorded)."""
        if status not in STATES:
            raise ValueError(f"unknown attempt status {status!r}: one of {', '.join(STATES)}")
        row = dict(
            key=key,
            student=student,
            assignment=assignment,
            submitted=submitted,
            received=now or utcnow(),
            status=status,
            message=message,
        )
        with self.engine.begin() as connection:
            if connection.execute(sa.select(attempts_table.c.id).where(attempts_table.c.key == key)).first():
                return False
            connection.execute(attempts_table.insert().values(**row))
        return True

    def add_many(self, rows: list[dict], now: datetime.datetime | None = None) -> dict[str, str]:
        """Record many Submits (each a dict of ``add``'s keywords) in one transaction; those already recorded are
        left as they are. Returns {key: why it could not be recorded} for rows the database refused: those are
        then tried one by one, so one row never costs the others."""
        received = now or utcnow()
        for row in rows:
            if row.get("status", "pending") not in STATES:
                raise ValueError(f"unknown attempt status {row['status']!r}: one of {', '.join(STATES)}")
        try:
            with self.engine.begin() as connection:
                known = self.existing((row["key"] for row in rows), connection)
                fresh = [
                    {"status": "pending", "message": "", "received": received, **row}
                    for row in rows
                    if row["key"] not in known
                ]
                if fresh:
                    connection.execute(attempts_table.insert(), fresh)
            return {}
        except sa.exc.SQLAlchemyError:
            pass
        failed = {}
        for row in rows:  # one by one: the database names the row it refuses
            try:
                self.add(now=received, **row)
            except sa.exc.SQLAlchemyError as error:
                failed[row["key"]] = f"the database refused it ({type(getattr(error, 'orig', None) or error).__name__})"
        return failed

    def existing(self, keys, connection=None) -> set[str]:
        """Which of ``keys`` are recorded (looked up in chunks: the cost is that of the keys asked about)."""
        keys, found = list(dict.fromkeys(keys)), set()
        if connection is None:
            with self.engine.connect() as connection:
                return self.existing(keys, connection)
        for start in range(0, len(keys), CHUNK):
            chunk = keys[start : start + CHUNK]
            query = sa.select(attempts_table.c.key).where(attempts_table.c.key.in_(chunk))
            found.update(connection.execute(query).scalars())
        return found

    def known_keys(self) -> set[str]:
        with self.engine.connect() as connection:
            return set(connection.execute(self.mine(sa.select(attempts_table.c.key))).scalars())

    def waiting_heads(self) -> list[Attempt]:
        """Each student's newest waiting (pending or queued) attempt, by when it was received: a student's fix is
        checked, never a stale Submit before it."""
        table = attempts_table
        rank = (
            sa.func.row_number()
            .over(partition_by=table.c.student, order_by=(table.c.submitted.desc(), table.c.id.desc()))
            .label("rank_in_line")
        )
        inner = self.mine(sa.select(*table.columns, rank).where(table.c.status.in_(WAITING))).subquery()
        query = sa.select(*(inner.c[column.name] for column in table.columns)).where(inner.c.rank_in_line == 1)
        with self.engine.connect() as connection:
            return [Attempt.from_row(row) for row in connection.execute(query)]

    def supersede(self, students, now: datetime.datetime | None = None) -> int:
        """Of each of ``students``, every waiting attempt but the newest becomes ``superseded`` (its message names
        the Submit checked in its place); how many did. Only the newest waiting Submit is worth a check: the class
        run grades the last one collected, and a stale one would cost the student a check of their window."""
        table, changed = attempts_table, 0
        with self.engine.begin() as connection:
            for student in sorted(set(students)):
                query = self.mine(
                    sa.select(table.c.id, table.c.submitted)
                    .where(table.c.student == student, table.c.status.in_(WAITING))
                    .order_by(table.c.submitted.desc(), table.c.id.desc())
                )
                rows = connection.execute(query).all()
                if len(rows) < 2:
                    continue
                newest = rows[0]
                message = f"your later Submit (received {newest.submitted:%H:%M:%S} UTC) is checked in its place"
                statement = (
                    table.update()
                    .where(table.c.id.in_([row.id for row in rows[1:]]), table.c.status.in_(WAITING))
                    .values(status="superseded", checked=now or utcnow(), message=message)
                )
                changed += connection.execute(statement).rowcount
        return changed

    def students_in(self, status: str) -> set[str]:
        """The students with an attempt in ``status`` (the status's index: the cost is that of those rows)."""
        query = self.mine(sa.select(attempts_table.c.student).where(attempts_table.c.status == status)).distinct()
        with self.engine.connect() as connection:
            return set(connection.execute(query).scalars())

    def starts(self, students, since: datetime.datetime) -> tuple[dict, dict]:
        """({student: [starts after ``since``]}, {student: their latest start}) of ``students`` (the student's
        index: the cost is that of those students' attempts)."""
        students, recent, latest = sorted(set(students)), {}, {}
        table = attempts_table
        with self.engine.connect() as connection:
            for begin in range(0, len(students), CHUNK):
                chunk = students[begin : begin + CHUNK]
                query = self.mine(
                    sa.select(table.c.student, table.c.started).where(
                        table.c.student.in_(chunk), table.c.started.is_not(None)
                    )
                )
                for student, started in connection.execute(query):
                    if started > since:
                        recent.setdefault(student, []).append(started)
                    latest[student] = max(started, latest.get(student, started))
        return recent, latest

    def queue_pending(self, student: str) -> int:
        """The student's pending attempts become queued (over the policy's window); how many did."""
        statement = self.mine(
            attempts_table.update()
            .where(attempts_table.c.student == student, attempts_table.c.status == "pending")
            .values(status="queued")
        )
        with self.engine.begin() as connection:
            return connection.execute(statement).rowcount

    def select(self, *, student: str | None = None, status: tuple[str, ...] = ()) -> list[Attempt]:
        """Attempts, oldest Submit first (one student's, or those in some states)."""
        query = self.mine(sa.select(attempts_table).order_by(attempts_table.c.submitted, attempts_table.c.id))
        if student is not None:
            query = query.where(attempts_table.c.student == student)
        if status:
            query = query.where(attempts_table.c.status.in_(status))
        with self.engine.connect() as connection:
            return [Attempt.from_row(row) for row in connection.execute(query)]

    def get(self, attempt_id: int) -> Attempt | None:
        with self.engine.connect() as connection:
            row = connection.execute(sa.select(attempts_table).where(attempts_table.c.id == attempt_id)).first()
        return None if row is None else Attempt.from_row(row)

    def set_status(self, attempt_id: int, status: str, *, expect: tuple[str, ...], **values) -> bool:
        """Move one attempt to ``status`` if it is in one of the states ``expect`` (False: it was not)."""
        if status not in STATES:
            raise ValueError(f"unknown attempt status {status!r}")
        statement = (
            attempts_table.update()
            .where(attempts_table.c.id == attempt_id, attempts_table.c.status.in_(expect))
            .values(status=status, **values)
        )
        with self.engine.begin() as connection:
            return connection.execute(statement).rowcount == 1

    def start(self, attempt_id: int, now: datetime.datetime | None = None) -> bool:
        return self.set_status(attempt_id, "checking", expect=WAITING, started=now or utcnow())

    def finish(
        self,
        attempt_id: int,
        *,
        points: float,
        max_points: float,
        verdicts: list[Verdict],
        now: datetime.datetime | None = None,
    ) -> bool:
        """Record a checked attempt's verdicts, in one transaction (only once: it must be ``checking``)."""
        return self.set_status(
            attempt_id,
            "done",
            expect=("checking",),
            checked=now or utcnow(),
            points=points,
            max_points=max_points,
            verdicts=json.dumps([verdict.to_dict() for verdict in verdicts]),
        )

    def refuse(self, attempt_id: int, message: str, now: datetime.datetime | None = None) -> bool:
        return self.set_status(
            attempt_id, "refused", expect=(*WAITING, "checking"), checked=now or utcnow(), message=message
        )

    def check_again(self, attempt_id: int, message: str) -> bool:
        """A check the service cut for its own reasons goes back to waiting, as if never started: it counts in no
        window (``started`` cleared) and the student's page says why (``message``)."""
        return self.set_status(attempt_id, "pending", expect=("checking",), started=None, message=message)

    def leave_to_class_run(self, attempt_id: int, message: str, now: datetime.datetime | None = None) -> bool:
        """A check the service cut again and again: not checked here, and counted in no window either."""
        return self.set_status(
            attempt_id, "refused", expect=("checking",), started=None, checked=now or utcnow(), message=message
        )

    def recover(self) -> int:
        """After a stop mid-check: attempts left ``checking`` go back to ``pending`` (they are checked again)."""
        statement = self.mine(
            attempts_table.update().where(attempts_table.c.status == "checking").values(status="pending", started=None)
        )
        with self.engine.begin() as connection:
            return connection.execute(statement).rowcount


def read_attempts(url: str, assignment: str) -> list[Attempt]:
    """Every attempt at ``assignment`` in the database at ``url``, oldest first ([] when the service never ran
    there: the table is not created by reading)."""
    engine = sa.create_engine(url)
    try:
        if not sa.inspect(engine).has_table(TABLE):
            return []
        query = (
            sa.select(attempts_table)
            .where(attempts_table.c.assignment == assignment)
            .order_by(attempts_table.c.submitted, attempts_table.c.id)
        )
        with engine.connect() as connection:
            return [Attempt.from_row(row) for row in connection.execute(query)]
    finally:
        engine.dispose()
