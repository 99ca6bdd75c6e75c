"""The solution, the blank release and the wrong versions graded under every seed by the class run's
own entry point (autograder.answers.grading.grade_seeds), and the check code judged on them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from autograder import assignments
from autograder.answers.grading import answer_sources, check_generator
from autograder.checks import (
    Broken,
    Unavailable,
)
from autograder.validate.findings import Finding
from autograder.validate.notebook import DEFINES, closest, raise_place, raised_in

SOLUTION, BLANK = "solution", "blank"
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
    place = wrong_place(checks)
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


def wrong_place(checks: assignments.AssignmentChecks) -> str:
    """file:line where the checks define WRONG_VERSIONS (else line 1 of their first file)."""
    found = assignments.checks_line(checks.folder, "WRONG_VERSIONS")
    if found is None:
        return f"{(assignments.checks_files(checks.folder) or [assignments.checks_path(checks.folder)])[0]}:1"
    return f"{found[0]}:{found[1]}"


def notebook_wrong(folder: Path) -> list[Wrong]:
    versions = []
    for path in sorted(Path(folder).glob("*.ipynb")):
        notebook = json.loads(path.read_text(encoding="utf-8"))
        loses = notebook.get("metadata", {}).get("autograder", {}).get("loses")
        versions.append(Wrong(path.stem, answer_sources(notebook), loses))
    return versions


def planned(checks: assignments.AssignmentChecks, seeds) -> tuple[list[str], list[Finding]]:
    """The checks whose calls can be drawn under every seed, and a finding for each one whose calls(rng) raises."""
    usable, findings = [], []
    checks_path = assignments.checks_path(checks.folder)
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
    checks_path = assignments.checks_path(checks.folder)
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
