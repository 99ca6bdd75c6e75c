"""The notebook read against its checks.py: ids, points, functions, nbgrader's markers, what the scaffold
left to fill in, and the solution run in a Jupyter kernel as a student runs it (its visible checks).
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shutil
import tempfile
import traceback
from pathlib import Path

import nbformat
from nbgrader.preprocessors import ClearHiddenTests

from autograder import assignments
from autograder.answers.grading import answer_sources
from autograder.assignments import FILL_IN
from autograder.notebook.pipeline import IGNORED, chain_config
from autograder.validate.findings import Finding

HIDDEN = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS[ \t]*$(.*?)^[ \t]*### END HIDDEN TESTS", re.M | re.S)
SOLVED = re.compile(r"^[ \t]*### BEGIN SOLUTION[ \t]*$(.*?)^[ \t]*### END SOLUTION", re.M | re.S)
MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS", "BEGIN MARK SCHEME")
RECOGNISED = {  # what nbgrader finds in a line (its delimiters, in a line of a cell of that type) and how it reads
    "code": ("### BEGIN SOLUTION", "### END SOLUTION", "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"),
    "markdown": ("=== BEGIN MARK SCHEME ===", "=== END MARK SCHEME ==="),
}
LOOKS_LIKE_MARKER = re.compile(r"^\s*(#{2,}|={2,})\s*(BEGIN|END)\b", re.I)
DEFINES = r"^def[ \t]+{}[ \t]*\("

# --- reading the notebook and checks.py ---------------------------------------------------------------------


def cell_name(cell, index: int) -> str:
    flags = cell.get("metadata", {}).get("nbgrader", {})
    return flags.get("grade_id") or f"number {index + 1}"


def flags_of(cell) -> dict:
    flags = cell.get("metadata", {}).get("nbgrader", {})
    return flags if isinstance(flags, dict) else {}


def is_test_cell(cell) -> bool:
    """An autograded test cell: a code cell with grade true and solution false."""
    return cell.cell_type == "code" and bool(flags_of(cell).get("grade")) and not flags_of(cell).get("solution")


def test_cells(notebook) -> dict:
    """{grade id: cell} of the autograded test cells (is_test_cell)."""
    return {flags_of(cell)["grade_id"]: cell for cell in notebook.cells if is_test_cell(cell)}


def line_of(text: str, needle: str) -> int | None:
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    return None


def checks_place(checks_path: Path, check_id: str) -> str:
    """file:line of a check id's first quoted mention in the checks (checks.py, or a module of checks/), else of
    CHECKS (else line 1 of checks.py or checks/__init__.py)."""
    found = assignments.checks_line(checks_path.parent, f'"{check_id}"', f"'{check_id}'", "CHECKS")
    if found is None:
        return f"{checks_path / '__init__.py' if checks_path.is_dir() else checks_path}:1"
    return f"{found[0]}:{found[1]}"


def closest(name: str, names) -> str:
    found = difflib.get_close_matches(name, list(names), n=1)
    return f" (the closest there: {found[0]!r})" if found else ""


def static_findings(checks: assignments.AssignmentChecks, notebook, notebook_name: str) -> list[Finding]:
    """The notebook against checks.py (ids, points, functions) and the hidden-tests blocks: nothing is run."""
    findings = []
    checks_path = assignments.checks_path(checks.folder)
    cells = test_cells(notebook)
    solution = "\n".join(answer_sources(notebook))
    for grade_id in cells:
        if grade_id not in checks.checks:
            findings.append(
                Finding(
                    "id-not-in-checks",
                    f"{notebook_name}, cell {grade_id}",
                    f"the graded test cell {grade_id!r} has no check in {checks_path}"
                    f"{closest(grade_id, checks.checks)}: nbgrader would grade it by its visible asserts alone. "
                    "Add a Check with that id to CHECKS, or give the cell the check's id (its grade id, in the "
                    "Create Assignment toolbar)",
                    grade_id,
                )
            )
    for key, check in checks.checks.items():
        if key not in cells:
            findings.append(
                Finding(
                    "id-not-in-notebook",
                    checks_place(checks_path, key),
                    f"CHECKS holds {key!r}, which is no graded test cell of {notebook_name}{closest(key, cells)}: its "
                    "verdict is never recorded. Rename the check to the cell's grade id, or add the cell",
                    key,
                )
            )
        if getattr(check, "check_id", key) != key:
            findings.append(
                Finding(
                    "check-id-differs",
                    checks_place(checks_path, key),
                    f"CHECKS files the check {check.check_id!r} under {key!r}: make the key its check_id",
                    key,
                )
            )
        if not re.search(DEFINES.format(re.escape(check.function)), solution, re.M):
            findings.append(
                Finding(
                    "function-not-in-notebook",
                    checks_place(checks_path, key),
                    f"{key} grades {check.function}, which no answer cell of {notebook_name} defines (def "
                    f"{check.function}(...) in a cell marked 'Autograded answer'): correct the check's function or "
                    "the answer cell",
                    key,
                )
            )
        if key in cells:
            noted = float(cells[key].metadata["nbgrader"].get("points", 0))
            if noted != float(check.points):
                findings.append(
                    Finding(
                        "points-differ",
                        f"{notebook_name}, cell {key}",
                        f"the notebook gives {key} {noted:g} points (its nbgrader metadata), checks.py "
                        f"{float(check.points):g} ({checks_place(checks_path, key)}): the gradebook records the "
                        f"notebook's points and rescales the verdict, so a student reads 'x / {float(check.points):g}'"
                        f" and is scored out of {noted:g}. Make them equal",
                    )
                )
    findings += marker_findings(notebook, notebook_name)
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        for block in HIDDEN.finditer(cell.source):
            first = cell.source[: block.start(1)].count("\n") + 1
            for offset, line in enumerate(block.group(1).splitlines()):
                if line.strip() and not line.strip().startswith("#"):
                    findings.append(
                        Finding(
                            "hidden-test-code",
                            f"{notebook_name}, cell {cell_name(cell, index)}, line {first + offset}",
                            f"code in a hidden-tests block ({line.strip()[:60]!r}) never counts in this engine: the "
                            "grade comes from checks.py. Make it a property of the cell's Check in checks.py (or a "
                            "visible assert above the block); a comment may stay",
                        )
                    )
    return findings


def marker_findings(notebook, notebook_name: str) -> list[Finding]:
    """Each line that looks like an nbgrader marker (### BEGIN ..., ### END ...) but holds none of nbgrader's
    delimiters: nbgrader passes over it, so what it should hide (a hidden assert, a solution) is released."""
    findings = []
    for index, cell in enumerate(notebook.cells):
        known = RECOGNISED.get(cell.cell_type, ())
        for number, line in enumerate(cell.source.splitlines(), start=1):
            if not LOOKS_LIKE_MARKER.match(line):
                continue
            delimiters = [marker.strip("#= ") for marker in known]
            if any(delimiter in line for delimiter in delimiters):
                continue
            findings.append(
                Finding(
                    "marker-unknown",
                    f"{notebook_name}, cell {cell_name(cell, index)}, line {number}",
                    f"{line.strip()[:60]!r} is no marker nbgrader knows{closest(line.strip(), known)}, so it hides "
                    f"nothing and what it encloses is released: write one of {', '.join(map(repr, known)) or 'none'}",
                )
            )
    return findings


def fill_in_findings(notebook, notebook_name: str, checks_path: Path) -> list[Finding]:
    """Each line of the notebook or of a Python file of the assignment's folder (checks.py, a reference beside it)
    that still holds the scaffold's marker (TO FILL IN), with its place and what it asks for (the words after it)."""
    findings = []

    def found(place: str, line: str) -> None:
        asked = line.split(FILL_IN, 1)[1].strip().lstrip(":").strip()
        asked = re.sub(r"""(\.?["']+\)?|\.)$""", "", asked) or "this place"  # the end of a docstring or a string
        findings.append(
            Finding("to-fill-in", place, f"still to fill in: {asked} (then delete the words {FILL_IN!r} there)")
        )

    for index, cell in enumerate(notebook.cells):
        for number, line in enumerate(cell.source.splitlines(), start=1):
            if FILL_IN in line:
                found(f"{notebook_name}, cell {cell_name(cell, index)}, line {number}", line)
    package = assignments.checks_files(checks_path.parent) if checks_path.is_dir() else []
    beside = sorted(checks_path.parent.glob("*.py"), key=lambda path: (path != checks_path, path.name))
    for path in package + beside:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if FILL_IN in line:
                found(f"{path}:{number}", line)
    return findings


def load_finding(error: Exception, checks_path: Path) -> Finding:
    """Why checks.py cannot be imported, at its place (the line of a syntax error, else the frame in checks.py)."""
    if isinstance(error, SyntaxError) and error.lineno and error.filename:
        place = f"{error.filename}:{error.lineno}"
    elif isinstance(error, assignments.ChecksMistake) and error.lineno:
        place = f"{checks_path / '__init__.py' if checks_path.is_dir() else checks_path}:{error.lineno}"
    else:
        place = raise_place(error, checks_path)
    return Finding(
        "checks-cannot-load",
        place,
        f"importing {checks_path} raises {type(error).__name__}: {error}: correct it (checks.py imports NumPy, "
        "autograder.checks and what its references need, and defines CHECKS)",
    )


# --- the visible checks, run as a student runs them ---------------------------------------------------------

VISIBLE_TIMEOUT = 120  # seconds a cell of the solution may take in the kernel
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def cell_line(traceback_lines: list) -> str:
    """' (line N)' of the innermost frame in the notebook's own cell ('Cell In[5], line 4'), '' when none."""
    text = ANSI.sub("", "\n".join(traceback_lines or []))
    lines = re.findall(r"Cell In\[\d+\], line (\d+)", text)
    return f" (line {lines[-1]})" if lines else ""


def visible_findings(notebook, folder: Path, notebook_name: str, timeout: int = VISIBLE_TIMEOUT) -> list[Finding]:
    """The solution run top to bottom in a Jupyter kernel, as a student runs it: the hidden-tests blocks taken out
    as the release takes them out, in a copy of the assignment's folder without what the release leaves out
    (checks.py, reference.py: a notebook that reads them fails here as it fails for a student), so the source
    folder is never written to (a demo that saves a figure saves it in the copy). Each cell that raises is a
    finding, a graded test cell's as ``visible-check-fails``, any other's as ``solution-cell-raises``; a cell that
    fails after an earlier one did says so (it may only follow from it). The instructor's own notebook runs
    unsandboxed, as nbgrader's validate runs it."""
    from jupyter_client import KernelManager  # here: only a validate that runs the notebook needs a kernel
    from jupyter_client.kernelspec import NoSuchKernel
    from nbclient import NotebookClient

    config = chain_config()
    solved = nbformat.from_dict(json.loads(json.dumps(notebook)))
    solved, _ = ClearHiddenTests(config=config).preprocess(solved, {})
    try:
        with tempfile.TemporaryDirectory(prefix="validate-") as scratch:
            students = Path(scratch) / folder.name  # what a student's folder holds beside the notebook
            shutil.copytree(folder, students, symlinks=True, ignore=shutil.ignore_patterns(*IGNORED))
            # ipc, not TCP: nothing listens on a port
            manager = KernelManager(kernel_name="python3", transport="ipc", ip=os.path.join(scratch, "kernel"))
            client = NotebookClient(
                solved, km=manager, timeout=timeout, allow_errors=True, resources={"metadata": {"path": str(students)}}
            )
            try:
                client.execute()
            finally:  # a kernel manager handed to nbclient is the caller's to stop
                if manager.has_kernel:
                    manager.shutdown_kernel(now=True)
    except NoSuchKernel:
        raise  # not the notebook's fault: validate_assignment says it was not run
    except Exception as error:  # noqa: BLE001 - a kernel that died or a cell past its time: said, nbclient's words
        return [
            Finding(
                "solution-cell-raises",
                notebook_name,
                f"the notebook could not be run to its end in a kernel ({type(error).__name__}: {error}); run it "
                "in JupyterLab (Kernel > Restart Kernel and Run All Cells) to see where",
            )
        ]
    findings, failed = [], ""
    for index, cell in enumerate(solved.cells):
        errors = [out for out in cell.get("outputs", []) if out.get("output_type") == "error"]
        if cell.cell_type != "code" or not errors:
            continue
        error = errors[0]
        name = cell_name(cell, index)
        place = f"{notebook_name}, cell {name}{cell_line(error.get('traceback'))}"
        said = f"{error.get('ename', 'Error')}: {ANSI.sub('', str(error.get('evalue', '')))}".rstrip(": ")
        after = f" (after cell {failed} failed: it may only follow from that)" if failed else ""
        if is_test_cell(cell):
            message = f"the solution fails this visible check: {said}{after}; a student with a right answer would "
            message += "read it: correct the check or the solution"
            findings.append(Finding("visible-check-fails", place, message, check=flags_of(cell).get("grade_id", "")))
        else:
            message = f"raises on the solution: {said}{after}; a student with a right answer meets the same error"
            findings.append(Finding("solution-cell-raises", place, message))
        failed = failed or name
    return findings


def of_path(filename: str, path: Path) -> bool:
    """Whether a frame's file is ``path``, or a file inside it when ``path`` is a folder (a package of checks)."""
    resolved, path = Path(filename).resolve(), path.resolve()
    return resolved == path or (path.is_dir() and path in resolved.parents)


def raised_in(error: BaseException, path: Path) -> bool:
    """Whether ``error`` was raised by code of the file ``path`` (its innermost frame there; a folder: in it)."""
    frames = traceback.extract_tb(error.__traceback__)
    return bool(frames) and of_path(frames[-1].filename, path)


def raise_place(error: BaseException, checks_path: Path) -> str:
    """file:line of the innermost frame of the checks (checks.py, or a module of checks/) where ``error`` was raised
    (else the innermost frame)."""
    frames = traceback.extract_tb(error.__traceback__)
    mine = [frame for frame in frames if of_path(frame.filename, checks_path)]
    frame = (mine or frames)[-1]
    return f"{frame.filename}:{frame.lineno}"
