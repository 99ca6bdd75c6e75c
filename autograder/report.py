"""The instructor's report of a graded assignment: what the class got wrong, what was slow, who to look at.

    python -m autograder.report --course /srv/attention                      # every assignment in the gradebook
    python -m autograder.report --course /srv/attention --assignment attention
    python -m autograder.report --course demo --formgrader-url http://localhost:8888
    python -m autograder.report --course demo --student ada --student bob --out /tmp/section-a   # some students

Written by every ``python -m autograder.classroom`` run too. For each assignment it writes, in the course
folder, ``reports/<assignment>.html`` (one self-contained page: plots embedded, no network) and beside it
``reports/<assignment>/<table>.csv``, one CSV per table of the page:

- totals.csv: each student's automatic total, written answers, state (answered, blank, unreadable, not submitted);
- checks.csv: per graded function (check): students with full points, mean share, difficulty, discrimination;
- properties.csv: per property of a check: passed, failed, not applicable, difficulty, discrimination;
- mistakes.csv: the named mistakes, most frequent first, with the functions they hit and an example line;
- failures.csv: every failed property's message and how many students it was shown to;
- problems.csv: notebooks that timed out, crashed or could not be read, with the cell and reason;
- written.csv: written answers waiting for a grader, with a link into Formgrader;
- timing.csv and slow_cells.csv: seconds per notebook (in the kernel, outside it) and the cells that took longest;
- similarity.csv: pairs of students whose answer code is similar (autograder.similarity).

What it reads: the gradebook (nbgrader's Gradebook API), the autograded notebooks (the verdict each hidden
check wrote into its test cell: a ``check_x (function): p / q points`` line, then one ``PASS``, ``FAIL`` or
``n/a`` line per property with its message; the kernel's errors; nbclient's timing of each cell), the
release and source notebooks (the starter text, the solution), and the grading ledger (.grading/, seconds per
notebook). It does not import the checks or the course library: it reads what grading left in the folder.

Item analysis, over the students who answered (blank, unreadable and missing notebooks left out):
difficulty is the share of students who pass a property (for a check: the mean share of its points), and
discrimination is the point-biserial correlation between passing and the rest of the total (the automatic
total less that check's points), with the top-third minus bottom-third difference beside it.

A named mistake is the message of the first property that fails in a student's check, the later ones being
most often its consequences (a mask applied after softmax breaks the row sums, the leak test, the values and
the model at once): one mistake per student and check, grouped by its text with the numbers in it left out.
Mistakes are ordered by the number of students, then by the share of the affected checks' points they cost.
"""

from __future__ import annotations

import argparse
import base64
import html
import io
import json
import math
import re
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from autograder.grading.ledger import atomic_path, write_atomic

HEADER = re.compile(r"^(?P<check>\S+) \((?P<function>[^)]*)\): (?P<points>[-\d.e]+) / (?P<top>[-\d.e]+) points\s*$")
PROPERTY = re.compile(r"^  (?P<mark>PASS|FAIL|n/a) ?(?P<rest>.*)$")
SAME = "the same failure as above"
KERNEL_ERRORS = {
    "DeadKernelError": "the kernel died",
    "NotebookTimeoutError": "the notebook ran out of time",
    "CellTimeoutError": "the cell timed out and was interrupted",
    "KeyboardInterrupt": "the cell timed out and was interrupted",
}
LEDGER = ".grading"
SIMILAR_SHOWN = 20  # pairs shown side by side on the page, each folded (all of them in similarity.csv)


@dataclass
class Property:
    name: str
    status: str  # "PASS", "FAIL" or "n/a"
    message: str


@dataclass
class Verdict:
    check: str
    function: str
    points: float
    top: float
    properties: list = field(default_factory=list)


@dataclass
class Student:
    id: str
    submitted: bool = False
    state: str = "not submitted"  # answered, blank, unreadable, not submitted
    reason: str = ""
    checks: dict = field(default_factory=dict)  # {check: (score, max_score)} from the gradebook
    written: dict = field(default_factory=dict)  # {cell: (score or None, max_score, needs_manual_grade)}
    notebook_ids: dict = field(default_factory=dict)  # {notebook: the gradebook's submitted notebook id}
    verdicts: dict = field(default_factory=dict)  # {check: Verdict}
    code: dict = field(default_factory=dict)  # {answer cell id: source}
    problems: list = field(default_factory=list)  # [(cell, reason)]
    cells_seconds: dict = field(default_factory=dict)  # {cell label: seconds in the kernel}
    ledger: dict = field(default_factory=dict)

    @property
    def auto(self) -> float:
        return sum(score for score, _ in self.checks.values())

    @property
    def auto_top(self) -> float:
        return sum(top for _, top in self.checks.values())


