"""The report's tables (autograder.report.tables), on graded assignments built in memory (no gradebook, no grading).

Pinned here: the item statistics (point-biserial discrimination and the thirds difference, NaN where they mean
nothing), the totals table's lost checks and written-answer counts, difficulty over answering students only, the
properties' PASS / FAIL / n/a counts, the written answers' Formgrader links, the timing tables, the instant checks
per student, and the CSV cells a spreadsheet would run as a formula.
"""

from __future__ import annotations

import datetime
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from autograder.attempts import Attempt
from autograder.report.course import GradedAssignment, Student
from autograder.report.similarity import REFERENCE, Pair
from autograder.report.tables import (
    SOLUTION,
    Similar,
    attempts_table,
    checks_table,
    point_biserial,
    problems_table,
    properties_table,
    short_check,
    solution_table,
    spreadsheet_safe,
    thirds_difference,
    timing_tables,
    totals_table,
    written_table,
)
from autograder.verdicts import Property, Verdict


def verdict(check: str, points: float, top: float, marks: dict) -> Verdict:
    """A stored verdict of ``check`` whose properties have the marks given ({name: True, False or None})."""
    properties = tuple(Property(name, passed, "" if passed is not False else "wrong") for name, passed in marks.items())
    return Verdict(check, check.removeprefix("check_"), points, top, properties)


def student(name: str, a: float, b: float, state: str = "answered", **fields) -> Student:
    """A submitted student with check_a (of 2) and check_b (of 1) scored, their verdicts stored."""
    marks_a = {"shape": True, "values": a >= 2}
    marks_b = {"values": b >= 1 if state == "answered" else None}
    return Student(
        name,
        submitted=True,
        state=state,
        checks={"check_a": (a, 2.0), "check_b": (b, 1.0)},
        verdicts={"check_a": verdict("check_a", a, 2.0, marks_a), "check_b": verdict("check_b", b, 1.0, marks_b)},
        **fields,
    )


def assignment(*students: Student) -> GradedAssignment:
    return GradedAssignment(
        course=Path("/nowhere"), name="attention", checks=["check_a", "check_b"], students=list(students)
    )


def test_point_biserial_is_pearsons_correlation_and_nan_when_it_means_nothing():
    passed, rest = [1, 0, 1, 0, 1], [5.0, 1.0, 4.0, 2.0, 3.0]
    assert point_biserial(passed, rest) == pytest.approx(np.corrcoef(passed, rest)[0, 1])
    assert point_biserial([1, 1, 0, 0], [4, 3, 2, 1]) > 0.89, "the ones who pass have the higher rest"
    assert math.isnan(point_biserial([1, 1, 1, 1], [1, 2, 3, 4])), "everyone passes: no correlation"
    assert math.isnan(point_biserial([1, 0, 1], [2, 2, 2])), "a constant rest"
    assert math.isnan(point_biserial([1, 0], [1, 0])), "under 3 students"


def test_thirds_difference_top_third_less_bottom_third():
    totals = [9, 1, 5, 7, 3, 8]  # sorted: 1 (idx1), 3 (idx4), 5, 7, 8 (idx5), 9 (idx0); a third is 2 students
    passed = [1, 0, 1, 0, 1, 1]
    assert thirds_difference(passed, totals) == pytest.approx(1.0 - 0.5)
    assert thirds_difference([0, 1, 0], [3, 1, 2]) == pytest.approx(-1.0), "one student a third"
    assert math.isnan(thirds_difference([1, 0], [2, 1]))


def test_totals_list_lost_checks_and_written_answers_waiting():
    ada = student("ada", 2.0, 0.5, written={"explain": (None, 3.0, True), "why": (1.0, 1.0, False)})
    bob = student("bob", 2.0, 1.0)
    missing = Student("cy")
    totals = totals_table(assignment(ada, bob, missing))
    rows = totals.set_index("student").to_dict("index")
    assert rows["ada"]["lost"] == "b" and rows["bob"]["lost"] == ""
    assert (rows["ada"]["auto"], rows["ada"]["auto_max"]) == (2.5, 3.0)
    assert (rows["ada"]["written"], rows["ada"]["written_max"], rows["ada"]["written_to_grade"]) == (1.0, 4.0, 1)
    assert rows["cy"]["state"] == "not submitted" and rows["cy"]["auto_max"] == 0


