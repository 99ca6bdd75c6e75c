"""The checks export (autograder.course.export, an nbgrader export plugin), on small sqlite gradebooks on tmp_path.

Pinned here: a score's CSV text, the cells' order (the source notebook's, then by name; a missing source notebook
is no order, a malformed one an error naming the file and what is wrong), who graded a cell (manual over auto,
pending, not submitted), the row for every student and cell with the --student and --assignment filters, the CSV's
header, and where the plugin finds the source notebook outside an nbgrader app (course_root, or nowhere).
"""

from __future__ import annotations

import csv
import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from nbgrader.api import Gradebook

from autograder.course.export import (
    COLUMNS,
    ChecksExport,
    MalformedNotebook,
    cell_order,
    check_rows,
    course_check_rows,
    graded_by,
    number,
    write_checks,
)

pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")  # nbgrader's add_submission, SQLAlchemy 2


@pytest.fixture(autouse=True)
def alembic_on_path(monkeypatch):
    """A new gradebook runs `alembic` from PATH: the one next to this Python."""
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))


def test_number_is_the_shortest_float_text_and_empty_for_none():
    assert [number(None), number(2), number(0.67), number(1 / 3), number(0)] == ["", "2.0", "0.67", repr(1 / 3), "0.0"]


def test_cell_order_of_a_source_notebook_and_of_none(tmp_path):
    path = tmp_path / "source.ipynb"
    cells = [
        {"metadata": {"nbgrader": {"grade_id": "zeta"}}},
        {"metadata": {}},
        {"metadata": {"nbgrader": {"grade_id": "alpha"}}},
        {"metadata": {"nbgrader": {"grade_id": "zeta"}}},  # repeated: the first position stays
    ]
    path.write_text(json.dumps({"cells": cells}))
    assert cell_order(path) == {"zeta": 0, "alpha": 1}
    assert cell_order(tmp_path / "missing.ipynb") == {}  # no source notebook: the cells go by name


@pytest.mark.parametrize(
    "content, says",
    [
        (b"not json", "source.ipynb: not a notebook's JSON (Expecting value: line 1 column 1 (char 0))"),
        (b"\xff", "source.ipynb: cannot be read as a notebook ('utf-8' codec can't decode byte 0xff"),
        (b"[]", "source.ipynb: a notebook is a JSON object with a list of cells, this is a list: restore"),
        (
            b"{}",
            "source.ipynb: a notebook is a JSON object with a list of cells, this is an object whose cells are null",
        ),
        (b'{"cells": {"a": 1}}', "this is an object whose cells are an object"),
        (b'{"cells": [{"metadata": {}}, 7]}', "source.ipynb: cell 1 is a number, not an object: restore the source"),
        (b'{"cells": [{"metadata": ["nbgrader"]}]}', "source.ipynb: cell 0's metadata is a list, not an object"),
        (b'{"cells": [{"metadata": null}]}', "source.ipynb: cell 0's metadata is null, not an object"),
        (b'{"cells": [{"metadata": {"nbgrader": "yes"}}]}', "cell 0's nbgrader metadata is a string, not an object"),
    ],
)
def test_a_malformed_source_notebook_is_named_with_what_is_wrong(tmp_path, content, says):
    path = tmp_path / "source.ipynb"
    path.write_bytes(content)
    with pytest.raises(MalformedNotebook) as raised:
        cell_order(path)
    assert str(raised.value).startswith(str(tmp_path)) and says in str(raised.value)


def test_a_malformed_source_notebook_stops_the_export_with_its_name(tmp_path):
    """What nbgrader's export and the class run's export step say, instead of a TypeError."""
    course = tmp_path / "course"
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gradebook:
        gradebook.add_assignment("week1")
        gradebook.add_notebook("week1", "week1")
        gradebook.add_student("ada")
        (course / "source" / "week1").mkdir(parents=True)
        (course / "source" / "week1" / "week1.ipynb").write_text('{"cells": 3}')
        with pytest.raises(MalformedNotebook, match=r"source/week1/week1.ipynb: a notebook is a JSON object"):
            course_check_rows(gradebook, course)


