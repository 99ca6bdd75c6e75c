"""python -m autograder.validate: the bundled assignments are clean, and each authoring mistake is found and placed.

Each mistake is made in a copy of tests/assignments/positions (three functions, 5 points) in a temporary folder, and
validated under a few seeds: the finding's kind is asserted, and that its place names the cell or checks.py line.
A mistake that costs students points (a check that raises on the reference, ids or points that differ) also stops a
class run before any student is graded (autograder.course.run.grade_course).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from autograder import validate
from autograder.course.run import CourseOptions, PipelineError, grade_course
from autograder.validate import validate_assignment

REPOSITORY = Path(__file__).resolve().parents[3]
POSITIONS = REPOSITORY / "tests" / "assignments" / "positions"
SEEDS = 3

WRONG_ROTATE = """def rotate(x, base=10000.0):
    x = np.asarray(x, dtype=float)
    half = x.shape[-1] // 2
    angles = rotation_angles(x.shape[-2], x.shape[-1], base)
    cos, sin = np.cos(angles), np.sin(angles)
    first, second = x[..., :half], x[..., half:]
    return np.concatenate([first * cos + second * sin, -first * sin + second * cos], axis=-1)
"""


@pytest.fixture
def source(tmp_path) -> Path:
    """A source folder holding a copy of positions."""
    shutil.copytree(POSITIONS, tmp_path / "source" / "positions")
    return tmp_path / "source"


def notebook_path(source: Path) -> Path:
    return source / "positions" / "positions.ipynb"


def edit_cell(source: Path, grade_id: str, change) -> None:
    """Apply ``change(cell)`` to the notebook's cell ``grade_id``."""
    path = notebook_path(source)
    notebook = json.loads(path.read_text())
    cell = next(c for c in notebook["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id)
    change(cell)
    path.write_text(json.dumps(notebook, indent=1))


def cell_text(cell) -> str:
    return cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])


def replace_in_cell(source: Path, grade_id: str, old: str, new: str) -> None:
    def change(cell):
        text = cell_text(cell)
        assert old in text
        cell["source"] = text.replace(old, new)

    edit_cell(source, grade_id, change)


def replace_in_checks(source: Path, old: str, new: str) -> Path:
    path = source / "positions" / "checks.py"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    return path


def run(source: Path, **options) -> validate.Report:
    """validate on the copy; the solution is run in a kernel only where a test asks (visible=True)."""
    options.setdefault("visible", False)
    return validate_assignment(source=source, assignment="positions", seeds=options.pop("seeds", SEEDS), **options)


def only(report: validate.Report, kind: str) -> list[validate.Finding]:
    found = [finding for finding in report.findings if finding.kind == kind]
    assert found, f"no {kind} finding in:\n{report.text()}"
    return found


# --- the bundled assignments are clean ------------------------------------------------------------------------


def test_the_course_s_attention_assignment_is_clean():
    report = validate_assignment(source=REPOSITORY / "source", assignment="attention", seeds=SEEDS)
    assert report.findings == [], report.text()
    assert report.seeds == (0, 1, 2)
    assert {"solution", "blank"} <= set(report.points)  # and the wrong versions its checks.py names, if any
    assert sum(report.maximum.values()) == 29
    for check_id, top in report.maximum.items():
        assert report.points["solution"][check_id] == (top,) * SEEDS
        assert report.points["blank"][check_id] == (0.0,) * SEEDS


def test_the_positions_assignment_is_clean_and_the_command_says_so(capsys):
    status = validate.main(["--source", str(POSITIONS.parent), "--assignment", "positions", "--seeds", "2"])
    printed = capsys.readouterr().out
    assert status == 0, printed
    assert "positions: no authoring mistake found" in printed
    assert "check_rotate " in printed and "turns the wrong way" in printed.splitlines()[1]
    assert printed.splitlines()[-3].split() == ["total", "5", "5", "0", "4"]  # the wrong version checks.py names


# --- the solution run in a kernel, as a student runs it ------------------------------------------------------------


