"""autograder.notebook.kernel: the notebook's wall-clock budget, and how the kernel ended stored as data.

Each test runs a few cells in the real sandboxed kernel with limits of seconds (SurvivingExecute's own traits), and
reads what was stored in the notebook's metadata (autograder.verdicts.KernelEnd), not the words in the cells."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import nbformat
import pytest

from autograder import sandbox, verdicts
from autograder.notebook.kernel import SurvivingExecute
from autograder.verdicts import KernelEnd, read_kernel_ends

needs_bubblewrap = pytest.mark.skipif(
    sandbox.bubblewrap() is None, reason="bubblewrap is missing (apt-get install bubblewrap)"
)
SLEEP = "import time\ntime.sleep(3600)"


def run(tmp_path, sources: list[str], **limits) -> tuple[nbformat.NotebookNode, float]:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in sources])
    started = time.monotonic()
    SurvivingExecute(**limits).preprocess(notebook, {"metadata": {"path": str(tmp_path)}})
    return notebook, time.monotonic() - started


def errors(cell) -> list[tuple[str, str]]:
    return [(o["ename"], o["evalue"]) for o in cell.get("outputs", []) if o.get("output_type") == "error"]


@needs_bubblewrap
def test_sleeping_cells_are_cut_by_the_notebooks_budget_and_no_later_cell_runs(tmp_path):
    notebook, seconds = run(
        tmp_path, ["print('first')", SLEEP, SLEEP, SLEEP, "print('last')"], timeout=3, notebook_timeout=5
    )
    ends = read_kernel_ends(notebook)
    assert ends == [KernelEnd(verdicts.CELL_TIME, 2, limit=3), KernelEnd(verdicts.BUDGET, 3, limit=5)]
    assert seconds < 5 + 15, f"the budget held the notebook to about 5 s, not {seconds:.0f} s"
    assert notebook.cells[0].outputs[0]["text"] == "first\n"
    said = errors(notebook.cells[1])  # the student's own KeyboardInterrupt, then the limit, said once
    assert said[-1] == ("CellTimeoutError", ends[0].text()) and [e for e, _ in said].count("CellTimeoutError") == 1
    assert ("NotebookTimeoutError", ends[1].text()) in errors(notebook.cells[2])
    assert "stopped after 5 s, the notebook's budget" in ends[1].text()
    assert notebook.cells[3].outputs == [] and notebook.cells[4].outputs == [], "nothing ran after the budget"


@needs_bubblewrap
def test_a_cell_that_swallows_the_interrupt_stops_the_notebook_instead_of_failing_it(tmp_path):
    stubborn = (
        "import time\nwhile True:\n    try:\n        time.sleep(3600)\n    except KeyboardInterrupt:\n        pass"
    )
    # idle_timeout=0: this test is about the interrupt a cell ignores, not about waiting (the tests below)
    notebook, seconds = run(
        tmp_path, [stubborn, "print('after')", SLEEP], timeout=2, notebook_timeout=6, idle_timeout=0
    )
    assert read_kernel_ends(notebook) == [KernelEnd(verdicts.STUCK, 1, limit=2)], "stopped, not failed"
    assert "went on after it was interrupted" in errors(notebook.cells[0])[-1][1]
    assert notebook.cells[1].outputs == [] and notebook.cells[2].outputs == []
    assert seconds < 6 + 20, f"a cell that ignores the interrupt held the notebook {seconds:.0f} s"


@needs_bubblewrap
def test_a_cell_that_waits_without_computing_stops_the_notebook_after_the_idle_limit(tmp_path):
    """A sleeping cell is stopped after the idle limit (here 1.5 s), long before its own limit or the notebook's
    budget; the end is stored as data with the limit, said in the cell, and no later cell runs."""
    sources = ["print('first')", SLEEP, "print('after')"]
    notebook, seconds = run(tmp_path, sources, timeout=60, notebook_timeout=45, idle_timeout=1.5)
    ends = read_kernel_ends(notebook)
    assert ends == [KernelEnd(verdicts.WAITED, 2, limit=1.5)]
    assert seconds < 1.5 + 15, f"a sleeping cell held the notebook {seconds:.0f} s"
    assert ("DeadKernelError", ends[0].text()) in errors(notebook.cells[1])
    assert "waited 1.5 s without computing or printing anything (time.sleep, input or a lock?)" in ends[0].text()
    assert ends[0].short() == "cell 2: waited 1.5 s without computing (sleep, input or a lock?): the kernel was " + (
        "stopped; later cells not run"
    )
    assert notebook.cells[0].outputs[0]["text"] == "first\n" and notebook.cells[2].outputs == []


@needs_bubblewrap
@pytest.mark.parametrize(
    "source",
    [
        "import time\n_t = time.process_time()\nwhile time.process_time() - _t < 3:\n    pass\nprint('computed')",
        "import time\nfor _ in range(6):\n    print('tick', flush=True)\n    time.sleep(0.5)\nprint('computed')",
        "import subprocess, sys\nsubprocess.run([sys.executable, '-c', "
        "'import time\\n_t = time.process_time()\\nwhile time.process_time() - _t < 3: pass'])\nprint('computed')",
    ],
    ids=["computes", "prints while it sleeps", "waits for a child that computes"],
)
def test_a_cell_that_computes_or_prints_is_not_stopped_by_the_idle_limit(tmp_path, source):
    """Three seconds of work with an idle limit of 1 s: computing in the kernel, printing between short sleeps, or
    waiting for a child process that computes (the child is in the kernel's sandbox) is not waiting."""
    notebook, _ = run(tmp_path, [source, "print('after')"], timeout=60, notebook_timeout=45, idle_timeout=1)
    assert read_kernel_ends(notebook) == []
    assert "computed" in "".join(out.get("text", "") for out in notebook.cells[0].outputs)
    assert notebook.cells[1].outputs[0]["text"] == "after\n"


@needs_bubblewrap
@pytest.mark.parametrize(
    "source, expected",
    [
        ("import os\nos._exit(3)", KernelEnd(verdicts.EXITED, 2, code=3)),
        ("import ctypes\nctypes.string_at(0)", KernelEnd(verdicts.SIGNAL, 2, signal="SIGSEGV")),
    ],
    ids=["exit", "segfault"],
)
def test_a_dead_kernel_is_stored_with_its_exit_status_or_signal(tmp_path, source, expected):
    notebook, _ = run(tmp_path, ["x = 1", source, "print('never')"], timeout=30)
    assert read_kernel_ends(notebook) == [expected]
    assert errors(notebook.cells[1]) == [("DeadKernelError", expected.text())]
    assert notebook.cells[2].outputs == []


@needs_bubblewrap
def test_a_notebook_that_ran_to_its_end_stores_no_end_and_a_planted_one_is_dropped(tmp_path):
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(1)")])
    notebook.metadata[verdicts.KERNEL] = [KernelEnd(verdicts.MEMORY, 1).to_dict()]  # the student's own
    SurvivingExecute(timeout=30).preprocess(notebook, {"metadata": {"path": str(tmp_path)}})
    assert read_kernel_ends(notebook) == []


@needs_bubblewrap
@pytest.mark.parametrize(
    "sources",
    [["print('done')"], ["import os\nos._exit(3)"], [SLEEP, SLEEP]],
    ids=["ran to its end", "exited", "cut by its budget"],
)
def test_every_kernel_removes_its_private_folder_however_it_ends(tmp_path, monkeypatch, sources):
    """Each kernel's private folder (its sockets, caches and whatever the student's code wrote there) is removed when
    nbclient shuts the kernel down: before, AsyncKernelManager's shutdown_kernel skipped the subclass's override and
    every graded notebook left an attention-kernel-* folder in the temporary folder."""
    # a short folder of its own: the kernel's ipc sockets live in its private folder, and a socket's path has a
    # limit of 107 bytes that pytest's tmp_path under xdist can pass
    temporary = Path(tempfile.mkdtemp(prefix="k-", dir="/tmp"))
    try:
        monkeypatch.setattr(tempfile, "tempdir", str(temporary))
        run(tmp_path, [*sources, "open('/tmp/x', 'w').write('student data')"], timeout=2, notebook_timeout=3)
        assert sorted(path.name for path in temporary.iterdir()) == []
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
