"""ExternalVerdicts inside nbgrader: the check cells' outputs are the verdicts, and each check's points go to the
gradebook as data (resources[POINTS], saved by VerdictGrades in place of nbgrader's SaveAutoGrades), never from
whatever the student's kernel printed."""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from nbgrader.api import Gradebook
from nbgrader.utils import determine_grade

from autograder import assignments
from autograder.answers.grading import answer_sources
from autograder.notebook.autograde import POINTS, ExternalVerdicts, StartVerdicts
from autograder.verdicts import KEY, read_kernel_ends, read_verdicts

REPOSITORY = Path(__file__).resolve().parents[3]
NOTEBOOK = REPOSITORY / "source" / "attention" / "attention.ipynb"
CHECKS = assignments.load(NOTEBOOK.parent).checks
SEED = 424242
ATTENTION = {"nbgrader": {"assignment": "attention"}}  # what nbgrader's resources say of the notebook


def verdicts(cls=ExternalVerdicts):
    """The step, finding the attention assignment's checks in the repository's source/."""
    return cls(seed=SEED, source=str(REPOSITORY / "source"))


def check_cells(nb):
    return {
        cell.metadata["nbgrader"]["grade_id"]: cell
        for cell in nb.cells
        if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("grade")
    }


def as_kernel_left_it(nb):
    """The notebook as the student's kernel might leave it: a failed visible check, a warning on stderr."""
    nb = copy.deepcopy(nb)
    cells = check_cells(nb)
    cells["check_softmax"].outputs = [
        new_output("error", ename="AssertionError", evalue="row 0 sums to 0.9", traceback=[])
    ]
    cells["check_attention"].outputs = [new_output("stream", name="stderr", text="RuntimeWarning: overflow\n")]
    return nb


@pytest.mark.skipif(not NOTEBOOK.exists(), reason="the source notebook is missing")
def test_check_cells_get_the_verdicts_not_the_kernel_outputs():
    nb = as_kernel_left_it(nbformat.read(str(NOTEBOOK), as_version=4))
    assert determine_grade(check_cells(nb)["check_softmax"])[0] == 0  # what nbgrader alone would give
    manual = [copy.deepcopy(cell) for cell in nb.cells if cell.cell_type == "markdown"]
    nb, handed = verdicts().preprocess(nb, dict(ATTENTION))
    for grade_id, cell in check_cells(nb).items():
        assert [o.output_type for o in cell.outputs] == ["stream"]
        assert cell.outputs[0].name == "stdout" and f"{grade_id} (" in cell.outputs[0].text
        assert handed[POINTS][grade_id] == CHECKS[grade_id].points
    assert "visible checks stopped with AssertionError" in check_cells(nb)["check_softmax"].outputs[0].text
    assert [cell for cell in nb.cells if cell.cell_type == "markdown"] == manual  # written answers untouched