def test_graded_by_prefers_a_manual_score():
    grade = SimpleNamespace
    assert graded_by(grade(manual_score=0.0, auto_score=1.0)) == "manual", "a manual 0 is still a grader's"
    assert graded_by(grade(manual_score=None, auto_score=0.0)) == "auto"
    assert graded_by(grade(manual_score=None, auto_score=None)) == "pending"


def gradebook_of(tmp_path: Path) -> str:
    """Two assignments: ps1 (cells check_b, answer_a, check_c, task_t) and ps2 (check_x); ada submitted ps1 and
    ps2, cy ps1 only, bob nothing."""
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url) as gradebook:
        gradebook.add_assignment("ps1")
        gradebook.add_notebook("problems", "ps1")
        gradebook.add_grade_cell("check_b", "problems", "ps1", max_score=2, cell_type="code")
        gradebook.add_grade_cell("answer_a", "problems", "ps1", max_score=1, cell_type="markdown")
        gradebook.add_grade_cell("check_c", "problems", "ps1", max_score=0.5, cell_type="code")
        gradebook.add_task_cell("task_t", "problems", "ps1", max_score=3, cell_type="markdown")
        gradebook.add_assignment("ps2")
        gradebook.add_notebook("more", "ps2")
        gradebook.add_grade_cell("check_x", "more", "ps2", max_score=1, cell_type="code")
        for student in ("cy", "bob", "ada"):
            gradebook.add_student(student)
        gradebook.add_submission("ps1", "ada")
        gradebook.add_submission("ps1", "cy")
        gradebook.add_submission("ps2", "ada")
        check = gradebook.find_grade("check_b", "problems", "ps1", "ada")
        check.auto_score, check.needs_manual_grade = 1.5, False
        written = gradebook.find_grade("answer_a", "problems", "ps1", "ada")
        written.manual_score, written.needs_manual_grade = 1.0, False
        gradebook.db.commit()
    return url


def test_rows_for_every_student_and_cell_in_a_fixed_order(tmp_path):
    url = gradebook_of(tmp_path)
    with Gradebook(url) as gradebook:
        rows = check_rows(gradebook)
    assert all(set(row) == set(COLUMNS) for row in rows)
    assert [(r["student_id"], r["assignment"], r["grade_id"]) for r in rows] == [
        *[(s, "ps1", cell) for s in ("ada", "bob", "cy") for cell in ("answer_a", "check_b", "check_c", "task_t")],
        *[(s, "ps2", "check_x") for s in ("ada", "bob", "cy")],
    ], "students by id, assignments in the gradebook's order, cells by name without a source notebook"
    found = {(r["student_id"], r["assignment"], r["grade_id"]): r for r in rows}
    assert (
        found["ada", "ps1", "task_t"]["cell_type"] == "markdown"
        and found["ada", "ps1", "check_c"]["max_score"] == "0.5"
    )
    assert found["cy", "ps2", "check_x"]["graded_by"] == "not submitted"
    assert found["cy", "ps2", "check_x"]["score"] == "0.0" and found["cy", "ps2", "check_x"]["auto_score"] == ""


def test_the_student_and_assignment_filters(tmp_path):
    url = gradebook_of(tmp_path)
    with Gradebook(url) as gradebook:
        only = check_rows(gradebook, students=["cy", "nobody"], assignments=["ps2"])
        nobody = check_rows(gradebook, students=["nobody"])
    assert [(r["student_id"], r["grade_id"]) for r in only] == [("cy", "check_x")]
    assert nobody == []


