"""The report's tables, computed from a graded assignment (autograder.report.course): one pandas frame each.

Item analysis, over the students who answered (blank, unreadable and missing notebooks left out):
difficulty is the share of students who pass a property (for a check: the mean share of its points), and
discrimination is the point-biserial correlation between passing and the rest of the total (the automatic
total less that check's points), with the top-third minus bottom-third difference beside it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from autograder import REPOSITORY
from autograder.report import similarity
from autograder.report.course import GradedAssignment, Student, answer_cells, solution_cells
from autograder.report.mistakes import mistakes_tables

SIMILAR_SHOWN = 20  # pairs shown side by side on the page, each folded (all of them in similarity.csv)
TOTALS = [
    "student",
    "state",
    "auto",
    "auto_max",
    "written",
    "written_max",
    "written_to_grade",
    "lost",
    "reason",
    "due",  # the student's own due date (UTC): an extension or late days, else the assignment's
    "submitted_at",
    "late_hours",  # after their own due date (0: on time)
]
CHECKS = ["check", "function", "points", "students", "full_points", "difficulty", "discrimination"]
PROPERTIES = ["check", "property", "passed", "failed", "not_applicable", "difficulty", "discrimination"]
THIRDS = "top_minus_bottom_third"
TIMING = ["student", "total", "kernel", "outside_kernel", "checks", "feedback", "slowest_cell"]
SIMILAR = ["a", "b", "score", "share_of_a", "share_of_b"]
ATTEMPTS = ["student", "submits", "checked", "waiting", "not_checked", "first", "best", "last", "graded", "scores"]
FORMULA = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet reads as the start of a formula


@dataclass
class Similar:
    """The similarity section: every listed pair, the ones shown side by side, and everyone's fingerprint."""

    pairs: list
    shown: list
    prints: dict
    compared: int
    solution: list = field(default_factory=list)  # Pair(student, the key it matches) from the threshold, highest first


@dataclass
class Tables:
    totals: pd.DataFrame
    checks: pd.DataFrame
    properties: pd.DataFrame
    mistakes: pd.DataFrame
    failures: pd.DataFrame
    problems: pd.DataFrame
    written: pd.DataFrame
    timing: pd.DataFrame
    slow_cells: pd.DataFrame
    attempts: pd.DataFrame
    similarity: pd.DataFrame
    matches_solution: pd.DataFrame
    similar: Similar

    def frames(self) -> dict[str, pd.DataFrame]:
        """{name: frame} of every table written as <name>.csv, in the page's order."""
        return {name: value for name, value in vars(self).items() if isinstance(value, pd.DataFrame)}


def spreadsheet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with every text cell that a spreadsheet would read as a formula (starting with =, +, -, @, a
    tab or a carriage return: a student id, a line of code, a message) prefixed with a quote, as OWASP advises
    against CSV injection; numbers are left as they are."""

    def inert(value):
        return f"'{value}" if isinstance(value, str) and value.startswith(FORMULA) else value

    return frame.apply(lambda column: column if pd.api.types.is_numeric_dtype(column) else column.map(inert))


def point_biserial(passed, rest) -> float:
    """Pearson's correlation of a 0/1 (or fractional) item with the rest of the total; NaN when either is constant."""
    x, y = np.asarray(passed, dtype=float), np.asarray(rest, dtype=float)
    if len(x) < 3 or x.std() == 0 or y.std() == 0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])