@pytest.mark.skipif(not NOTEBOOK.exists(), reason="the source notebook is missing")
def test_partial_credit_reaches_nbgrader():
    nb = nbformat.read(str(NOTEBOOK), as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("solution") and "def attention(" in cell.source:
            cell.source = cell.source.replace(" / np.sqrt(d)", "")
    forged = {"format": 1, "check": "check_attention", "function": "attention", "points": 4.0, "max_points": 4.0}
    planted = next(cell for cell in nb.cells if cell.cell_type == "markdown")
    planted.metadata[KEY] = forged  # a verdict the student wrote into a cell of their own
    nb, handed = verdicts().preprocess(nb, dict(ATTENTION))
    assert KEY not in planted.metadata
    assert handed[POINTS]["check_attention"] == 2.0 and handed[POINTS]["check_softmax"] == 2.0
    stored = read_verdicts(nb)  # the verdict as data, beside the words the student reads
    assert set(stored) == set(check_cells(nb))
    attention = stored["check_attention"]
    assert (attention.function, attention.points, attention.max_points, attention.seed) == ("attention", 2.0, 4.0, SEED)
    assert [p.name for p in attention.failed] == ["scaled by sqrt(d)", "values"]
    assert attention.text() in check_cells(nb)["check_attention"].outputs[0].text
    assert 0 <= attention.cpu_seconds < 10 and attention.limit == "" and attention.failed_call == ""


@pytest.mark.skipif(not NOTEBOOK.exists(), reason="the source notebook is missing")
def test_verdicts_started_early_are_used_only_for_the_same_answers():
    """StartVerdicts grades before the kernel runs; ExternalVerdicts takes those verdicts only when the
    answers it sees are the ones graded then, and grades again otherwise."""
    from autograder.notebook.autograde import EARLY

    nb = nbformat.read(str(NOTEBOOK), as_version=4)
    resources = dict(ATTENTION)
    verdicts(StartVerdicts).preprocess(nb, resources)
    assert resources[EARLY].verdicts.result()[0].keys() == check_cells(nb).keys()  # (verdicts, seconds)
    for cell in nb.cells:  # the answers change after the early start (they never do in nbgrader's pipeline)
        if cell.metadata.get("nbgrader", {}).get("solution") and "def attention(" in cell.source:
            cell.source = cell.source.replace(" / np.sqrt(d)", "")
    nb, resources = verdicts().preprocess(nb, resources)
    assert EARLY not in resources
    assert resources[POINTS]["check_attention"] == 2.0  # graded again, not the early 4

    nb = nbformat.read(str(NOTEBOOK), as_version=4)
    resources = dict(ATTENTION)
    verdicts(StartVerdicts).preprocess(nb, resources)
    early = resources[EARLY].verdicts
    nb, resources = verdicts().preprocess(nb, resources)
    assert early.done() and resources[POINTS]["check_attention"] == 4.0


# --- a whole nbgrader round: generate_assignment, a submission, autograde, the gradebook -----------

CONFIG = """
from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, Execute, IgnorePattern,
                                    LimitOutput)
from autograder.notebook.autograde import ExternalVerdicts, VerdictGrades

c = get_config()
c.CourseDirectory.root = {root!r}
c.CourseDirectory.db_assignments = [dict(name="ps1")]
c.CourseDirectory.db_students = [dict(id="ada")]
c.Autograde.autograde_preprocessors = [
    Execute, IgnorePattern, ClearMetadataPreprocessor, LimitOutput,
    ExternalVerdicts,
    VerdictGrades, AssignLatePenalties, CheckCellMetadata,
]
c.ExternalVerdicts.seed = {seed}
"""


def answer_cell(grade_id, source):
    return new_code_cell(
        source,
        metadata={
            "nbgrader": {
                "grade": False,
                "grade_id": grade_id,
                "locked": False,
                "schema_version": 3,
                "solution": True,
                "task": False,
            }
        },
    )


def check_cell(grade_id, points, visible):
    source = (
        f"{visible}\n### BEGIN HIDDEN TESTS\n# graded outside this kernel: checks.py, {grade_id}\n### END HIDDEN"
        " TESTS\n"
    )
    return new_code_cell(
        source,
        metadata={
            "nbgrader": {
                "grade": True,
                "grade_id": grade_id,
                "locked": True,
                "points": points,
                "schema_version": 3,
                "solution": False,
                "task": False,
            }
        },
    )


SOFTMAX = """def softmax(scores):
    ### BEGIN SOLUTION
    exps = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return exps / exps.sum(axis=-1, keepdims=True)
    ### END SOLUTION
"""
MASK = """def causal_mask(positions):
    ### BEGIN SOLUTION
    return np.tril(np.ones((positions, positions), dtype=bool))
    ### END SOLUTION
"""


def course_notebook():
    return new_notebook(
        cells=[
            new_markdown_cell("A two-exercise assignment."),
            new_code_cell("import numpy as np"),
            answer_cell("softmax", SOFTMAX),
            check_cell("check_softmax", 2, "assert np.allclose(softmax(np.zeros((2, 3))).sum(-1), 1)"),
            answer_cell("causal_mask", MASK),
            check_cell("check_causal_mask", 1, "assert causal_mask(3).shape == (3, 3)"),
        ],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )


def nbgrader(root: Path, *args):
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])  # nbgrader runs `alembic`
    env = {**os.environ, "PYTHONPATH": str(REPOSITORY), "PATH": path}
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", *args], cwd=root, env=env, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_autograde_stores_the_external_verdicts_in_the_gradebook(tmp_path):
    root = tmp_path / "course"
    (root / "source" / "ps1").mkdir(parents=True)
    (root / "nbgrader_config.py").write_text(textwrap.dedent(CONFIG.format(root=str(root), seed=SEED)))
    nbformat.write(course_notebook(), str(root / "source" / "ps1" / "ps1.ipynb"))
    # its hidden checks (a file or a package) and the answer key they compare with
    checks = assignments.checks_path(NOTEBOOK.parent)
    if checks.is_dir():
        shutil.copytree(checks, root / "source" / "ps1" / checks.name, ignore=shutil.ignore_patterns("__pycache__"))
    else:
        shutil.copy(checks, root / "source" / "ps1" / checks.name)
    shutil.copy(NOTEBOOK.parent / assignments.REFERENCE_FILE, root / "source" / "ps1" / assignments.REFERENCE_FILE)
    nbgrader(root, "generate_assignment", "ps1", "--force")

    submission = nbformat.read(str(root / "release" / "ps1" / "ps1.ipynb"), as_version=4)
    answers = {
        # correct, but it writes to stderr each time: nbgrader alone would give check_softmax 0 points
        "softmax": (
            "import sys\n\ndef softmax(scores):\n    print('computing softmax', file=sys.stderr)\n    exps ="
            " np.exp(scores - scores.max(axis=-1, keepdims=True))\n    return exps / exps.sum(axis=-1, keepdims=True)\n"
        ),
        "causal_mask": (  # no diagonal
            "def causal_mask(positions):\n    return np.tril(np.ones((positions, positions), dtype=bool), -1)\n"
        ),
    }
    for cell in submission.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id]
    folder = root / "submitted" / "ada" / "ps1"
    folder.mkdir(parents=True)
    nbformat.write(submission, str(folder / "ps1.ipynb"))
    nbgrader(root, "autograde", "ps1", "--force")

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        softmax = gradebook.find_grade("check_softmax", "ps1", "ps1", "ada")
        mask = gradebook.find_grade("check_causal_mask", "ps1", "ps1", "ada")
        assert (softmax.auto_score, softmax.max_score) == (2.0, 2.0)
        assert (mask.auto_score, mask.max_score) == (0.67, 1.0)  # bool and shape hold, the triangle does not
    graded = nbformat.read(str(root / "autograded" / "ada" / "ps1" / "ps1.ipynb"), as_version=4)
    text = check_cells(graded)["check_causal_mask"].outputs[0].text
    assert "FAIL lower triangle incl. diagonal: the diagonal is False" in text and f"seed {SEED}" in text


