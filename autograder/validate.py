"""Validate an assignment before any student sees it: ``python -m autograder.validate --source DIR --assignment NAME``.

    from autograder.validate import validate_assignment
    report = validate_assignment(source=Path("source"), assignment="attention", seeds=5)
    report.ok, [finding.kind for finding in report.findings], print(report.text())

What it grades is what a class run grades, by the fastest real entry point: the answer cells of a notebook in the
sandboxed runner, judged by the assignment's checks.py (autograder.answers.grading.grade_seeds: every seed's calls
in one runner, no kernel). It grades the solution (the source notebook as written), the blank release (the answer
cells as nbgrader's generate_assignment leaves them: the course's stubs), and each named wrong version, under
``seeds`` seeds, and reads the notebook, checks.py and the release. Each authoring mistake is a ``Finding``: a
stable ``kind`` (KINDS), the place (a cell's grade id and line, or checks.py:line) and a message saying what to fix.

Wrong versions are declared in checks.py (``WRONG_VERSIONS``) or handed as notebooks (``--wrong DIR``):

    WRONG_VERSIONS = {
        "forgets eps": {
            "answers": {"rms_norm": "def rms_norm(x, gain, eps=1e-5):\\n    return x / np.sqrt((x**2).mean(-1))"},
            "loses": {"check_rms_norm": 2},  # exactly the points it loses; every other check keeps its own
        },
    }

``answers`` replaces the solution's answer cell that defines each function; ``loses`` is {check id: points lost}
(or a list of check ids: each must lose some points); none given: it must lose some points in all. A notebook of
``--wrong DIR`` is graded as it is; its metadata may say what it loses: ``{"autograder": {"loses": {...}}}``.

``check_before_grading(folder)`` is the cheap part (the notebook against checks.py, hidden-test code, one seed of
the solution): the class run (autograder.course.run) calls it before any student is graded, so an instructor's
mistake stops the run with what to fix instead of costing students points.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import hashlib
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import numpy as np
from nbgrader.preprocessors import ClearHiddenTests, ClearMarkScheme

from autograder import copies, mutation
from autograder.answers.grading import answer_sources, check_generator, grade_seeds
from autograder.checks import (
    EXACT,
    Broken,
    Call,
    Compared,
    Tolerance,
    Unavailable,
    close,
    computed,
    describe_call,
    largest_difference,
)
from autograder.course import assignments
from autograder.course.scaffold import FILL_IN
from autograder.notebook.pipeline import IGNORED, chain_config
from autograder.notebook.stubs import NamedStubs
from autograder.sandbox import UNSANDBOXED
from autograder.verdicts import Named, named_after
from autograder.visible import gaps as visible_gaps

DEFAULT_SEEDS = 5
MUTANT_SEEDS = 20  # the command's default: a mutant that earns full points on any of 20 seeds is a finding

KINDS = {
    "to-fill-in": f"a place the scaffold left to fill in still says {FILL_IN} (nothing is graded until none is left)",
    "checks-cannot-load": "checks.py cannot be imported (a syntax error, a failed import, an error at its top level)",
    "solution-below-full": "the solution (the source notebook as written) earns less than full points",
    "blank-above-zero": "the blank release (the answer cells as released) earns points",
    "id-not-in-checks": "a graded test cell of the notebook has no check in checks.py",
    "id-not-in-notebook": "a check of checks.py is no graded test cell of the notebook",
    "check-id-differs": "a check is filed in CHECKS under another id than its own check_id",
    "function-not-in-notebook": "a check grades a function no answer cell of the solution defines",
    "points-differ": "a check's points differ between the notebook's nbgrader metadata and checks.py",
    "hidden-test-code": "code in a hidden-tests block, which never counts in this engine",
    "check-raises": "the check's own code (its calls or a judge) raises on the solution",
    "release-cannot-be-made": "nbgrader's release steps fail on the notebook",
    "release-holds-solution": "a solution is left in the release",
    "release-holds-hidden": "a hidden check is left in the release",
    "release-holds-reference": "a statement of the reference (reference.py or the solution), renamed or re-indented, "
    "is in the release",
    "seed-dependent": "a check's points change with the seed for the same answers",
    "wrong-version-points": "a named wrong version does not lose the points it says",
    "wrong-version-invalid": "a named wrong version cannot be built",
    "mistake-raises": "a named mistake of a compare(...) check raises on the inputs drawn (it can never be named)",
    "mistake-not-seen": "a named mistake of a compare(...) check returns what the reference returns on every draw",
    "mistake-shadowed": "a named mistake of a compare(...) check returns what an earlier one returns on every input "
    "drawn: the earlier one is named first, so it never is",
    "marker-unknown": "a ### BEGIN / ### END line that nbgrader does not recognise (a misspelt marker): what it should "
    "hide is released",
    "reference-raises": "a reference function of reference.py raises on the inputs its checks draw",
    "reference-nan": "a reference function of reference.py returns NaN on the inputs its checks draw",
    "reference-random": "a reference function of reference.py depends on the global random generator (np.random)",
    "reference-float32": "a reference function of reference.py computes in float32, or gives other numbers for the "
    "same inputs in float32",
    "mistake-ids-collide": "two named mistakes whose words before the colon differ get the same id (letters only, "
    "eight words at most), so the report counts them as one",
    "mutant-survives": "a mutant of reference.py (autograder.mutation) earns full points on some seed: the checks "
    "never draw the inputs on which it is wrong",
    "equivalent-unknown": "EQUIVALENT_MUTANTS names a mutant that is not made or is killed, or gives no reason",
    "reference-below-full": "a reference function of reference.py, called in the grader's process on the checks' "
    "inputs, earns less than full points on its own checks",
    "visible-check-fails": "the solution, run in a kernel as a student runs it, fails a visible check of the "
    "notebook: a student with a right answer would be told it is wrong",
    "solution-cell-raises": "a cell of the solution that is not a check (a demo, a plot) raises when the notebook is "
    "run in a kernel: a student with a right answer meets the same error",
    **visible_gaps.KINDS,
}
BEFORE_GRADING = (  # the kinds check_before_grading looks for: cheap, and each one a student's loss
    "to-fill-in",
    "checks-cannot-load",
    "id-not-in-checks",
    "id-not-in-notebook",
    "check-id-differs",
    "function-not-in-notebook",
    "points-differ",
    "hidden-test-code",
    "check-raises",
    "solution-below-full",
    "marker-unknown",
    "reference-raises",
    "reference-nan",
    "reference-random",
    "reference-float32",
)
SOLUTION, BLANK = "solution", "blank"
HIDDEN = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS[ \t]*$(.*?)^[ \t]*### END HIDDEN TESTS", re.M | re.S)
SOLVED = re.compile(r"^[ \t]*### BEGIN SOLUTION[ \t]*$(.*?)^[ \t]*### END SOLUTION", re.M | re.S)
MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS", "BEGIN MARK SCHEME")
RECOGNISED = {  # what nbgrader finds in a line (its delimiters, in a line of a cell of that type) and how it reads
    "code": ("### BEGIN SOLUTION", "### END SOLUTION", "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"),
    "markdown": ("=== BEGIN MARK SCHEME ===", "=== END MARK SCHEME ==="),
}
LOOKS_LIKE_MARKER = re.compile(r"^\s*(#{2,}|={2,})\s*(BEGIN|END)\b", re.I)
DEFINES = r"^def[ \t]+{}[ \t]*\("
WHAT_IS_HIDDEN = {assignments.CHECKS_FILE: "the hidden checks", assignments.REFERENCE_FILE: "the answer key"}
REFERENCE_KINDS = ("reference-raises", "reference-nan", "reference-random", "reference-float32")
SHORTEST_SECRET = 12  # characters: a shorter line of a solution (``return x``) may well be in the starter too


@dataclass(frozen=True)
class Finding:
    """One authoring mistake: its kind (a key of KINDS), where it is, and what to fix; ``check``: the check id (or
    the notebook's grade id) it makes untrustworthy, "" when none (the wrong versions are not judged there)."""

    kind: str
    place: str
    message: str
    check: str = ""

    def text(self) -> str:
        return f"[{self.kind}] {self.place}: {self.message}"


@dataclass
class Report:
    """What validate found: the points per check of each version graded, per seed, and the findings."""

    assignment: str
    seeds: tuple
    maximum: dict = field(default_factory=dict)  # {check id: its points in checks.py}
    points: dict = field(default_factory=dict)  # {version: {check id: (points under each seed, in order)}}
    findings: list = field(default_factory=list)
    notes: list = field(default_factory=list)  # what was not tried, and why (no mistake of its own)
    mutants: dict = field(default_factory=dict)  # {reference function: {"made", "killed", "equivalent", "survived"}}
    mutant_seeds: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.findings

    @property
    def kinds(self) -> list[str]:
        return [finding.kind for finding in self.findings]

    def table(self) -> str:
        """Points per check (rows) of each version (columns); "1-2" where the seeds disagree, "-" not graded."""
        versions = list(self.points)
        header = ["check", "points", *versions]
        rows = []
        for check_id, top in self.maximum.items():
            row = [check_id, f"{top:g}"]
            for version in versions:
                seen = self.points[version].get(check_id)
                if not seen:
                    row.append("-")
                else:
                    low, high = min(seen), max(seen)
                    row.append(f"{low:g}" if low == high else f"{low:g}-{high:g}")
            rows.append(row)
        rows.append(
            ["total", f"{sum(self.maximum.values()):g}"]
            + [f"{sum(min(seen) for seen in self.points[v].values() if seen):g}" for v in versions]
        )
        widths = [max(len(str(line[k])) for line in [header, *rows]) for k in range(len(header))]
        return "\n".join(
            "  ".join(
                str(cell).ljust(width) if k == 0 else str(cell).rjust(width)
                for k, (cell, width) in enumerate(zip(line, widths))
            )
            for line in [header, *rows]
        )

    def text(self) -> str:
        seeds = ", ".join(str(seed) for seed in self.seeds)
        if "to-fill-in" in self.kinds or "checks-cannot-load" in self.kinds:
            lines = [f"{self.assignment}: nothing graded ({self.seconds:.1f} s)"]
        else:
            lines = [f"{self.assignment}: graded under seeds {seeds} in {self.seconds:.1f} s", self.table(), ""]
        if self.ok:
            lines.append(f"{self.assignment}: no authoring mistake found")
        elif "to-fill-in" in self.kinds:
            lines.append(
                f"{self.assignment}: {self.kinds.count('to-fill-in')} place(s) still to fill in ({FILL_IN}), so "
                "nothing was graded yet:"
            )
            lines.extend(f"  {finding.text()}" for finding in self.findings)
        else:
            lines.append(f"{self.assignment}: {len(self.findings)} authoring mistake(s):")
            lines.extend(f"  {finding.text()}" for finding in self.findings)
        if self.mutants:
            lines.insert(1, self.mutant_table())  # after the first line: the points table stays last before the end
        lines.extend(f"{self.assignment}: {note}" for note in self.notes)
        return "\n".join(lines)

    def mutant_table(self) -> str:
        """Per reference function: its mutants made, killed on every seed, marked equivalent, surviving."""
        header = ["mutants of reference.py", "made", "killed", "equivalent", "survived"]
        rows = [[name, *(str(counts[key]) for key in header[1:])] for name, counts in self.mutants.items()]
        rows.append(["total", *(str(sum(counts[key] for counts in self.mutants.values())) for key in header[1:])])
        widths = [max(len(line[k]) for line in [header, *rows]) for k in range(len(header))]
        table = [
            "  ".join(cell.ljust(w) if k == 0 else cell.rjust(w) for k, (cell, w) in enumerate(zip(line, widths)))
            for line in [header, *rows]
        ]
        return "\n".join([*table, f"(each mutant graded under {self.mutant_seeds} seeds, in this process)", ""])


class AuthoringError(Exception):
    """The assignment has authoring mistakes that would cost students points (check_before_grading)."""

    def __init__(self, report: Report, folder: Path):
        self.report = report
        findings = "\n".join(f"  {finding.text()}" for finding in report.findings)
        super().__init__(
            f"the assignment {report.assignment} has {len(report.findings)} authoring mistake(s), so no student was "
            f"graded (a mistake of the checks would cost every student points):\n{findings}\nFix them in "
            f"{folder}, then check with: python -m autograder.validate --source {folder.parent} "
            f"--assignment {folder.name}"
        )


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
    """checks.py:line of a check id's first quoted mention (else of CHECKS)."""
    text = checks_path.read_text(encoding="utf-8")
    number = line_of(text, f'"{check_id}"') or line_of(text, f"'{check_id}'") or line_of(text, "CHECKS") or 1
    return f"{checks_path}:{number}"


def closest(name: str, names) -> str:
    found = difflib.get_close_matches(name, list(names), n=1)
    return f" (the closest there: {found[0]!r})" if found else ""


def static_findings(checks: assignments.AssignmentChecks, notebook, notebook_name: str) -> list[Finding]:
    """The notebook against checks.py (ids, points, functions) and the hidden-tests blocks: nothing is run."""
    findings = []
    checks_path = checks.folder / assignments.CHECKS_FILE
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
    for path in sorted(checks_path.parent.glob("*.py"), key=lambda path: (path != checks_path, path.name)):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if FILL_IN in line:
                found(f"{path}:{number}", line)
    return findings


def load_finding(error: Exception, checks_path: Path) -> Finding:
    """Why checks.py cannot be imported, at its place (the line of a syntax error, else the frame in checks.py)."""
    if isinstance(error, (SyntaxError, assignments.ChecksMistake)) and error.lineno:
        place = f"{checks_path}:{error.lineno}"
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


# --- the release ---------------------------------------------------------------------------------------------


def blank_release(notebook):
    """The notebook as nbgrader's generate_assignment releases it (the course's stubs in place of the solutions,
    hidden tests and mark schemes removed): its steps that change a cell's text, with the course's configuration
    (autograder.notebook.pipeline.chain_config), in this process. Raises RuntimeError with nbgrader's message."""
    config = chain_config()
    released = nbformat.from_dict(json.loads(json.dumps(notebook)))
    resources = {}
    for step in (NamedStubs(config=config), ClearHiddenTests(config=config), ClearMarkScheme(config=config)):
        released, resources = step.preprocess(released, resources)
    return released


def secret_lines(notebook) -> dict:
    """{line: ("solution" | "hidden", grade id)}: the lines of the solution and hidden-test regions (a whole answer
    cell without markers but its def lines), not shorter than SHORTEST_SECRET and shown nowhere else."""
    secret, shown = {}, set()
    for index, cell in enumerate(notebook.cells):
        regions = [("hidden", block) for block in HIDDEN.finditer(cell.source)]
        regions += [("solution", block) for block in SOLVED.finditer(cell.source)]
        kept = cell.source
        for _, block in regions:
            kept = kept.replace(block.group(0), "")
        if flags_of(cell).get("solution") and not any(kind == "solution" for kind, _ in regions):
            lines = [line for line in cell.source.splitlines() if not line.lstrip().startswith(("def ", '"""'))]
            secret.update({line.strip(): ("solution", cell_name(cell, index)) for line in lines})
            kept = ""
        for kind, block in regions:
            secret.update({line.strip(): (kind, cell_name(cell, index)) for line in block.group(1).splitlines()})
        shown.update(line.strip() for line in kept.splitlines())
    return {
        line: where
        for line, where in secret.items()
        if len(line) >= SHORTEST_SECRET and line not in shown and not any(mark in line for mark in MARKERS)
    }


def release_findings(source_notebook, released, label: str) -> list[Finding]:
    """A solution or hidden check left in the release notebook ``released`` (its place named ``label``)."""
    findings = []
    secrets = secret_lines(source_notebook)
    for index, cell in enumerate(released.cells):
        for number, line in enumerate(cell.source.splitlines(), start=1):
            place = f"{label}, cell {cell_name(cell, index)}, line {number}"
            marker = next((mark for mark in MARKERS if mark in line), None)
            if marker:
                kind = "release-holds-hidden" if "HIDDEN" in marker else "release-holds-solution"
                findings.append(
                    Finding(
                        kind,
                        place,
                        f"the release still holds the marker {marker!r}: put it on a line of its own, spelt as "
                        "nbgrader's (### BEGIN SOLUTION / ### END SOLUTION, ### BEGIN HIDDEN TESTS / ### END HIDDEN "
                        "TESTS), in a cell marked as an answer or a test, and release again",
                    )
                )
            elif line.strip() in secrets:
                kind, where = secrets[line.strip()]
                findings.append(
                    Finding(
                        f"release-holds-{kind}",
                        place,
                        f"the release holds {line.strip()[:60]!r}, a line of the {kind} of cell {where}: put it "
                        f"between nbgrader's markers in a cell marked {'an answer' if kind == 'solution' else 'a test'}"
                        " (or delete it there) and release again",
                    )
                )
    return findings


def solution_code(source_notebook) -> tuple[str, list[str]]:
    """(the source notebook's answer cells, as one Python source; the normalised statements of its other code cells,
    which the release shows on purpose: autograder.copies' ``shared``)."""
    answers, shown = [], []
    for cell in source_notebook.cells:
        if cell.cell_type != "code" or not parses(cell.source):
            continue
        if flags_of(cell).get("solution"):
            answers.append(cell.source)
        else:
            shown.append(cell.source)
    shared = set()
    for source in shown:
        shared.update(copies.reference_statements("def shown():\n" + indented(source)))
    return "\n\n".join(answers), sorted(shared)


def parses(source: str) -> bool:
    try:
        ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    return True


def indented(source: str) -> str:
    return "".join(f"    {line}\n" for line in source.splitlines()) or "    pass\n"


def reference_copy_findings(reference: Path, source_notebook, code: dict[str, str]) -> list[Finding]:
    """A statement of the reference (``reference``, reference.py, and the solution's answer cells), normalised
    (autograder.copies), found in ``code`` ({place: Python source}: what the release holds), but a statement the
    source notebook shows outside its answers too."""
    solutions, shared = solution_code(source_notebook)
    sources = [reference.read_text(encoding="utf-8")] if reference.is_file() else []
    sources += [solutions] if solutions else []
    findings, seen = [], set()
    for source in sources:
        if not parses(source):
            continue
        for copy in copies.copied_statements(source, code, shared):
            if (copy.where, copy.line) in seen:
                continue
            seen.add((copy.where, copy.line))
            findings.append(
                Finding(
                    "release-holds-reference",
                    f"{copy.where}, line {copy.line}",
                    f"the release holds a statement of {copy.function}'s answer, {copy.statement[:60]!r} (the same "
                    "code with other names or spacing): students would be handed it; delete it from the release, or "
                    "show it in the source notebook outside the answer cells if it is meant to be shown",
                )
            )
    return findings


def release_code(released, label: str) -> dict[str, str]:
    """{place: source} of a released notebook's code cells, lines of IPython magic left out."""
    return {
        f"{label}, cell {cell_name(cell, index)}": "\n".join(
            line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!"))
        )
        for index, cell in enumerate(released.cells)
        if cell.cell_type == "code"
    }


def released_folder_findings(folder: Path, checks_path: Path, source_notebook, notebook_name: str) -> list[Finding]:
    """A committed release folder (release/<assignment>/): its notebook, and no copy of checks.py or of the
    reference (reference.py) in it."""
    findings = []
    hidden = [path for path in (checks_path, checks_path.parent / assignments.REFERENCE_FILE) if path.is_file()]
    for path in sorted(folder.rglob("*")):
        if not (path.is_file() and path.suffix == ".py"):
            continue
        for secret in hidden:
            if path.read_bytes() == secret.read_bytes():
                findings.append(
                    Finding(
                        "release-holds-hidden",
                        str(path),
                        f"the release holds a copy of {secret} ({WHAT_IS_HIDDEN.get(secret.name, 'instructor-only')}):"
                        f" delete it; nbgrader's CourseDirectory.ignore keeps {secret.name} out of a release it makes",
                    )
                )
    code = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.suffix == ".py" and path.stat().st_size < 2**20:
            code[str(path)] = path.read_text(encoding="utf-8", errors="replace")
        elif path.is_file() and path.suffix == ".ipynb" and path.stat().st_size < 2**25:
            try:
                code.update(release_code(nbformat.read(path, as_version=4), str(path)))
            except Exception:  # noqa: BLE001 - not a notebook: nbgrader's release would not make it either
                continue
    findings += reference_copy_findings(checks_path.parent / assignments.REFERENCE_FILE, source_notebook, code)
    released = folder / notebook_name
    if released.is_file():
        findings += release_findings(source_notebook, nbformat.read(released, as_version=4), str(released))
    return findings


# --- grading -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Wrong:
    """A named wrong version: its answer cells, and what it must lose ({check id: points} exact, a tuple of check
    ids: some points each, None: some points in all)."""

    name: str
    sources: list
    loses: dict | tuple | None


def replaced(solution: list[str], answers: dict) -> tuple[list[str], list[str]]:
    """The solution's answer cells with the cell defining each function of ``answers`` replaced; and the functions
    that no cell defines."""
    cells, missing = list(solution), []
    for function, text in answers.items():
        found = [n for n, cell in enumerate(cells) if re.search(DEFINES.format(re.escape(function)), cell, re.M)]
        if not found:
            missing.append(function)
            continue
        cells[found[0]] = text
    return cells, missing


def declared_wrong(checks: assignments.AssignmentChecks, solution: list[str]) -> tuple[list[Wrong], list[Finding]]:
    versions, findings = [], []
    place = f"{checks.folder / assignments.CHECKS_FILE}:{wrong_line(checks)}"
    for name, spec in (checks.wrong_versions or {}).items():
        answers = spec.get("answers") if isinstance(spec, dict) else None
        if not isinstance(answers, dict) or not answers:
            findings.append(
                Finding(
                    "wrong-version-invalid",
                    place,
                    f"WRONG_VERSIONS[{name!r}] has no answers: give {{'answers': {{function: its wrong source}}, "
                    "'loses': {check id: points}}",
                )
            )
            continue
        sources, missing = replaced(solution, answers)
        if missing:
            findings.append(
                Finding(
                    "wrong-version-invalid",
                    place,
                    f"WRONG_VERSIONS[{name!r}] replaces {', '.join(missing)}, which no answer cell defines: name a "
                    "graded function",
                )
            )
            continue
        versions.append(Wrong(name, sources, spec.get("loses")))
    return versions, findings


def counted(points: float) -> str:
    """'1 point', '0.5 points', '2 points'."""
    return f"{points:g} point" + ("" if points == 1 else "s")


def wrong_line(checks: assignments.AssignmentChecks) -> int:
    text = (checks.folder / assignments.CHECKS_FILE).read_text(encoding="utf-8")
    return line_of(text, "WRONG_VERSIONS") or 1


def notebook_wrong(folder: Path) -> list[Wrong]:
    versions = []
    for path in sorted(Path(folder).glob("*.ipynb")):
        notebook = json.loads(path.read_text(encoding="utf-8"))
        loses = notebook.get("metadata", {}).get("autograder", {}).get("loses")
        versions.append(Wrong(path.stem, answer_sources(notebook), loses))
    return versions


def raised_in(error: BaseException, path: Path) -> bool:
    """Whether ``error`` was raised by code of the file ``path`` (its innermost frame there)."""
    frames = traceback.extract_tb(error.__traceback__)
    return bool(frames) and Path(frames[-1].filename).resolve() == path.resolve()


def raise_place(error: BaseException, checks_path: Path) -> str:
    """file:line of the innermost frame of checks.py where ``error`` was raised (else the innermost frame)."""
    frames = traceback.extract_tb(error.__traceback__)
    mine = [frame for frame in frames if Path(frame.filename).resolve() == checks_path.resolve()]
    frame = (mine or frames)[-1]
    return f"{frame.filename}:{frame.lineno}"


def planned(checks: assignments.AssignmentChecks, seeds) -> tuple[list[str], list[Finding]]:
    """The checks whose calls can be drawn under every seed, and a finding for each one whose calls(rng) raises."""
    usable, findings = [], []
    checks_path = checks.folder / assignments.CHECKS_FILE
    for check_id, check in checks.checks.items():
        for seed in seeds:
            try:
                check.calls(check_generator(seed, check_id))
            except Exception as error:  # noqa: BLE001 - the instructor's code: said with its place
                findings.append(
                    Finding(
                        "check-raises",
                        raise_place(error, checks_path),
                        f"{check_id}'s calls(rng) raises {type(error).__name__}: {error} (seed {seed}): every "
                        "student's grading of this check would fail; correct it",
                        check_id,
                    )
                )
                break
        else:
            usable.append(check_id)
    return usable, findings


def judge_findings(checks: assignments.AssignmentChecks, kept: dict) -> list[Finding]:
    """Each judge run again on the solution's results: one that raises (other than Broken or Unavailable) is the
    instructor's error, named with its place in checks.py."""
    found = {}
    checks_path = checks.folder / assignments.CHECKS_FILE
    for seed, outputs in kept.items():
        for check_id, out in outputs.items():
            for name, judge in checks.checks[check_id].properties:
                try:
                    judge(out)
                except (Broken, Unavailable):
                    continue
                except Exception as error:  # noqa: BLE001 - the instructor's code: said with its place
                    if raised_in(error, checks.folder / assignments.REFERENCE_FILE):
                        continue  # the reference's own error: reference_findings names it at reference.py
                    found.setdefault(
                        (check_id, name),
                        Finding(
                            "check-raises",
                            raise_place(error, checks_path),
                            f"the judge of {check_id}'s property {name!r} raises {type(error).__name__}: {error} on "
                            f"the solution (seed {seed}); a student would lose its points ('the result could not be "
                            "compared'): correct the judge",
                            check_id,
                        ),
                    )
    return list(found.values())


def mistake_findings(checks: assignments.AssignmentChecks, kept: dict) -> list[Finding]:
    """Each named mistake of a compare(...) check, run on the inputs each seed drew: one that raises on every input
    can never be named (``mistake-raises``; raising on some, it is tried on the others); one that returns what the
    reference returns on every call of a seed cannot be told from a right answer by that seed's draws
    (``mistake-not-seen``); one that returns what an earlier one returns wherever it applies is never named, the
    earlier one being tried first (``mistake-shadowed``). A call on which the reference itself raises is left out
    (reference_findings names it)."""
    found = {}
    checks_path = checks.folder / assignments.CHECKS_FILE
    for seed, outputs in kept.items():
        for check_id, out in outputs.items():
            check = checks.checks[check_id]
            if not isinstance(check, Compared):
                continue
            calls, expected = [], []
            for number in out.numbers():
                try:
                    expected.append(computed(check.reference, out.calls[number], check.items))
                    calls.append(out.calls[number])
                except Exception:  # noqa: BLE001 - the reference's own error: reference_findings says it
                    continue
            made_by = {}  # {message: [its result per call, None where it raises]}
            for message, wrong in check.mistakes:
                key = (check_id, message)
                results, error = [], None
                for call in calls:
                    try:
                        results.append(computed(wrong, call, check.items))
                    except Exception as failure:  # noqa: BLE001 - the instructor's code: said with its place
                        results.append(None)
                        error = error or (failure, call)
                made_by[message] = results
                if key in found:
                    continue
                if calls and all(result is None for result in results):
                    failure, call = error
                    found[key] = Finding(
                        "mistake-raises",
                        raise_place(failure, checks_path),
                        f"{check_id}'s mistake {message[:60]!r} raises {type(failure).__name__}: {failure} on every "
                        f"input drawn (seed {seed}, e.g. {describe_call(call)}): it can never be named; correct it",
                    )
                    continue
                if not any(
                    result is not None and not all(close(a, b, EXACT) for a, b in zip(result, wanted))
                    for result, wanted in zip(results, expected)
                ):
                    found[key] = Finding(
                        "mistake-not-seen",
                        checks_place(checks_path, check_id),
                        f"{check_id}'s mistake {message[:60]!r} returns what the reference returns on every input "
                        f"drawn under seed {seed}: a student who makes it loses nothing. Draw inputs on which it "
                        "differs (in one of the inputs' properties), or correct the mistake's function",
                    )
                    continue
                for earlier, theirs in list(made_by.items())[:-1]:
                    if earlier != message and all(
                        mine is None or (other is not None and all(close(a, b, EXACT) for a, b in zip(mine, other)))
                        for mine, other in zip(results, theirs)
                    ):
                        found[key] = Finding(
                            "mistake-shadowed",
                            checks_place(checks_path, check_id),
                            f"{check_id}'s mistake {message[:60]!r} returns what the earlier {earlier[:60]!r} "
                            f"returns on every input drawn (seed {seed}): the earlier one is tried first, so this one "
                            "is never named; delete it, or make it another mistake",
                        )
                        break
    return list(found.values())


def reference_problem(function, call) -> tuple[str, str] | None:
    """(kind, what is wrong) of the reference ``function`` on ``call``'s inputs, or None: it raises, returns NaN,
    depends on np.random's state, or computes in float32 (all its numbers float32's, or other numbers for the same
    inputs given in float32: compared within 1e-3, inputs up to 100, where float32's rounding is far smaller)."""
    saved, saved_python = np.random.get_state(), random.getstate()

    def run(args, kwargs, state):
        np.random.seed(state)
        random.seed(state)
        return computed(function, Call(call.function, args, kwargs), call.items)

    try:
        try:
            first = run(call.args, call.kwargs, 1)
        except Exception as error:  # noqa: BLE001 - the instructor's reference: said with its place
            return "reference-raises", f"raises {type(error).__name__}: {error}"
        if any(np.isnan(value).any() for value in first):
            return "reference-nan", "returns NaN"
        try:
            second = run(call.args, call.kwargs, 2)
        except Exception as error:  # noqa: BLE001 - the instructor's reference: said with its place
            return "reference-random", f"raises {type(error).__name__} once np.random's state changes: {error}"
        if not all(close(a, b, Tolerance(0.0)) for a, b in zip(first, second)):
            return "reference-random", (
                "returns other numbers once np.random's state changes: it draws from the global random generator; a "
                "reference is the answer, the same on every call (draw inputs in the check, from its rng)"
            )
        fractions = np.concatenate([value[np.isfinite(value) & (value != np.round(value))] for value in first])
        if fractions.size >= 4 and (fractions.astype(np.float32).astype(np.float64) == fractions).all():
            return "reference-float32", (
                "returns only numbers that float32 can hold: it computes in float32; compute in float64, "
                "np.asarray(x, dtype=np.float64)"
            )
        floats = [a for a in (*call.args, *call.kwargs.values()) if isinstance(a, np.ndarray) and a.dtype == np.float64]
        for label in range(len(call.args)) if fractions.size >= 4 else ():
            # float64 arithmetic follows a change of an input far below float32's rounding: a reference whose result
            # follows a change of 1e-4 but not one of 1e-9 computes with that input in float32
            if not (isinstance(call.args[label], np.ndarray) and call.args[label].dtype == np.float64):
                continue
            same = [
                all(np.array_equal(a, b, equal_nan=True) for a, b in zip(first, run(*nudge(call, label, step), 1)))
                for step in (NUDGE, 1e-4)
            ]
            if same == [True, False]:
                return "reference-float32", (
                    f"returns the very same numbers when argument {label + 1} changes by {NUDGE:.1g} of itself, "
                    "which float64 arithmetic follows (it follows a change of 1e-4): it computes in float32 (or "
                    "less); compute in float64, np.asarray(x, dtype=np.float64)"
                )
        if floats and all(np.abs(a[np.isfinite(a)]).max(initial=0.0) <= 100 for a in floats):

            def single(value):
                return (
                    value.astype(np.float32) if isinstance(value, np.ndarray) and value.dtype == np.float64 else value
                )

            args = tuple(single(a) for a in call.args)
            kwargs = {key: single(value) for key, value in call.kwargs.items()}
            try:
                third = run(args, kwargs, 1)
            except Exception as error:  # noqa: BLE001 - the instructor's reference: said with its place
                return "reference-float32", f"raises {type(error).__name__} on the same inputs in float32: {error}"
            if not all(close(a, b, Tolerance(1e-3, 1e-3)) for a, b in zip(first, third)):
                return "reference-float32", (
                    f"gives other numbers for the same inputs in float32 ({largest_difference(third[0], first[0])}): "
                    "convert its inputs, np.asarray(x, dtype=np.float64), and compute in float64"
                )
        return None
    finally:
        np.random.set_state(saved)
        random.setstate(saved_python)


NUDGE = 2.0**-30  # a relative change of the inputs that float64 keeps and float32 (about 6e-8) rounds away


def nudge(call: Call, label: int, step: float) -> tuple[tuple, dict]:
    """The call's arguments with argument ``label`` times (1 + step), the others as they are."""
    args = tuple(value * (1.0 + step) if number == label else value for number, value in enumerate(call.args))
    return args, dict(call.kwargs)


def reference_findings(checks: assignments.AssignmentChecks, kept: dict) -> list[Finding]:
    """Each reference function of reference.py that, called here on the inputs its checks drew, raises, returns
    NaN, depends on the global random generator or computes in float32: the instructor's mistake, named at
    reference.py, not a student's (reference_problem)."""
    path = checks.folder / assignments.REFERENCE_FILE
    if not path.is_file():
        return []
    module = assignments.reference(checks.folder)
    lines = {name: node.lineno for name, node in mutation.reference_functions(path).items()}
    found: dict = {}
    for seed, outputs in kept.items():
        for check_id, out in outputs.items():
            check = checks.checks[check_id]
            name = mutation.reference_name(check, checks.references)
            function = getattr(check, "reference", None) or getattr(module, name, None)
            if not callable(function):
                continue
            for call in out.calls:
                if call.drive is not None or any((name, kind) in found for kind in REFERENCE_KINDS):
                    continue
                problem = reference_problem(function, call)
                if problem is not None:
                    kind, said = problem
                    found[(name, kind)] = Finding(
                        kind,
                        f"{path}:{lines.get(name, 1)}",
                        f"the reference {name} {said}, on {describe_call(call)} ({check_id}, seed {seed}): every "
                        "student is judged against it; correct reference.py",
                        check_id,
                    )
    return list(found.values())


def mutant_findings(checks: assignments.AssignmentChecks, usable: list, seeds: int) -> tuple[dict, list[Finding]]:
    """The assignment's checks proved by mutating its reference (autograder.mutation): ({reference function: its
    counts}, a finding per mutant that earns full points on a seed and is not in EQUIVALENT_MUTANTS, per marked one
    that is not made or is killed, and per reference function that loses points on its own checks here)."""
    reference_path = checks.folder / assignments.REFERENCE_FILE
    checks_path = checks.folder / assignments.CHECKS_FILE
    if not reference_path.is_file():
        return {}, []
    module = assignments.reference(checks.folder)
    chosen = {check_id: checks.checks[check_id] for check_id in usable}
    drawn = mutation.plans(chosen, range(seeds), check_generator)
    short, outcomes = mutation.mutate(
        module, reference_path, chosen, drawn, references=checks.references, task_sizes=checks.task_sizes
    )
    lines = {name: node.lineno for name, node in mutation.reference_functions(reference_path).items()}
    findings = [
        Finding(
            "reference-below-full",
            f"{reference_path}:{lines.get(name, 1)}",
            f"the reference {name}, called here on its checks' inputs, loses points on them (seed {seed}): the "
            "reference or its checks are wrong; correct reference.py (or the check), then validate again",
        )
        for name, seed in short.items()
        if seed is not None
    ]
    counts: dict = {}
    equivalent = checks.equivalent_mutants or {}
    made = {outcome.mutant.key for outcome in outcomes}
    for outcome in outcomes:
        mutant = outcome.mutant
        tally = counts.setdefault(mutant.function, {"made": 0, "killed": 0, "equivalent": 0, "survived": 0})
        tally["made"] += 1
        if outcome.survived is None:
            tally["killed"] += 1
            if mutant.key in equivalent:
                findings.append(
                    Finding(
                        "equivalent-unknown",
                        checks_place(checks_path, "EQUIVALENT_MUTANTS"),
                        f"EQUIVALENT_MUTANTS marks {mutant.key!r}, which the checks kill on every seed: it is not "
                        "equivalent; remove it",
                    )
                )
        elif mutant.key in equivalent and str(equivalent[mutant.key]).strip():
            tally["equivalent"] += 1
        else:
            tally["survived"] += 1
            findings.append(
                Finding(
                    "mutant-survives",
                    f"{reference_path}:{lines.get(mutant.function, 1)}",
                    f"the mutant {mutant.key!r} ({mutant.operator}) earns full points on {', '.join(outcome.checks)} "
                    f"under seed {outcome.survived}: draw inputs on which it is wrong (autograder.coverage), or, if "
                    "no input of the task tells it from the reference, add it to EQUIVALENT_MUTANTS in checks.py "
                    f"with why:\n{mutant.diff}",
                )
            )
    for key, reason in equivalent.items():
        if key not in made or not str(reason).strip():
            findings.append(
                Finding(
                    "equivalent-unknown",
                    checks_place(checks_path, "EQUIVALENT_MUTANTS"),
                    f"EQUIVALENT_MUTANTS marks {key!r}, "
                    + ("without a reason: say why no input tells it apart" if key in made else "which is no mutant")
                    + f"{closest(key, made)}",
                )
            )
    return counts, findings


def mistake_id_findings(checks: assignments.AssignmentChecks) -> list[Finding]:
    """Named mistakes of compare(...) checks whose words before the colon differ but give the same id
    (verdicts.named_after: those words, lowercase letters only, eight at most): the report would count them as one
    mistake. The same words in two checks (the fix after the colon worded for each) are one mistake on purpose, and
    a message Named with its own id keeps it: neither is reported."""
    checks_path = checks.folder / assignments.CHECKS_FILE
    text = checks_path.read_text(encoding="utf-8")
    named: dict = {}  # {id: {the words before the colon: (the first message with them, its check)}}
    for check_id, check in checks.checks.items():
        for message, _ in check.mistakes if isinstance(check, Compared) else ():
            if not isinstance(message, Named):
                words = message.split(":", 1)[0].strip()
                named.setdefault(named_after(message), {}).setdefault(words, (message, check_id))
    findings = []
    for mistake, said in named.items():
        (first, first_check), *others = said.values()
        for message, check_id in others:
            line = next(filter(None, (line_of(text, message[:most]) for most in (len(message), 60, 40))), None)
            findings.append(
                Finding(
                    "mistake-ids-collide",
                    f"{checks_path}:{line}" if line else checks_place(checks_path, check_id),
                    f"the mistakes {first[:60]!r} ({first_check}) and {message[:60]!r} ({check_id}) both get the id "
                    f"{mistake!r}, so the class's report counts them as one mistake: make their words before the "
                    "colon differ in letters within the first eight words (the id is made of them; numbers and signs "
                    "are left out), or give both the same words if they are one mistake",
                )
            )
    return findings


def points_of(graded: dict) -> dict:
    """{check id: (points under each seed)} of grade_seeds' {seed: {check id: Verdict}}."""
    table = {}
    for verdicts in graded.values():
        for check_id, verdict in verdicts.items():
            table.setdefault(check_id, []).append(verdict.points)
    return {check_id: tuple(points) for check_id, points in table.items()}


def grading_findings(
    checks, graded: dict, maximum: dict, notebook_name: str, known: dict | None = None
) -> list[Finding]:
    """The solution below full points, the blank above 0, points that change with the seed; ``known``: {check id:
    the kind of an earlier finding on it}, which a solution below full points there names (a wrong reference, a check
    that raises) instead of blaming the solution."""
    findings, known = [], known or {}
    solution, blank = graded.get(SOLUTION, {}), graded.get(BLANK, {})
    for check_id, seen in points_of(solution).items():
        short = {seed: v for seed, v in solution.items() if v[check_id].points < v[check_id].max_points}
        if short:
            seed, verdicts = next(iter(short.items()))
            failed = "; ".join(f"{p.name}: {p.message}" for p in verdicts[check_id].failed) or "no property held"
            findings.append(
                Finding(
                    "solution-below-full",
                    f"{notebook_name}, cell {check_id}",
                    f"the solution earns {min(seen):g} / {maximum[check_id]:g} under seed(s) "
                    f"{', '.join(map(str, short))} ({failed}): "
                    + (
                        f"it follows from the {known[check_id]} finding on {check_id}: correct that first"
                        if check_id in known
                        else "correct the solution or the check"
                    ),
                    check_id,
                )
            )
    for check_id, seen in points_of(blank).items():
        if max(seen) > 0:
            seed = next(s for s, v in blank.items() if v[check_id].points > 0)
            holding = ", ".join(p.name for p in blank[seed][check_id].properties if p.passed) or "none"
            findings.append(
                Finding(
                    "blank-above-zero",
                    f"{notebook_name}, cell {check_id}",
                    f"the blank release earns {max(seen):g} / {maximum[check_id]:g} (seed {seed}; properties that "
                    f"hold on the starter code: {holding}): a student who writes nothing must earn 0; make the check "
                    "fail the stub, or take the solution out of the starter code",
                )
            )
    for version, table in graded.items():
        for check_id, seen in points_of(table).items():
            if len(set(seen)) > 1:
                by_seed = ", ".join(f"seed {seed}: {v[check_id].points:g}" for seed, v in table.items())
                findings.append(
                    Finding(
                        "seed-dependent",
                        f"{notebook_name}, cell {check_id}",
                        f"the {version} earns different points under different seeds ({by_seed}): some draws do not "
                        "decide every property; draw inputs that show each mistake on every seed",
                    )
                )
    return findings


def wrong_version_findings(graded: dict, maximum: dict, wrong: list[Wrong], blocked: dict) -> list[Finding]:
    """Each named wrong version that does not lose what it says, judged on every check but those of ``blocked``
    ({check or grade id: the kind of the finding that makes its points meaningless there: a check that raises on
    the solution, the solution below full points, an id in one place only}): what a wrong version loses there
    follows from that finding, said once by validate_assignment."""
    findings = []
    for version in wrong:
        table = points_of(graded.get(version.name, {}))
        lost = {check_id: maximum[check_id] - min(seen) for check_id, seen in table.items() if check_id not in blocked}
        if not lost:
            continue
        place = f"wrong version {version.name!r}"
        if version.loses is None:
            if sum(lost.values()) <= 0 and not blocked:
                findings.append(
                    Finding("wrong-version-points", place, "it earns full points: no check sees this mistake")
                )
            continue
        named = version.loses if isinstance(version.loses, dict) else {check_id: None for check_id in version.loses}
        for check_id, amount in lost.items():
            wanted = named.get(check_id, 0.0)
            if check_id in named and wanted is None:
                wrong_amount = amount <= 0
                expected = "some points"
            else:
                wrong_amount = abs(amount - float(wanted)) > 0.01
                expected = counted(float(wanted))
            if wrong_amount:
                findings.append(
                    Finding(
                        "wrong-version-points",
                        f"{place}, cell {check_id}",
                        f"it loses {counted(amount)} on {check_id}, where it should lose {expected}: make the check "
                        "see this mistake (and only it), or correct what the wrong version says it loses",
                    )
                )
        for check_id in sorted(set(named) - set(lost) - set(blocked)):
            findings.append(
                Finding(
                    "wrong-version-invalid",
                    place,
                    f"it names {check_id!r}, which is no check{closest(check_id, lost)}",
                )
            )
    return findings


# --- the whole -------------------------------------------------------------------------------------------------


def validate_assignment(
    *,
    source: Path,
    assignment: str,
    seeds: int = DEFAULT_SEEDS,
    wrong: Path | None = None,
    release: Path | None = None,
    blank: bool = True,
    driven: bool = True,
    check_release: bool = True,
    visible: bool = True,
    mutant_seeds: int = 0,
) -> Report:
    """Every authoring mistake of the assignment ``assignment`` of the folder ``source`` (see the module).

    seeds: how many seeds (0 .. seeds-1) each version is graded under; wrong: a folder of wrong versions'
    notebooks; release: the committed release folder to check (default: <source>/../release/<assignment>/ where it
    exists); blank: grade the blank release too; driven: make the driven calls (the store's model); check_release:
    look for a solution or hidden check left in the release; visible: run the solution in a Jupyter kernel, as a
    student runs it, and find each visible check it fails and each other cell that raises (visible_findings);
    mutant_seeds: mutate reference.py and grade every mutant under that many seeds (mutant_findings; 0: not tried).
    Raises assignments.NoAssignment, sandbox.SandboxUnavailable (no bubblewrap and unsandboxed not allowed).
    """
    started = time.monotonic()
    source = Path(source)
    layout = assignments.find(source, assignment)
    folder = source / layout.name
    notebook_name = f"{layout.notebook}.ipynb"
    notebook = nbformat.read(folder / notebook_name, as_version=4)
    seed_list = tuple(range(max(1, int(seeds))))
    checks_path = folder / assignments.CHECKS_FILE
    unfilled = fill_in_findings(notebook, notebook_name, checks_path)
    try:
        checks = assignments.load(folder)
    except assignments.NoChecks:
        raise
    except Exception as error:  # noqa: BLE001 - the instructor's checks.py: said with its place, not a traceback
        report = Report(layout.name, seed_list, findings=[*unfilled, load_finding(error, checks_path)])
        if wrong is not None or "WRONG_VERSIONS" in checks_path.read_text(encoding="utf-8"):
            report.notes.append("the wrong versions were not tried: checks.py cannot be imported")
        report.seconds = time.monotonic() - started
        return report
    report = Report(layout.name, seed_list, {key: float(check.points) for key, check in checks.checks.items()})
    report.findings += unfilled + static_findings(checks, notebook, notebook_name) + mistake_id_findings(checks)
    if unfilled:  # a scaffold still to fill in: grading it would only repeat what the markers say
        report.seconds = time.monotonic() - started
        return report
    usable, raising = planned(checks, seed_list)
    report.findings += raising
    solution = answer_sources(notebook)
    versions = {SOLUTION: solution}
    if blank or check_release:
        try:
            released = blank_release(notebook)
        except Exception as error:  # noqa: BLE001 - nbgrader's own message says what is wrong
            report.findings.append(
                Finding("release-cannot-be-made", notebook_name, f"nbgrader's release steps fail: {error}")
            )
        else:
            if blank:
                versions[BLANK] = answer_sources(released)
            if check_release:
                label = f"the release of {notebook_name}"
                report.findings += release_findings(notebook, released, label)
                report.findings += reference_copy_findings(
                    folder / assignments.REFERENCE_FILE, notebook, release_code(released, label)
                )
    committed = Path(release) if release is not None else source.parent / "release" / layout.name
    if check_release and committed.is_dir():
        report.findings += released_folder_findings(
            committed, folder / assignments.CHECKS_FILE, notebook, notebook_name
        )
    wrongs, invalid = declared_wrong(checks, solution)
    wrongs += notebook_wrong(wrong) if wrong is not None else []
    report.findings += invalid
    versions.update({version.name: version.sources for version in wrongs})
    graded = {}
    if usable:
        kept = {}
        for name, sources in versions.items():
            graded[name] = grade_seeds(
                checks, sources, seed_list, checks=usable, driven=driven, keep=kept if name == SOLUTION else None
            )
            report.points[name] = points_of(graded[name])
        blamed = reference_findings(checks, kept)
        report.findings += blamed + judge_findings(checks, kept) + mistake_findings(checks, kept)
    known = {}  # {check id: the kind of its first finding}, a wrong reference's first
    for finding in sorted(report.findings, key=lambda finding: finding.kind not in REFERENCE_KINDS):
        if finding.check:
            known.setdefault(finding.check, finding.kind)
    report.findings += grading_findings(checks, graded, report.maximum, notebook_name, known)
    blocked = {}
    for finding in report.findings:
        if finding.check:
            blocked.setdefault(finding.check, finding.kind)
    report.findings += wrong_version_findings(graded, report.maximum, wrongs, blocked)
    if check_release and usable:  # what the notebook's visible checks let through (autograder.visible.gaps)
        gaps = visible_gaps.findings(folder)
        report.findings += [Finding(gap.kind, gap.place, gap.message, gap.check) for gap in gaps]
    if mutant_seeds > 0 and usable:
        report.mutant_seeds = int(mutant_seeds)
        report.mutants, found = mutant_findings(checks, usable, int(mutant_seeds))
        report.findings += found
    if wrongs and blocked:
        report.notes.append(
            f"the wrong versions were not judged on {', '.join(f'{key} ({kind})' for key, kind in blocked.items())}: "
            "what they lose there follows from the finding(s) named; correct those, then validate again"
        )
    if visible:  # after the wrong versions: a visible check the solution fails leaves the hidden grading as it is
        from jupyter_client.kernelspec import NoSuchKernel

        try:
            report.findings += visible_findings(notebook, folder, notebook_name)
        except NoSuchKernel:
            report.notes.append(
                "the solution was not run in a kernel (its visible checks not tried): this environment has no python3 "
                "Jupyter kernel; pip install ipykernel, or pass --no-run"
            )
    report.seconds = time.monotonic() - started
    return report


_before: dict = {}  # {digest of the assignment's files: Report}: a process grading a class again asks once


def check_before_grading(folder: Path) -> Report:
    """The cheap part of validate, for a class run before any student is graded: the notebook against checks.py
    (ids, points, functions), code in hidden-tests blocks, and one seed of the solution (check code that raises on
    it, a solution below full points). Raises AuthoringError naming each mistake and what to fix."""
    folder = Path(folder)
    files = sorted(path for path in folder.iterdir() if path.is_file())
    key = hashlib.sha256(b"".join(path.name.encode() + b"\0" + path.read_bytes() for path in files)).hexdigest()
    if key not in _before:
        report = validate_assignment(
            source=folder.parent, assignment=folder.name, seeds=1, blank=False, check_release=False, visible=False
        )
        report.findings = [finding for finding in report.findings if finding.kind in BEFORE_GRADING]
        _before[key] = report
    report = _before[key]
    if not report.ok:
        raise AuthoringError(report, folder)
    return report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m autograder.validate",
        description="Check an assignment before students see it: the solution earns full points and the blank "
        "release none under every seed, the notebook and checks.py agree, nothing secret is released, and each "
        "named wrong version loses the points it says. Exit status 0 only when no mistake is found.",
    )
    parser.add_argument("--source", type=Path, default=Path("source"), help="the folder of assignments (source/)")
    parser.add_argument("--assignment", help="the assignment's folder name (default: the only one in --source)")
    parser.add_argument("--seeds", type=int, default=DEFAULT_SEEDS, help="seeds to grade under (default 5)")
    parser.add_argument("--wrong", type=Path, help="a folder of wrong versions' notebooks to grade too")
    parser.add_argument(
        "--mutant-seeds",
        type=int,
        default=MUTANT_SEEDS,
        help=f"seeds each mutant of reference.py is graded under (default {MUTANT_SEEDS}; 0: no mutants)",
    )
    parser.add_argument("--release", type=Path, help="the release folder to check (default: ../release/<assignment>)")
    parser.add_argument(
        "--unsandboxed", action="store_true", help="run the answers without bubblewrap (your own code only)"
    )
    parser.add_argument(
        "--no-run",
        action="store_true",
        help="do not run the solution in a Jupyter kernel (its visible checks and other cells are then not tried)",
    )
    options = parser.parse_args(argv)
    if options.unsandboxed:
        os.environ[UNSANDBOXED] = "1"
    try:
        name = assignments.find(options.source, options.assignment).name
        report = validate_assignment(
            source=options.source,
            assignment=name,
            seeds=options.seeds,
            wrong=options.wrong,
            release=options.release,
            visible=not options.no_run,
            mutant_seeds=options.mutant_seeds,
        )
    except (assignments.NoAssignment, assignments.NoChecks) as error:
        print(f"validate: {error}", file=sys.stderr)
        return 1
    print(report.text())
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
