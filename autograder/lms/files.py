"""The gradebook as the files a school's LMS imports: Canvas's gradebook CSV and Moodle's grade import CSV.

    python -m autograder.course --course /srv/attention --export canvas                  # lms/canvas.csv
    python -m autograder.course --course /srv/attention --export moodle --roster r.csv   # lms/moodle.csv

Scores are read from nbgrader's gradebook (nbgrader.api.Gradebook): one column per assignment, the submission's
total (automatic and hand scores, as nbgrader counts them). A student who submitted nothing gets an empty cell,
which both LMSs read as "no grade" (not a zero: the instructor decides).

Who is who in the LMS comes from the roster, a CSV file in the course folder (``roster.csv``, or ``--roster``):

    student_id,name,email,username,canvas_id,sis_user_id,sis_login_id,section
    ada,"Lovelace, Ada",ada@school.edu,alovelace,4021,S1001,alovelace,Section 1

Only ``student_id`` (the nbgrader id) is required; the other columns may be left out or empty. Canvas matches
a row on ``canvas_id`` (Canvas's ID column), ``sis_user_id`` or ``sis_login_id``; Moodle on the identifier the
instructor chooses (email by default, or username, or idnumber). A student the LMS could not match is still
written (with the score, so nothing is lost) and listed in the result with what to do.

Everything in the gradebook that came from a student (their id, which is a folder name) is text, never a
formula: a cell that a spreadsheet would run (=, +, -, @ first) is written with a leading apostrophe.
"""

from __future__ import annotations

import csv
import io
import sys
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from autograder.files import atomic_path
from autograder.settings import CourseSettings, SettingsError

ROSTER_COLUMNS = ("student_id", "name", "email", "username", "canvas_id", "sis_user_id", "sis_login_id", "section")
# the LTI tool's (autograder.lms.lti.accounts): the LMS user (LTI 1.3 sub, issuer, deployment) who is this student_id
ROSTER_COLUMNS += ("lti_sub", "lti_issuer", "lti_deployment_id")
CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
POINTS_POSSIBLE = "    Points Possible"  # Canvas's own export writes the row's label indented so
MOODLE_IDENTIFIERS = {"email": "Email address", "username": "Username", "idnumber": "ID number"}
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
LMS_NAMES = ("canvas", "moodle")


class ExportError(ValueError):
    """The roster or the options are wrong; the message says what and what to do."""


@dataclass(frozen=True)
class Identity:
    """One student as the LMS knows them (every field but student_id may be empty)."""

    student_id: str
    name: str = ""
    email: str = ""
    username: str = ""
    canvas_id: str = ""
    sis_user_id: str = ""
    sis_login_id: str = ""
    section: str = ""
    lti_sub: str = ""
    lti_issuer: str = ""
    lti_deployment_id: str = ""

    def moodle(self, identifier: str) -> str:
        return {"email": self.email, "username": self.username, "idnumber": self.sis_user_id}[identifier]


@dataclass(frozen=True)
class ExportOptions:
    """What to export: ``lms`` is "canvas" or "moodle"; ``roster`` defaults to <course>/roster.csv (optional
    for Canvas, where the nbgrader id is written as the SIS Login ID when the roster says nothing);
    ``destination`` defaults to <course>/lms/<lms>.csv."""

    course: Path
    lms: str
    db: str | None = None
    roster: Path | None = None
    destination: Path | None = None
    assignments: tuple[str, ...] = ()
    moodle_identifier: str = "email"


@dataclass
class Grade:
    score: float | None  # None: nothing submitted
    max_score: float
    pending_hand_grading: bool = False


@dataclass
class ExportResult:
    path: Path
    header: list[str]
    rows: int
    unmatched: dict[str, str] = field(default_factory=dict)  # student id -> what to do
    pending: dict[str, list[str]] = field(default_factory=dict)  # student id -> assignments awaiting hand grading
    not_submitted: dict[str, list[str]] = field(default_factory=dict)

    def summary(self) -> list[str]:
        lines = [f"wrote {self.path}: {self.rows} students, columns {', '.join(self.header)}"]
        for student, what in sorted(self.unmatched.items()):
            lines.append(f"NO LMS IDENTITY: {student}: {what}")
        for student, names in sorted(self.pending.items()):
            lines.append(f"AWAITING HAND GRADING: {student}: {', '.join(names)} (the score may still rise)")
        for student, names in sorted(self.not_submitted.items()):
            lines.append(f"NOT SUBMITTED: {student}: {', '.join(names)} (left empty: no grade, not a zero)")
        return lines


