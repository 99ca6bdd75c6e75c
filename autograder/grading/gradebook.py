"""The gradebook writer: each outcome into nbgrader's gradebook (SQLite or PostgreSQL) in one transaction.

The gradebook is the course's gradebook.db (SQLite in write-ahead-log mode with a busy timeout) or the database
``--db`` names (PostgreSQL), so that Formgrader, nbgrader's own commands and a grader saving manual scores can
write to it at the same time. A new submission's rows are inserted once, as nbgrader's Gradebook.add_submission
makes them, with the outcome's scores and comments in them (``_insert_submission``: the one insert of a grade
row); a submission already there is updated through nbgrader's objects.
"""

from __future__ import annotations

import sqlite3
import tempfile
import time
import uuid
import warnings
from contextlib import contextmanager
from pathlib import Path

from nbgrader import utils
from nbgrader.api import (
    Base,
    BaseCell,
    Comment,
    Grade,
    Gradebook,
    InvalidEntry,
    MissingEntry,
    Notebook,
    SubmittedAssignment,
    SubmittedNotebook,
    new_uuid,
)
from sqlalchemy import create_engine, event, insert, inspect, select, text
from sqlalchemy.exc import DBAPIError, SADeprecationWarning, SAWarning
from sqlalchemy.orm import scoped_session, sessionmaker

from autograder.grading.task import Outcome, temporary_prefix
from autograder.settings import CourseSettings

BUSY_TIMEOUT_MS = 60_000  # how long a write waits for another writer (Formgrader, nbgrader db, a second run)


INDEXES = [
    ("grade", "notebook_id"),
    ("comment", "notebook_id"),
    ("submitted_notebook", "assignment_id"),
    ("submitted_assignment", "student_id"),
]


def _sqlite_connect(connection, _record):
    # The driver's own transaction handling off, so that BEGIN, SAVEPOINT and COMMIT are ours (SQLAlchemy's
    # documented recipe for pysqlite); the write-ahead log, so that readers (Formgrader, an export) never
    # block a writer nor see half a transaction; a busy timeout, so that two writers wait for each other.
    connection.isolation_level = None
    cursor = connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    # switching a gradebook into the log mode needs it to itself, and SQLite answers "locked" at once, without
    # the busy timeout, while another process writes (Formgrader adding students); so wait here as long
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            cursor.execute("PRAGMA journal_mode = WAL")
            break
        except Exception as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    cursor.close()


def _sqlite_begin(connection):
    connection.exec_driver_sql("BEGIN IMMEDIATE")  # take the write lock first: no deadlock between two writers


