"""autograder.report.mistakes: named mistakes grouped by their stored id, never by their words (in memory)."""

from __future__ import annotations

from pathlib import Path

from autograder.report.course import GradedAssignment, Student
from autograder.report.mistakes import mistakes_tables
from autograder.verdicts import Property, Verdict


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
    assert mistakes["mistake"].tolist() == ["the weights match unscaled scores (d=4)"], "the first student's words"
    assert sorted(failures["id"]) == ["unscaled", "unscaled"], "a failure row per check and property"


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
