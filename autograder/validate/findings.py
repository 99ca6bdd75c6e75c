"""What validate finds: the kinds of authoring mistake (KINDS), a Finding, the Report of one assignment
and the AuthoringError a class run stops with.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from autograder.assignments import FILL_IN
from autograder.visible import gaps as visible_gaps

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