def test_check_difficulty_and_discrimination_over_answering_students_only():
    class_ = assignment(
        student("s1", 2.0, 1.0),
        student("s2", 2.0, 0.0),
        student("s3", 0.0, 0.0),
        student("s4", 1.0, 1.0),
        student("blank", 0.0, 0.0, state="blank"),
        Student("absent"),
    )
    checks = checks_table(class_).set_index("check")
    assert checks.loc["check_a", "students"] == 4, "the blank and the absent student are left out"
    assert checks.loc["check_a", "difficulty"] == pytest.approx(round((1 + 1 + 0 + 0.5) / 4, 3))
    assert checks.loc["check_b", "full_points"] == 2 and checks.loc["check_a", "points"] == 2.0
    assert checks.loc["check_a", "function"] == "a"
    shares, rests = [1.0, 1.0, 0.0, 0.5], [1.0, 0.0, 0.0, 1.0]
    assert checks.loc["check_a", "discrimination"] == pytest.approx(round(point_biserial(shares, rests), 3))


def test_properties_count_pass_fail_and_not_applicable_in_the_verdicts_order():
    class_ = assignment(student("s1", 2.0, 1.0), student("s2", 0.0, 0.0), student("s3", 2.0, 0.0))
    class_.students[2].verdicts["check_b"] = verdict("check_b", 0.0, 1.0, {"values": None})
    frame = properties_table(class_)
    assert list(zip(frame["check"], frame["property"])) == [
        ("check_a", "shape"),
        ("check_a", "values"),
        ("check_b", "values"),
    ]
    values_b = frame.iloc[2]
    assert (values_b["passed"], values_b["failed"], values_b["not_applicable"]) == (1, 1, 1)
    assert values_b["difficulty"] == 0.5, "n/a is not judged"
    assert frame.iloc[1]["difficulty"] == pytest.approx(0.667)


def test_a_property_nobody_could_judge_has_no_difficulty():
    one = student("s1", 2.0, 1.0)
    one.verdicts["check_b"] = verdict("check_b", 0.0, 1.0, {"values": None})
    row = properties_table(assignment(one)).iloc[-1]
    assert row["not_applicable"] == 1 and math.isnan(row["difficulty"])


def test_problems_name_the_unreadable_notebook_and_each_cell():
    bad = student("bad", 0.0, 0.0, state="unreadable", reason="the file is empty")
    worse = student("worse", 0.0, 0.0, state="unreadable")
    cells = student("cells", 1.0, 1.0, problems=[("cell 3", "the kernel died")])
    rows = problems_table(assignment(bad, worse, cells)).to_dict("records")
    assert rows == [
        {"student": "bad", "cell": "the whole notebook", "reason": "the file is empty"},
        {"student": "worse", "cell": "the whole notebook", "reason": "could not be read"},
        {"student": "cells", "cell": "cell 3", "reason": "the kernel died"},
    ]


def test_written_answers_waiting_link_to_formgrader():
    ada = student("ada", 2.0, 1.0, written={"explain": (None, 3.0, True)}, notebook_ids={"attention": "nb-7"})
    bob = student("bob", 2.0, 1.0, written={"explain": (2.0, 3.0, False)}, notebook_ids={"attention": "nb-8"})
    cy = student("cy", 2.0, 1.0, written={"explain": (None, 3.0, True)})  # no notebook id recorded
    class_ = assignment(ada, bob, cy)
    class_.written = ["explain"]
    rows = written_table(class_, formgrader="https://hub.example/user/me/").to_dict("records")
    assert rows == [
        {
            "student": "ada",
            "answer": "explain",
            "points": 3.0,
            "formgrader": "https://hub.example/user/me/formgrader/submissions/nb-7",
        },
        {
            "student": "cy",
            "answer": "explain",
            "points": 3.0,
            "formgrader": "https://hub.example/user/me/formgrader/gradebook/attention",
        },
    ]


def test_timing_per_notebook_and_slowest_cells_over_the_class():
    ada = student("ada", 2.0, 1.0, cells_seconds={"softmax": 1.5, "cell 2: x = 1": 0.25}, ledger={"seconds": 4.0})
    bob = student("bob", 2.0, 1.0, cells_seconds={"softmax": 3.0}, checks_seconds=1.004)
    timing, slow = timing_tables(assignment(ada, bob))
    rows = timing.set_index("student").to_dict("index")
    assert (rows["ada"]["kernel"], rows["ada"]["outside_kernel"], rows["ada"]["slowest_cell"]) == (
        1.75,
        2.25,
        "softmax",
    )
    assert pd.isna(rows["bob"]["outside_kernel"]) and rows["bob"]["checks"] == 1.0, "no total in bob's ledger"
    assert pd.isna(rows["ada"]["checks"]), "graded before the hidden checks' seconds were stored"
    assert slow.to_dict("records") == [
        {"cell": "softmax", "notebooks": 2, "mean": 2.25, "max": 3.0, "total": 4.5},
        {"cell": "cell 2: x = 1", "notebooks": 1, "mean": 0.25, "max": 0.25, "total": 0.25},
    ]


