"""Gradebook databases for tests: SQLite, and a throwaway PostgreSQL server of the tests' own; and the test that
recording a student in a large class reads only that student's rows, on both.

The server is Debian's (``apt-get install postgresql``: initdb and pg_ctl under /usr/lib/postgresql/<n>/bin),
started once per test session with initdb in a temporary folder, listening on a Unix socket in that folder
only (no TCP port), stopped and removed when the session ends. When the binaries are missing, the PostgreSQL
cases are skipped and say why. Run as root, the server runs as the ``postgres`` user (initdb refuses root).

    def test_x(database, tmp_path):
        url = database(tmp_path)      # sqlite:///.../gradebook.db, or postgresql://... (a new, empty database)
"""

from __future__ import annotations

import re

PER_STUDENT_TABLES = {"student", "submitted_assignment", "submitted_notebook", "grade", "comment"}


def add_class(url: str, count: int):
    """``count`` students, each with a submission of every notebook of the gradebook's one assignment (a grade
    per grade cell, a comment per solution cell), inserted in one go: a class recorded before this run."""
    from nbgrader.api import (
        Comment,
        Grade,
        GradeCell,
        Notebook,
        SolutionCell,
        Student,
        SubmittedAssignment,
        SubmittedNotebook,
    )
    from sqlalchemy import create_engine, insert, select

    engine = create_engine(url)
    with engine.begin() as connection:
        assignment_id, notebook_id = connection.execute(select(Notebook.assignment_id, Notebook.id)).one()
        grade_cells = connection.execute(select(GradeCell.id)).scalars().all()
        solution_cells = connection.execute(select(SolutionCell.id)).scalars().all()
        rows = {table: [] for table in (Student, SubmittedAssignment, SubmittedNotebook, Grade, Comment)}
        for n in range(count):
            student, submission, notebook = f"many{n:05d}", f"submission{n:05d}", f"notebook{n:05d}"
            rows[Student].append({"id": student})
            rows[SubmittedAssignment].append({"id": submission, "assignment_id": assignment_id, "student_id": student})
            rows[SubmittedNotebook].append({"id": notebook, "assignment_id": submission, "notebook_id": notebook_id})
            rows[Grade] += [
                {"id": f"grade{n:05d}_{k}", "notebook_id": notebook, "cell_id": cell, "auto_score": 1.0}
                for k, cell in enumerate(grade_cells)
            ]
            rows[Comment] += [
                {"id": f"comment{n:05d}_{k}", "notebook_id": notebook, "cell_id": cell}
                for k, cell in enumerate(solution_cells)
            ]
        for table, values in rows.items():  # parents first
            connection.execute(insert(table.__table__), values)
    engine.dispose()


def tables_read_whole(connection, statement: str, parameters) -> set:
    """The tables that the database's plan for ``statement`` reads from first row to last (PostgreSQL's Seq Scan,
    SQLite's SCAN)."""
    if connection.dialect.name == "postgresql":
        plan = [line for (line,) in connection.exec_driver_sql(f"EXPLAIN {statement}", parameters)]
        return {match.group(1) for line in plan for match in re.finditer(r"Seq Scan on (\w+)", line)}
    plan = [row[-1] for row in connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters)]
    return {match.group(1) for line in plan if (match := re.match(r"SCAN (?:TABLE )?(\w+)", line))}


def test_recording_a_student_again_reads_no_other_students_rows(database, tmp_path):
    """A class of 3,000 already in the gradebook, no statistics gathered (as after a bulk import, or before
    PostgreSQL's autovacuum has run): re-recording one student reads that student's rows through indexes, never
    a whole per-student table (on PostgreSQL it read every grade and comment: 17 ms a result at 10,000 students
    against 0.3 ms at 100), and the new scores are the ones recorded."""
    from nbgrader.api import Gradebook
    from sqlalchemy import event

    from autograder.grading import gradebook as grading
    from autograder.grading.task import Outcome

    (tmp_path / "course").mkdir()
    url = database(tmp_path)
    with Gradebook(url) as gradebook:
        gradebook.add_assignment("attention")
        gradebook.add_notebook("attention", "attention")
        for cell in ("check_a", "check_b", "written"):
            gradebook.add_grade_cell(cell, "attention", "attention", max_score=1, cell_type="code")
        gradebook.add_solution_cell("written", "attention", "attention")
    writer = grading.GradebookWriter(url)
    add_class(url, 3000)

    def outcome(score: float) -> Outcome:
        grades = [
            {"notebook": "attention", "name": cell, "auto_score": score, "needs_manual_grade": False}
            for cell in ("check_a", "check_b", "written")
        ]
        comment = [{"notebook": "attention", "name": "written", "auto_comment": f"scored {score}"}]
        return Outcome("ada", "0" * 64, "attention", {}, {}, grades, comment, worker="here:1")

    selects = []

    def keep_select(_connection, _cursor, statement, parameters, _context, _many):
        if statement.lstrip().upper().startswith("SELECT"):
            selects.append((statement, parameters))

    try:
        writer.write(outcome(0.0))  # new: inserted
        event.listen(writer.engine, "before_cursor_execute", keep_select)
        writer.write(outcome(1.0))  # again: the submission's rows found and updated
        event.remove(writer.engine, "before_cursor_execute", keep_select)
        with writer.engine.connect() as connection:
            read_whole = {
                statement.split("FROM")[1][:80]: tables_read_whole(connection, statement, parameters)
                & PER_STUDENT_TABLES
                for statement, parameters in selects
            }
        with Gradebook(url) as gradebook:
            notebook = gradebook.find_submission("attention", "ada").notebooks[0]
            recorded = sorted((grade.name, grade.auto_score) for grade in notebook.grades)
            comments = [comment.auto_comment for comment in notebook.comments]
    finally:
        writer.close()
    assert len(selects) >= 3, selects
    assert {statement: tables for statement, tables in read_whole.items() if tables} == {}
    assert recorded == [("check_a", 1.0), ("check_b", 1.0), ("written", 1.0)]
    assert comments == ["scored 1.0"]


def test_a_writer_made_while_another_records_does_not_wait_for_it(postgres_server):
    """Recorders makes a GradebookWriter per thread while the others record. On PostgreSQL, making one must
    not lock a table that a recording writes to (it did: CREATE INDEX IF NOT EXISTS, four tables in one
    transaction, deadlocked with a recording): made while another connection holds an open write transaction
    on the grade table, it is ready at once, and the indexes are there once. (SQLite lets one writer at a time
    in, each taking the whole lock at BEGIN IMMEDIATE: a new writer waits for the open transaction's end, and
    nothing can deadlock.)"""
    import threading

    from nbgrader.api import Gradebook
    from sqlalchemy import inspect

    from autograder.grading import gradebook as grading

    url = postgres_server.create_database()
    with Gradebook(url) as gradebook:
        gradebook.add_assignment("attention")
    first = grading.GradebookWriter(url)
    made = []
    with first.engine.connect() as connection:
        transaction = connection.begin()
        connection.exec_driver_sql("UPDATE grade SET auto_score = auto_score")  # a write lock on grade, kept
        thread = threading.Thread(target=lambda: made.append(grading.GradebookWriter(url)), daemon=True)
        thread.start()
        thread.join(timeout=20)
        ready_while_open = bool(made)
        transaction.rollback()
    thread.join(timeout=90)
    names = [index["name"] for index in inspect(first.engine).get_indexes("grade")]
    for writer in [first, *made]:
        writer.close()
    assert ready_while_open, "the second writer waited for the first one's transaction"
    assert names.count("ix_attention_grade_notebook_id") == 1
