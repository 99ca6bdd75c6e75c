"""The whole of validate for one assignment (validate_assignment) and its cheap part for a class run
(check_before_grading).
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import nbformat

from autograder import assignments
from autograder.answers.grading import answer_sources, grade_seeds
from autograder.validate.findings import BEFORE_GRADING, AuthoringError, Finding, Report
from autograder.validate.grading import (
    BLANK,
    SOLUTION,
    declared_wrong,
    grading_findings,
    judge_findings,
    notebook_wrong,
    planned,
    points_of,
    wrong_version_findings,
)
from autograder.validate.mistakes import mistake_findings, mistake_id_findings
from autograder.validate.notebook import fill_in_findings, load_finding, static_findings, visible_findings
from autograder.validate.references import REFERENCE_KINDS, mutant_findings, reference_findings
from autograder.validate.release import (
    blank_release,
    reference_copy_findings,
    release_code,
    release_findings,
    released_folder_findings,
)
from autograder.visible import gaps as visible_gaps

DEFAULT_SEEDS = 5
MUTANT_SEEDS = 20  # the command's default: a mutant that earns full points on any of 20 seeds is a finding
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
    checks_path = assignments.checks_path(folder)
    unfilled = fill_in_findings(notebook, notebook_name, checks_path)
    try:
        checks = assignments.load(folder)
    except assignments.NoChecks:
        raise
    except Exception as error:  # noqa: BLE001 - the instructor's checks.py: said with its place, not a traceback
        report = Report(layout.name, seed_list, findings=[*unfilled, load_finding(error, checks_path)])
        if wrong is not None or "WRONG_VERSIONS" in assignments.checks_text(folder):
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
        report.findings += released_folder_findings(committed, assignments.checks_path(folder), notebook, notebook_name)
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
