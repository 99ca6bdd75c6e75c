"""A second assignment through the same commands into the same gradebook: the engine names no assignment.

source/positions/ is the course's second assignment (three functions on rotary positions, its own hidden checks in
checks.py), beside source/attention/ in the one source folder. Beside the graded attention class (a copy of the
session's course folder), the course's grade_course (what `python -m autograder.course` runs: the submissions hold
positions only, so positions is graded) releases it, grades three students and a few hostile ones adapted from
tests/hostile.py (probes that read the hidden checks and the gradebook, patched NumPy, lib's reference, a forged
message on the grader's pipe) and exports: one gradebook then holds both assignments, and both exports list both.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import nbformat
import numpy as np
import pytest
from conftest import grade_folder
from hostile import FORGES_STEPS, PATCHES
from nbgrader.api import Gradebook

from autograder import assignments, sandbox, validate
from autograder.checks import Compared
from autograder.course.run import release_notebook
from autograder.course.table import show
from autograder.hub.launch import course_assignments
from lib import transformer

REPOSITORY = Path(__file__).resolve().parents[2]
ASSIGNMENTS = REPOSITORY / "source"
FULL = {"check_rotation_angles": 1.0, "check_rotate": 2.0, "check_rotated_score": 2.0}
POINTS = {  # by hand: interleaved pairs fail both of rotate's kinds of input; rotated_score is graded with lib's rotate
    "rotary_right": FULL,
    "pairs_interleaved": {"check_rotation_angles": 1.0, "check_rotate": 0.0, "check_rotated_score": 2.0},
    "rotary_blank": {"check_rotation_angles": 0.0, "check_rotate": 0.0, "check_rotated_score": 0.0},
}
HOSTILE = {  # by hand: what each hostile notebook earns (rotated_score is graded with lib's rotate, whatever rotate is)
    "rotary_reads_secrets": FULL,  # nothing is read, so rotate stays right
    "rotary_patches_numpy": dict(
        FULL, check_rotate=0.0
    ),  # rotate returns its input; patched comparisons change nothing
    "rotary_calls_lib": dict(FULL, check_rotate=0.0),  # lib is not where rotate is graded
    "rotary_forges_pipe": dict.fromkeys(FULL, 0.0),  # a forged message ends the grading of every answer
}
SANDBOXED = sandbox.bubblewrap() is not None  # hostile notebooks are graded only inside the sandbox
INTERLEAVED = (
    "np.concatenate([first * cos - second * sin, first * sin + second * cos], axis=-1)",
    "np.stack([x[..., 0::2] * cos - x[..., 1::2] * sin, x[..., 0::2] * sin + x[..., 1::2] * cos], "
    "axis=-1).reshape(x.shape)",
)


def submission(kind: str, release: dict) -> dict:
    """A student's notebook: the release with the solution typed in (or a mistake), or the release untouched."""
    if kind in HOSTILE:
        return hostile(kind, submission("rotary_right", release))
    source = json.loads((ASSIGNMENTS / "positions" / "positions.ipynb").read_text())
    if kind == "rotary_blank":
        return release
    notebook = json.loads(json.dumps(release))
    solutions = {
        cell["id"]: "".join(cell["source"]) for cell in source["cells"] if cell["metadata"]["nbgrader"]["solution"]
    }
    for cell in notebook["cells"]:
        if cell["id"] in solutions:
            text = "\n".join(line for line in solutions[cell["id"]].splitlines() if "### " not in line)
            cell["source"] = text.replace(*INTERLEAVED) if kind == "pairs_interleaved" else text
    return notebook


