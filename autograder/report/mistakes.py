"""The class's named mistakes and every failed property, read from the stored verdicts.

A named mistake is the first property that fails in a student's check, the later ones being most often its
consequences (a mask applied after softmax breaks the row sums, the leak test, the values and the model at once):
one mistake per student and check, grouped by its stable id (autograder.verdicts.mistake_id, stored with each
failed property: ``<check>.<property>``, with the judge's name for a known mistake), never by its words. The
mistake is described by its own words, the same for every student: a message reads "attend(array of shape (3, 4,
8), ...): no scaling by sqrt(d): divide ...", one student's call then the mistake, and the description is the part
from which the stored id is made (verdicts.named_after), never the call before it (``mistake_words``).
Mistakes are ordered by the number of students, then by the share of the affected checks' points they cost.
Each has an example: the first line where the function of the student closest to the solution differs from
it, without the student's name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pandas as pd

from autograder.report.course import GradedAssignment, Student, solution_cells, squeeze
from autograder.verdicts import Property, Verdict, named_after

MISTAKES = ["mistake", "id", "students", "functions", "checks", "points_lost", "share_lost", "example"]
FAILURES = ["check", "property", "id", "example", "students"]  # example: the first student's message


@dataclass
class Mistake:
    """One named mistake over the class."""

    mistake: str  # its stable id (verdicts.mistake_id)
    description: str  # its words, the same for every student who made it (describe)
    students: set = field(default_factory=set)
    functions: list = field(default_factory=list)
    checks: set = field(default_factory=set)
    lost: float = 0.0
    top: float = 0.0
    example: tuple | None = None  # (lines of the function not in the solution, the first of them)


def mistake_words(mistake: str, message: str) -> str:
    """The mistake's own words in a student's ``message``: from the start of the message or after one of its
    colons, the first part whose name (verdicts.named_after) is the stored id ``mistake``, so the call and the
    values drawn for this student before it are left out. "" when no part is (a name the judge gave itself)."""
    starts = [0] + [found.end() for found in re.finditer(r":\s+", message)]
    return next((message[start:] for start in starts if named_after(message[start:]) == mistake), "")


def describe(check: str, mistake: str, failed: Property) -> str:
    """The words that name a mistake in the report: a named mistake's own words (mistake_words), else, when no
    named mistake matched (id ``<check>.<property>``), which property failed; the id's words when the message
    holds neither (a judge's own name for its mistake), never one student's call or values."""
    if mistake == f"{check}.{failed.name}":
        return f"{failed.name!r} fails, no named mistake matches"
    return mistake_words(mistake, failed.message) or mistake.replace("-", " ")


def example_line(code: str, solution: str) -> tuple[int, str]:
    """(how many lines of the student's function are not in the solution, the first of them), comments dropped,
    at most 100 characters: where the student's function differs. No name of the student is in it."""
    wanted = {squeeze(line.split("#")[0]) for line in solution.splitlines()}
    body, changed = [], []
    for line in code.splitlines():
        text = line.split("#", 1)[0].rstrip() if '"' not in line and "'" not in line else line.rstrip()
        stripped = text.strip()
        if not stripped or stripped.startswith(("def ", '"""', "'''")) or stripped.endswith('"""'):
            continue
        body.append(stripped)
        if squeeze(stripped) not in wanted:
            changed.append(stripped)
    shown = changed[0] if changed else body[0] if body else ""
    return len(changed), shown[:100]


def function_code(student: Student, function: str) -> str:
    """The student's answer cell of ``function``: the cell of that id, else the cell that defines it."""
    return student.code.get(function) or next(
        (cell for cell in student.code.values() if f"def {function}(" in cell), ""
    )


def add_mistake(mistake: Mistake, student: Student, check: str, verdict: Verdict, solution: str) -> None:
    mistake.students.add(student.id)
    mistake.checks.add(check)
    if verdict.function not in mistake.functions:
        mistake.functions.append(verdict.function)
    mistake.lost += max(0.0, verdict.max_points - verdict.points)
    mistake.top += verdict.max_points
    changed, line = example_line(function_code(student, verdict.function), solution)
    if mistake.example is None or changed < mistake.example[0]:
        mistake.example = (changed, line)  # the student whose function is closest to the solution


def mistake_rows(mistakes: list[Mistake], checks: list[str]) -> list[dict]:
    rows = [
        {
            "mistake": m.description,
            "id": m.mistake,
            "students": len(m.students),
            "functions": ", ".join(m.functions),
            "checks": ", ".join(sorted(m.checks, key=checks.index)),
            "points_lost": round(m.lost, 2),
            "share_lost": round(m.lost / m.top, 3) if m.top else 0.0,
            "example": m.example[1] if m.example else "",
        }
        for m in mistakes
    ]
    rows.sort(key=lambda row: (-row["students"], -row["share_lost"], -row["points_lost"], row["mistake"]))
    return rows


def mistakes_tables(graded: GradedAssignment) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the named mistakes, most frequent first; every failed property, by check, property and mistake id, with an
    example of its message and its number of students)."""
    solutions = {}
    for notebook in graded.source.values():
        solutions.update(solution_cells(notebook))
    groups: dict[str, Mistake] = {}
    failures: dict = {}
    for s in graded.answered:
        for check in graded.checks:
            verdict = s.verdicts.get(check)
            failed = verdict.mistakes() if verdict else []  # [(stable id, property)]
            for mistake_id, prop in failed:
                key = (check, prop.name, mistake_id)
                # one row per check, property and mistake: its messages differ in their numbers (d=4, d=8), so the
                # row shows the first student's as an example
                failures.setdefault(key, {"example": prop.message, "students": set()})["students"].add(s.id)
            if not failed:
                continue
            mistake_id, first = failed[0]
            mistake = groups.setdefault(mistake_id, Mistake(mistake_id, describe(check, mistake_id, first)))
            add_mistake(mistake, s, check, verdict, solutions.get(verdict.function, ""))
    failure_rows = [
        {
            "check": check,
            "property": name,
            "id": mistake_id,
            "example": entry["example"],
            "students": len(entry["students"]),
        }
        for (check, name, mistake_id), entry in failures.items()
    ]
    failure_rows.sort(key=lambda row: (-row["students"], graded.checks.index(row["check"]), row["property"]))
    return (
        pd.DataFrame(mistake_rows(list(groups.values()), graded.checks), columns=MISTAKES),
        pd.DataFrame(failure_rows, columns=FAILURES),
    )