def test_a_visible_check_the_solution_fails_is_found_with_its_cell_line_and_message(source):
    """A visible assert that is wrong tells every student with a right answer that they are wrong: the solution runs
    in a kernel and the check's cell, its line and the assert's own message are named; the hidden grading is
    untouched (the solution still earns full points)."""
    replace_in_cell(
        source,
        "check_rotation_angles",
        'assert np.allclose(angles[0], 0), "position 0 does not turn: its angles are all 0"',
        'assert np.allclose(angles[0], 1), "position 0 turns by 1"',
    )
    report = run(source, seeds=1, visible=True)
    [finding] = only(report, "visible-check-fails")
    assert finding.place == "positions.ipynb, cell check_rotation_angles (line 3)"
    assert "AssertionError: position 0 turns by 1" in finding.message and "correct the check" in finding.message
    assert finding.check == "check_rotation_angles"
    assert [f.kind for f in report.findings] == ["visible-check-fails"] and not report.ok
    assert report.points["solution"]["check_rotation_angles"] == (1.0,)


def test_the_solution_runs_where_a_student_would_and_leaves_the_source_folder_as_it_was(source):
    """The kernel runs in a copy of the folder without checks.py and reference.py: a demo that saves a file saves it
    there, and a cell that reads the reference fails as it would for a student (who never has it)."""
    path = notebook_path(source)
    notebook = json.loads(path.read_text())
    cells = ["open('saved.txt', 'w').write('a demo saved this')", "import reference", "import checks"]
    notebook["cells"][1:1] = [
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": text} for text in cells
    ]
    path.write_text(json.dumps(notebook, indent=1))
    before = sorted(p.name for p in (source / "positions").iterdir())
    report = run(source, seeds=1, visible=True)
    assert sorted(p.name for p in (source / "positions").iterdir()) == before  # saved.txt went to the copy
    raised = only(report, "solution-cell-raises")
    assert [finding.place for finding in raised] == [
        "positions.ipynb, cell number 3 (line 1)",
        "positions.ipynb, cell number 4 (line 1)",
    ]
    assert all("ModuleNotFoundError: No module named" in finding.message for finding in raised)


def test_without_a_kernel_the_solution_is_not_run_and_validate_says_so_without_a_finding(source, monkeypatch):
    """No python3 kernel here is not the notebook's mistake: a note saying what was not tried and how to get it."""
    import jupyter_client

    monkeypatch.setattr(jupyter_client.kernelspec.KernelSpecManager, "get_kernel_spec", no_kernel)
    report = run(source, seeds=1, visible=True)
    assert report.ok and report.findings == []
    assert any("not run in a kernel" in note and "pip install ipykernel" in note for note in report.notes)
    assert "pip install ipykernel, or pass --no-run" in report.text()


def no_kernel(self, name):
    from jupyter_client.kernelspec import NoSuchKernel

    raise NoSuchKernel(name)


