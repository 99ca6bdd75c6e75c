"""The LMS import files (autograder.lms.files): Canvas's gradebook CSV and Moodle's grade import CSV, from a small
gradebook (tests/lms_course.py) and a roster (`python -m autograder.course --export` is tested with the command
line, tests/autograder/course/test_classroom.py)."""

import csv

import pytest
from lms_course import HOSTILE, ROSTER, make_gradebook

from autograder.lms.files import ExportError, ExportOptions, export_lms

pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")  # nbgrader's add_submission


@pytest.fixture
def course(tmp_path, monkeypatch):
    make_gradebook(tmp_path, monkeypatch)
    (tmp_path / "roster.csv").write_text(ROSTER)
    return tmp_path


def read(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def test_canvas_file_has_canvas_columns_points_and_one_row_per_student(course):
    result = export_lms(ExportOptions(course=course, lms="canvas"))
    assert result.path == course / "lms" / "canvas.csv"
    rows = read(result.path)
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "ps1", "ps2"]
    assert rows[1] == ["    Points Possible", "", "", "", "", "3", "1"]
    by_name = {row[0]: row for row in rows[2:]}
    assert by_name["Lovelace, Ada"] == ["Lovelace, Ada", "4021", "S1001", "alovelace", "Section 1", "2.5", "1"]
    assert by_name["Cy Young"] == ["Cy Young", "", "", "cy", "Section 2", "2", ""]  # ps2 not submitted: empty
    assert by_name["bob"] == ["bob", "", "", "bob", "", "", ""]
    # a student's id is never a formula in a spreadsheet
    assert by_name["'" + HOSTILE] == ["'" + HOSTILE, "", "", "'" + HOSTILE, "", "0.5", ""]
    assert len(rows) == 2 + 4 and result.rows == 4
    assert set(result.unmatched) == {"bob", "cy", HOSTILE}
    assert "not in the roster" in result.unmatched["bob"] and "canvas_id" in result.unmatched["bob"]
    assert result.pending == {"cy": ["ps1"]}
    assert result.not_submitted == {"bob": ["ps1", "ps2"], "cy": ["ps2"], HOSTILE: ["ps2"]}
    summary = "\n".join(result.summary())
    assert "NO LMS IDENTITY: bob:" in summary and "AWAITING HAND GRADING: cy: ps1" in summary


def test_moodle_file_has_the_identifier_and_one_column_per_grade_item(course):
    result = export_lms(ExportOptions(course=course, lms="moodle"))
    rows = read(result.path)
    assert result.path == course / "lms" / "moodle.csv"
    assert rows == [["Email address", "ps1", "ps2"], ["ada@school.edu", "2.5", "1"], ["cy@school.edu", "2", ""]]
    assert set(result.unmatched) == {"bob", HOSTILE}
    assert "add their Moodle email (roster column email)" in result.unmatched["bob"]
    by_username = export_lms(ExportOptions(course=course, lms="moodle", moodle_identifier="username"))
    assert read(by_username.path)[:2] == [["Username", "ps1", "ps2"], ["alovelace", "2.5", "1"]]


def test_one_assignment_only_and_an_unknown_one_refused(course):
    result = export_lms(ExportOptions(course=course, lms="canvas", assignments=("ps2",)))
    assert read(result.path)[0][5:] == ["ps2"]
    with pytest.raises(ExportError, match=r"no assignment ps9 in the gradebook \(it has: ps1, ps2\)"):
        export_lms(ExportOptions(course=course, lms="canvas", assignments=("ps9",)))


@pytest.mark.parametrize(
    "roster, message",
    [
        ("name,email\nAda,a@b\n", "has no student_id column"),
        ("student_id,phone\nada,1\n", "columns this export does not know: phone"),
        ("student_id,email\nada,a@b\nada,c@d\n", "line 3: student 'ada' is listed twice"),
        ("student_id,email\n,a@b\n", "line 2: no student_id"),
    ],
)
def test_a_bad_roster_is_refused_and_the_old_file_kept(course, roster, message):
    export_lms(ExportOptions(course=course, lms="canvas"))
    before = (course / "lms" / "canvas.csv").read_bytes()
    (course / "roster.csv").write_text(roster)
    with pytest.raises(ExportError, match=message):
        export_lms(ExportOptions(course=course, lms="canvas"))
    assert (course / "lms" / "canvas.csv").read_bytes() == before


def test_moodle_without_a_roster_and_a_course_without_gradebook_are_refused(course, tmp_path_factory):
    (course / "roster.csv").unlink()
    with pytest.raises(ExportError, match="only a roster gives"):
        export_lms(ExportOptions(course=course, lms="moodle"))
    canvas = export_lms(ExportOptions(course=course, lms="canvas"))  # no roster: SIS Login ID = nbgrader id
    assert ["Lovelace, Ada", "", "", "ada"] in [row[:4] for row in read(canvas.path)]
    empty = tmp_path_factory.mktemp("empty")
    with pytest.raises(ExportError, match="no gradebook in .*grade the class first"):
        export_lms(ExportOptions(course=empty, lms="canvas"))