def append_to(notebook: dict, grade_id: str, code: str) -> dict:
    """The notebook with ``code`` added at the end of the answer cell ``grade_id`` (it runs in the kernel and in the
    hidden checks' runner)."""
    (cell,) = [c for c in notebook["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id]
    cell["source"] = "".join(cell["source"]).rstrip("\n") + "\n\n" + code
    return notebook


def secrets(course: Path) -> list[str]:
    """What a student's code must never read: the hidden checks, the solution, the gradebook, another's work."""
    return [
        str(REPOSITORY / "source" / "positions" / "checks.py"),
        str(REPOSITORY / "source" / "positions" / "positions.ipynb"),
        str(REPOSITORY / ".git" / "HEAD"),
        str(course / "gradebook.db"),
        str(course / "submitted" / "rotary_right" / "positions" / "positions.ipynb"),
        "/etc/shadow",
    ]


def hostile(kind: str, right: dict) -> dict:
    """rotary_right's notebook with one of tests/hostile.py's attacks, adapted to positions."""
    if kind == "rotary_reads_secrets":  # rotate is made wrong when anything is read
        probe = (
            f"_LEAKS = []\nfor _path in {secrets(Path(COURSE[0]))!r}:\n    try:\n        open(_path, 'rb').read(16)\n"
            "        _LEAKS.append(_path)\n        print('RE' + 'AD', _path)\n    except Exception as _error:\n"
            "        print('BLOCKED', type(_error).__name__)\n_right_rotate = rotate\n\n\n"
            "def rotate(x, base=10000.0):\n    return _right_rotate(x, base) * (2.0 if _LEAKS else 1.0)\n"
        )
        return append_to(right, "rotate", probe)
    if kind == "rotary_patches_numpy":
        return append_to(right, "rotate", PATCHES + "\n\ndef rotate(x, base=10000.0):\n    return x\n")
    if kind == "rotary_calls_lib":
        lib = "def rotate(x, base=10000.0):\n    from lib.transformer import rotary\n\n    return rotary(x, base)\n"
        return append_to(right, "rotate", lib)
    return append_to(right, "rotation_angles", FORGES_STEPS)


COURSE = [""]  # the course folder being graded, which the probes aim at


@pytest.fixture(scope="session")  # not "module": a worker that ran another module's test between two of these
def both(graded_class, tmp_path_factory):  # tore it down and graded positions again (about 150 s, twice in a run)
    """The session's graded attention course, copied, with the positions assignment graded into it: the submissions
    hold positions only, so the run grades positions without being told."""
    root = tmp_path_factory.mktemp("second")
    course = root / "course"
    COURSE[0] = str(course)
    shutil.copytree(graded_class.course, course, symlinks=True)
    release = json.loads(release_notebook(ASSIGNMENTS / "positions", root / "release"))
    submissions = root / "submissions"
    for student in [*POINTS, *(HOSTILE if SANDBOXED else ())]:
        folder = submissions / student / "positions"
        folder.mkdir(parents=True)
        (folder / "positions.ipynb").write_text(json.dumps(submission(student, release)))
    run = grade_folder(course, submissions, source=ASSIGNMENTS)
    assert run.layout.name == "positions"
    return course, graded_class, show(run.table)


def test_one_gradebook_holds_both_assignments(both):
    course, graded_class, _ = both
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        assert sorted(a.name for a in gradebook.assignments) == ["attention", "positions"]
        for student, points in POINTS.items():
            for grade_id, want in points.items():
                assert gradebook.find_grade(grade_id, "positions", "positions", student).auto_score == want, (
                    student,
                    grade_id,
                )
        full = gradebook.find_submission("attention", "full_solution")
        assert full.score == 29.0  # the attention class is as it was
        assert len(gradebook.find_assignment("attention").submissions) == len(graded_class.students)


def test_both_exports_list_both_assignments(both):
    course, _, _ = both
    grades = list(csv.DictReader(open(course / "grades.csv")))
    assert {row["assignment"] for row in grades} == {"attention", "positions"}
    positions = {row["student_id"]: float(row["raw_score"]) for row in grades if row["assignment"] == "positions"}
    assert {student: positions[student] for student in POINTS} == {
        student: sum(points.values()) for student, points in POINTS.items()
    }
    assert set(positions.values()) <= {0.0, 3.0, 5.0}  # nbgrader lists every student; the others have no work
    checks = [row for row in csv.DictReader(open(course / "checks.csv")) if row["assignment"] == "positions"]
    checks = [row for row in checks if row["student_id"] in POINTS]  # ChecksExport lists every student too
    assert {(row["student_id"], row["grade_id"]): float(row["score"]) for row in checks} == {
        (student, grade_id): want for student, points in POINTS.items() for grade_id, want in points.items()
    }


def test_the_release_holds_no_checks_and_the_feedback_names_the_mistake(both):
    course, _, table = both
    assert sorted(path.name for path in (course / "release" / "positions").iterdir()) == [
        "positions.ipynb",
        "visible_checks.json",
    ]
    page = (course / "feedback" / "pairs_interleaved" / "positions" / "positions.html").read_text()
    assert "the pairs are interleaved" in page
    assert (course / "reports" / "positions.html").exists()
    assert "pairs_interleaved" in table and "rotate" in table


@pytest.mark.skipif(not SANDBOXED, reason=f"bubblewrap is not available ({sandbox.INSTALL}): no hostile notebook")
def test_hostile_positions_notebooks_earn_what_they_should_and_reach_nothing(both):
    course = both[0]
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        earned = {
            student: {
                grade_id: gradebook.find_grade(grade_id, "positions", "positions", student).auto_score
                for grade_id in FULL
            }
            for student in HOSTILE
        }
    assert earned == HOSTILE
    feedback = {
        student: (course / "feedback" / student / "positions" / "positions.html").read_text() for student in HOSTILE
    }
    assert "lib is not available where your functions are graded" in feedback["rotary_calls_lib"]
    assert "sent the grader a message it did not expect" in feedback["rotary_forges_pipe"]
    probed = nbformat.read(course / "autograded" / "rotary_reads_secrets" / "positions" / "positions.ipynb", 4)
    outputs = json.dumps([cell.get("outputs", []) for cell in probed.cells])
    assert "BLOCKED" in outputs and "READ /" not in outputs  # the kernel read nothing either


# --- the assignment itself, without a class --------------------------------------------------------------------------


def test_the_course_offers_both_assignments_and_releases_positions_as_committed(tmp_path):
    assert (
        assignments.names(ASSIGNMENTS) == course_assignments(ASSIGNMENTS) == ["attention", "positions"]
    )  # the hub too
    fresh = release_notebook(ASSIGNMENTS / "positions", tmp_path)
    assert fresh == (REPOSITORY / "release" / "positions" / "positions.ipynb").read_bytes(), (
        "release/positions/positions.ipynb is stale: run `.venv/bin/nbgrader generate_assignment positions --force` "
        "from the repository root and commit release/"
    )
    assert sorted(path.name for path in (REPOSITORY / "release" / "positions").iterdir()) == [
        "positions.ipynb",
        "visible_checks.json",
    ]
    text = fresh.decode()
    assert "BEGIN SOLUTION" not in text and "HIDDEN TESTS" not in text and "autograder" not in text


def test_the_reference_turns_as_the_store_s_model_does():
    """positions' reference (source/positions/reference.py, written on its own) turns vectors exactly as the store's
    model does: the first layer's attention patterns that lib.transformer.forward returns (its rotary positions are
    fused inside its attention, the wheel holding no rotate of its own) are recomputed from the weights with the
    reference's rotate, on texts of 12 to 160 tokens. Past the window and with another base, rotate turns each pair
    of numbers by the reference's own angles."""
    ref = assignments.reference(ASSIGNMENTS / "positions")
    weights, _, manifest = transformer.load()
    settings = manifest["settings"]
    heads, base = settings["heads"], settings["rotary_base"]
    rng = np.random.default_rng(7)
    for positions in (12, 77, settings["longest"]):
        ids = rng.integers(3, len(weights["embedding"]), size=positions)
        x = weights["embedding"][ids]
        normed = transformer.layer_norm(
            x, weights["layers.0.norm1.weight"], weights["layers.0.norm1.bias"], settings["norm_eps"]
        )
        split = [
            (normed @ weights[f"layers.0.{m}"]).reshape(positions, heads, -1).swapaxes(0, 1) for m in ("query", "key")
        ]
        queries, keys = (ref.rotate(part, base) for part in split)  # (heads, T, d)
        scores = queries @ keys.swapaxes(-1, -2) / np.sqrt(queries.shape[-1])
        scores = np.where(np.tril(np.ones((positions, positions), dtype=bool)), scores, -np.inf)
        pattern = np.exp(scores - scores.max(-1, keepdims=True))
        pattern /= pattern.sum(-1, keepdims=True)
        assert np.allclose(pattern, transformer.forward(ids, keep=True)[1][0], rtol=0, atol=1e-12)
    for shape, other in (((7, 8), 10000.0), ((2, 200, 6), 100.0), ((3, 5, 32), 10000.0)):
        angles = ref.rotation_angles(shape[-2], shape[-1], other)
        for pair in range(shape[-1] // 2):
            unit = np.zeros(shape[-2:])
            unit[:, pair] = 1.0
            turned = ref.rotate(unit, other)
            assert np.allclose(turned[:, pair], np.cos(angles[:, pair]), rtol=0, atol=1e-12)
            assert np.allclose(turned[:, shape[-1] // 2 + pair], np.sin(angles[:, pair]), rtol=0, atol=1e-12)
    query, key = rng.normal(size=(2, 8))
    assert np.isclose(ref.rotated_score(query, key, 9, 4), ref.rotated_score(query, key, 105, 100), rtol=0, atol=1e-9)


def test_validate_finds_no_authoring_mistake_in_positions(capsys):
    """The solution earns 5 on every seed, the blank 0, and each wrong version checks.py names loses what it says."""
    assert validate.main(["--source", str(ASSIGNMENTS), "--assignment", "positions", "--seeds", "2"]) == 0
    printed = capsys.readouterr().out
    assert "positions: no authoring mistake found" in printed
    assert printed.splitlines()[-3].split() == ["total", "5", "5", "0", "3", "4.5"]


# --- an assignment's checks as a package (checks/) --------------------------------------------------------------

PACKAGE_INIT = """from autograder.checks import Call, Check

from .judges import holds

CHECKS = {"check_twice": Check("check_twice", "twice", 1, lambda rng: [Call("twice", (1.0,))], (("values", holds),))}
"""


def package_assignment(folder: Path, judged: str = "return None") -> Path:
    """A folder whose checks are a package: checks/__init__.py importing its judge from checks/judges.py."""
    (folder / "checks").mkdir(parents=True)
    (folder / "twice.ipynb").write_text("{}", encoding="utf-8")
    (folder / "checks" / "__init__.py").write_text(PACKAGE_INIT, encoding="utf-8")
    (folder / "checks" / "judges.py").write_text(f"def holds(out):\n    {judged}\n", encoding="utf-8")
    return folder


def test_checks_may_be_a_package_loaded_as_checks_py_is(tmp_path):
    folder = package_assignment(tmp_path / "twice")
    loaded = assignments.load(folder)
    assert list(loaded.checks) == ["check_twice"] and loaded.graded == ("twice",)
    assert loaded.checks["check_twice"].properties[0][1](None) is None
    assert assignments.checks_path(folder) == folder / "checks"
    assert assignments.checks_files(folder) == [folder / "checks" / "__init__.py", folder / "checks" / "judges.py"]
    assert assignments.names(tmp_path) == ["twice"]
    assert assignments.checks_line(folder, "def holds") == (folder / "checks" / "judges.py", 1)
    assert assignments.in_checks(folder / "checks" / "judges.py", folder)


def test_a_change_in_any_module_of_the_package_loads_it_again(tmp_path):
    folder = package_assignment(tmp_path / "twice")
    first = assignments.load(folder)
    (folder / "checks" / "judges.py").write_text("def holds(out):\n    return 'wrong'\n", encoding="utf-8")
    again = assignments.load(folder)
    assert again is not first
    assert again.checks["check_twice"].properties[0][1](None) == "wrong"
    assert first.checks["check_twice"].properties[0][1](None) is None  # the first version's modules are its own


def test_checks_py_beside_a_package_is_what_is_loaded(tmp_path):
    folder = package_assignment(tmp_path / "twice")
    (folder / "checks.py").write_text(PACKAGE_INIT.replace("from .judges import holds", "holds = print"))
    assert assignments.checks_path(folder) == folder / "checks.py"
    assert assignments.checks_files(folder) == [folder / "checks.py"]


def test_a_folder_with_neither_has_no_checks_and_says_both_names(tmp_path):
    folder = tmp_path / "empty"
    (folder / "checks").mkdir(parents=True)  # a folder without __init__.py is no package
    with pytest.raises(assignments.NoChecks, match=r"checks\.py .*checks/"):
        assignments.load(folder)
    assert assignments.names(tmp_path) == []


def test_a_module_of_the_package_that_raises_is_named_at_its_line(tmp_path):
    from autograder.validate.notebook import checks_place, load_finding

    folder = package_assignment(tmp_path / "twice")
    (folder / "checks" / "judges.py").write_text("x = 1\nraise ValueError('typo')\n", encoding="utf-8")
    with pytest.raises(ValueError) as raised:
        assignments.load(folder)
    finding = load_finding(raised.value, assignments.checks_path(folder))
    assert finding.kind == "checks-cannot-load"
    assert finding.place == f"{folder / 'checks' / 'judges.py'}:2"
    assert checks_place(assignments.checks_path(folder), "check_twice") == f"{folder / 'checks' / '__init__.py'}:5"


def test_the_attention_assignment_s_checks_are_its_package():
    folder = ASSIGNMENTS / "attention"
    assert assignments.checks_path(folder) == folder / "checks"
    loaded = assignments.load(folder)
    assert len(loaded.checks) == 16 and sum(check.points for check in loaded.checks.values()) == 29
    modules = {path.stem for path in assignments.checks_files(folder)}
    assert {"__init__", "weights", "mask", "scaling", "heads", "previous", "window", "production"} <= modules
    simple = {check_id for check_id, check in loaded.checks.items() if isinstance(check, Compared)}
    assert simple == {"check_marker_weight", "check_even_far_back_weight", "check_even_marker_weight"}