def as_text(value: str) -> str:
    """A cell a spreadsheet shows as text, never runs as a formula."""
    return "'" + value if value.startswith(FORMULA_STARTS) else value


def number(value: float | None) -> str:
    """A score as the LMS reads it: '' for none, else at most two decimals, no trailing zeros (3.0 -> '3')."""
    return "" if value is None else f"{value:.2f}".rstrip("0").rstrip(".")


def read_roster(path: Path | None) -> dict[str, Identity]:
    """{student_id: Identity} from the roster CSV at ``path`` ({} when path is None)."""
    if path is None:
        return {}
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except OSError as error:
        why = error.strerror or error
        raise ExportError(f"cannot read the roster {path}: {why}; pass --roster with a readable file") from None
    reader = csv.DictReader(io.StringIO(text))
    header = [name.strip() for name in reader.fieldnames or []]
    if "student_id" not in header:
        raise ExportError(
            f"the roster {path} has no student_id column (its header: {', '.join(header) or 'empty'}); "
            f"its first line names columns among: {', '.join(ROSTER_COLUMNS)}"
        )
    unknown = [name for name in header if name not in ROSTER_COLUMNS]
    if unknown:
        raise ExportError(
            f"the roster {path} has columns this export does not know: {', '.join(unknown)}; "
            f"use only {', '.join(ROSTER_COLUMNS)}"
        )
    roster = {}
    for line, row in enumerate(reader, start=2):
        values = {key.strip(): (value or "").strip() for key, value in row.items() if key is not None}
        student = values.get("student_id", "")
        if not student:
            raise ExportError(f"the roster {path}, line {line}: no student_id; fill it in or delete the line")
        if student in roster:
            raise ExportError(f"the roster {path}, line {line}: student {student!r} is listed twice; keep one line")
        roster[student] = Identity(**{key: values.get(key, "") for key in ROSTER_COLUMNS})
    return roster


def read_grades(gradebook: Gradebook, assignments: tuple[str, ...] = ()) -> tuple[list, dict, dict]:
    """(assignments [(name, max_score)], {student: display name}, {(student, assignment): Grade}) from the
    gradebook, assignments in its order (due date, then name), students by id."""
    chosen = [a for a in gradebook.assignments if not assignments or a.name in assignments]
    missing = sorted(set(assignments) - {a.name for a in chosen})
    if missing:
        known = ", ".join(a.name for a in gradebook.assignments) or "none"
        raise ExportError(f"no assignment {', '.join(missing)} in the gradebook (it has: {known})")
    columns = [(a.name, float(a.max_score)) for a in chosen]
    names, grades = {}, {}
    for student in sorted(gradebook.students, key=lambda s: s.id):
        parts = [part for part in (student.last_name, student.first_name) if part]
        names[student.id] = ", ".join(parts)
        for name, max_score in columns:
            try:
                submission = gradebook.find_submission(name, student.id)
            except MissingEntry:
                grades[student.id, name] = Grade(None, max_score)
            else:
                grades[student.id, name] = Grade(scored(submission), max_score, bool(submission.needs_manual_grade))
    return columns, names, grades


def scored(submission) -> float:
    """A submission's score as the LMS gets it (these files, the LTI passback): its points less its late penalty
    (nbgrader's, counted from the student's own due date: their extension and late days, autograder.course.term),
    never below 0."""
    return max(0.0, float(submission.score) - float(submission.late_submission_penalty or 0.0))


def canvas_rows(columns, names, grades, roster) -> tuple[list[str], list[list[str]], dict[str, str]]:
    """Canvas's gradebook CSV: the header, the Points Possible row, one row per student; and the unmatched
    (each still written, with their nbgrader id as the SIS Login ID, Canvas's login name)."""
    header = [*CANVAS_COLUMNS, *(name for name, _ in columns)]
    rows = [[POINTS_POSSIBLE, "", "", "", "", *(number(points) for _, points in columns)]]
    unmatched = {}
    for student, gradebook_name in names.items():
        who = roster.get(student, Identity(student))
        if not (who.canvas_id or who.sis_user_id or who.sis_login_id):
            where = "not in the roster" if student not in roster else "no canvas_id, sis_user_id or sis_login_id"
            unmatched[student] = (
                f"{where}: written with SIS Login ID {student!r} (their nbgrader id); if that is not their Canvas "
                "login, give them a roster line with canvas_id, sis_user_id or sis_login_id"
            )
            who = Identity(student, who.name, sis_login_id=student, section=who.section)
        scores = [number(grades[student, name].score) for name, _ in columns]
        display = who.name or gradebook_name or student
        identities = [as_text(value) for value in (who.canvas_id, who.sis_user_id, who.sis_login_id, who.section)]
        rows.append([as_text(display), *identities, *scores])
    return header, rows, unmatched