def test_a_demo_that_raises_on_the_solution_is_found_and_what_fails_after_it_says_so(source):
    """A cell that is not a check and raises (here a demo that clobbers np, which the later checks use) is
    ``solution-cell-raises``; a check that fails after it says it may only follow from it."""
    path = notebook_path(source)
    notebook = json.loads(path.read_text())
    at = next(
        number
        for number, cell in enumerate(notebook["cells"])
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == "check_rotation_angles"
    )
    demo = {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": []}
    demo["source"] = "shown = rotation_angles(4, 6)\nnp = None  # a demo that clobbers a name\nshown[9]"
    notebook["cells"].insert(at + 1, demo)
    path.write_text(json.dumps(notebook, indent=1))
    report = run(source, seeds=1, visible=True)
    [raised] = only(report, "solution-cell-raises")
    assert raised.place == f"positions.ipynb, cell number {at + 2} (line 3)"
    assert raised.message.startswith("raises on the solution: IndexError: index 9 is out of bounds")
    after = only(report, "visible-check-fails")
    assert [finding.check for finding in after] == ["check_rotate", "check_rotated_score"]
    assert all(f"(after cell number {at + 2} failed: it may only follow from that)" in f.message for f in after)


# --- one test per authoring mistake --------------------------------------------------------------------------


def test_a_solution_below_full_points(source):
    replace_in_cell(source, "rotate", "first * cos - second * sin", "first * cos + second * sin")
    report = run(source)
    (finding,) = only(report, "solution-below-full")
    assert finding.place == "positions.ipynb, cell check_rotate"
    assert "the solution earns 1 / 2" in finding.message
    assert report.points["solution"]["check_rotate"] == (1.0,) * SEEDS
    assert validate.main(["--source", str(source), "--assignment", "positions", "--seeds", "1"]) == 1


def test_a_blank_release_above_zero(source):
    replace_in_checks(
        source, '(("values", angles_values),)', '(("values", angles_values), ("always", lambda out: None))'
    )
    report = run(source)
    (finding,) = only(report, "blank-above-zero")
    assert finding.place == "positions.ipynb, cell check_rotation_angles"
    assert "earns 0.5 / 1" in finding.message and "always" in finding.message
    assert report.points["blank"]["check_rotation_angles"] == (0.5,) * SEEDS


def test_a_grade_id_in_the_notebook_and_not_in_checks_py(source):
    edit_cell(source, "check_rotate", lambda cell: cell["metadata"]["nbgrader"].update(grade_id="check_rotation"))
    report = run(source, seeds=1)
    (finding,) = only(report, "id-not-in-checks")
    assert finding.place == "positions.ipynb, cell check_rotation"
    assert "'check_rotate'" in finding.message  # the closest id there
    (other,) = only(report, "id-not-in-notebook")
    assert other.place.endswith("checks.py:" + str(line_of(source, '"check_rotate"')))


def test_a_grade_id_in_checks_py_and_not_in_the_notebook(source):
    replace_in_checks(
        source,
        'Check("check_rotation_angles", "rotation_angles", 1',
        'Check("check_rotation_angle", "rotation_angles", 1',
    )
    report = run(source, seeds=1)
    (finding,) = only(report, "id-not-in-notebook")
    line = line_of(source, '"check_rotation_angle"')
    assert finding.place == f"{source / 'positions' / 'checks.py'}:{line}"
    assert "'check_rotation_angle'" in finding.message and "'check_rotation_angles'" in finding.message
    assert only(report, "id-not-in-checks")[0].place == "positions.ipynb, cell check_rotation_angles"


def test_points_that_differ(source):
    edit_cell(source, "check_rotate", lambda cell: cell["metadata"]["nbgrader"].update(points=3))
    report = run(source, seeds=1)
    (finding,) = only(report, "points-differ")
    assert finding.place == "positions.ipynb, cell check_rotate"
    assert "3 points" in finding.message and "checks.py 2" in finding.message


def test_code_in_a_hidden_tests_block(source):
    replace_in_cell(
        source,
        "check_rotate",
        "# graded outside this kernel: checks.py, check_rotate",
        "# graded outside this kernel: checks.py, check_rotate\nassert rotate(x).shape == x.shape",
    )
    report = run(source, seeds=1)
    (finding,) = only(report, "hidden-test-code")
    assert finding.place == "positions.ipynb, cell check_rotate, line 9"
    assert "assert rotate(x).shape == x.shape" in finding.message


def test_check_code_that_raises_on_the_reference(source):
    checks = replace_in_checks(
        source,
        "    first, shifted = (scalar(",
        "    first = undefined_name\n    first, shifted = (scalar(",
    )
    report = run(source, seeds=1)
    (finding,) = only(report, "check-raises")
    assert finding.place == f"{checks}:{line_of(source, 'undefined_name')}"
    assert "NameError" in finding.message and "check_rotated_score" in finding.message
    assert only(report, "solution-below-full")[0].place == "positions.ipynb, cell check_rotated_score"


def test_calls_that_raise(source):
    checks = replace_in_checks(source, "    query, key = rng.normal(size=8), rng.normal(size=8)\n", "    1 / 0\n")
    report = run(source, seeds=1)
    (finding,) = only(report, "check-raises")
    assert finding.place == f"{checks}:{line_of(source, '1 / 0')}"
    assert "check_rotated_score's calls(rng) raises ZeroDivisionError" in finding.message
    assert "check_rotated_score" not in report.points["solution"]  # not graded; the others are
    assert report.points["solution"]["check_rotate"] == (2.0,)


def test_a_solution_left_in_the_release(source):
    release = source.parent / "release" / "positions"
    release.mkdir(parents=True)
    shutil.copy(notebook_path(source), release / "positions.ipynb")  # the source notebook, not a release
    report = run(source, seeds=1, blank=False)
    found = only(report, "release-holds-solution")
    assert all(finding.place.startswith(str(release / "positions.ipynb")) for finding in found)
    assert any("cell rotate, line" in finding.place and "return np.concatenate" in finding.message for finding in found)


def test_the_solutions_lines_renamed_and_reindented_in_a_release_file_are_found(source):
    release = source.parent / "release" / "positions"
    release.mkdir(parents=True)
    (release / "helpers.py").write_text(  # rotate's answer, its names changed, spaced and indented otherwise
        "import numpy as np\n\n"
        "class Turner:\n"
        "  def turn(self, v, cos_, sin_):\n"
        "      a, b = v[..., :2], v[..., 2:]\n"
        "      return np.concatenate( [a*cos_ - b*sin_,  a*sin_ + b*cos_], axis = -1 )  # a comment\n"
        "\n"
        "def unrelated(x):\n"
        "    return np.concatenate([x * 2.0 - x, x], axis=0)\n"
    )
    report = run(source, seeds=1, blank=False)
    (finding,) = only(report, "release-holds-reference")
    assert finding.place == f"{release / 'helpers.py'}, line 6"
    assert "a statement of rotate's answer, 'return np.concatenate([first * cos - second * sin" in finding.message


def test_a_demo_the_source_notebook_shows_is_no_copy_of_the_answer(source):
    """A statement the source notebook shows outside its answers is meant to be released (a demo's own)."""
    release = source.parent / "release" / "positions"
    release.mkdir(parents=True)
    solved = "positions = max(m, n) + 1"
    (release / "demo.py").write_text(f"m, n = 3, 5\n{solved}\n")
    assert only(run(source, seeds=1, blank=False), "release-holds-reference")[0].place.endswith("demo.py, line 2")
    path = notebook_path(source)
    notebook = json.loads(path.read_text())
    demo = {
        "cell_type": "code",
        "metadata": {},
        "source": f"m, n = 1, 2\n{solved}\n",
        "outputs": [],
        "execution_count": None,
    }
    notebook["cells"].append(demo)
    path.write_text(json.dumps(notebook, indent=1))
    report = run(source, seeds=1, blank=False)
    assert "release-holds-reference" not in report.kinds, report.text()


def test_a_hidden_check_left_in_the_release(source):
    release = source.parent / "release" / "positions"
    release.mkdir(parents=True)
    shutil.copy(source / "positions" / "checks.py", release / "checks.py")
    report = run(source, seeds=1, blank=False)
    (finding,) = only(report, "release-holds-hidden")
    assert finding.place == str(release / "checks.py")


def test_solution_markers_in_a_cell_that_is_no_answer_stop_the_release(source):
    replace_in_cell(
        source,
        "setup",
        "import numpy as np",
        "import numpy as np\n### BEGIN SOLUTION\nfrequencies_for_all = 10000.0 ** -np.arange(4)\n### END SOLUTION",
    )
    report = run(source, seeds=1, blank=False)
    (finding,) = only(report, "release-cannot-be-made")
    assert "non-solution cell" in finding.message


def test_a_check_whose_points_change_with_the_seed(source):
    replace_in_checks(
        source,
        '(("values", angles_values),)',
        '(("values", angles_values), ("odd", lambda out: "odd" if out.calls[0].args[0] % 2 else None))',
    )
    report = run(source, seeds=4)
    (finding,) = [f for f in only(report, "seed-dependent") if "solution" in f.message]
    assert finding.place == "positions.ipynb, cell check_rotation_angles"
    assert len(set(report.points["solution"]["check_rotation_angles"])) == 2


def test_wrong_versions_lose_the_points_they_say(source, tmp_path):
    replace_in_checks(  # beside the one checks.py names, 'turns the wrong way' (check_rotate: 1)
        source,
        "WRONG_VERSIONS = {",
        "WRONG_VERSIONS = {\n"
        f"    'said to lose the angles': {{'answers': {{'rotate': {WRONG_ROTATE!r}}},"
        " 'loses': {'check_rotation_angles': 1}},",
    )
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    notebook = json.loads(notebook_path(source).read_text())
    notebook["metadata"]["autograder"] = {"loses": {"check_rotate": 2}}
    for cell in notebook["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == "rotate":
            cell["source"] = WRONG_ROTATE
    (wrong / "claims_too_much.ipynb").write_text(json.dumps(notebook))
    report = run(source, seeds=2, blank=False, wrong=wrong)
    assert report.points["turns the wrong way"]["check_rotate"] == (1.0, 1.0)
    found = only(report, "wrong-version-points")
    assert sorted(finding.place for finding in found) == [
        "wrong version 'claims_too_much', cell check_rotate",
        "wrong version 'said to lose the angles', cell check_rotate",
        "wrong version 'said to lose the angles', cell check_rotation_angles",
    ]
    assert not [f for f in found if "'turns the wrong way'" in f.place]
    (claimed,) = [finding for finding in found if "claims_too_much" in finding.place]
    assert "it loses 1 point on check_rotate, where it should lose 2 points" in claimed.message
    header = report.table().splitlines()[0]
    assert "turns the wrong way" in header and "claims_too_much" in header and "blank" not in header


def test_a_judge_that_raises_leaves_the_wrong_versions_unjudged_on_its_check_only(source):
    # rotate's shape judge raises: the solution earns 1 of check_rotate's 2, and 'turns the wrong way' lost 2 there
    # against its claimed 1, a wrong-version-points of the same cause; on another check a wrong claim is still found
    checks = replace_in_checks(
        source,
        "        if out.value(number).shape != call.args[0].shape:",
        "        if out.value(number).shape != undefined_shape:",
    )
    replace_in_checks(
        source,
        "WRONG_VERSIONS = {",
        "WRONG_VERSIONS = {\n"
        f"    'said to lose the angles': {{'answers': {{'rotate': {WRONG_ROTATE!r}}},"
        " 'loses': {'check_rotation_angles': 1}},",
    )
    report = run(source, seeds=2, blank=False)
    assert sorted(report.kinds) == ["check-raises", "solution-below-full", "wrong-version-points"], report.text()
    assert only(report, "check-raises")[0].place == f"{checks}:{line_of(source, 'undefined_shape')}"
    (claimed,) = only(report, "wrong-version-points")
    assert claimed.place == "wrong version 'said to lose the angles', cell check_rotation_angles"
    assert report.points["turns the wrong way"]["check_rotate"] == (0.0, 0.0)  # graded, not judged there
    assert report.notes == [
        "the wrong versions were not judged on check_rotate (check-raises): what they lose there follows from the "
        "finding(s) named; correct those, then validate again"
    ]
    assert report.text().count("not judged") == 1


def test_a_check_id_that_differs_leaves_the_wrong_versions_unjudged_on_both_ids(source, capsys):
    # checks.py renames check_rotate, its WRONG_VERSIONS keep the cell's id: 'turns the wrong way' loses 1 on
    # check_rotat (where it says nothing) and names check_rotate (no check): both follow from the ids
    replace_in_checks(source, 'Check("check_rotate", "rotate", 2', 'Check("check_rotat", "rotate", 2')
    report = run(source, seeds=1, blank=False)
    assert sorted(report.kinds) == ["id-not-in-checks", "id-not-in-notebook"], report.text()
    assert report.notes == [
        "the wrong versions were not judged on check_rotate (id-not-in-checks), check_rotat (id-not-in-notebook): "
        "what they lose there follows from the finding(s) named; correct those, then validate again"
    ]
    assert validate.main(["--source", str(source), "--assignment", "positions", "--seeds", "1"]) == 1
    printed = capsys.readouterr().out
    assert "wrong-version" not in printed
    assert printed.splitlines()[-1] == f"positions: {report.notes[0]}"


def test_a_wrong_version_of_no_graded_function(source):
    replace_in_checks(
        source,
        "WRONG_VERSIONS = {",
        "WRONG_VERSIONS = {'typo': {'answers': {'rotat': 'def rotat(x):\\n    return x'}},",
    )
    report = run(source, seeds=1, blank=False)
    (finding,) = only(report, "wrong-version-invalid")
    assert finding.place == f"{source / 'positions' / 'checks.py'}:{line_of(source, 'WRONG_VERSIONS')}"
    assert "rotat" in finding.message


# --- an instructor's error is the instructor's: the class run stops before grading -----------------------------


def class_run(source: Path, tmp_path: Path):
    submissions = tmp_path / "submissions" / "ada" / "positions"
    submissions.mkdir(parents=True)
    shutil.copy(notebook_path(source), submissions / "positions.ipynb")
    options = CourseOptions(
        course=tmp_path / "course",
        submissions=tmp_path / "submissions",
        source=source,
        assignment="positions",
        progress=False,
    )
    with pytest.raises(PipelineError) as stopped:
        grade_course(options)
    assert not (tmp_path / "course").exists()  # nothing made, no student graded
    return str(stopped.value)


def test_a_check_that_raises_on_the_reference_stops_a_class_run(source, tmp_path):
    checks = replace_in_checks(
        source, "    first, shifted = (scalar(", "    first = undefined_name\n    first, shifted = (scalar("
    )
    message = class_run(source, tmp_path)
    assert "no student was graded" in message
    assert f"[check-raises] {checks}:{line_of(source, 'undefined_name')}" in message
    assert "python -m autograder.validate" in message


def test_points_or_ids_that_differ_stop_a_class_run(source, tmp_path):
    edit_cell(source, "check_rotate", lambda cell: cell["metadata"]["nbgrader"].update(points=3))
    edit_cell(
        source,
        "check_rotation_angles",
        lambda cell: cell["metadata"]["nbgrader"].update(grade_id="check_angles"),
    )
    message = class_run(source, tmp_path)
    assert "[points-differ] positions.ipynb, cell check_rotate" in message
    assert "[id-not-in-checks] positions.ipynb, cell check_angles" in message
    assert "[id-not-in-notebook]" in message


def line_of(source: Path, text: str) -> int:
    lines = (source / "positions" / "checks.py").read_text().splitlines()
    return next(number for number, line in enumerate(lines, start=1) if text in line)


# --- the simple tier's assignment, a checks.py that cannot load, named mistakes ----------------------------------

LAYER_NORM = REPOSITORY / "tests" / "assignments" / "layer_norm"


def test_the_layer_norm_assignment_is_clean_and_its_wrong_versions_lose_what_they_say():
    report = validate_assignment(source=LAYER_NORM.parent, assignment="layer_norm", seeds=SEEDS)
    assert report.ok, report.text()
    points = {"check_layer_norm": 3.0, "check_residual_block": 2.0, "check_rms_norm": 2.0}
    assert report.points["solution"] == {check_id: (top,) * SEEDS for check_id, top in points.items()}
    assert report.points["blank"] == {check_id: (0.0,) * SEEDS for check_id in points}
    earned = {  # what each wrong version checks.py names earns: full points but for the checks it says it loses
        "forgets eps": {"check_layer_norm": 2.0, "check_rms_norm": 1.0},
        "variance over axis 0 as batch norm does": {"check_layer_norm": 0.0},
        "residual_block returns f(x) without adding x": {"check_residual_block": 1.0},  # it keeps x's shape
    }
    assert set(report.points) == {"solution", "blank", *earned}
    for name, losses in earned.items():
        assert report.points[name] == {
            check_id: (losses.get(check_id, top),) * SEEDS for check_id, top in points.items()
        }


def test_a_wrong_version_that_claims_a_loss_it_does_not_get_fails_validate(layer_norm_source, capsys):
    path = layer_norm_source / "layer_norm" / "checks.py"
    text = path.read_text()
    claimed = '"loses": {"check_residual_block": 1}'
    assert claimed in text
    path.write_text(text.replace(claimed, '"loses": {"check_residual_block": 2, "check_rms_norm": 1}'))
    report = validate_assignment(source=layer_norm_source, assignment="layer_norm", seeds=2)
    assert report.kinds == ["wrong-version-points", "wrong-version-points"], report.text()
    name = "wrong version 'residual_block returns f(x) without adding x'"
    short, unseen = sorted(report.findings, key=lambda finding: finding.place)
    assert short.place == f"{name}, cell check_residual_block"
    assert "it loses 1 point on check_residual_block, where it should lose 2 points" in short.message
    assert unseen.place == f"{name}, cell check_rms_norm"
    assert "it loses 0 points on check_rms_norm, where it should lose 1 point" in unseen.message
    assert validate.main(["--source", str(layer_norm_source), "--assignment", "layer_norm", "--seeds", "1"]) == 1
    printed = capsys.readouterr().out
    assert f"[wrong-version-points] {name}, cell check_residual_block: it loses 1 point on" in printed
    assert "layer_norm: no authoring mistake found" not in printed


@pytest.fixture
def layer_norm_source(tmp_path) -> Path:
    shutil.copytree(LAYER_NORM, tmp_path / "source" / "layer_norm")
    return tmp_path / "source"


def test_a_named_mistake_no_draw_shows_and_one_that_raises(layer_norm_source):
    path = layer_norm_source / "layer_norm" / "checks.py"
    text = path.read_text()
    mistakes = """RMS_NORM_MISTAKES = {
    "multiplies by gain twice": lambda x, gain, eps: ref.rms_norm(x, gain, eps),
    "a typo": lambda x, gain, eps: x / undefined_name,
"""
    path.write_text(text.replace("RMS_NORM_MISTAKES = {\n", mistakes))
    report = validate_assignment(source=layer_norm_source, assignment="layer_norm", seeds=2)
    assert sorted(report.kinds) == ["mistake-not-seen", "mistake-raises"], report.text()
    unseen, raising = only(report, "mistake-not-seen")[0], only(report, "mistake-raises")[0]
    assert "'multiplies by gain twice' returns what the reference returns on every input" in unseen.message
    assert unseen.place.startswith(f"{path}:")
    assert raising.place == f"{path}:{line_of_file(path, 'undefined_name')}"
    assert "NameError: name 'undefined_name' is not defined" in raising.message
    assert report.points["solution"]["check_rms_norm"] == (2.0, 2.0)  # a broken mistake never costs a student


def test_two_mistakes_whose_ids_collide(layer_norm_source):
    # axis 0 and axis 1 differ only by a number, which ids leave out: both would be the-variance-is-taken-over-axis-
    # as-batch, one mistake in the report. "ignores eps" in layer_norm and rms_norm (the same words, each its own
    # fix) is one mistake on purpose and is not reported.
    path = layer_norm_source / "layer_norm" / "checks.py"
    added = "the variance is taken over axis 1 (as batch norm does): use axis=-1"
    last = "ref.layer_norm(x, bias, gain, eps),\n"  # the end of LAYER_NORM_MISTAKES' last entry
    text = path.read_text()
    assert last in text
    axis_1 = "lambda x, gain, bias, eps: normed(x, eps, axis=1) * gain + bias"
    path.write_text(text.replace(last, f"{last}    {added!r}: {axis_1},\n"))
    report = validate_assignment(source=layer_norm_source, assignment="layer_norm", seeds=1, blank=False)
    (finding,) = only(report, "mistake-ids-collide")
    assert finding.place == f"{path}:{line_of_file(path, 'axis 1 (as batch')}"
    batch = "the variance is taken over axis 0 (as batch norm does): normalise each row over its features, axis=-1"
    assert f"{batch[:60]!r} (check_layer_norm)" in finding.message
    assert f"{added[:60]!r} (check_layer_norm)" in finding.message
    assert "both get the id 'the-variance-is-taken-over-axis-as-batch'" in finding.message
    assert "ignores-eps" not in report.text()


def line_of_file(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), start=1) if text in line)


