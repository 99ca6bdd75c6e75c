"""python -m autograder.course.scaffold: a new assignment's folder, ready to fill in, that validate explains.

The scaffold is checked as nbgrader and the engine read it (the cells' metadata, checks.py loaded by
autograder.assignments), then validated as made (each place to fill in named, nothing graded, no
traceback), then filled in the way docs/authoring.md says and validated clean.
"""

from __future__ import annotations

import json

import pytest

from autograder import assignments, validate
from autograder.course import scaffold
from autograder.course.run import release_notebook


def make(tmp_path, functions="double(x, times=2.0), total"):
    source = tmp_path / "source"
    assert scaffold.main(["--source", str(source), "--assignment", "doubling", "--functions", functions]) == 0
    return source


def nbgrader_flags(source):
    notebook = json.loads((source / "doubling" / "doubling.ipynb").read_text())
    return notebook, [cell["metadata"]["nbgrader"] for cell in notebook["cells"]]


def test_the_notebook_carries_nbgrader_s_metadata_cell_by_cell(tmp_path):
    source = make(tmp_path)
    notebook, flags = nbgrader_flags(source)
    assert [f["grade_id"] for f in flags] == [
        "intro", "setup", "double_task", "double", "check_double", "total_task", "total", "check_total"
    ]  # fmt: skip
    assert [cell["id"] for cell in notebook["cells"]] == [f["grade_id"] for f in flags]
    answers = [f["grade_id"] for f in flags if f["solution"]]
    tests = {f["grade_id"]: f["points"] for f in flags if f["grade"]}
    assert answers == ["double", "total"] and tests == {"check_double": 1, "check_total": 1}
    assert all(f["locked"] for f in flags if not f["solution"]) and not any(f["locked"] for f in flags if f["solution"])
    cells = {cell["id"]: "".join(cell["source"]) for cell in notebook["cells"]}
    assert cells["setup"] == "import numpy as np"
    assert cells["double"].startswith("def double(x, times=2.0):\n    ### BEGIN SOLUTION\n")
    assert cells["total"].startswith("def total(x):\n")  # no parameters given: (x)
    assert "### BEGIN HIDDEN TESTS" in cells["check_total"] and "### END HIDDEN TESTS" in cells["check_total"]


def test_checks_py_is_the_simple_tier_against_reference_py_and_the_engine_loads_both(tmp_path):
    source = make(tmp_path)
    checks = assignments.load(source / "doubling")
    reference = assignments.reference(source / "doubling")
    assert checks.checks["check_double"].reference is reference.double
    assert list(checks.checks) == ["check_double", "check_total"]
    assert checks.graded == ("double", "total")
    assert [check.points for check in checks.checks.values()] == [1, 1]
    assert assignments.find(source, "doubling") == assignments.Layout("doubling", "doubling")
    with pytest.raises(NotImplementedError, match="double's reference is not written yet"):
        checks.checks["check_double"].reference(1.0)


def test_validate_on_a_fresh_scaffold_names_each_place_to_fill_in_and_grades_nothing(tmp_path, capsys):
    source = make(tmp_path)
    report = validate.validate_assignment(source=source, assignment="doubling", seeds=2)
    assert set(report.kinds) == {"to-fill-in"} and report.points == {}
    places = [finding.place for finding in report.findings]
    marked = {name: marked_lines(source / "doubling" / name) for name in ("checks.py", "reference.py")}
    assert places == [
        "doubling.ipynb, cell intro, line 3",
        "doubling.ipynb, cell double_task, line 3",
        "doubling.ipynb, cell double, line 3",
        "doubling.ipynb, cell total_task, line 3",
        "doubling.ipynb, cell total, line 3",
        *marked["checks.py"],
        *marked["reference.py"],
    ]
    assert len(marked["checks.py"]) == len(marked["reference.py"]) == 2  # per function: its inputs, its reference
    said = {finding.place: finding.message for finding in report.findings}
    assert said["doubling.ipynb, cell double, line 3"].startswith("still to fill in: the solution of double (then")
    assert said[marked["reference.py"][0]].startswith("still to fill in: a correct double, as the notebook's")
    capsys.readouterr()
    assert validate.main(["--source", str(source), "--assignment", "doubling"]) == 1
    printed = capsys.readouterr()
    assert "doubling: 9 place(s) still to fill in (TO FILL IN), so nothing was graded yet:" in printed.out
    assert "Traceback" not in printed.out + printed.err