@pytest.mark.skipif(not NOTEBOOK.exists(), reason="the source notebook is missing")
def test_early_verdicts_that_do_not_come_in_time_give_zero_and_say_why():
    """ExternalVerdicts waits for the early verdicts only until they are due (the answers' wall-clock budget from
    their start, plus judging): a grading still running then is not waited for."""
    from concurrent.futures import Future

    from autograder.notebook.autograde import EARLY, EarlyVerdicts

    nb = nbformat.read(str(NOTEBOOK), as_version=4)
    ids = list(check_cells(nb))
    never = Future()  # a grading that never ends
    resources = {**ATTENTION, EARLY: EarlyVerdicts(answer_sources(nb), ids, never, time.monotonic() + 0.2)}
    step = verdicts()
    step.wall = 7.0
    started = time.monotonic()
    nb, handed = step.preprocess(nb, resources)
    assert time.monotonic() - started < 5
    stored = read_verdicts(nb)
    assert set(stored) == set(ids)
    for grade_id, cell in check_cells(nb).items():
        assert handed[POINTS][grade_id] == 0.0
        assert stored[grade_id].limit == "notebook time"
        assert "the hidden checks did not finish within 7 s by the clock" in cell.outputs[0].text


@pytest.mark.skipif(not NOTEBOOK.exists(), reason="the source notebook is missing")
def test_a_notebook_whose_attention_sleeps_is_graded_in_bounded_time(tmp_path):
    """The chain's steps as nbgrader runs them (StartVerdicts, the student's kernel under a 30 s budget,
    ExternalVerdicts) on the attention notebook whose attention sleeps an hour: the kernel is stopped when the visible
    check that calls attention has waited the kernel's idle limit (the budget leaves the cells before it room on a
    loaded machine, where 10 s once ran out first), the hidden checks stop attention after the 2 s it may wait
    without computing (it once held them a minute a call), attention's two checks get 0 and say why as data, every
    other function keeps its points."""
    from autograder.notebook.kernel import SurvivingExecute
    from autograder.timeouts import IDLE_TIMEOUT as IDLE_LIMIT
    from autograder.verdicts import ChecksEnd

    nb = nbformat.read(str(NOTEBOOK), as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("solution") and "def attention(" in cell.source:
            cell.source = cell.source.replace(
                "    ### BEGIN SOLUTION\n", "    ### BEGIN SOLUTION\n    import time\n    time.sleep(3600)\n", 1
            )
    resources = {**ATTENTION, "metadata": {"path": str(tmp_path)}}
    started = time.monotonic()
    nb, resources = verdicts(StartVerdicts).preprocess(nb, resources)
    nb, resources = SurvivingExecute(timeout=60, notebook_timeout=30).preprocess(nb, resources)
    nb, resources = verdicts().preprocess(nb, resources)
    assert time.monotonic() - started < 60  # the cells before attention's check, its 5 s wait; the checks within it
    [end] = read_kernel_ends(nb)  # a visible check called attention, which waited
    assert (end.kind, end.limit) == ("waited", IDLE_LIMIT)
    stored = read_verdicts(nb)
    for grade_id, verdict in stored.items():
        if verdict.function == "attention":
            assert verdict.points == 0 and verdict.end == ChecksEnd("idle", "attention", limit=2.0), verdict.text()
        else:
            assert verdict.points == CHECKS[grade_id].points, verdict.text()