def test_checks_py_that_cannot_be_imported_is_named_with_its_line(source, capsys):
    path = replace_in_checks(source, "WINDOW = 160", "WINDOW = 160 +")
    report = run(source)
    assert report.kinds == ["checks-cannot-load"]
    assert report.findings[0].place == f"{path}:{line_of_file(path, 'WINDOW = 160 +')}"
    assert "SyntaxError" in report.findings[0].message
    replace_in_checks(source, "WINDOW = 160 +", "WINDOW = undefined_window")
    report = run(source)
    assert report.kinds == ["checks-cannot-load"]
    assert report.findings[0].place == f"{path}:{line_of_file(path, 'undefined_window')}"
    assert report.notes == ["the wrong versions were not tried: checks.py cannot be imported"]
    assert validate.main(["--source", str(source), "--assignment", "positions"]) == 1
    printed = capsys.readouterr()
    assert "positions: nothing graded" in printed.out and "[checks-cannot-load]" in printed.out
    assert "Traceback" not in printed.out + printed.err
    with pytest.raises(validate.AuthoringError, match=r"\[checks-cannot-load\] .*checks.py:\d+: importing"):
        validate.check_before_grading(source / "positions")  # a class run stops before anyone is graded


def test_isolate_without_stand_in_is_the_instructor_s_mistake_at_its_line(source):
    # Without stand_in every isolated call was refused as if the student's ("not computed for you"): the solution
    # lost the points of rotated_score, with no word of the cause.
    path = replace_in_checks(source, "def stand_in(graded: str, name: str):", "def grader_rotary(graded, name):")
    report = run(source)
    assert report.kinds == ["checks-cannot-load"]
    assert report.findings[0].place == f"{path}:{line_of_file(path, 'ISOLATE = ')}"
    assert "names ISOLATE but defines no function stand_in(graded, name)" in report.findings[0].message
    with pytest.raises(validate.AuthoringError, match=r"\[checks-cannot-load\] .*checks.py:\d+: importing"):
        validate.check_before_grading(source / "positions")


