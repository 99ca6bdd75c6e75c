"""autograder.files: a file or a folder is whole or as it was, never half-written."""

from __future__ import annotations

import json

import pytest

from autograder.files import atomic_path, place_folder, write_atomic, write_json


def test_a_file_is_replaced_whole_and_no_temporary_is_left(tmp_path):
    target = tmp_path / "deep" / "grades.csv"
    write_atomic(target, "old\n")
    write_atomic(target, b"new\n", durable=True)
    assert target.read_bytes() == b"new\n"
    assert sorted(path.name for path in target.parent.iterdir()) == ["grades.csv"]


def test_a_write_that_fails_leaves_the_old_file(tmp_path):
    target = tmp_path / "page.html"
    target.write_text("before")
    with pytest.raises(OSError, match="disk full"):
        with atomic_path(target) as temporary:
            temporary.write_text("half")
            raise OSError("disk full")
    assert target.read_text() == "before"
    assert [path.name for path in tmp_path.iterdir()] == ["page.html"]


def test_json_and_a_folder_swapped_in(tmp_path):
    write_json(tmp_path / "entry.json", {"student": "ada", "seconds": 1.5})
    assert json.loads((tmp_path / "entry.json").read_text()) == {"student": "ada", "seconds": 1.5}
    target, scratch = tmp_path / "feedback", tmp_path / "scratch"
    scratch.mkdir()
    place_folder({"a.html": b"1", "sub/b.html": b"2"}, target, scratch)
    place_folder({"c.html": b"3"}, target, scratch)  # the old folder swapped out whole, not merged
    assert sorted(str(path.relative_to(target)) for path in target.rglob("*") if path.is_file()) == ["c.html"]
    assert list(scratch.iterdir()) == []