class GradebookWriter:
    """nbgrader's Gradebook on ``url`` (SQLite or PostgreSQL), where each ``write`` is one transaction.

    nbgrader's Gradebook methods commit after every change (a student, a submission); here its session is
    bound to a connection inside one outer transaction, and nbgrader's commits become savepoints of it
    (SQLAlchemy's join_transaction_mode="create_savepoint"), so everything ``write`` does is committed at
    once at its end, or rolled back, whatever nbgrader commits on the way.
    """

    def __init__(self, url: str):

        quiet_nbgrader_warnings()
        self.url = url
        self.layouts = {}  # {assignment: assignment_layout}, read at its first new submission
        self.gradebook = Gradebook(url)  # nbgrader makes the tables of a new database
        self.engine = self.gradebook.engine
        if self.engine.dialect.name == "sqlite":
            self.engine.dispose()  # connections from now on get the settings below
            event.listen(self.engine, "connect", _sqlite_connect)
            event.listen(self.engine, "begin", _sqlite_begin)
            with self.engine.connect() as connection:  # the log mode stays with the file: readers see it too
                connection.exec_driver_sql("SELECT 1")
        self.add_indexes()

    def add_indexes(self):
        """INDEXES, those not there yet. nbgrader's schema indexes each submission's rows only behind another
        column (grade by (cell_id, notebook_id), ...), so finding one student's grades read every student's: a
        cost per result that grew with the class. These indexes (extra ones, which nbgrader and its migrations
        ignore) make it flat. Asked first, without a lock: CREATE INDEX locks its table against writes even when
        the index exists, and a writer made while others record (Recorders makes one per thread) deadlocked
        with them on PostgreSQL when it held one table's lock waiting for another. Each index is made in a
        transaction of its own, so that a CREATE INDEX that waits holds nothing another writer waits for."""
        inspector = inspect(self.engine)
        for table, column in INDEXES:
            name = f"ix_attention_{table}_{column}"
            if name in {index["name"] for index in inspector.get_indexes(table)}:
                continue
            with self.engine.begin() as connection:
                connection.exec_driver_sql(f"CREATE INDEX IF NOT EXISTS {name} ON {table} ({column})")

    def transaction(self, work, attempts: int = 3, before_commit=None):
        """Run ``work(gradebook)`` in one transaction; retried when another writer got in the way (a student
        added at the same moment, a lock held past the busy timeout). ``before_commit()``, when given, is
        called once the work is flushed and before the commit (the ledger's checkpoint)."""
        for attempt in range(1, attempts + 1):
            connection = self.engine.connect()
            outer = connection.begin()
            own = self.gradebook.db
            self.gradebook.db = scoped_session(
                sessionmaker(bind=connection, autoflush=True, join_transaction_mode="create_savepoint")
            )
            try:
                result = work(self.gradebook)
                self.gradebook.db.flush()
                if before_commit is not None:
                    before_commit()
                outer.commit()
                return result
            except (InvalidEntry, DBAPIError):
                outer.rollback()
                self.layouts.clear()  # read again: an assignment's cells are never expected to change mid-run
                if attempt == attempts:
                    raise
                time.sleep(0.1 * attempt)
            except BaseException:
                outer.rollback()
                raise
            finally:
                self.gradebook.db.remove()
                self.gradebook.db = own
                connection.close()

    def write(self, outcome: Outcome, before_commit=None):
        """The outcome's submission, grades, comments, late penalties and timestamp, all or none. The
        instructor's manual scores, extra credit and manual comments are kept."""

        def work(gradebook):
            return _write_outcome(gradebook, outcome, self.layouts)

        self.transaction(work, before_commit=before_commit)

    def close(self):
        self.gradebook.close()


def _write_outcome(gradebook, outcome: Outcome, layouts: dict | None = None):
    """The outcome into the gradebook, in the session of an open transaction (GradebookWriter.transaction).
    The student is nbgrader's (update_or_create_student). A submission already there is updated through
    nbgrader's objects (only the autograder's columns: a grader's manual work is kept). A new one gets the rows
    nbgrader's Gradebook.add_submission makes (a submitted notebook per notebook of the assignment, a grade per
    grade and task cell, a comment per solution and task cell), inserted with the scores and comments at
    once: through the ORM, add_submission and the updates after it were most of a result's recording.
    ``layouts``: {assignment: assignment_layout}, read once per writer."""
    gradebook.update_or_create_student(outcome.student)
    try:
        submission = gradebook.find_submission(outcome.assignment, outcome.student)
    except MissingEntry:
        layouts = {} if layouts is None else layouts
        if outcome.assignment not in layouts:
            layouts[outcome.assignment] = assignment_layout(gradebook, outcome.assignment)
        _insert_submission(gradebook, outcome, layouts[outcome.assignment])
        return

    submission.timestamp = utils.parse_utc(outcome.timestamp)  # as update_or_create_submission sets it
    submission.extension = outcome.extension  # the one the penalty was computed with
    for notebook in submission.notebooks:
        notebook.late_submission_penalty = outcome.penalties.get(notebook.name)
    # the submission's grades and comments in two queries, not one (nbgrader's find_grade) per cell: at 20
    # grades and 19 comments that was most of a result's recording
    grades, comments = submission_rows(gradebook, submission)
    for entry in outcome.grades:
        grade = grades.get((entry["notebook"], entry["name"]))
        if grade is None:
            raise MissingEntry(_missing("grade", outcome, entry))
        grade.auto_score = entry["auto_score"]
        grade.needs_manual_grade = entry["needs_manual_grade"]
    for entry in outcome.comments:
        comment = comments.get((entry["notebook"], entry["name"]))
        if comment is None:
            raise MissingEntry(_missing("comment", outcome, entry))
        comment.auto_comment = entry["auto_comment"]


def _missing(kind: str, outcome: Outcome, entry: dict) -> str:
    return f"No such {kind}: {outcome.assignment}/{entry['notebook']}/{entry['name']} for {outcome.student}"


