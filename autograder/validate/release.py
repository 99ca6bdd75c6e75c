"""The release read for what must not be in it: a solution, a hidden check, the reference's code, a hidden
file; and the blank release as nbgrader's generate_assignment makes it.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import nbformat
from nbgrader.preprocessors import ClearHiddenTests, ClearMarkScheme

from autograder import assignments
from autograder.notebook.pipeline import chain_config
from autograder.notebook.stubs import NamedStubs
from autograder.validate import copies
from autograder.validate.findings import Finding
from autograder.validate.notebook import HIDDEN, MARKERS, SOLVED, cell_name, flags_of

WHAT_IS_HIDDEN = {assignments.CHECKS_FILE: "the hidden checks", assignments.REFERENCE_FILE: "the answer key"}
SHORTEST_SECRET = 12  # characters: a shorter line of a solution (``return x``) may well be in the starter too
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
    which the release shows on purpose: autograder.validate.copies' ``shared``)."""
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
        try:
            shared.update(copies.reference_statements("def shown():\n" + indented(source)))
        except SyntaxError:  # a cell that parses alone but not inside a function (a __future__ import)
            continue
    return "\n\n".join(answers), sorted(shared)


def parses(source: str) -> bool:
    try:
        ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    return True


def indented(source: str) -> str:
    return "".join(f"    {line}\n" for line in source.splitlines()) + "    pass\n"  # a cell of comments only too


def reference_copy_findings(reference: Path, source_notebook, code: dict[str, str]) -> list[Finding]:
    """A statement of the reference (``reference``, reference.py, and the solution's answer cells), normalised
    (autograder.validate.copies), found in ``code`` ({place: Python source}: what the release holds), but a
    statement the source notebook shows outside its answers too."""
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


def hidden_name(secret: Path) -> str:
    """How the release's ignore list names a hidden file: checks.py, reference.py, or its package checks/."""
    return f"{assignments.CHECKS_PACKAGE}/" if secret.parent.name == assignments.CHECKS_PACKAGE else secret.name


def hidden_what(secret: Path) -> str:
    name = assignments.CHECKS_FILE if secret.parent.name == assignments.CHECKS_PACKAGE else secret.name
    return WHAT_IS_HIDDEN.get(name, "instructor-only")


def released_folder_findings(folder: Path, checks_path: Path, source_notebook, notebook_name: str) -> list[Finding]:
    """A committed release folder (release/<assignment>/): its notebook, and no copy of checks.py or of the
    reference (reference.py) in it."""
    findings = []
    candidates = [*assignments.checks_files(checks_path.parent), checks_path.parent / assignments.REFERENCE_FILE]
    hidden = [path for path in candidates if path.is_file()]
    for path in sorted(folder.rglob("*")):
        if not (path.is_file() and path.suffix == ".py"):
            continue
        for secret in hidden:
            if path.read_bytes() == secret.read_bytes():
                findings.append(
                    Finding(
                        "release-holds-hidden",
                        str(path),
                        f"the release holds a copy of {secret} ({hidden_what(secret)}): delete it; nbgrader's "
                        f"CourseDirectory.ignore keeps {hidden_name(secret)} out of a release it makes",
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
