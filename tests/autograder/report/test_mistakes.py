"""autograder.report.mistakes: named mistakes grouped by their stored id, never by their words, and named by the
mistake's own words, never one student's call (in memory; tests/assignments/layer_norm's checks judge answers made
here)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from autograder import assignments
from autograder.answers.grading import evaluate
from autograder.checks import Outputs, Result
from autograder.report.course import GradedAssignment, Student
from autograder.report.mistakes import mistake_words, mistakes_tables
from autograder.verdicts import Property, Verdict

LAYER_NORM = Path(__file__).resolve().parents[3] / "tests" / "assignments" / "layer_norm"


def student(name: str, check: str, *failed: tuple[str, str, str]) -> Student:
    """A student whose ``check`` failed these (property, message, stored id)."""
    properties = tuple(Property(prop, False, message, mistake) for prop, message, mistake in failed)
    verdict = Verdict(check, check.removeprefix("check_"), 0.0, 2.0, properties, seed=1)
    return Student(name, submitted=True, state="answered", verdicts={check: verdict})


def graded(*students: Student) -> GradedAssignment:
    checks = ["check_attention", "check_masked_attention"]
    return GradedAssignment(course=Path("."), name="attention", checks=checks, students=list(students))


def test_the_same_id_is_one_mistake_whatever_its_words_and_checks():
    mistakes, failures = mistakes_tables(
        graded(
            student("ada", "check_attention", ("scaled", "the weights match unscaled scores (d=4)", "unscaled")),
            student("bo", "check_masked_attention", ("values", "unscaled scores again, d=8", "unscaled")),
        )
    )
    assert mistakes[["id", "students", "checks"]].values.tolist() == [
        ["unscaled", 2, "check_attention, check_masked_attention"]
    ]
    # neither message holds the words the id was made of (a judge's own name): the id's words, not one student's
    assert mistakes["mistake"].tolist() == ["unscaled"]
    assert sorted(failures["id"]) == ["unscaled", "unscaled"], "a failure row per check and property"
    assert list(failures.columns) == ["check", "property", "id", "example", "students"]
    assert sorted(failures["example"]) == ["the weights match unscaled scores (d=4)", "unscaled scores again, d=8"]


def test_the_same_words_under_two_ids_are_two_mistakes():
    same = "values differ from softmax over the last axis"
    mistakes, _ = mistakes_tables(
        graded(
            student("ada", "check_attention", ("values", same, "check_attention.values")),
            student("bo", "check_masked_attention", ("values", same, "check_masked_attention.values")),
        )
    )
    assert sorted(mistakes["id"]) == ["check_attention.values", "check_masked_attention.values"]


def test_a_property_stored_without_an_id_is_grouped_by_check_and_property():
    """A verdict of a notebook graded before ids were stored: its failed property's id is <check>.<property>, so
    two such students with different numbers in the message are one mistake (no words compared)."""
    mistakes, _ = mistakes_tables(
        graded(
            student("ada", "check_attention", ("values", "largest difference 0.31", "")),
            student("bo", "check_attention", ("values", "largest difference 0.07", "")),
        )
    )
    assert mistakes[["id", "students"]].values.tolist() == [["check_attention.values", 2]]


def answered(check, function, seed: int) -> Outputs:
    """check's calls under ``seed`` answered by ``function``, in this process (a trusted stand-in for a student)."""
    calls = check.calls(np.random.default_rng(seed))
    results = []
    for call in calls:
        value = np.asarray(function(*call.args, **call.kwargs))
        results.append(Result(None, (value,), ({"type": "numpy.ndarray", "dtype": str(value.dtype), "shape": []},)))
    return Outputs(calls, results)


def test_a_named_mistake_is_its_own_words_not_the_first_student_s_call():
    """Two students forget eps, each on their own draw: the grader's messages start with each one's call
    ("layer_norm(array of shape (4, 9), ...): ignores eps: ..."); the row is the mistake as checks.py words it."""
    check = assignments.load(LAYER_NORM).checks["check_layer_norm"]
    said, forgets_eps = next((message, wrong) for message, wrong in check.mistakes if message.startswith("ignores eps"))
    students = []
    for name, seed in (("ada", 1), ("bo", 2)):
        properties = tuple(evaluate(check, answered(check, forgets_eps, seed)))
        verdict = Verdict(check.check_id, check.function, 2.0, 3.0, properties, seed=seed)
        students.append(Student(name, submitted=True, state="answered", verdicts={check.check_id: verdict}))
    messages = [p.message for s in students for p in s.verdicts[check.check_id].failed]
    assert len(set(messages)) == 2 and all(m.startswith("layer_norm(") for m in messages), messages
    graded = GradedAssignment(course=Path("."), name="layer_norm", checks=[check.check_id], students=students)
    mistakes, _ = mistakes_tables(graded)
    assert mistakes[["mistake", "id", "students"]].values.tolist() == [[said, "ignores-eps", 2]]


def test_an_unnamed_failure_says_which_property_failed_without_numbers():
    mistakes, _ = mistakes_tables(
        graded(
            student(
                "ada", "check_attention", ("values", "attention(array of shape (3, 4)): largest difference 0.31", "")
            )
        )
    )
    assert mistakes[["mistake", "id"]].values.tolist() == [
        ["'values' fails, no named mistake matches", "check_attention.values"]
    ]


def test_mistake_words_start_where_the_id_s_words_do():
    message = "f(0.5, eps=0.1): the mask is True at padding: True where t < length"
    assert mistake_words("the-mask-is-true-at-padding", message) == "the mask is True at padding: True where t < length"
    assert mistake_words("the-weights-match", "the weights match: divide") == "the weights match: divide"
    assert mistake_words("output-uses-keys", message) == ""
