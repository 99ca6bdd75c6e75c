"""autograder.grading.refresh on tests/lms_course.py's small gradebook, with the page maker replaced (nbgrader's
exporter is tests/autograder/notebook/test_feedback.py's): the hand grades' digest (manual scores, extra credit
and manual comments; which kind a value is counts), what hand_grades reads per student, which students refresh
makes a page for again (exactly those graded whose hand grades changed, and only for the notebooks they have),
what it records in their ledger entries, and where one page is written for an id nbgrader would read as a
pattern."""

from __future__ import annotations

from pathlib import Path

import pytest
from lms_course import HOSTILE, make_gradebook
from nbgrader.api import Gradebook

from autograder.files import write_json
from autograder.grading import refresh
from autograder.grading.ledger import ledger, ledger_path
from autograder.grading.refresh import FIELD, NO_HAND_GRADES, Pages, hand_digest, hand_grades
from autograder.settings import Course

ADA = [("manual_score", "problems", "answer_a", 1.0)]  # tests/lms_course.py's one hand grade of ada
X = [("manual_score", "problems", "answer_a", 0.0)]  # and of the hostile id


def test_the_digest_is_of_every_hand_grade_and_its_kind():
    assert NO_HAND_GRADES == hand_digest([])
    one = hand_digest(ADA)
    assert one != NO_HAND_GRADES
    assert hand_digest([("extra_credit", "problems", "answer_a", 1.0)]) != one  # the same number, another kind
    assert hand_digest([("manual_score", "problems", "answer_a", 1.5)]) != one
    assert hand_digest([("manual_score", "problems", "answer_b", 1.0)]) != one
    two = [*ADA, ("manual_comment", "problems", "answer_a", "see me")]
    assert hand_digest(two) == hand_digest(list(reversed(two)))  # the order they are read in does not count


@pytest.fixture
def course(tmp_path, monkeypatch) -> Path:
    make_gradebook(tmp_path, monkeypatch)
    return tmp_path


def url(course: Path) -> str:
    return f"sqlite:///{course / 'gradebook.db'}"


def test_hand_grades_are_read_per_student_with_a_submission(course):
    digests, notebooks = hand_grades(url(course), "ps1")
    assert notebooks == ["problems"]
    assert digests == {"ada": hand_digest(ADA), "cy": NO_HAND_GRADES, HOSTILE: hand_digest(X)}  # bob: no submission
    assert hand_grades(url(course), "ps2") == ({"ada": NO_HAND_GRADES}, ["more"])  # ps2 has no hand-graded cell


def test_extra_credit_and_comments_count(course):
    with Gradebook(url(course)) as gradebook:
        gradebook.find_grade("check_b", "problems", "ps1", "cy").extra_credit = 0.5
        gradebook.db.commit()
    digests, _ = hand_grades(url(course), "ps1")
    assert digests["cy"] == hand_digest([("extra_credit", "problems", "check_b", 0.5)])


class FakePages:
    """Refresh's page maker, recording (assignment, student, notebook) instead of making pages."""

    made: list = []

    def __init__(self, course):
        pass

    def make(self, assignment, student, notebook):
        FakePages.made.append((assignment, student, notebook))


@pytest.fixture
def pages(monkeypatch) -> list:
    """The pages refresh makes, as (assignment, student, notebook)."""
    monkeypatch.setattr(FakePages, "made", [])
    monkeypatch.setattr(refresh, "Pages", FakePages)
    return FakePages.made


def graded(course: Path, student: str, digest: str | None = None, notebook: str = "problems") -> None:
    """What the class run leaves for a graded student: a ledger entry (with the hand grades' digest, if given) and
    the autograded notebook."""
    entry = {"student": student, "assignment": "ps1"} | ({} if digest is None else {FIELD: digest})
    write_json(ledger_path(course, "ps1", student), entry)
    folder = course / "autograded" / student / "ps1"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{notebook}.ipynb").write_text("{}")


def test_pages_are_made_again_for_exactly_the_graded_students_whose_hand_grades_changed(course, pages):
    graded(course, "ada")  # its page was made without hand grades: ada's grade is new
    graded(course, "cy")  # no hand grade then, none now
    graded(course, HOSTILE, digest=hand_digest(X))  # already made with this hand grade
    assert refresh.refresh(Course.read(course), "ps1") == ["ada"]
    assert pages == [("ps1", "ada", "problems")]
    assert ledger(course, "ps1", "ada") == {"student": "ada", "assignment": "ps1", FIELD: hand_digest(ADA)}
    assert FIELD not in ledger(course, "ps1", "cy")
    assert refresh.refresh(Course.read(course), "ps1") == []  # nothing changed since


def test_students_the_class_has_not_graded_are_left_alone(course, pages):
    with Gradebook(url(course)) as gradebook:  # every one of the three has a hand grade the page lacks
        gradebook.find_grade("check_b", "problems", "ps1", "cy").extra_credit = 0.5
        gradebook.db.commit()
    write_json(ledger_path(course, "ps1", "ada"), {"student": "ada"})  # an entry but no autograded notebook
    graded(course, "cy", notebook="other")  # only a notebook the assignment does not have
    (course / "autograded" / HOSTILE / "ps1").mkdir(parents=True)  # a notebook but no ledger entry
    (course / "autograded" / HOSTILE / "ps1" / "problems.ipynb").write_text("{}")
    assert refresh.refresh(Course.read(course), "ps1") == []
    assert pages == [] and ledger(course, "ps1", HOSTILE) == {} and FIELD not in ledger(course, "ps1", "cy")


def test_a_page_is_written_for_the_student_id_as_it_is(tmp_path):
    class Exporter:
        def from_filename(self, source, resources):
            self.seen = (source, resources)
            return "<html>page</html>", {}

    pages = object.__new__(Pages)  # nbgrader's exporter replaced: only where make reads and writes is tested
    pages.course, pages.db, pages.exporter = tmp_path, "sqlite:///gradebook.db", Exporter()
    target = pages.make("ps1", "x[1]", "problems")
    assert target == tmp_path / "feedback" / "x[1]" / "ps1" / "problems.html"
    assert target.read_text() == "<html>page</html>"
    source, resources = pages.exporter.seen
    assert source == str(tmp_path / "autograded" / "x[1]" / "ps1" / "problems.ipynb")
    assert resources["nbgrader"] == {
        "student": "x[1]",
        "assignment": "ps1",
        "notebook": "problems",
        "db_url": "sqlite:///gradebook.db",
    }
    assert resources["unique_key"] == "problems" and resources["output_files_dir"] == "problems_files"
