"""The report's page: its two plots and its tables rendered by Jinja (autograder/templates/report/), one
self-contained HTML file (plots embedded as PNG data, no script, no network).

Autoescaping is on: every value the page shows (student ids, their code, the verdicts' messages, which may
quote a student's exception) is text in the page, never markup. The only links are the CSV files beside the
page and the Formgrader links of the written answers, whose start the instructor gives (http or https only).
"""

from __future__ import annotations

import base64
import io
import math
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import jinja2
import pandas as pd
from matplotlib.figure import Figure

from autograder.report.course import REGRADE, GradedAssignment
from autograder.report.similarity import THRESHOLD
from autograder.report.tables import Similar, Tables, short_check

TEMPLATES = Path(__file__).resolve().parent.parent / "templates" / "report"
PAGE = "report.html.j2"
SHOWN_ROWS = {"slow_cells": 10, "similarity": 100}  # the page shows the first rows; the CSV has them all


@dataclass(frozen=True)
class Line:
    text: str
    hit: bool  # one of the lines both students share


@dataclass(frozen=True)
class Side:
    student: str
    lines: list[Line]


@dataclass(frozen=True)
class FunctionPair:
    function: str
    sides: list[Side]


@dataclass(frozen=True)
class PairView:
    a: str
    b: str
    score: float
    functions: list[FunctionPair]


def shown(value) -> str:
    """A table cell's text: numbers as %g, nothing as an em dash."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:g}" if isinstance(value, float) else str(value)


def environment() -> jinja2.Environment:
    """Jinja with autoescaping on for every template, and an error for any name the template misses."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters["shown"] = shown
    env.filters["short_check"] = short_check
    return env


def figure_data(figure: Figure) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def histogram(totals: list[float], top: float, mean: float, median: float) -> str:
    figure = Figure(figsize=(7, 3))
    axes = figure.subplots()
    edges = [x * 1.0 for x in range(int(math.ceil(top)) + 2)] if top else [0, 1]
    axes.hist(totals, bins=edges, color="#4c72b0", edgecolor="white")
    axes.axvline(mean, color="#dd8452", label=f"mean {mean:.2f}")
    axes.axvline(median, color="#55a868", linestyle="--", label=f"median {median:.2f}")
    axes.set_xlabel(f"automatic total (of {top:g})")
    axes.set_ylabel("students")
    axes.legend(loc="upper left")
    return figure_data(figure)


def difficulty_chart(checks: pd.DataFrame) -> str:
    figure = Figure(figsize=(7, 0.28 * max(len(checks), 3) + 0.8))
    axes = figure.subplots()
    names = [short_check(c) for c in checks["check"]][::-1]
    axes.barh(names, list(checks["difficulty"].fillna(0))[::-1], color="#4c72b0")
    axes.set_xlim(0, 1)
    axes.set_xlabel("mean share of the check's points (difficulty: 1 = everyone passes)")
    return figure_data(figure)


def table_view(frame: pd.DataFrame, rows: int | None = None) -> dict:
    """{"columns": [...], "rows": [[(column, value), ...], ...]} of a frame, its first ``rows`` rows."""
    frame = frame if rows is None else frame.head(rows)
    return {
        "columns": [str(c) for c in frame.columns],
        "rows": [list(zip(frame.columns, values)) for values in frame.itertuples(index=False, name=None)],
    }


def pair_view(pair, prints: dict) -> PairView:
    """The two students' matching functions side by side, the matching lines marked."""
    marked = {side: pair.lines.get(side, {}) for side in ("a", "b")}
    functions = []
    for function in (f for f in prints[pair.a].code if f in marked["a"] or f in marked["b"]):
        sides = []
        for side, student in (("a", pair.a), ("b", pair.b)):
            hits = set(marked[side].get(function, []))
            code = prints[student].code.get(function, "")
            lines = [Line(text, number in hits) for number, text in enumerate(code.splitlines(), start=1)]
            sides.append(Side(student, lines))
        functions.append(FunctionPair(function, sides))
    return PairView(pair.a, pair.b, pair.score, functions)


def summary(graded: GradedAssignment) -> dict:
    """The counts and totals the page's first paragraphs say."""
    auto = [s.auto for s in graded.submitted]
    states = ("answered", "blank", "unreadable", "not submitted")
    return {
        "auto": auto,
        "top": max((s.auto_top for s in graded.submitted), default=0.0),
        "mean": float(pd.Series(auto).mean()) if auto else 0.0,
        "median": float(pd.Series(auto).median()) if auto else 0.0,
        "counts": {state: sum(1 for s in graded.students if s.state == state) for state in states},
    }


def render(graded: GradedAssignment, tables: Tables, *, formgrader: str, seconds: float) -> str:
    """The page of ``graded``'s report; ``seconds``: the time it took to read and compute it, said at its end."""
    facts = summary(graded)
    similar: Similar = tables.similar
    compared = similar.compared
    return (
        environment()
        .get_template(PAGE)
        .render(
            assignment=graded.name,
            course=str(graded.course),
            students=len(graded.students),
            submitted=len(graded.submitted),
            answered=len(graded.answered),
            stale=[s.id for s in graded.stale],
            notes=list(graded.notes),
            regrade=REGRADE,
            made=datetime.now().isoformat(timespec="seconds"),
            formgrader=formgrader,
            histogram=histogram(facts["auto"], facts["top"], facts["mean"], facts["median"]),
            difficulty=difficulty_chart(tables.checks),
            tables={name: table_view(frame, SHOWN_ROWS.get(name)) for name, frame in tables.frames().items()},
            written_count=len(tables.written),
            threshold=f"{THRESHOLD:.0%}",
            compared=compared,
            pairs_count=compared * (compared - 1) // 2,
            listed=len(similar.pairs),
            pairs=[pair_view(pair, similar.prints) for pair in similar.shown],
            seconds=f"{seconds:.2f}",
            **{key: facts[key] for key in ("top", "mean", "median", "counts")},
        )
    )
