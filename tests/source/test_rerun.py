"""Every demo cell gives the same result whenever it is re-run, after the cells it depends on (issue 28).

Students re-run earlier cells all evening. A check cell that leaves its own `values`, `ids`, `sep`, `T` or `heads`
behind makes a demo re-run after it print or draw something else without an error (section 2's leak test
reporting a leak for a correct attention, section 5 failing with an IndexError). So the solved notebook runs
once in a real kernel (conftest.py), then every demo cell (neither an answer nor a check) runs again after the
last check, from the last to the first and then from the first to the last, and must give what it gave the first
time: its printed text and results exactly, each figure by a hash of its PNG bytes.
"""

from __future__ import annotations

import hashlib

import nbformat

FIGURE = "image/png"


def demo_cells(notebook) -> list:
    """The code cells that are neither an answer (solution) nor a check (grade): setup, demos, the model's cells."""
    return [
        cell
        for cell in notebook.cells
        if cell.cell_type == "code"
        and not cell.metadata["nbgrader"].get("solution")
        and not cell.metadata["nbgrader"].get("grade")
    ]


def seen(outputs: list) -> list[tuple]:
    """What a student sees of a cell's outputs: streams and text results as they are, a figure by its bytes' hash,
    an error by its name and message."""
    shown = []
    for out in outputs:
        if out["output_type"] == "stream" and shown and shown[-1][0] == out["name"]:
            shown[-1] = (out["name"], shown[-1][1] + out["text"])  # one stream, however the kernel cut it up
        elif out["output_type"] == "stream":
            shown.append((out["name"], out["text"]))
        elif out["output_type"] == "error":
            shown.append(("error", out["ename"], out["evalue"]))
        elif FIGURE in out.get("data", {}):
            shown.append((FIGURE, hashlib.sha256(out["data"][FIGURE].encode()).hexdigest()[:16]))
        elif "text/plain" in out.get("data", {}):
            shown.append(("text/plain", out["data"]["text/plain"]))
    return shown


def test_every_demo_cell_gives_its_first_result_when_re_run_after_the_last_check(solved):
    cells = demo_cells(solved.notebook)
    code = [cell for cell in solved.notebook.cells if cell.cell_type == "code"]
    last_check = max(i for i, cell in enumerate(code) if cell.metadata["nbgrader"].get("grade"))
    assert last_check < len(code) - 1, "the last check must come before a demo, or nothing here re-runs after it"
    assert len(cells) == 17  # setup, s1_tokens, s1_run, s2_run, s3_run, s4_run, s5 x3, s6 x4 (the name, the heads
    # zeroed, the catalogue, the try cell), s7 x2 (the table, the heads zeroed), s8_run, s9_run
    differ = []
    for order in (cells[::-1], cells):  # each after every later demo re-ran, then after every earlier one
        for cell in order:
            again = seen(solved.run(cell))
            if again != seen(solved.first[cell.id]):
                differ.append(f"{cell.id}: first {seen(solved.first[cell.id])}\n  re-run {again}")
    assert not differ, "demo cells give another result when re-run:\n" + "\n".join(differ)
    assert sum(len(seen(solved.first[cell.id])) for cell in cells) >= 20  # what was compared: printed and drawn


def test_check_cells_leave_no_name_but_their_own_function_behind(solved):
    """A check's names live in its function: the kernel's globals after the run hold no check's variable."""
    probe = (
        "print(sorted(n for n in ('qs', 'xs', 'examples', 'END_ID', 'tolerance', 'hidden', 'large') if n in globals()),"
        " sorted(n for n in globals() if n.startswith('_check_')))"
    )
    (outputs,) = solved.run(nbformat.v4.new_code_cell(probe))
    leftover, functions = outputs["text"].split("] [")
    assert leftover == "[", f"check variables left in the kernel: {leftover}]"
    checks = [
        cell for cell in solved.notebook.cells if cell.metadata["nbgrader"].get("grade") and cell.cell_type == "code"
    ]
    assert functions.count("_check_") == len(checks) == 16