def thirds_difference(passed, totals) -> float:
    """Mean of the item among the top third by total, less its mean among the bottom third (NaN under 3 students)."""
    count = len(totals)
    if count < 3:
        return float("nan")
    order = np.argsort(np.asarray(totals, dtype=float), kind="stable")
    third = max(1, count // 3)
    values = np.asarray(passed, dtype=float)
    return float(values[order[-third:]].mean() - values[order[:third]].mean())


def short_check(check: str) -> str:
    return check.removeprefix("check_")


def totals_table(graded: GradedAssignment) -> pd.DataFrame:
    rows = []
    for s in graded.students:
        lost = [c for c in graded.checks if c in s.checks and s.checks[c][0] < s.checks[c][1] - 1e-9]
        rows.append(
            {
                "student": s.id,
                "state": s.state,
                "auto": round(s.auto, 2),
                "auto_max": s.auto_top,
                "written": round(sum(score or 0.0 for score, _, _ in s.written.values()), 2),
                "written_max": sum(top for _, top, _ in s.written.values()),
                "written_to_grade": sum(1 for _, _, waiting in s.written.values() if waiting),
                "lost": " ".join(short_check(c) for c in lost),
                "reason": s.reason,
                "due": f"{s.due:%Y-%m-%d %H:%M}{s.due_why}" if s.due is not None else "",
                "submitted_at": f"{s.submitted_at:%Y-%m-%d %H:%M:%S}" if s.submitted_at is not None else "",
                "late_hours": round(s.late_hours, 2),
            }
        )
    return pd.DataFrame(rows, columns=TOTALS)


def checks_table(graded: GradedAssignment) -> pd.DataFrame:
    answered = graded.answered
    totals = [s.auto for s in answered]
    rows = []
    for check in graded.checks:
        scores = [s.checks.get(check, (0.0, 0.0)) for s in answered]
        shares = [score / top if top else 0.0 for score, top in scores]
        rests = [total - score for total, (score, _) in zip(totals, scores)]
        rows.append(
            {
                "check": check,
                "function": next((s.verdicts[check].function for s in answered if check in s.verdicts), ""),
                "points": max((top for _, top in scores), default=0.0),
                "students": len(answered),
                "full_points": sum(1 for score, top in scores if top and score >= top - 1e-9),
                "difficulty": round(sum(shares) / len(shares), 3) if shares else float("nan"),
                "discrimination": round(point_biserial(shares, rests), 3),
                THIRDS: round(thirds_difference(shares, totals), 3),
            }
        )
    return pd.DataFrame(rows, columns=[*CHECKS, THIRDS])


def property_names(answered: list[Student], check: str) -> list[str]:
    """The properties of ``check`` in the order the verdicts name them."""
    names = []
    for s in answered:
        verdict = s.verdicts.get(check)
        for prop in verdict.properties if verdict else ():
            if prop.name not in names:
                names.append(prop.name)
    return names


def property_row(answered: list[Student], check: str, name: str) -> dict:
    passed, rest, totals = [], [], []
    counts = {"PASS": 0, "FAIL": 0, "n/a": 0}
    for s in answered:
        verdict = s.verdicts.get(check)
        prop = next((p for p in verdict.properties if p.name == name), None) if verdict else None
        if prop is None:
            continue
        counts[prop.mark] += 1
        if prop.passed is None:
            continue
        passed.append(1.0 if prop.passed else 0.0)
        rest.append(s.auto - s.checks.get(check, (0.0, 0.0))[0])
        totals.append(s.auto)
    judged = counts["PASS"] + counts["FAIL"]
    return {
        "check": check,
        "property": name,
        "passed": counts["PASS"],
        "failed": counts["FAIL"],
        "not_applicable": counts["n/a"],
        "difficulty": round(counts["PASS"] / judged, 3) if judged else float("nan"),
        "discrimination": round(point_biserial(passed, rest), 3),
        THIRDS: round(thirds_difference(passed, totals), 3),
    }


def properties_table(graded: GradedAssignment) -> pd.DataFrame:
    answered = graded.answered
    rows = [property_row(answered, check, name) for check in graded.checks for name in property_names(answered, check)]
    return pd.DataFrame(rows, columns=[*PROPERTIES, THIRDS])


def problems_table(graded: GradedAssignment) -> pd.DataFrame:
    rows = []
    for s in graded.submitted:
        if s.state == "unreadable":
            rows.append({"student": s.id, "cell": "the whole notebook", "reason": s.reason or "could not be read"})
        for cell, reason in s.problems:
            rows.append({"student": s.id, "cell": cell, "reason": reason})
    return pd.DataFrame(rows, columns=["student", "cell", "reason"])


def written_table(graded: GradedAssignment, *, formgrader: str) -> pd.DataFrame:
    base = formgrader.rstrip("/")
    rows = []
    for s in graded.submitted:
        for cell in graded.written:
            _, top, waiting = s.written.get(cell, (None, 0.0, False))
            if not waiting:
                continue
            notebook = next(iter(s.notebook_ids), "")
            link = (
                f"{base}/formgrader/submissions/{s.notebook_ids[notebook]}"
                if notebook
                else f"{base}/formgrader/gradebook/{graded.name}"
            )
            rows.append({"student": s.id, "answer": cell, "points": top, "formgrader": link})
    return pd.DataFrame(rows, columns=["student", "answer", "points", "formgrader"])


def timing_tables(graded: GradedAssignment) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(seconds per notebook, the cells that took longest over the class)."""
    rows, cells = [], defaultdict(list)
    for s in graded.submitted:
        kernel = sum(s.cells_seconds.values())
        total = s.ledger.get("seconds")
        rows.append(
            {
                "student": s.id,
                "total": total,
                "kernel": round(kernel, 2),
                "outside_kernel": round(total - kernel, 2) if isinstance(total, (int, float)) else None,
                "checks": None if s.checks_seconds is None else round(s.checks_seconds, 2),
                "feedback": s.ledger.get("feedback_seconds"),
                "slowest_cell": max(s.cells_seconds, key=s.cells_seconds.get) if s.cells_seconds else "",
            }
        )
        for label, seconds in s.cells_seconds.items():
            cells[label].append(seconds)
    slow = pd.DataFrame(
        [
            {
                "cell": label,
                "notebooks": len(values),
                "mean": round(sum(values) / len(values), 2),
                "max": round(max(values), 2),
                "total": round(sum(values), 2),
            }
            for label, values in cells.items()
        ],
        columns=["cell", "notebooks", "mean", "max", "total"],
    )
    slow = slow.sort_values(["total", "cell"], ascending=[False, True]).reset_index(drop=True)
    return pd.DataFrame(rows, columns=TIMING), slow


SOLUTION = "(the solution)"  # the source notebook's answers, compared with every student's as if a student's


def library_folder(course: Path) -> Path:
    """The course library the students of ``course`` install: the course folder's lib/, else the repository's."""
    own = Path(course) / "lib"
    return own if own.is_dir() else REPOSITORY / "lib"


def similar_submissions(graded: GradedAssignment) -> Similar:
    """Pairs of answering students whose answer code is similar (autograder.report.similarity), highest first; and,
    listed on their own, the students whose code matches an answer key, which a student may have been handed or may
    read: the assignment's reference (source/<assignment>/reference.py), the source notebook's answers, or the
    course library's own source (the course folder's lib/, else the repository's), which students install."""
    starter, solution = {}, {}
    for notebook in graded.release.values():
        starter.update(answer_cells(notebook))
    for notebook in graded.source.values():
        solution.update(solution_cells(notebook))
    prints = {
        s.id: similarity.fingerprint(
            s.id, {k: v for k, v in s.code.items() if k in starter} or s.code, starter, keep=set(starter)
        )
        for s in graded.answered
    }
    pairs = similarity.similar_pairs(list(prints.values()))
    shown = [similarity.compare(prints[p.a], prints[p.b]) for p in pairs[:SIMILAR_SHOWN]]
    keys = [
        similarity.reference_key(graded.course / "source" / graded.name / "reference.py", starter),
        similarity.fingerprint(SOLUTION, {k: v for k, v in solution.items() if k in starter}, starter, set(starter)),
        similarity.lib_key(library_folder(graded.course), starter),
    ]
    matches = similarity.key_matches(prints, keys)
    return Similar(pairs, shown, prints, len(similarity.comparable(list(prints.values()))), matches)


def similarity_table(similar: Similar) -> pd.DataFrame:
    rows = [
        {
            "a": p.a,
            "b": p.b,
            "score": round(p.score, 3),
            "share_of_a": round(p.shares[0], 3),
            "share_of_b": round(p.shares[1], 3),
        }
        for p in similar.pairs
    ]
    return pd.DataFrame(rows, columns=SIMILAR)


def solution_table(similar: Similar) -> pd.DataFrame:
    """The students whose answer code matches an answer key, highest first: the key (the reference or the solution)
    and the share of their code found in it (the pair's first share)."""
    rows = [
        {
            "student": pair.a,
            "key": {similarity.REFERENCE: "reference", SOLUTION: "solution", similarity.LIB: "lib"}.get(pair.b, pair.b),
            "score": round(pair.score, 3),
            "share_of_student": round(pair.shares[0], 3),
        }
        for pair in similar.solution
    ]
    return pd.DataFrame(rows, columns=["student", "key", "score", "share_of_student"])


def attempts_table(graded: GradedAssignment) -> pd.DataFrame:
    """Each student's Submits checked by the grading service (autograder.service.app): how many, their instant
    scores in order (first, best, last) and the class run's automatic score beside them."""
    by_student: dict[str, list] = defaultdict(list)
    for attempt in graded.attempts:
        by_student[attempt.student].append(attempt)
    autos = {s.id: round(s.auto, 2) for s in graded.students if s.submitted}
    rows = []
    for student, attempts in sorted(by_student.items()):
        scores = [a.points for a in attempts if a.status == "done"]
        rows.append(
            {
                "student": student,
                "submits": len(attempts),
                "checked": len(scores),
                "waiting": sum(1 for a in attempts if a.status in ("pending", "queued", "checking")),
                "not_checked": sum(1 for a in attempts if a.status in ("refused", "late")),
                "first": scores[0] if scores else None,
                "best": max(scores) if scores else None,
                "last": scores[-1] if scores else None,
                "graded": autos.get(student),
                "scores": " ".join(f"{score:g}" for score in scores),
            }
        )
    return pd.DataFrame(rows, columns=ATTEMPTS)


def make_tables(graded: GradedAssignment, *, formgrader: str) -> Tables:
    """Every table of the report of ``graded``; ``formgrader``: the URL the written answers' links start with."""
    mistakes, failures = mistakes_tables(graded)
    timing, slow = timing_tables(graded)
    similar = similar_submissions(graded)
    return Tables(
        totals=totals_table(graded),
        checks=checks_table(graded),
        properties=properties_table(graded),
        mistakes=mistakes,
        failures=failures,
        problems=problems_table(graded),
        written=written_table(graded, formgrader=formgrader),
        timing=timing,
        slow_cells=slow,
        attempts=attempts_table(graded),
        similarity=similarity_table(similar),
        matches_solution=solution_table(similar),
        similar=similar,
    )
