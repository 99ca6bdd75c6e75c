"""The report's page (autograder.report.page), rendered from graded assignments built in memory (no gradebook).

Pinned here: how a cell is shown (%g, an em dash for nothing), the Jinja environment (autoescaping on, an unknown
name an error), a table's first rows, the side-by-side view of a similar pair with the shared lines marked, the
page's counts and totals, and a whole page: two embedded PNG plots, no script, every value a student controls
(an id, code, a message) shown as text, never markup.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path
from types import SimpleNamespace

import jinja2
import pandas as pd
import pytest

from autograder.report.course import GradedAssignment, Student
from autograder.report.page import environment, pair_view, render, shown, summary, table_view
from autograder.report.similarity import Pair
from autograder.report.tables import make_tables
from autograder.verdicts import Property, Verdict

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'
PNG = b"\x89PNG\r\n\x1a\n"


def test_a_cell_is_shown_as_g_and_nothing_as_a_dash():
    assert [shown(None), shown(float("nan")), shown(0.5), shown(2.0), shown(1e-7), shown(3), shown("a")] == [
        "—",
        "—",
        "0.5",
        "2",
        "1e-07",
        "3",
        "a",
    ]


def test_the_environment_escapes_everything_and_refuses_an_unknown_name():
    env = environment()
    assert env.from_string("{{ x }}").render(x=HOSTILE) == (
        "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"
    )
    assert env.from_string("{{ 'check_softmax' | short_check }} {{ 0.25 | shown }}").render() == "softmax 0.25"
    with pytest.raises(jinja2.UndefinedError):
        env.from_string("{{ missing }}").render()


def test_table_view_keeps_the_first_rows_with_their_columns():
    frame = pd.DataFrame({"cell": ["a", "b", "c"], "total": [3.0, 2.0, 1.0]})
    view = table_view(frame, rows=2)
    assert view == {
        "columns": ["cell", "total"],
        "rows": [[("cell", "a"), ("total", 3.0)], [("cell", "b"), ("total", 2.0)]],
    }
    assert len(table_view(frame)["rows"]) == 3 and table_view(frame.head(0))["rows"] == []


def test_a_pair_shows_the_functions_either_side_shares_with_their_lines_marked():
    prints = {
        "ada": SimpleNamespace(code={"softmax": "e = exp(x)\nreturn e / e.sum()", "mask": "m", "extra": "x"}),
        "bob": SimpleNamespace(code={"softmax": "y = exp(x)\nreturn y / y.sum()\n# done"}),
    }
    pair = Pair("ada", "bob", 0.8, (0.8, 0.6), {"a": {"softmax": [2]}, "b": {"softmax": [2], "mask": [1]}})
    view = pair_view(pair, prints)
    assert (view.a, view.b, view.score) == ("ada", "bob", 0.8)
    assert [f.function for f in view.functions] == ["softmax", "mask"], "ada's order; 'extra' shares nothing"
    softmax = view.functions[0]
    assert [side.student for side in softmax.sides] == ["ada", "bob"]
    assert [(line.text, line.hit) for line in softmax.sides[1].lines] == [
        ("y = exp(x)", False),
        ("return y / y.sum()", True),
        ("# done", False),
    ]
    assert view.functions[1].sides[1].lines == [], "bob has no mask function"


def answered(name: str, points: float, code: str, message: str = "row 0 sums to 2.0", **fields) -> Student:
    values = Property("values", points >= 2, "" if points >= 2 else message)
    verdict = Verdict("check_softmax", "softmax", points, 2.0, (Property("shape", True), values))
    return Student(
        name,
        submitted=True,
        state="answered",
        checks={"check_softmax": (points, 2.0)},
        verdicts={"check_softmax": verdict},
        code={"softmax": code},
        **fields,
    )


CODE = "def softmax(x):\n    e = np.exp(x - x.max(-1, keepdims=True))\n    total = e.sum(-1, keepdims=True)\n{}"


def graded_class(course: Path) -> GradedAssignment:
    """Four students (one hostile: their id, code and message are markup), a blank one and one absent."""
    release = {
        "cells": [
            {
                "cell_type": "code",
                "metadata": {"nbgrader": {"solution": True, "grade": False, "grade_id": "softmax"}},
                "source": "def softmax(x):\n    raise NotImplementedError",
            }
        ]
    }
    students = [
        answered("ada", 2.0, CODE.format("    return e / total\n")),
        answered("bob", 2.0, CODE.format("    return e / total  # same\n")),
        answered(HOSTILE, 0.5, f"def softmax(x):\n    return '{HOSTILE}'\n", message=HOSTILE),
        answered("cy", 1.0, "def softmax(x):\n    return x / x.sum()\n"),
        Student("dee", submitted=True, state="blank", checks={"check_softmax": (0.0, 2.0)}),
        Student("eve"),
    ]
    return GradedAssignment(
        course=course,
        name="attention",
        notebooks=["attention"],
        checks=["check_softmax"],
        release={"attention": release},
        source={"attention": None},
        students=students,
    )


def test_summary_counts_every_state_over_submitted_notebooks(tmp_path):
    facts = summary(graded_class(tmp_path))
    assert facts["auto"] == [2.0, 2.0, 0.5, 1.0, 0.0] and facts["top"] == 2.0
    assert facts["mean"] == pytest.approx(1.1) and facts["median"] == 1.0
    assert facts["counts"] == {"answered": 4, "blank": 1, "unreadable": 0, "not submitted": 1}
    empty = summary(GradedAssignment(course=tmp_path, name="none", students=[Student("eve")]))
    assert (empty["auto"], empty["top"], empty["mean"], empty["median"]) == ([], 0.0, 0.0, 0.0)


def test_the_page_is_one_file_with_two_plots_no_script_and_a_students_markup_as_text(tmp_path):
    graded = graded_class(tmp_path)
    tables = make_tables(graded, formgrader="https://hub.example")
    shared = {"a": {"softmax": [2]}, "b": {"softmax": [2]}}
    tables.similar.shown = [Pair("ada", HOSTILE, 0.875, (0.875, 0.5), shared)]  # a pair shown side by side
    tables.similar.prints = {s.id: SimpleNamespace(code=s.code) for s in graded.answered}
    page = render(graded, tables, formgrader="https://hub.example", seconds=1.234)
    assert "<script" not in page.lower() and "<img src=x" not in page
    escaped = "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;"
    assert page.count(escaped) >= 4, "the hostile id (tables and pair), code and message, as text"
    images = re.findall(r'<img alt="[^"]+" src="data:image/png;base64,([^"]+)">', page)
    assert len(images) == 2 and all(base64.b64decode(data).startswith(PNG) for data in images)
    links = re.findall(r'<a href="([^"]+)"', page)
    assert links and all(re.fullmatch(r"attention/\w+\.csv", link) for link in links), "only the CSVs beside it"
    text = re.sub(r"\s+", " ", page)
    assert "6 students in the gradebook, 5 submitted: 4 answered, 1 blank, 0 unreadable, 1 not submitted." in text
    assert "Mean <b>1.10</b>, median <b>1.00</b> of 2 points" in text
    assert "Report made in 1.23 s." in text
    assert f"<summary>ada and {escaped}&lt;img src=x onerror=alert(1)&gt;: 0.88" in page
    assert '<span class="hit">    return &#39;' + escaped in page, "the shared line of the hostile side, marked"
    assert "No Submit was checked by the grading service" in text