def assignment_layout(gradebook, name: str) -> tuple:
    """(assignment id, [(notebook id, notebook name, grade cells, solution cells, task cells)]) of assignment
    ``name``, the cells as (id, name): what Gradebook.add_submission walks to make a submission's rows."""
    assignment = gradebook.find_assignment(name)
    return assignment.id, [
        (
            notebook.id,
            notebook.name,
            [(cell.id, cell.name) for cell in notebook.grade_cells],
            [(cell.id, cell.name) for cell in notebook.solution_cells],
            [(cell.id, cell.name) for cell in notebook.task_cells],
        )
        for notebook in assignment.notebooks
    ]


def _insert_submission(gradebook, outcome: Outcome, layout: tuple):
    """A new submission's rows, as Gradebook.add_submission makes them, with the outcome's values in them: the one
    insert of each of its grade and comment rows (new_rows builds them)."""
    assignment_id, _ = layout
    submission_id = new_uuid()
    submitted, grade_rows, comment_rows = new_rows(outcome, layout, submission_id)
    session = gradebook.db
    session.execute(
        insert(SubmittedAssignment.__table__),
        [
            {
                "id": submission_id,
                "assignment_id": assignment_id,
                "student_id": outcome.student,
                "timestamp": utils.parse_utc(outcome.timestamp),
                "extension": outcome.extension,  # the student's own due date (autograder.course.term)
            }
        ],
    )
    for table, rows in (
        (SubmittedNotebook.__table__, submitted),
        (Grade.__table__, grade_rows),
        (Comment.__table__, comment_rows),
    ):
        if rows:
            session.execute(insert(table), rows)


def new_rows(outcome: Outcome, layout: tuple, submission_id: str) -> tuple[list, list, list]:
    """(submitted notebooks, grades, comments) of a new submission ``submission_id``: a submitted notebook per
    notebook of the assignment, a grade per grade and task cell, a comment per solution and task cell, holding
    the outcome's values. MissingEntry when the outcome names a cell the assignment does not have."""
    grades = {(g["notebook"], g["name"]): g for g in outcome.grades}
    comments = {(c["notebook"], c["name"]): c for c in outcome.comments}
    submitted, grade_rows, comment_rows = [], [], []
    for notebook_id, notebook, grade_cells, solution_cells, task_cells in layout[1]:
        submitted_id = new_uuid()
        submitted.append(
            {
                "id": submitted_id,
                "assignment_id": submission_id,
                "notebook_id": notebook_id,
                "flagged": False,
                "late_submission_penalty": outcome.penalties.get(notebook),
            }
        )
        for cell_id, cell in [*grade_cells, *task_cells]:
            entry = grades.pop((notebook, cell), {})
            grade_rows.append(
                {
                    "id": new_uuid(),
                    "notebook_id": submitted_id,
                    "cell_id": cell_id,
                    "auto_score": entry.get("auto_score"),
                    "manual_score": None,
                    "extra_credit": None,
                    "needs_manual_grade": entry.get("needs_manual_grade", True),
                }
            )
        for cell_id, cell in [*solution_cells, *task_cells]:
            entry = comments.pop((notebook, cell), {})
            comment_rows.append(
                {
                    "id": new_uuid(),
                    "notebook_id": submitted_id,
                    "cell_id": cell_id,
                    "auto_comment": entry.get("auto_comment"),
                    "manual_comment": None,
                }
            )
    for kind, left in (("grade", grades), ("comment", comments)):
        if left:
            raise MissingEntry(_missing(kind, outcome, next(iter(left.values()))))
    return submitted, grade_rows, comment_rows


def submission_rows(gradebook, submission) -> tuple[dict, dict]:
    """({(notebook, cell name): Grade}, {(notebook, cell name): Comment}) of a submitted assignment: its
    submitted notebooks' ids and names in one query, then its grades and its comments in one query each, the
    cell's name joined in (nothing is loaded lazily afterwards).

    The grades and comments are selected by their own ``notebook_id`` compared with known values (an index
    probe, whatever the statistics: INDEXES or nbgrader's unique (cell_id, notebook_id)), not through a join on
    ``submitted_notebook.assignment_id``: on PostgreSQL, with no statistics yet (a gradebook filled since the
    last ANALYZE), the planner estimated that join at hundreds of rows and read the whole grade and comment
    tables (a sequential scan, 17 ms a result at 10,000 students against 0.3 ms at 100)."""
    notebook_names = dict(
        gradebook.db.query(SubmittedNotebook.id, Notebook.name)
        .join(Notebook, Notebook.id == SubmittedNotebook.notebook_id)
        .filter(SubmittedNotebook.assignment_id == submission.id)
    )
    found = []
    for kind in (Grade, Comment):
        rows = (
            gradebook.db.query(kind, BaseCell.name)
            .join(BaseCell, BaseCell.id == kind.cell_id)
            .filter(kind.notebook_id.in_(list(notebook_names)))
        )
        found.append({(notebook_names[row.notebook_id], cell): row for row, cell in rows})
    return found[0], found[1]


