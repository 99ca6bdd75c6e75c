"""The class's closing table: one row per student (the automatic total, the written answers, the functions that
lost points, a note), and the notes it shows (read from the kernel's ends and the hidden checks' ends stored as
data)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from autograder.assignments import Layout
from autograder.course.export import COLUMNS
from autograder.verdicts import ChecksEnd, StaleVerdicts, checks_ends, read_kernel_ends, read_verdicts


def kernel_notes(course: Path, layout: Layout, students: list[str]) -> dict[str, str]:
    """{student: note} for notebooks whose kernel ended early (a cell's limit, the notebook's budget, a death) or
    whose hidden checks were cut short (a function that waited without computing, their CPU budget, a crash), read
    from what the autograded notebook stores (autograder.verdicts.KernelEnd, ChecksEnd), never from its words."""
    notes = {}
    for student in students:
        path = course / "autograded" / student / layout.name / f"{layout.notebook}.ipynb"
        if not path.exists():
            notes[student] = "not autograded"
            continue
        try:
            notebook = json.loads(path.read_text(encoding="utf-8"))
            ends, cut = read_kernel_ends(notebook), hidden_ends(notebook)
        except (ValueError, TypeError) as error:  # not JSON, or a stored end or verdict that is not one
            notes[student] = f"the autograded notebook cannot be read ({error}): grade it again (--regrade)"
            continue
        if ends is None:
            notes[student] = "autograded before the kernel's ends were stored: grade it again (--regrade)"
        elif ends or cut:
            notes[student] = "; ".join(
                [*(end.short() for end in ends), *(f"hidden checks: {end.what()}" for end in cut)]
            )
    return notes


def hidden_ends(notebook: dict) -> list[ChecksEnd]:
    """How the notebook's hidden checks were cut short, each way once (none for one graded before verdicts were
    stored: its kernel's note already says to grade it again)."""
    try:
        return [end for _, end in checks_ends(read_verdicts(notebook))]
    except StaleVerdicts:
        return []


def check_frame(check_rows: list[dict]) -> pd.DataFrame:
    """autograder.course.export.check_rows (values as text, as checks.csv holds them) as a DataFrame of numbers."""
    rows = pd.DataFrame(check_rows, columns=COLUMNS).astype({"student_id": str})
    for column in ("score", "max_score"):
        rows[column] = pd.to_numeric(rows[column], errors="coerce")
    rows["needs_manual_grade"] = rows["needs_manual_grade"] == "True"
    return rows


def grade_table(check_rows: list[dict], notes: dict[str, str], assignment: str | None = None):
    """The class's closing table (pandas DataFrame) from autograder.course.export.check_rows: one row per student, the
    automatic total, the written answers (a column only when the assignment has some), the functions that lost points
    (short names) and a note. Every check's points are in checks.csv and the report (reports/<assignment>.html)."""
    rows = check_frame(check_rows)
    if assignment is not None:
        rows = rows[rows["assignment"] == assignment]
    auto = rows[rows["cell_type"] == "code"]
    written = rows[rows["cell_type"] != "code"]
    order = list(dict.fromkeys(auto["grade_id"]))
    students = sorted(set(rows["student_id"]))
    by_student = auto.groupby("student_id")
    total, top = by_student["score"].sum(), by_student["max_score"].sum()
    short = {grade_id: grade_id.removeprefix("check_") for grade_id in order}
    lost = auto[auto["score"] < auto["max_score"] - 1e-9].groupby("student_id")["grade_id"].apply(set)
    pending = written.groupby("student_id")["needs_manual_grade"].sum()
    written_points = written.groupby("student_id")["score"].sum()
    written_top = written.groupby("student_id")["max_score"].sum()
    result = pd.DataFrame(index=pd.Index(students, name="student"))
    result["auto"] = [f"{total.get(s, 0):g} / {top.get(s, 0):g}" for s in students]
    if not written.empty:  # an assignment without written answers has no column of "0 / 0"
        result["written"] = [
            (
                f"{int(pending.get(s, 0))} to grade"
                if pending.get(s, 0)
                else f"{written_points.get(s, 0):g} / {written_top.get(s, 0):g}"
            )
            for s in students
        ]
    result["lost"] = [
        (
            "every check"
            if len(lost.get(s, ())) == len(order) and order
            else " ".join(short[g] for g in order if g in lost.get(s, ()))
        )
        for s in students
    ]
    result["note"] = [notes.get(s, "") for s in students]
    return result


def show(table, width: int = 120) -> str:
    """The table as text at most ``width`` columns wide: long ids, lists of functions and notes are cut (…)."""

    def cut(text, room: int) -> str:
        text = "" if text is None else str(text)
        return text if len(text) <= room else text[: max(room - 1, 0)] + "…"

    columns = list(table.columns)
    cells = [[cut(index, 32), *(str(table.at[index, c]) for c in columns)] for index in table.index]
    header = [table.index.name or "", *columns]
    widths = [max([len(header[i]), *(len(row[i]) for row in cells)]) for i in range(len(header))]
    flexible = [i for i, name in enumerate(header) if name in ("lost", "note")]
    room = width - sum(w for i, w in enumerate(widths) if i not in flexible) - (len(header) - 1) * 2
    for i in flexible:  # the lost functions first, the note gets what is left (at least 20 when it has any)
        others = sum(min(widths[j], max(20, room // 2)) for j in flexible if j > i)
        widths[i] = max(len(header[i]), min(widths[i], room - others - 2 * (len(flexible) - 1 - flexible.index(i))))
        room -= widths[i]
    lines = ["  ".join(cut(text, w).ljust(w) for text, w in zip(row, widths)).rstrip() for row in [header, *cells]]
    return "\n".join(lines)