# --- reading the course folder -------------------------------------------------------------------------


def text_of(source) -> str:
    return "".join(source) if isinstance(source, list) else (source or "")


def read_notebook(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def nbgrader_meta(cell: dict) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def answer_cells(notebook: dict | None) -> dict:
    """{grade_id: source} of the notebook's autograded answer cells (code, solution), in order."""
    cells = {}
    for cell in (notebook or {}).get("cells", []):
        meta = nbgrader_meta(cell)
        if cell.get("cell_type") == "code" and meta.get("solution") and not meta.get("grade") and meta.get("grade_id"):
            cells.setdefault(meta["grade_id"], text_of(cell.get("source")))
    return cells


def solution_cells(notebook: dict | None) -> dict:
    """The source notebook's answer cells with the solution markers taken out."""
    marker = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$", re.M)
    return {key: marker.sub("", code) for key, code in answer_cells(notebook).items()}


def parse_verdicts(text: str) -> list[Verdict]:
    """The verdicts in a test cell's output: a header line per check, then its property lines."""
    verdicts = []
    for line in text.splitlines():
        header = HEADER.match(line)
        if header:
            verdicts.append(Verdict(header["check"], header["function"], float(header["points"]), float(header["top"])))
            continue
        found = PROPERTY.match(line)
        if found and verdicts:
            name, _, message = found["rest"].partition(": ")
            verdicts[-1].properties.append(Property(name.strip(), found["mark"], message.strip()))
    for verdict in verdicts:  # "the same failure as above": the message of the failure above it
        last = ""
        for prop in verdict.properties:
            if prop.status == "FAIL":
                if prop.message == SAME:
                    prop.message = last
                last = prop.message or last
    return verdicts


def cell_label(number: int, cell: dict) -> str:
    grade_id = nbgrader_meta(cell).get("grade_id")
    if grade_id:
        return grade_id
    first = next((line.strip() for line in text_of(cell.get("source")).splitlines() if line.strip()), "")
    return f"cell {number}: {first[:40]}"


def cell_seconds(cell: dict) -> float | None:
    timing = cell.get("metadata", {}).get("execution", {})
    start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
    if not (start and end):
        return None
    try:
        return (
            datetime.fromisoformat(end.replace("Z", "+00:00")) - datetime.fromisoformat(start.replace("Z", "+00:00"))
        ).total_seconds()
    except ValueError:
        return None


def read_autograded(student: Student, notebook: dict | None, release: dict):
    if notebook is None:
        if student.submitted:
            student.problems.append(("", "no autograded notebook (not graded, or grading failed)"))
        return
    cells = notebook.get("cells", [])
    first = text_of(cells[0].get("source")) if cells else ""
    if "could not be graded" in first and not nbgrader_meta(cells[0]):
        student.state = "unreadable"
        student.reason = re.sub(r"[*]", "", first.split(". It was graded")[0]).strip()
    said = set()
    for number, cell in enumerate(cells, start=1):
        label = cell_label(number, cell)
        seconds = cell_seconds(cell)
        if seconds is not None:
            student.cells_seconds[label] = student.cells_seconds.get(label, 0.0) + seconds
        meta = nbgrader_meta(cell)
        outputs = cell.get("outputs", [])
        if meta.get("grade") and cell.get("cell_type") == "code":
            text = "".join(text_of(o.get("text")) for o in outputs if o.get("output_type") == "stream")
            for verdict in parse_verdicts(text):
                student.verdicts[verdict.check] = verdict
        for output in outputs:
            if output.get("output_type") == "error" and output.get("ename") in KERNEL_ERRORS:
                why = KERNEL_ERRORS[output["ename"]]
                value = str(output.get("evalue", "")).strip().splitlines()
                detail = f": {value[0][:160]}" if value and output["ename"] == "DeadKernelError" else ""
                where = label if label.startswith("cell ") else f"cell {number} ({label})"
                if (where, why) not in said:  # an interrupted cell shows the timeout and the interrupt
                    said.add((where, why))
                    student.problems.append((where, why + detail))
    student.code = answer_cells(notebook)
    if student.state != "unreadable":
        starter = answer_cells(release)
        same = all(squeeze(student.code.get(key, "")) == squeeze(code) for key, code in starter.items())
        student.state = "blank" if starter and same else "answered"


def squeeze(code: str) -> str:
    return re.sub(r"\s+", "", code)


def ledger_entries(course: Path, assignment: str) -> dict:
    """{student: ledger entry} of ``assignment`` from .grading/assignments/*/students/*.json (each names its
    student and assignment), or the older .grading/students/*.json and .grading/<student>.json files."""
    entries = {}
    folder = course / LEDGER
    paths = [
        *sorted(folder.glob("assignments/*/students/*.json")),
        *sorted(folder.glob("students/*.json")),
        *sorted(folder.glob("*.json")),
    ]
    for path in paths:
        try:
            entry = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(entry, dict) and "fingerprint" in entry and entry.get("assignment", assignment) == assignment:
            entries.setdefault(entry.get("student") or path.stem, entry)
    return entries


def database_url(course: Path) -> str:
    """The course's gradebook: the CourseDirectory.db_url its nbgrader_config.py names, else its gradebook.db."""
    from autograder.grading.gradebook import course_db

    return course_db(course)


def read_course(course: Path, assignment: str, db: str | None = None, only=None) -> tuple[list[Student], dict]:
    """The students of ``assignment`` and what the report needs besides: {"notebooks", "checks" (in order),
    "written" (in order), "release", "source"}. ``db``: the gradebook's URL (default: database_url); ``only``:
    these students (default: everyone in the gradebook)."""
    from nbgrader.api import Gradebook, MissingEntry

    students, info = [], {"checks": [], "written": [], "notebooks": []}
    with Gradebook(db or database_url(course)) as gradebook:
        found = gradebook.find_assignment(assignment)
        notebooks = sorted(notebook.name for notebook in found.notebooks)
        info["notebooks"] = notebooks
        order = {}
        for name in notebooks:
            source = read_notebook(course / "source" / assignment / f"{name}.ipynb")
            for cell in (source or {}).get("cells", []):
                grade_id = nbgrader_meta(cell).get("grade_id")
                if grade_id:
                    order.setdefault(grade_id, len(order))
            for cell in sorted(
                gradebook.find_notebook(name, assignment).grade_cells,
                key=lambda c: (order.get(c.name, len(order)), c.name),
            ):
                (info["checks"] if cell.cell_type == "code" else info["written"]).append(cell.name)
        for record in sorted(gradebook.students, key=lambda s: s.id):
            if only is not None and record.id not in only:
                continue
            student = Student(record.id)
            try:
                submission = gradebook.find_submission(assignment, record.id)
            except MissingEntry:
                students.append(student)
                continue
            student.submitted, student.state = True, "answered"
            for notebook in submission.notebooks:
                student.notebook_ids[notebook.name] = notebook.id
                for grade in notebook.grades:
                    if grade.cell_type == "code":
                        student.checks[grade.name] = (float(grade.score or 0.0), float(grade.max_score or 0.0))
                    else:
                        score = None if grade.needs_manual_grade else float(grade.score or 0.0)
                        student.written[grade.name] = (
                            score,
                            float(grade.max_score or 0.0),
                            bool(grade.needs_manual_grade),
                        )
            students.append(student)
    info["release"] = {name: read_notebook(course / "release" / assignment / f"{name}.ipynb") for name in notebooks}
    info["source"] = {name: read_notebook(course / "source" / assignment / f"{name}.ipynb") for name in notebooks}
    entries = ledger_entries(course, assignment)
    for student in students:
        student.ledger = entries.get(student.id, {})
        if not student.submitted:
            continue
        for name in notebooks:
            notebook = read_notebook(course / "autograded" / student.id / assignment / f"{name}.ipynb")
            read_autograded(student, notebook, info["release"][name] or {})
        note = student.ledger.get("note") or ""
        if note.startswith("graded as blank"):
            student.state, student.reason = "unreadable", note
    return students, info


# --- the tables ------------------------------------------------------------------------------------------


def point_biserial(passed, rest) -> float:
    """Pearson's correlation of a 0/1 (or fractional) item with the rest of the total; NaN when either is constant."""
    import numpy as np

    x, y = np.asarray(passed, dtype=float), np.asarray(rest, dtype=float)
    if len(x) < 3 or x.std() == 0 or y.std() == 0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])