def record_in_gradebook(course: Path, outcome: Outcome, db: str | None = None):
    """Put one outcome into the gradebook in one transaction (a GradebookWriter for one write)."""
    writer = GradebookWriter(db or CourseSettings.read(course).db)
    try:
        writer.write(outcome)
    finally:
        writer.close()


def students_in_gradebook(db: str, name: str) -> set:
    """The students with a submission of assignment ``name`` in the gradebook at ``db`` (read once per run)."""
    with Gradebook(db) as gradebook:
        assignment = gradebook.find_assignment(name)
        rows = gradebook.db.query(SubmittedAssignment.student_id).filter(
            SubmittedAssignment.assignment_id == assignment.id
        )
        return {student for (student,) in rows}


@contextmanager
def scratch_gradebook(template: bytes):
    """The URL of an in-memory SQLite copy of ``template`` (gradebook_template's bytes), for one private grading
    folder: nbgrader's steps write and read the submission's rows there (VerdictGrades, AssignLatePenalties,
    GetGrades) and it is gone when the block ends. Never a file: the rows reach a gradebook on disk once, when
    the coordinator records the outcome (GradebookWriter)."""
    name = f"attention-scratch-{uuid.uuid4().hex}"
    anchor = sqlite3.connect(f"file:{name}?mode=memory&cache=shared", uri=True, check_same_thread=False)
    try:  # the shared in-memory database lives while one connection to it is open: this one
        loaded = sqlite3.connect(":memory:")
        loaded.deserialize(template)
        loaded.backup(anchor)
        loaded.close()
        yield f"sqlite:///file:{name}?mode=memory&cache=shared&uri=true"
    finally:
        anchor.close()


def quiet_nbgrader_warnings():
    """nbgrader's Gradebook.update_or_create_submission makes SQLAlchemy warn ("not in session, add operation
    ... will not proceed") every time it creates a submission; the rows are made all the same. And its engine on
    a scratch_gradebook gets SQLAlchemy's pool for in-memory databases, with a deprecation warning nbgrader (which
    makes the engine) could only silence by naming the pool."""
    warnings.filterwarnings("ignore", category=SAWarning, message=".*not in session.*")
    warnings.filterwarnings("ignore", category=SADeprecationWarning, message=".*SingletonThreadPool.*mode=memory.*")


STRUCTURE = (
    "course",
    "assignment",
    "notebook",
    "base_cell",
    "grade_cells",
    "solution_cells",
    "task_cells",
    "source_cell",
)  # the gradebook's tables that generate_assignment fills; the rest grow with the class


def gradebook_template(db: str) -> bytes:
    """An SQLite gradebook (bytes) holding what generate_assignment put into the gradebook at ``db`` (the
    assignments, notebooks and cells) and no student: what a worker's private folder needs, the same size
    for a class of 10 or of 10,000, and made the same way from SQLite or PostgreSQL."""
    with tempfile.TemporaryDirectory(prefix=temporary_prefix()) as scratch:
        path = Path(scratch) / "gradebook.db"
        source, target = create_engine(db), create_engine(f"sqlite:///{path}")
        try:
            Base.metadata.create_all(target)
            with source.connect() as reading, target.begin() as writing:
                version = reading.execute(text("SELECT version_num FROM alembic_version")).scalar()
                writing.execute(text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)"))
                writing.execute(
                    text("INSERT INTO alembic_version (version_num) VALUES (:version)"), {"version": version}
                )
                for table in Base.metadata.sorted_tables:
                    if table.name in STRUCTURE:
                        rows = [dict(row._mapping) for row in reading.execute(select(table))]
                        if rows:
                            writing.execute(table.insert(), rows)
        finally:
            source.dispose()
            target.dispose()
        return path.read_bytes()
