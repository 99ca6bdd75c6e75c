"""autograder.course.uploads: what a submissions folder holds (each student's notebook as students really hand it in,
every other upload listed with why it is not graded) and its collection into submitted/, nbgrader's layout."""

from __future__ import annotations

from autograder.assignments import Layout
from autograder.course.uploads import collect, survey

ATTENTION = Layout("attention", "attention")
ASSIGNMENT = "attention"


REFUSED_X1 = (
    "the folder name 'x[1]' is not a student id (a letter or a digit, then up to 63 letters, digits, '.', '_' or '-'): "
    "rename the folder, e.g. to 'x1'"
)


def test_every_upload_is_graded_or_said_why_not(tmp_path):
    submissions = tmp_path / "submissions"
    layout = {
        "ada/attention/attention.ipynb": "1",
        "ada/attention/attention (1).ipynb": "old",
        "ada/attention/data.csv": "x",
        "bo/Attention/Attention.ipynb": "2",  # another case
        "cy/attention/attention (1).ipynb": "3",  # a browser's copy, the only notebook
        "di/attention.ipynb": "4",
        "di/notes.txt": "n",  # one level up
        "ed/attention/homework.ipynb": "x",
        "ed/attention/readme.md": "r",  # no notebook of the assignment
        "fay/.keep": "",  # an empty folder (hidden files are not uploads)
        "gus/attention/attention.ipynb": "5",
        "gus/attention/scratch.ipynb": "s",
        "loose.ipynb": "x",  # not in a student's folder
        "x[1]/attention/attention.ipynb": "6",  # not a student id (autograder.students)
        ".ipynb_checkpoints/attention-checkpoint.ipynb": "x",
    }
    for path, text in layout.items():
        (submissions / path).parent.mkdir(parents=True, exist_ok=True)
        (submissions / path).write_text(text)
    uploads = survey(submissions, ATTENTION)
    assert uploads.students == ["ada", "bo", "cy", "di", "gus"]
    assert uploads.not_graded == {
        "ada/attention/attention (1).ipynb": "another copy of the notebook (attention.ipynb is graded)",
        "ed": "no attention.ipynb (found attention/homework.ipynb, attention/readme.md)",
        "fay": "no attention.ipynb (the folder is empty)",
        "gus/attention/scratch.ipynb": "not the assignment's notebook (attention.ipynb is graded)",
        "loose.ipynb": "not in a student's folder (expected <student>/attention/attention.ipynb)",
        "x[1]": REFUSED_X1,
    }
    assert uploads.students_not_graded == {
        "ed": "not graded: no attention.ipynb (found attention/homework.ipynb, attention/readme.md)",
        "fay": "not graded: no attention.ipynb (the folder is empty)",
        "x[1]": f"not graded: {REFUSED_X1}",
    }
    assert (
        uploads.notes()["ada"]
        == "not graded: attention/attention (1).ipynb: another copy of the notebook (attention.ipynb is graded)"
    )

    course = tmp_path / "course"
    assert sorted(collect(course, submissions, ATTENTION, uploads)) == uploads.students
    submitted = {s: sorted(p.name for p in (course / "submitted" / s / ASSIGNMENT).iterdir()) for s in uploads.students}
    assert submitted == {
        "ada": ["attention.ipynb", "data.csv"],
        "bo": ["attention.ipynb"],
        "cy": ["attention.ipynb"],
        "di": ["attention.ipynb", "notes.txt"],
        "gus": ["attention.ipynb"],
    }
    assert [(course / "submitted" / s / ASSIGNMENT / "attention.ipynb").read_text() for s in uploads.students] == [
        "1",
        "2",
        "3",
        "4",
        "5",
    ]
    assert collect(course, submissions, ATTENTION, uploads) == [], "unchanged uploads are not copied again"


def test_a_student_who_handed_in_another_assignment_only_is_left_out_of_this_ones_survey(tmp_path):
    """nbgrader's collected layout of a course of two assignments: bo and cy submitted attention only."""
    submissions = tmp_path / "submitted"
    for path in (
        "ada/attention/attention.ipynb",
        "ada/positions/positions.ipynb",
        "bo/attention/attention.ipynb",
        "bo/attention/timestamp.txt",
        "cy/attention/attention.ipynb",
        "cy/notes/positions-draft.ipynb",  # not in an assignment's folder: said, as before
    ):
        (submissions / path).parent.mkdir(parents=True, exist_ok=True)
        (submissions / path).write_text("{}")
    uploads = survey(submissions, Layout("positions", "positions"), others=("attention",))
    assert uploads.students == ["ada"]
    assert uploads.students_not_graded == {
        "cy": "not graded: no positions.ipynb (found attention/attention.ipynb, notes/positions-draft.ipynb)"
    }
    alone = survey(submissions, Layout("positions", "positions"))  # without the course's other assignments
    assert sorted(alone.students_not_graded) == ["bo", "cy"]