def test_cells_follow_the_source_notebook_then_the_rest_by_name(tmp_path):
    url = gradebook_of(tmp_path)
    source = tmp_path / "source" / "ps1"
    source.mkdir(parents=True)
    cells = [{"metadata": {"nbgrader": {"grade_id": name}}} for name in ("check_c", "task_t", "check_b")]
    (source / "problems.ipynb").write_text(json.dumps({"cells": cells}))
    with Gradebook(url) as gradebook:
        rows = course_check_rows(gradebook, tmp_path)
    assert [r["grade_id"] for r in rows if r["student_id"] == "ada" and r["assignment"] == "ps1"] == [
        "check_c",
        "task_t",
        "check_b",
        "answer_a",
    ], "answer_a is not in the source notebook: after the others"


def test_write_checks_header_and_text(tmp_path):
    rows = [dict.fromkeys(COLUMNS, "x") | {"student_id": "=cmd", "score": "1.0"}]
    write_checks(rows, tmp_path / "checks.csv")
    text = (tmp_path / "checks.csv").read_text()
    assert text.splitlines()[0] == ",".join(COLUMNS) and text.endswith("\n") and "\r" not in text
    assert list(csv.DictReader(text.splitlines())) == rows
    with pytest.raises(ValueError, match="not in fieldnames"):
        write_checks([{"unknown": 1}], tmp_path / "other.csv")


def test_source_notebook_outside_an_nbgrader_app(tmp_path):
    assert ChecksExport().source_notebook("ps1", "problems") is None
    plugin = ChecksExport(course_root=str(tmp_path))
    assert plugin.source_notebook("ps1", "problems") == tmp_path / "source" / "ps1" / "problems.ipynb"


def test_checks_export_rows_for_every_kind_of_grade(tmp_path):
    """ChecksExport on a small gradebook: automatic, manual, pending and missing grades; the --student filter."""
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gradebook:
        gradebook.add_assignment("ps1")
        gradebook.add_notebook("problems", "ps1")
        gradebook.add_grade_cell("check_b", "problems", "ps1", max_score=2, cell_type="code")
        gradebook.add_grade_cell("answer_a", "problems", "ps1", max_score=1, cell_type="markdown")
        for student in ("ada", "bob", "cy"):
            gradebook.add_student(student)
        for student in ("ada", "cy"):
            gradebook.add_submission("ps1", student)
        check = gradebook.find_grade("check_b", "problems", "ps1", "ada")
        check.auto_score, check.needs_manual_grade = 1.5, False
        written = gradebook.find_grade("answer_a", "problems", "ps1", "ada")
        written.manual_score, written.needs_manual_grade = 1.0, False
        gradebook.db.commit()
        ChecksExport(to=str(tmp_path / "all.csv")).export(gradebook)
        ChecksExport(to=str(tmp_path / "bob.csv"), student=["bob"]).export(gradebook)

    with open(tmp_path / "all.csv", newline="") as handle:
        reader = csv.DictReader(handle)
        assert reader.fieldnames == COLUMNS
        rows = {(row["student_id"], row["grade_id"]): row for row in reader}
    assert len(rows) == 6
    picked = lambda row, *keys: tuple(row[key] for key in keys)  # noqa: E731
    keys = ("score", "max_score", "auto_score", "manual_score", "needs_manual_grade", "graded_by")
    assert picked(rows["ada", "check_b"], *keys) == ("1.5", "2.0", "1.5", "", "False", "auto")
    assert picked(rows["ada", "answer_a"], *keys) == ("1.0", "1.0", "", "1.0", "False", "manual")
    assert picked(rows["cy", "check_b"], *keys) == ("0.0", "2.0", "", "", "True", "pending")
    assert picked(rows["bob", "answer_a"], *keys) == ("0.0", "1.0", "", "", "False", "not submitted")
    assert rows["ada", "answer_a"]["cell_type"] == "markdown"
    with open(tmp_path / "bob.csv", newline="") as handle:
        assert {row["student_id"] for row in csv.DictReader(handle)} == {"bob"}
