"""autograder.visible.gaps: what validate says about the visible checks (a copy of source/positions, no kernel)."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from autograder.visible import gaps as visible_gaps
from autograder.visible import record as visible

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def positions(tmp_path) -> Path:
    folder = tmp_path / "source" / "positions"
    shutil.copytree(ROOT / "source" / "positions", folder)
    return folder


def test_the_course_s_assignments_let_nothing_through(positions):
    assert visible_gaps.findings(positions) == []


def test_a_mistake_only_large_inputs_show_is_let_through_and_said_at_its_check(positions, monkeypatch):
    monkeypatch.setattr(visible, "CANDIDATE", 60)  # public inputs of at most 60 numbers: the window is out of reach
    gaps = visible_gaps.findings(positions)
    through = [gap for gap in gaps if gap.kind == visible_gaps.LETS_THROUGH]
    assert sorted(gap.check for gap in through) == ["check_rotate", "check_rotation_angles"]
    assert all("passes the mistake 'ignores base: use the base given'" in gap.message for gap in through)
    assert through[0].place == f"{positions / 'checks.py'}, check {through[0].check}"
    assert "passes the mistake" in through[0].message and "which the hidden checks name" in through[0].message
    assert [gap.kind for gap in gaps if gap.kind != visible_gaps.LETS_THROUGH] == [visible_gaps.STALE]


def test_a_file_that_no_longer_says_what_the_checks_say_is_stale(positions):
    checks = positions / "checks.py"
    checks.write_text(
        checks.read_text(encoding="utf-8").replace("turned the wrong way:", "turned backwards:"), encoding="utf-8"
    )
    gaps = visible_gaps.findings(positions)
    assert [(gap.kind, gap.place) for gap in gaps] == [(visible_gaps.STALE, str(positions / visible.FILE))]
    assert "records other numbers than checks.py gives now: run python -m autograder.visible" in gaps[0].message
    (positions / visible.FILE).unlink()
    assert "missing: the visible checks cannot run" in visible_gaps.findings(positions)[0].message


def test_a_notebook_that_does_not_use_the_recorded_numbers_is_not_measured(positions):
    notebook = nbformat.read(positions / "positions.ipynb", as_version=4)
    for cell in notebook.cells:
        cell.source = cell.source.replace("from lib.check import check", "check = print")
    nbformat.write(notebook, positions / "positions.ipynb")
    (positions / visible.FILE).unlink()
    assert visible_gaps.findings(positions) == []


def test_numbers_within_another_machine_s_last_bits_are_the_same():
    assert visible_gaps.same({"a": [1.0, {"b": 2}]}, {"a": [1.0 + 1e-12, {"b": 2}]})
    assert not visible_gaps.same({"a": [1.0]}, {"a": [1.001]})
    assert not visible_gaps.same({"a": "x"}, {"a": "y"}) and not visible_gaps.same({"a": 1}, {"b": 1})