def moodle_rows(columns, names, grades, roster, identifier: str) -> tuple[list[str], list[list[str]], dict]:
    """Moodle's grade import CSV: the identifier column, one column per grade item; and the unmatched."""
    header = [MOODLE_IDENTIFIERS[identifier], *(name for name, _ in columns)]
    rows, unmatched = [], {}
    for student in names:
        who = roster.get(student)
        key = who.moodle(identifier) if who else ""
        if not key:
            where = "not in the roster" if who is None else f"the roster gives no {identifier}"
            unmatched[student] = f"{where}: add their Moodle {identifier} (roster column {roster_column(identifier)})"
            continue  # Moodle refuses the whole file on a row it cannot map
        rows.append([as_text(key), *(number(grades[student, name].score) for name, _ in columns)])
    return header, rows, unmatched


def roster_column(identifier: str) -> str:
    return {"email": "email", "username": "username", "idnumber": "sis_user_id"}[identifier]


def write_atomically(path: Path, header: list[str], rows: list[list[str]]) -> None:
    """The CSV written whole beside ``path`` and renamed into place (the one atomic write, grading.ledger): the old
    file stays if anything fails."""
    with atomic_path(path) as temporary, open(temporary, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


def export_lms(options: ExportOptions) -> ExportResult:
    """Write the LMS's import file for ``options`` and say who could not be matched."""
    if options.lms not in LMS_NAMES:
        raise ExportError(f"unknown LMS {options.lms!r}: choose one of {', '.join(LMS_NAMES)}")
    if options.moodle_identifier not in MOODLE_IDENTIFIERS:
        raise ExportError(
            f"unknown Moodle identifier {options.moodle_identifier!r}: choose one of {', '.join(MOODLE_IDENTIFIERS)}"
        )
    course = Path(options.course)
    roster_path = options.roster
    if roster_path is None and (course / "roster.csv").is_file():
        roster_path = course / "roster.csv"
    roster = read_roster(roster_path)
    if options.lms == "moodle" and not roster:
        raise ExportError(
            f"Moodle matches students by {options.moodle_identifier}, which only a roster gives: write "
            f"{course / 'roster.csv'} (columns {', '.join(ROSTER_COLUMNS)}) or pass --roster"
        )
    try:
        settings = CourseSettings.read(course, db=options.db)  # the gradebook the course names, SQLite or not
    except SettingsError as error:
        raise ExportError(str(error)) from None
    if not settings.has_gradebook():
        raise ExportError(f"no gradebook in {course}: grade the class first (python -m autograder.course)")
    with Gradebook(settings.db) as gradebook:
        columns, names, grades = read_grades(gradebook, options.assignments)
    if options.lms == "canvas":
        header, rows, unmatched = canvas_rows(columns, names, grades, roster)
        count = len(rows) - 1
    else:
        header, rows, unmatched = moodle_rows(columns, names, grades, roster, options.moodle_identifier)
        count = len(rows)
    path = Path(options.destination or course / "lms" / f"{options.lms}.csv")
    write_atomically(path, header, rows)
    result = ExportResult(path, header, count, unmatched)
    for (student, name), grade in grades.items():
        if grade.score is None:
            result.not_submitted.setdefault(student, []).append(name)
        elif grade.pending_hand_grading:
            result.pending.setdefault(student, []).append(name)
    return result


def export_command(options: ExportOptions) -> int:
    """``--export``: write the file, print what was written and who needs the instructor. 0 written, 1 refused."""
    try:
        result = export_lms(options)
    except (ExportError, OSError) as error:
        print(f"FAILED: {error}", file=sys.stderr, flush=True)
        return 1
    for line in result.summary():
        print(line, flush=True)
    return 0
