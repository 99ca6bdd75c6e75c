"""autograder.students: the one rule for a student id, and what an upload's folder is renamed to."""

from __future__ import annotations

import pytest

from autograder.students import LONGEST, id_problem, is_valid, suggestion


@pytest.mark.parametrize("name", ["ada", "student1", "Ada.Lovelace", "a_b-c.d", "7", "x" * 64])
def test_safe_ids_are_accepted(name):
    assert id_problem(name) is None


@pytest.mark.parametrize(
    "name, rename",
    [
        ("<img src=x onerror=alert(1)>", "imgsrcxonerroralert1"),
        ("ada lovelace", "adalovelace"),
        (" bob", "bob"),
        (".hidden", "hidden"),
        ("-rf", "rf"),
        ("élise", "elise"),
        ("x[1]", "x1"),
        ("a/../b", "a..b"),
        ("x" * 65, "x" * 64),
    ],
)
def test_unsafe_ids_are_refused_with_what_to_rename_them_to(name, rename):
    message = id_problem(name)
    assert message is not None and message.endswith(f"rename the folder, e.g. to {rename!r}")
    assert repr(name) in message and suggestion(name) == rename


def test_an_id_with_nothing_usable_asks_for_the_students_id():
    assert id_problem("<>").endswith("rename the folder to the student's id")
    assert "\\u202e" in id_problem("\u202eevil")  # invisible characters are written as escapes


def test_a_name_one_character_too_long_says_so():
    name = "a" * (LONGEST + 1)
    assert not is_valid(name) and is_valid(name[:LONGEST])
    assert f"longer than {LONGEST} characters" in id_problem(name)


@pytest.mark.parametrize("name", ["ada\n", "ada\x00", "ada/", "..", "a b", "<b>x</b>"])
def test_every_unsafe_id_is_refused_and_its_suggestion_is_valid(name):
    assert not is_valid(name)
    better = suggestion(name)
    assert better is None or is_valid(better)