def thirds_difference(passed, totals) -> float:
    """Mean of the item among the top third by total, less its mean among the bottom third (NaN under 3 students)."""
    import numpy as np

    count = len(totals)
    if count < 3:
        return float("nan")
    order = np.argsort(np.asarray(totals, dtype=float), kind="stable")
    third = max(1, count // 3)
    values = np.asarray(passed, dtype=float)
    return float(values[order[-third:]].mean() - values[order[:third]].mean())


def short_check(check: str) -> str:
    return check.removeprefix("check_")


def totals_table(students: list[Student], info: dict):
    import pandas as pd

    rows = []
    for s in students:
        pending = sum(1 for _, _, waiting in s.written.values() if waiting)
        written_points = sum(score or 0.0 for score, _, _ in s.written.values())
        rows.append(
            {
                "student": s.id,
                "state": s.state,
                "auto": round(s.auto, 2),
                "auto_max": s.auto_top,
                "written": round(written_points, 2),
                "written_max": sum(top for _, top, _ in s.written.values()),
                "written_to_grade": pending,
                "lost": " ".join(
                    short_check(c) for c in info["checks"] if c in s.checks and s.checks[c][0] < s.checks[c][1] - 1e-9
                ),
                "reason": s.reason,
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "student",
            "state",
            "auto",
            "auto_max",
            "written",
            "written_max",
            "written_to_grade",
            "lost",
            "reason",
        ],
    )


def checks_table(answered: list[Student], info: dict):
    import pandas as pd

    totals = [s.auto for s in answered]
    rows = []
    for check in info["checks"]:
        scores = [s.checks.get(check, (0.0, 0.0)) for s in answered]
        top = max((t for _, t in scores), default=0.0)
        shares = [score / t if t else 0.0 for score, t in scores]
        function = next((s.verdicts[check].function for s in answered if check in s.verdicts), "")
        rows.append(
            {
                "check": check,
                "function": function,
                "points": top,
                "students": len(answered),
                "full_points": sum(1 for score, t in scores if t and score >= t - 1e-9),
                "difficulty": round(sum(shares) / len(shares), 3) if shares else float("nan"),
                "discrimination": round(
                    point_biserial(shares, [total - score for total, (score, _) in zip(totals, scores)]), 3
                ),
                "top_minus_bottom_third": round(thirds_difference(shares, totals), 3),
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "check",
            "function",
            "points",
            "students",
            "full_points",
            "difficulty",
            "discrimination",
            "top_minus_bottom_third",
        ],
    )


def properties_table(answered: list[Student], info: dict):
    import pandas as pd

    rows = []
    for check in info["checks"]:
        names = []
        for s in answered:
            for prop in getattr(s.verdicts.get(check), "properties", []):
                if prop.name not in names:
                    names.append(prop.name)
        for name in names:
            passed, rest, totals = [], [], []
            counts = {"PASS": 0, "FAIL": 0, "n/a": 0}
            for s in answered:
                verdict = s.verdicts.get(check)
                prop = next((p for p in getattr(verdict, "properties", []) if p.name == name), None)
                if prop is None:
                    continue
                counts[prop.status] += 1
                if prop.status == "n/a":
                    continue
                passed.append(1.0 if prop.status == "PASS" else 0.0)
                rest.append(s.auto - s.checks.get(check, (0.0, 0.0))[0])
                totals.append(s.auto)
            judged = counts["PASS"] + counts["FAIL"]
            rows.append(
                {
                    "check": check,
                    "property": name,
                    "passed": counts["PASS"],
                    "failed": counts["FAIL"],
                    "not_applicable": counts["n/a"],
                    "difficulty": round(counts["PASS"] / judged, 3) if judged else float("nan"),
                    "discrimination": round(point_biserial(passed, rest), 3),
                    "top_minus_bottom_third": round(thirds_difference(passed, totals), 3),
                }
            )
    return pd.DataFrame(
        rows,
        columns=[
            "check",
            "property",
            "passed",
            "failed",
            "not_applicable",
            "difficulty",
            "discrimination",
            "top_minus_bottom_third",
        ],
    )


def mistake_key(message: str) -> str:
    """The message with what varies from student to student left out: numbers, lists, array shapes, seeds."""
    text = re.sub(r"\[[^\]]*\]", "[…]", message)
    text = re.sub(r"\(answer cell [^)]*\)", "", text)
    return re.sub(r"-?\d+(\.\d+)?(e-?\d+)?", "#", text).strip()


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


def mistakes_tables(answered: list[Student], info: dict):
    import pandas as pd

    solutions = {}
    for notebook in info["source"].values():
        solutions.update(solution_cells(notebook))
    groups: dict = {}
    failures: dict = {}
    for s in answered:
        for check in info["checks"]:
            verdict = s.verdicts.get(check)
            if verdict is None:
                continue
            failed = [p for p in verdict.properties if p.status == "FAIL"]
            for prop in failed:
                entry = failures.setdefault(
                    (check, prop.name, mistake_key(prop.message)), {"message": prop.message, "students": set()}
                )
                entry["students"].add(s.id)
            if not failed:
                continue
            message = next((p.message for p in failed if p.message), failed[0].name)
            group = groups.setdefault(
                mistake_key(message),
                {
                    "message": message,
                    "students": set(),
                    "functions": [],
                    "checks": set(),
                    "lost": 0.0,
                    "top": 0.0,
                    "example": None,
                },
            )
            group["students"].add(s.id)
            group["checks"].add(check)
            if verdict.function not in group["functions"]:
                group["functions"].append(verdict.function)
            group["lost"] += max(0.0, verdict.top - verdict.points)
            group["top"] += verdict.top
            code = s.code.get(verdict.function) or next(
                (cell for cell in s.code.values() if f"def {verdict.function}(" in cell), ""
            )
            changed, line = example_line(code, solutions.get(verdict.function, ""))
            if group["example"] is None or changed < group["example"][0]:
                group["example"] = (changed, line)  # the student whose function is closest to the solution
    rows = [
        {
            "mistake": g["message"],
            "students": len(g["students"]),
            "functions": ", ".join(g["functions"]),
            "checks": ", ".join(sorted(g["checks"], key=info["checks"].index)),
            "points_lost": round(g["lost"], 2),
            "share_lost": round(g["lost"] / g["top"], 3) if g["top"] else 0.0,
            "example": g["example"][1] if g["example"] else "",
        }
        for g in groups.values()
    ]
    rows.sort(key=lambda row: (-row["students"], -row["share_lost"], -row["points_lost"], row["mistake"]))
    mistakes = pd.DataFrame(
        rows, columns=["mistake", "students", "functions", "checks", "points_lost", "share_lost", "example"]
    )
    failure_rows = [
        {"check": check, "property": name, "message": entry["message"], "students": len(entry["students"])}
        for (check, name, _), entry in failures.items()
    ]
    failure_rows.sort(key=lambda row: (-row["students"], info["checks"].index(row["check"]), row["property"]))
    return mistakes, pd.DataFrame(failure_rows, columns=["check", "property", "message", "students"])


def problems_table(students: list[Student]):
    import pandas as pd

    rows = []
    for s in students:
        if s.state == "unreadable":
            rows.append({"student": s.id, "cell": "the whole notebook", "reason": s.reason or "could not be read"})
        for cell, reason in s.problems:
            rows.append({"student": s.id, "cell": cell, "reason": reason})
    return pd.DataFrame(rows, columns=["student", "cell", "reason"])


def written_table(students: list[Student], info: dict, formgrader: str, assignment: str):
    import pandas as pd

    rows = []
    for s in students:
        for cell in info["written"]:
            score, top, waiting = s.written.get(cell, (None, 0.0, False))
            if waiting:
                notebook = next(iter(s.notebook_ids), "")
                rows.append(
                    {
                        "student": s.id,
                        "answer": cell,
                        "points": top,
                        "formgrader": (
                            f"{formgrader.rstrip('/')}/formgrader/submissions/{s.notebook_ids[notebook]}"
                            if notebook
                            else f"{formgrader.rstrip('/')}/formgrader/gradebook/{assignment}"
                        ),
                    }
                )
    return pd.DataFrame(rows, columns=["student", "answer", "points", "formgrader"])


def timing_tables(students: list[Student]):
    import pandas as pd

    rows, cells = [], defaultdict(list)
    for s in students:
        if not s.submitted:
            continue
        kernel = sum(s.cells_seconds.values())
        total = s.ledger.get("seconds")
        rows.append(
            {
                "student": s.id,
                "total": total,
                "kernel": round(kernel, 2),
                "outside_kernel": round(total - kernel, 2) if isinstance(total, (int, float)) else None,
                "checks": s.ledger.get("checks_seconds"),
                "feedback": s.ledger.get("feedback_seconds"),
                "slowest_cell": max(s.cells_seconds, key=s.cells_seconds.get) if s.cells_seconds else "",
            }
        )
        for label, seconds in s.cells_seconds.items():
            cells[label].append(seconds)
    timing = pd.DataFrame(
        rows, columns=["student", "total", "kernel", "outside_kernel", "checks", "feedback", "slowest_cell"]
    )
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
    return timing, slow.sort_values(["total", "cell"], ascending=[False, True]).reset_index(drop=True)


def similarity_pairs(answered: list[Student], info: dict):
    from autograder import similarity

    starter = {}
    for notebook in info["release"].values():
        starter.update(answer_cells(notebook))
    prints = {
        s.id: similarity.fingerprint(
            s.id, {k: v for k, v in s.code.items() if k in starter} or s.code, starter, keep=set(starter)
        )
        for s in answered
    }
    pairs = similarity.similar_pairs(list(prints.values()))
    shown = [similarity.compare(prints[p.a], prints[p.b]) for p in pairs[:SIMILAR_SHOWN]]
    return pairs, shown, prints, len(similarity.comparable(list(prints.values())))


# --- the page --------------------------------------------------------------------------------------------


def figure_data(figure) -> str:
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    plt.close(figure)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def histogram(totals: list[float], top: float, mean: float, median: float) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 3))
    edges = [x * 1.0 for x in range(int(math.ceil(top)) + 2)] if top else [0, 1]
    axes.hist(totals, bins=edges, color="#4c72b0", edgecolor="white")
    axes.axvline(mean, color="#dd8452", label=f"mean {mean:.2f}")
    axes.axvline(median, color="#55a868", linestyle="--", label=f"median {median:.2f}")
    axes.set_xlabel(f"automatic total (of {top:g})")
    axes.set_ylabel("students")
    axes.legend(loc="upper left")
    return figure_data(figure)