def test_a_place_left_to_fill_in_stops_a_class_run_before_anyone_is_graded(source, tmp_path):
    replace_in_cell(source, "rotate_task", "Pair *i*", "TO FILL IN: how the pairs are made. Pair *i*")
    with pytest.raises(validate.AuthoringError, match=r"\[to-fill-in\] positions.ipynb, cell rotate_task, line 3"):
        validate.check_before_grading(source / "positions")


def test_the_reference_left_in_the_release_is_found(layer_norm_source):
    release = layer_norm_source.parent / "release" / "layer_norm"
    release.mkdir(parents=True)
    shutil.copy(layer_norm_source / "layer_norm" / "reference.py", release / "answers.py")
    report = validate_assignment(source=layer_norm_source, assignment="layer_norm", seeds=1, blank=False)
    (finding,) = only(report, "release-holds-hidden")
    assert finding.place == str(release / "answers.py")
    assert "reference.py (the answer key)" in finding.message


# --- the instructor's own mistakes, named as such (issue 33) -------------------------------------------------------

RMS_RETURN = "    return x / np.sqrt((x**2).mean(axis=-1, keepdims=True) + eps) * gain\n"
WRONG_REFERENCES = {  # kind: the reference's rms_norm body as an instructor got it wrong
    "reference-raises": "    raise RuntimeError('not written yet')\n",
    "reference-nan": "    return x / np.sqrt((x**2).mean(axis=-1, keepdims=True) - 100.0) * gain\n",
    "reference-random": RMS_RETURN.replace("* gain", "* gain + np.random.normal(0.0, 1e-3)"),
    "reference-float32": "    x = np.asarray(x, dtype=np.float32)\n" + RMS_RETURN,
}


