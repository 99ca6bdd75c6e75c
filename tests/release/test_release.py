"""release/ is what `nbgrader generate_assignment` makes of source/ today, and gives nothing away."""

import json
import re
from pathlib import Path

import pytest

from autograder.assignments import checks_path
from autograder.course.run import release_notebook

ROOT = Path(__file__).resolve().parents[2]
RELEASED = ROOT / "release" / "attention" / "attention.ipynb"
SOURCE = ROOT / "source" / "attention"


@pytest.fixture(scope="module")
def released():
    return json.loads(RELEASED.read_text())


def test_release_is_up_to_date_with_source(tmp_path):
    fresh = release_notebook(SOURCE, tmp_path)
    assert fresh == RELEASED.read_bytes(), (
        "release/attention/attention.ipynb is stale: run `nbgrader generate_assignment attention --force` "
        "from the repository root (with .venv/bin on PATH) and commit release/"
    )


def test_release_holds_the_notebook_and_its_visible_checks_numbers_only():
    assert sorted(path.name for path in RELEASED.parent.iterdir()) == ["attention.ipynb", "visible_checks.json"]
    assert checks_path(SOURCE).exists()  # the hidden checks, beside the source notebook, are not released


def test_release_has_no_solution_and_no_hidden_check(released):
    text = json.dumps(released)
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "autograder.checks", "import autograder"):
        assert marker not in text, f"the release contains {marker!r}"


def test_every_answer_cell_is_a_stub(released):
    answers = [c for c in released["cells"] if c["metadata"].get("nbgrader", {}).get("solution")]
    code = [c for c in answers if c["cell_type"] == "code"]
    written = [c for c in answers if c["cell_type"] == "markdown"]
    assert len(code) == 15 and len(written) == 4
    for cell in code:
        source = "".join(cell["source"])
        assert "raise NotImplementedError(" in source  # its message: tests/release/test_first_run.py
        assert "return " not in source.split("# YOUR CODE HERE")[-1], "an answer cell still returns something"
    for cell in written:
        assert "".join(cell["source"]).strip() == "YOUR ANSWER HERE"


def test_release_has_no_outputs(released):
    assert all(not c.get("outputs") for c in released["cells"] if c["cell_type"] == "code")


def test_reference_implementations_are_not_imported_in_the_release(released):
    code = "\n".join("".join(c["source"]) for c in released["cells"] if c["cell_type"] == "code")
    assert not re.search(r"from lib(\.attention| import .*\battention\b)", code)
    assert not re.search(r"from lib(\.heads| import .*\bheads\b)", code)