def difficulty_chart(checks) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 0.28 * max(len(checks), 3) + 0.8))
    names = [short_check(c) for c in checks["check"]][::-1]
    axes.barh(names, list(checks["difficulty"].fillna(0))[::-1], color="#4c72b0")
    axes.set_xlim(0, 1)
    axes.set_xlabel("mean share of the check's points (difficulty: 1 = everyone passes)")
    return figure_data(figure)


STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
code, pre { font-family: ui-monospace, monospace; font-size: 0.9em; }
.pair { display: flex; gap: 1em; } .pair pre { flex: 1; background: #f7f7f7; padding: 0.5em; overflow-x: auto; }
.hit { background: #ffe08a; display: block; }
.note { background: #eef4ff; padding: 0.6em; border-left: 4px solid #4c72b0; }
"""


def table_html(frame, links: tuple = (), code: tuple = ()) -> str:
    if frame.empty:
        return "<p>None.</p>"
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    body = []
    for _, row in frame.iterrows():
        cells = []
        for column in frame.columns:
            value = row[column]
            if isinstance(value, float) and math.isnan(value):
                text = "—"
            elif value is None:
                text = "—"
            else:
                text = html.escape(f"{value:g}" if isinstance(value, float) else str(value))
            if column in links and value:
                text = f'<a href="{text}">open in Formgrader</a>'
            elif column in code and value:
                text = f"<code>{text}</code>"
            cells.append(f"<td>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def pair_html(pair, prints) -> str:
    """The two students' matching functions side by side, the matching lines marked."""
    parts = [
        f"<details><summary>{html.escape(pair.a)} and {html.escape(pair.b)}: {pair.score:.2f} "
        "(the matching lines marked)</summary>"
    ]
    functions = [f for f in prints[pair.a].code if f in pair.lines.get("a", {}) or f in pair.lines.get("b", {})]
    for function in functions:
        columns = []
        for side, student in (("a", pair.a), ("b", pair.b)):
            marked = set(pair.lines.get(side, {}).get(function, []))
            code = prints[student].code.get(function, "")
            lines = [
                f'<span class="hit">{html.escape(line) or " "}</span>' if number in marked else html.escape(line)
                for number, line in enumerate(code.splitlines(), start=1)
            ]
            columns.append(
                f"<pre><b>{html.escape(student)}: {html.escape(function)}</b>\n"
                + "\n".join(line if line.startswith("<span") else line + "\n" for line in lines).replace(
                    "</span>\n", "</span>"
                )
                + "</pre>"
            )
        parts.append(f'<div class="pair">{"".join(columns)}</div>')
    return "\n".join(parts) + "</details>"


def write_report(
    course: Path,
    assignment: str,
    formgrader: str = "http://localhost:8888",
    db: str | None = None,
    students: list | None = None,
    out: Path | None = None,
) -> Path:
    """Write <out>/<assignment>.html and <out>/<assignment>/*.csv (``out``: the course's reports/); returns the
    page's path. ``db``: the gradebook's URL (default: the course's, database_url); ``students``: only these."""
    import pandas as pd

    started = time.perf_counter()
    course = Path(course)
    out = Path(out) if out is not None else course / "reports"
    students, info = read_course(course, assignment, db, None if students is None else set(students))
    submitted = [s for s in students if s.submitted]
    answered = [s for s in submitted if s.state == "answered"]
    totals = totals_table(students, info)
    checks = checks_table(answered, info)
    properties = properties_table(answered, info)
    mistakes, failures = mistakes_tables(answered, info)
    problems = problems_table(submitted)
    written = written_table(submitted, info, formgrader, assignment)
    timing, slow = timing_tables(students)
    pairs, shown, prints, compared = similarity_pairs(answered, info)
    similar = pd.DataFrame(
        [
            {
                "a": p.a,
                "b": p.b,
                "score": round(p.score, 3),
                "share_of_a": round(p.shares[0], 3),
                "share_of_b": round(p.shares[1], 3),
            }
            for p in pairs
        ],
        columns=["a", "b", "score", "share_of_a", "share_of_b"],
    )

    folder = out / assignment
    folder.mkdir(parents=True, exist_ok=True)
    tables = {
        "totals": totals,
        "checks": checks,
        "properties": properties,
        "mistakes": mistakes,
        "failures": failures,
        "problems": problems,
        "written": written,
        "timing": timing,
        "slow_cells": slow,
        "similarity": similar,
    }
    for name, frame in tables.items():
        with atomic_path(folder / f"{name}.csv") as temporary:
            frame.to_csv(temporary, index=False)

    auto = [s.auto for s in submitted]
    top = max((s.auto_top for s in submitted), default=0.0)
    mean = float(pd.Series(auto).mean()) if auto else 0.0
    median = float(pd.Series(auto).median()) if auto else 0.0
    counts = {
        state: sum(1 for s in students if s.state == state)
        for state in ("answered", "blank", "unreadable", "not submitted")
    }
    link = lambda name: f'<a href="{html.escape(assignment)}/{name}.csv">{name}.csv</a>'  # noqa: E731
    from autograder.similarity import THRESHOLD

    sections = [
        f"<h1>{html.escape(assignment)}: the class's report</h1>",
        (
            f"<p>{len(students)} students in the gradebook, {len(submitted)} submitted: {counts['answered']} answered, "
            f"{counts['blank']} blank, {counts['unreadable']} unreadable, {counts['not submitted']} not submitted. "
            f"Made {datetime.now().isoformat(timespec='seconds')} from {html.escape(str(course))}.</p>"
        ),
        "<h2>Automatic totals</h2>",
        (
            f"<p>Mean <b>{mean:.2f}</b>, median <b>{median:.2f}</b> of {top:g} points over the {len(submitted)}"
            f" submitted notebooks; {counts['blank']} blank and {counts['unreadable']} unreadable notebooks among them."
            f" ({link('totals')})</p>"
        ),
        f'<img alt="histogram of the automatic totals" src="{histogram(auto, top, mean, median)}">',
        (
            f"<h2>Per function</h2><p>Over the {len(answered)} students who answered (blank and unreadable notebooks"
            " left out). Difficulty: the mean share of the check's points (1: everyone has them all). Discrimination:"
            " the correlation of the check's share with the rest of the total; top − bottom third: its mean share"
            f" among the best third less the worst third. ({link('checks')})</p>"
        ),
        table_html(checks),
        f'<img alt="difficulty of each check" src="{difficulty_chart(checks)}">',
        (
            "<h2>Per property</h2><p>Difficulty: the share of students the property holds for; discrimination: the "
            f"point-biserial correlation of passing it with the rest of the total. ({link('properties')})</p>"
        ),
        table_html(properties),
        (
            "<h2>Named mistakes</h2><p>One per student and check: the message of the first property that fails (the"
            " later ones most often follow from it); most frequent first. The example is a line of one student's code"
            f" where it differs from the solution, without the student's name. ({link('mistakes')}; every failed"
            f" property's message: {link('failures')})</p>"
        ),
        table_html(mistakes, code=("example",)),
        f"<h2>Notebooks that timed out, crashed or could not be read</h2><p>({link('problems')})</p>",
        table_html(problems),
        (
            f"<h2>Written answers waiting for a grader</h2><p>{len(written)} answers. Formgrader at "
            f"{html.escape(formgrader)} (<code>--formgrader-url</code>). ({link('written')})</p>"
        ),
        table_html(written, links=("formgrader",)),
        (
            "<h2>Time per notebook</h2><p>Seconds: total (the grading ledger), in the student's kernel (nbclient's"
            " timing of each cell), outside it (the hidden checks' wait, nbgrader, the feedback page); the checks' and"
            f" the feedback's own seconds where the ledger records them. ({link('timing')})</p>"
        ),
        table_html(timing),
        f"<p>The cells that took longest, over the class ({link('slow_cells')}):</p>",
        table_html(slow.head(10)),
        "<h2>Similar submissions</h2>",
        f'<p class="note">A flag is a reason to look at the two notebooks, not a verdict: short answers that can be '
        f"written only one way match by construction, and students may have worked together as allowed. The answer "
        f"cells are compared without the release's starter text and comments, with names normalised "
        f"(autograder.similarity, copydetect's winnowing); a pair is listed when at least {THRESHOLD:.0%} of one "
        f"student's code is also in the other's. {compared} notebooks compared, "
        f"{compared * (compared - 1) // 2} pairs, {len(pairs)} listed. ({link('similarity')})</p>",
        table_html(similar.head(100)),
        *[pair_html(pair, prints) for pair in shown],
        f"<p><small>Report made in {time.perf_counter() - started:.2f} s.</small></p>",
    ]
    page = (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(assignment)} report</title>"
        f"<style>{STYLE}</style></head><body>" + "\n".join(sections) + "</body></html>"
    )
    path = out / f"{assignment}.html"
    write_atomic(path, page)
    return path


def assignments_of(course: Path, db: str | None = None) -> list[str]:
    from nbgrader.api import Gradebook

    with Gradebook(db or database_url(course)) as gradebook:
        return [assignment.name for assignment in gradebook.assignments]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.report", description=__doc__.split("\n\n")[0])
    parser.add_argument("--course", type=Path, required=True, help="a graded course folder (with gradebook.db)")
    parser.add_argument("--assignment", action="append", help="the assignment (default: every one in the gradebook)")
    parser.add_argument(
        "--formgrader-url",
        default="http://localhost:8888",
        help="where the instructor's Jupyter server runs Formgrader (default http://localhost:8888)",
    )
    parser.add_argument("--student", action="append", help="only this student (repeat it for more; default: all)")
    parser.add_argument(
        "--out", type=Path, default=None, help="the folder of the pages (default: the course's reports/)"
    )
    parser.add_argument(
        "--db",
        default=None,
        metavar="URL",
        help="the gradebook's database (default: the one the course's nbgrader_config.py names, else its gradebook.db)",
    )
    args = parser.parse_args(argv)
    db = args.db or database_url(args.course)
    if db.startswith("sqlite:///") and not Path(db.removeprefix("sqlite:///")).exists():
        print(
            f"no gradebook {db.removeprefix('sqlite:///')}: grade the class first (python -m autograder.classroom)",
            file=sys.stderr,
        )
        return 1
    for assignment in args.assignment or assignments_of(args.course, db):
        started = time.perf_counter()
        path = write_report(args.course, assignment, args.formgrader_url, db, args.student, args.out)
        print(f"{path} ({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