@pytest.mark.parametrize("kind", WRONG_REFERENCES)
def test_a_wrong_reference_is_named_at_reference_py_and_not_blamed_on_the_solution(layer_norm_source, kind):
    path = layer_norm_source / "layer_norm" / "reference.py"
    text = path.read_text()
    assert RMS_RETURN in text
    path.write_text(text.replace(RMS_RETURN, WRONG_REFERENCES[kind]))
    report = validate_assignment(source=layer_norm_source, assignment="layer_norm", seeds=2, visible=False)
    found = only(report, kind)
    assert len(found) == 1 and found[0].place == f"{path}:{line_of_file(path, 'def rms_norm')}", report.text()
    assert "the reference rms_norm" in found[0].message and "correct reference.py" in found[0].message
    assert not [f for f in report.findings if f.kind.startswith("reference-") and "layer_norm" in f.message]
    for below in (f for f in report.findings if f.kind == "solution-below-full"):
        assert f"it follows from the {kind} finding on check_rms_norm" in below.message  # not the solution's fault
    with pytest.raises(validate.AuthoringError, match=kind):  # a class run stops before any student is graded
        validate.check_before_grading(layer_norm_source / "layer_norm")


def test_a_misspelt_marker_is_found_with_its_cell_and_line(layer_norm_source):
    path = layer_norm_source / "layer_norm" / "layer_norm.ipynb"
    notebook = json.loads(path.read_text())
    cell = next(c for c in notebook["cells"] if "### BEGIN HIDDEN TESTS\n" in c["source"])
    cell["source"] = [line.replace("### BEGIN HIDDEN TESTS", "### BEGIN HIDDEN TEST") for line in cell["source"]]
    path.write_text(json.dumps(notebook, indent=1))
    report = validate_assignment(
        source=layer_norm_source, assignment="layer_norm", seeds=1, visible=False, check_release=False, blank=False
    )
    (found,) = only(report, "marker-unknown")
    number = next(n for n, line in enumerate("".join(cell["source"]).splitlines(), 1) if "HIDDEN TEST" in line)
    assert found.place == f"layer_norm.ipynb, cell {cell['metadata']['nbgrader']['grade_id']}, line {number}"
    assert "'### BEGIN HIDDEN TEST' is no marker nbgrader knows (the closest there: '### BEGIN HIDDEN TESTS')" in (
        found.message
    )


def test_a_mistake_shadowed_by_an_earlier_one_and_one_that_raises_on_some_inputs_only(layer_norm_source):
    path = layer_norm_source / "layer_norm" / "checks.py"
    text = path.read_text()
    mistakes = """RMS_NORM_MISTAKES = {
    "subtracts the row's mean first: that is layer norm": lambda x, gain, eps: ref.layer_norm(x, gain, 0.0, eps),
    "only on a matrix, where it divides by the sum": (
        lambda x, gain, eps: normed(x[np.newaxis] if x.ndim == 2 else undefined_name, eps, centre=False) * gain
    ),
"""
    path.write_text(text.replace("RMS_NORM_MISTAKES = {\n", mistakes))
    report = validate_assignment(source=layer_norm_source, assignment="layer_norm", seeds=2, visible=False)
    (shadowed,) = only(report, "mistake-shadowed")
    assert "'subtracts the mean (that is layer norm)" in shadowed.message
    assert "returns what the earlier \"subtracts the row's mean first" in shadowed.message
    assert "mistake-raises" not in report.kinds, report.text()  # it raises on 3-d inputs only: named on the others
