"""A small nbgrader gradebook for the LMS tests (tests/autograder/lms/test_files.py,
tests/autograder/lms/lti/test_tool.py).

ps1 (3 points: check_b 2, answer_a 1 by hand) and ps2 (1 point: check_c):
- ada: ps1 fully graded, 1.5 + 1.0 by hand; ps2 1.0;
- cy: ps1 submitted, check_b 2.0, answer_a still to grade by hand; ps2 not submitted;
- bob: nothing submitted;
- "=HYPERLINK(1)": a hostile id (a folder name), ps1 check_b 0.5, answer_a graded 0.
"""

import os
import sys
from pathlib import Path

from nbgrader.api import Gradebook

HOSTILE = "=HYPERLINK(1)"


_made: dict[str, bytes] = {}  # the gradebook's bytes, made once per test session (alembic takes seconds)


# the roster a course's LMS gives: ada with her Canvas identity, cy without one, bob not in it
ROSTER = (
    "student_id,name,email,username,canvas_id,sis_user_id,sis_login_id,section\n"
    'ada,"Lovelace, Ada",ada@school.edu,alovelace,4021,S1001,alovelace,Section 1\n'
    "cy,Cy Young,cy@school.edu,cyoung,,,,Section 2\n"
)


def make_gradebook(folder: Path, monkeypatch) -> str:
    """Write <folder>/gradebook.db as above; returns its URL."""
    # a new gradebook runs `alembic` from PATH: the one next to this Python
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    url = f"sqlite:///{folder / 'gradebook.db'}"
    if "gradebook" in _made:
        (folder / "gradebook.db").write_bytes(_made["gradebook"])
        return url
    fill(url)
    _made["gradebook"] = (folder / "gradebook.db").read_bytes()
    return url


def fill(url: str) -> None:
    with Gradebook(url) as gradebook:
        gradebook.add_assignment("ps1")
        gradebook.add_notebook("problems", "ps1")
        gradebook.add_grade_cell("check_b", "problems", "ps1", max_score=2, cell_type="code")
        gradebook.add_grade_cell("answer_a", "problems", "ps1", max_score=1, cell_type="markdown")
        gradebook.add_assignment("ps2")
        gradebook.add_notebook("more", "ps2")
        gradebook.add_grade_cell("check_c", "more", "ps2", max_score=1, cell_type="code")
        gradebook.add_student("ada", first_name="Ada", last_name="Lovelace")
        for student in ("bob", "cy", HOSTILE):
            gradebook.add_student(student)
        for student in ("ada", "cy", HOSTILE):
            gradebook.add_submission("ps1", student)
        gradebook.add_submission("ps2", "ada")

        def grade(cell, notebook, assignment, student, auto=None, manual=None):
            found = gradebook.find_grade(cell, notebook, assignment, student)
            found.auto_score, found.manual_score = auto, manual
            found.needs_manual_grade = auto is None and manual is None

        grade("check_b", "problems", "ps1", "ada", auto=1.5)
        grade("answer_a", "problems", "ps1", "ada", manual=1.0)
        grade("check_c", "more", "ps2", "ada", auto=1.0)
        grade("check_b", "problems", "ps1", "cy", auto=2.0)
        grade("answer_a", "problems", "ps1", "cy")
        grade("check_b", "problems", "ps1", HOSTILE, auto=0.5)
        grade("answer_a", "problems", "ps1", HOSTILE, manual=0.0)
        gradebook.db.commit()