SOLVED = "def {}:\n    ### BEGIN SOLUTION\n    return {}\n    ### END SOLUTION"


def marked_lines(path) -> list[str]:
    lines = path.read_text().splitlines()
    return [f"{path}:{n}" for n, line in enumerate(lines, start=1) if scaffold.FILL_IN in line]


def fill_in(source) -> None:
    """The scaffold filled in as an instructor would: texts written, solutions, references and inputs."""
    folder = source / "doubling"
    path = folder / "doubling.ipynb"
    notebook = json.loads(path.read_text())
    written = {
        "intro": "# Doubling\n\nTwo functions.",
        "double_task": "Write `double(x, times=2.0)`: x times `times`.",
        "total_task": "Write `total(x)`: the sum of each row.",
        "double": SOLVED.format("double(x, times=2.0)", "np.asarray(x) * times"),
        "total": SOLVED.format("total(x)", "np.asarray(x).sum(axis=-1)"),
    }
    for cell in notebook["cells"]:
        cell["source"] = written.get(cell["id"], cell["source"])
    path.write_text(json.dumps(notebook))
    for name in ("reference.py", "checks.py"):
        text = (folder / name).read_text().replace(f"{scaffold.FILL_IN}: ", "")
        for function, body in (("double", "return x * times"), ("total", "return x.sum(-1)")):
            text = text.replace(f'raise NotImplementedError("{function}\'s reference is not written yet")', body)
        (folder / name).write_text(text)


def test_a_scaffold_filled_in_validates_clean(tmp_path):
    source = make(tmp_path)
    fill_in(source)
    report = validate.validate_assignment(source=source, assignment="doubling", seeds=3)
    assert report.ok, report.text()
    assert report.points["solution"] == {"check_double": (1.0,) * 3, "check_total": (1.0,) * 3}
    assert report.points["blank"] == {"check_double": (0.0,) * 3, "check_total": (0.0,) * 3}


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["--assignment", "two words", "--functions", "f"], "'two words' cannot name an assignment"),
        (
            ["--assignment", "ok", "--functions", "f(x, "],
            "'f(x,' is not a function: write a name, or a name and its parameters",
        ),
        (["--assignment", "ok", "--functions", "f(x y)"], "f(x y) is not a valid def line"),
        (["--assignment", "ok", "--functions", "f, g, f"], "a function is named twice in f, g, f"),
        (["--assignment", "ok", "--functions", " , "], "name at least one function to grade"),
    ],
)
def test_what_the_scaffold_cannot_make_is_said_in_a_line(tmp_path, capsys, arguments, said):
    assert scaffold.main(["--source", str(tmp_path), *arguments]) == 1
    assert said in capsys.readouterr().err
    assert not any(tmp_path.iterdir())  # nothing made


def test_the_scaffold_never_writes_over_an_assignment(tmp_path, capsys):
    source = make(tmp_path)
    before = (source / "doubling" / "checks.py").read_text()
    assert scaffold.main(["--source", str(source), "--assignment", "doubling", "--functions", "f"]) == 1
    assert "exists already" in capsys.readouterr().err
    assert (source / "doubling" / "checks.py").read_text() == before


def test_functions_are_cut_at_the_commas_outside_their_parameters():
    functions = scaffold.parse_functions("layer_norm(x, gain, bias, eps=1e-5), rms_norm, f(a=(1, 2))")
    assert [(f.name, f.parameters) for f in functions] == [
        ("layer_norm", "x, gain, bias, eps=1e-5"), ("rms_norm", "x"), ("f", "a=(1, 2)")
    ]  # fmt: skip


def test_nbgrader_releases_the_notebook_alone_neither_the_checks_nor_the_reference(tmp_path):
    source = make(tmp_path)
    fill_in(source)
    released = release_notebook(source / "doubling", tmp_path / "scratch").decode()
    folder = tmp_path / "scratch" / "release" / "doubling"
    assert sorted(path.name for path in folder.iterdir()) == ["doubling.ipynb"]
    assert "def double(x, times=2.0):" in released and "np.asarray(x) * times" not in released
    assert "double is not written yet: write it in this notebook" in released
