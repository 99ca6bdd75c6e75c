"""autograder.course.table: the class table's kernel notes come from the kernel's ends stored as data, not from the
words of the notebook's error outputs (in-memory course folders, nothing graded)."""

from __future__ import annotations

import json
from pathlib import Path

from autograder.assignments import Layout
from autograder.course.table import grade_table, kernel_notes
from autograder.verdicts import BUDGET, CELL_TIME, KERNEL, PROCESSES, SIGNAL, KernelEnd

LAYOUT = Layout("attention", "attention")


def autograded(course: Path, student: str, ends: list[KernelEnd] | None, outputs: list | None = None) -> None:
    """An autograded notebook of one code cell with ``outputs``; ``ends`` stored as SurvivingExecute stores them
    (None: a notebook autograded before they were)."""
    cell = {"cell_type": "code", "metadata": {}, "source": "x = 1", "outputs": outputs or [], "execution_count": 1}
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    if ends is not None:
        notebook["metadata"][KERNEL] = [end.to_dict() for end in ends]
    path = course / "autograded" / student / "attention" / "attention.ipynb"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(notebook))


def test_each_kernel_end_is_noted_from_the_stored_data(tmp_path):
    autograded(tmp_path, "sleeper", [KernelEnd(CELL_TIME, 4, limit=60), KernelEnd(BUDGET, 9, limit=45)])
    autograded(tmp_path, "forks", [KernelEnd(PROCESSES, 3, limit=16)])
    autograded(tmp_path, "crash", [KernelEnd(SIGNAL, 2, signal="SIGSEGV")])
    autograded(tmp_path, "fine", [])
    notes = kernel_notes(tmp_path, LAYOUT, ["sleeper", "forks", "crash", "fine", "absent"])
    assert notes == {
        "sleeper": "cell 4: timed out after 60 s, the cell's limit, and was interrupted; "
        "cell 9: stopped after 45 s, the notebook's budget; later cells not run",
        "forks": "cell 3: too many processes (more than 16): the kernel was stopped; later cells not run",
        "crash": "cell 2: the kernel died (crashed, SIGSEGV); later cells not run",
        "absent": "not autograded",
    }


def test_words_in_the_outputs_are_not_read(tmp_path):
    """A student's own error output that looks like the grader's (the ename and words the old table matched) gives
    no note; only what SurvivingExecute stored does."""
    forged = {"output_type": "error", "ename": "DeadKernelError", "evalue": "too many processes", "traceback": []}
    autograded(tmp_path, "forger", [], [forged])
    assert kernel_notes(tmp_path, LAYOUT, ["forger"]) == {}


def test_a_notebook_autograded_before_the_ends_were_stored_says_to_regrade(tmp_path):
    autograded(tmp_path, "old", None)
    assert kernel_notes(tmp_path, LAYOUT, ["old"]) == {
        "old": "autograded before the kernel's ends were stored: grade it again (--regrade)"
    }


def rows(student: str, cells: list[tuple[str, str, float, float, bool]]) -> list[dict]:
    """checks.csv rows (as text) of one student: (grade_id, cell_type, score, max_score, needs_manual_grade)."""
    return [
        {
            "student_id": student,
            "assignment": "week1",
            "notebook": "week1",
            "grade_id": grade_id,
            "cell_type": cell_type,
            "score": str(score),
            "max_score": str(top),
            "auto_score": "",
            "manual_score": "",
            "needs_manual_grade": str(pending),
            "graded_by": "auto",
        }
        for grade_id, cell_type, score, top, pending in cells
    ]


def test_the_written_column_is_there_only_when_the_assignment_has_written_answers():
    checks = [("check_f", "code", 1.0, 2.0, False), ("check_g", "code", 3.0, 3.0, False)]
    table = grade_table(rows("ada", checks), {}, "week1")
    assert list(table.columns) == ["auto", "lost", "note"]
    assert table.loc["ada"].tolist() == ["4 / 5", "f", ""]
    written = rows("ada", [*checks, ("answer_why", "markdown", 0.0, 1.0, True)])
    table = grade_table(written, {}, "week1")
    assert list(table.columns) == ["auto", "written", "lost", "note"]
    assert table.loc["ada"].tolist() == ["4 / 5", "1 to grade", "f", ""]


def test_the_hidden_checks_cut_short_are_noted_from_the_stored_verdicts(tmp_path):
    """A function stopped for waiting without computing, as its verdicts store it (autograder.verdicts.ChecksEnd),
    is noted once after the kernel's ends, whatever the words of its check cells."""
    from autograder.verdicts import KEY, ChecksEnd, Property, Verdict

    autograded(tmp_path, "sleeper", [KernelEnd(BUDGET, 9, limit=45)])
    path = tmp_path / "autograded" / "sleeper" / "attention" / "attention.ipynb"
    notebook = json.loads(path.read_text())
    idle = ChecksEnd("idle", "attention", limit=2.0)
    for check in ("check_attention", "check_masked_attention"):
        verdict = Verdict(check, "attention", 0.0, 4.0, (Property("values", False, "not run"),), limit="idle", end=idle)
        flags = {"grade": True, "solution": False, "grade_id": check, "points": 4}
        cell = {"cell_type": "code", "metadata": {"nbgrader": flags, KEY: verdict.to_dict()}, "source": "",
                "outputs": [], "execution_count": 2}  # fmt: skip
        notebook["cells"].append(cell)
    path.write_text(json.dumps(notebook))
    assert kernel_notes(tmp_path, LAYOUT, ["sleeper"]) == {
        "sleeper": "cell 9: stopped after 45 s, the notebook's budget; later cells not run; "
        "hidden checks: stopped: attention waited 2 s without computing (sleep, input or a lock?)"
    }
