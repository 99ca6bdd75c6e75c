"""autograder.grading.worker: why a submission is graded as the blank release is data (verdicts.Blank), in memory."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from autograder import verdicts
from autograder.grading.worker import blank_with_reason, unreadable
from autograder.verdicts import Blank

RELEASE = (Path(__file__).resolve().parents[3] / "release" / "attention" / "attention.ipynb").read_bytes()


@pytest.mark.parametrize(
    "data, kind",
    [
        (b"", verdicts.EMPTY),
        (b"  \n", verdicts.EMPTY),
        (b"\xff\xfe not utf-8", verdicts.NOT_TEXT),
        (b"my answers are in a Word file\n", verdicts.NOT_NOTEBOOK),
        (
            json.dumps({"nbformat": 2, "nbformat_minor": 0, "worksheets": [], "metadata": {}}).encode(),
            verdicts.FORMAT_VERSION,
        ),
    ],
    ids=["empty", "blank lines", "not utf-8", "not json", "format 2"],
)
def test_why_a_file_is_not_a_notebook_is_a_kind_and_its_detail(data, kind):
    blank = unreadable(data)
    assert isinstance(blank, Blank) and blank.kind == kind
    assert blank == Blank.from_dict(json.loads(json.dumps(blank.to_dict()))), "as the ledger stores it"


def test_a_notebook_is_not_blank():
    assert unreadable(RELEASE) is None


def test_the_blank_release_says_the_reason_escaped_in_its_first_cell():
    blank = Blank(verdicts.NOT_NOTEBOOK, "NotJSONError: <img src=x onerror=alert(1)>")
    notebook = nbformat.reads(blank_with_reason(RELEASE, blank).decode(), as_version=4)
    first = notebook.cells[0].source
    assert first.startswith("**Your submission could not be graded: the file is not a notebook: NotJSONError:")
    assert "<img" not in first and "&lt;img src=x onerror=alert\\(1\\)&gt;" in first