def attempt(number: int, who: str, status: str, points: float | None = None) -> Attempt:
    when = datetime.datetime(2026, 12, 1, 10, number)
    return Attempt(number, f"{who}+{number}", who, "attention", when, when, status, None, None, points, 3.0, (), "")


def test_instant_checks_first_best_last_and_the_graded_score():
    class_ = assignment(student("ada", 2.0, 0.5))
    class_.attempts = [
        attempt(1, "ada", "done", 1.0),
        attempt(2, "zed", "refused"),
        attempt(3, "ada", "done", 2.5),
        attempt(4, "ada", "done", 2.0),
        attempt(5, "ada", "queued"),
        attempt(6, "ada", "late"),
    ]
    rows = attempts_table(class_).to_dict("records")
    assert [row["student"] for row in rows] == ["ada", "zed"]
    ada, zed = rows
    assert (ada["submits"], ada["checked"], ada["waiting"], ada["not_checked"]) == (5, 3, 1, 1)
    assert (ada["first"], ada["best"], ada["last"], ada["graded"], ada["scores"]) == (1.0, 2.5, 2.0, 2.5, "1 2.5 2")
    assert zed["checked"] == 0 and pd.isna(zed["first"]) and pd.isna(zed["graded"]), "zed is not in the gradebook"


def test_answer_key_matches_name_the_key():
    similar = Similar(pairs=[], shown=[], prints={}, compared=0)
    similar.solution = [Pair("ada", REFERENCE, 0.91234, (0.8, 0.5), {}), Pair("bob", SOLUTION, 0.7, (0.66666, 0.4), {})]
    rows = solution_table(similar).to_dict("records")
    assert rows == [
        {"student": "ada", "key": "reference", "score": 0.912, "share_of_student": 0.8},
        {"student": "bob", "key": "solution", "score": 0.7, "share_of_student": 0.667},
    ]
    assert short_check("check_softmax") == "softmax" and short_check("softmax_check") == "softmax_check"


def test_csv_cells_a_spreadsheet_would_run_are_quoted():
    frame = pd.DataFrame(
        {
            "student": ['=HYPERLINK("http://x")', "ada", "@SUM(A1)", "+1", "-2+3", "\tcmd", None],
            "score": [-1.0, 2.0, 0.5, 1.0, float("nan"), 3.0, 4.0],
        }
    )
    safe = spreadsheet_safe(frame)
    assert list(safe["student"][:6]) == ['\'=HYPERLINK("http://x")', "ada", "'@SUM(A1)", "'+1", "'-2+3", "'\tcmd"]
    assert pd.isna(safe["student"][6])
    assert safe["score"].tolist()[:4] == [-1.0, 2.0, 0.5, 1.0], "numbers are numbers"
    assert spreadsheet_safe(pd.DataFrame({"code": ["\rx", "a=b"]}))["code"].tolist() == ["'\rx", "a=b"]


def test_totals_show_each_students_own_due_date_and_how_late_they_were(tmp_path):
    """issue 37: the report reads each student's own due date (their extension, the course's term)."""
    from autograder.report.course import read_due_dates
    from autograder.term import Term

    due = datetime.datetime(2026, 12, 14, 17, 0)
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    term = Term(url)
    term.extend(student="ada", assignment="attention", hours=48)
    term.close()
    day_late = due + datetime.timedelta(hours=24)
    ada = student("ada", 2.0, 1.0, submitted_at=day_late)  # within her extension
    bob = student("bob", 2.0, 1.0, submitted_at=day_late)  # the same time, without one
    graded = assignment(ada, bob, Student("cy"))
    read_due_dates(graded, due, url)
    rows = totals_table(graded).set_index("student").to_dict("index")
    assert rows["ada"]["due"] == "2026-12-16 17:00 (an extension)" and rows["ada"]["late_hours"] == 0
    assert rows["bob"]["due"] == "2026-12-14 17:00" and rows["bob"]["late_hours"] == 24.0
    assert rows["bob"]["submitted_at"] == "2026-12-15 17:00:00"
    assert (rows["cy"]["due"], rows["cy"]["submitted_at"], rows["cy"]["late_hours"]) == ("2026-12-14 17:00", "", 0)
    broken = assignment(student("ada", 2.0, 1.0))
    read_due_dates(broken, due, "sqlite:////nonexistent/folder/gradebook.db")
    assert broken.students[0].due == due and "could not be read" in broken.notes[0]
