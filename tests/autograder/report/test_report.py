"""The instructor's report (autograder.report), on small course folders made here and on the graded class.

The small course is a real nbgrader gradebook (nbgrader's Gradebook API) with seven students, whose autograded
notebooks are the bundled submissions with a verdict stored in each check cell's metadata (autograder.verdicts,
as the hidden checks store it, with its words in the cell's output), the points of examples/expected.json,
nbclient's timing of a few cells, a dead kernel and an unreadable notebook. It takes a second to make, so the
report's tables are checked value by value without grading anything. Two variants: a course graded before
verdicts were stored (the words only: the report says to regrade), and one with a hostile student whose id,
code and messages hold markup (the page shows it as text).

The browser tests render the report in headless Chromium (Debian's package, driven by Playwright) and read
the page's text and images; they are skipped, with the reason, where either is missing. The report of the
truly graded class is checked on the class the pipeline tests grade once for the whole suite (conftest's
``graded_class``), restricted to the bundled students.
"""

from __future__ import annotations

import csv
import datetime
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from conftest import CHROMIUM, playwright_or_skip

from autograder import report
from autograder.attempts import Attempts
from autograder.report import ReportOptions
from autograder.verdicts import (
    EMPTY,
    EXITED,
    KERNEL,
    KEY,
    Blank,
    KernelEnd,
    Named,
    Property,
    Verdict,
    mistake_id,
    named_after,
)

REPOSITORY = Path(__file__).resolve().parents[3]
EXAMPLES = REPOSITORY / "examples"
EXPECTED = json.loads((EXAMPLES / "expected.json").read_text())
MASK_LINE = "weights = weights * mask"  # where mask_after_softmax's attention differs from the solution

# the properties of each check as the verdicts name them (docs/contracts.md); FAIL lines for the mistakes below
PROPERTIES = {
    "check_softmax": ["shape", "rows sum to 1 on the last axis", "values", "no overflow on scores ~1e3"],
    "check_attention": [
        "returns (weights, output) of the right shapes",
        "rows sum to 1",
        "scaled by sqrt(d)",
        "values",
    ],
    "check_causal_mask": ["bool", "shape", "lower triangle incl. diagonal"],
    "check_masked_attention": [
        "exactly 0.0 weight on masked positions",
        "rows sum to 1",
        "leak test",
        "values",
        "drives the store's model",
    ],
    "check_average_largest_weight": ["values scaled", "values unscaled"],
    "check_split_heads": ["shape", "values (head h = columns h*d:(h+1)*d)"],
    "check_join_heads": ["shape", "values (inverse of split)"],
    "check_multi_head_attention": [
        "weights shape (heads, T, T)",
        "output shape (T, D)",
        "values (incl. output projection)",
    ],
    "check_previous_token_weight": ["shape (heads,)", "values on random patterns", "matches recorded statistics"],
    "check_even_previous_weight": ["values"],
    "check_description_positions": ["values (end marker out)"],
    "check_far_back_weight": ["values", "markers excluded", "matches recorded statistics"],
    "check_marker_weight": ["values"],
    "check_even_far_back_weight": ["values"],
    "check_even_marker_weight": ["values"],
    "check_safe_softmax": ["no overflow", "fully masked row -> zeros", "values"],
}
MODEL = "with your attention in every head, the store's model's logits differ from lib's (largest difference {})"
FAILS = {  # student -> {check: {property: message}}
    "mask_after_softmax": {
        "check_masked_attention": {
            "rows sum to 1": (
                "the weights are softmax of all scores with the masked ones zeroed afterwards: mask BEFORE softmax"
            ),
            "leak test": "changing only the last token changed the output at earlier position(s) [0, 1, 2]",
            "values": "the masked weights are zeroed after softmax",
            "drives the store's model": MODEL.format(25.3),
        }
    },
    "no_sqrt_scaling": {
        "check_attention": {
            "scaled by sqrt(d)": "the weights match unscaled scores: divide by sqrt(d)",
            "values": "the weights match unscaled scores: divide by sqrt(d)",
        },
        "check_masked_attention": {
            "values": "the weights match unscaled scores: divide by sqrt(d)",
            "drives the store's model": MODEL.format(11.3),
        },
    },
    "copied_mask": {
        "check_masked_attention": {
            "rows sum to 1": (
                "the weights are softmax of all scores with the masked ones zeroed afterwards: mask BEFORE softmax"
            ),
            "leak test": "changing only the last token changed the output at earlier position(s) [0, 4]",
            "values": "the masked weights are zeroed after softmax",
            "drives the store's model": MODEL.format(19.0),
        }
    },
}
BLANK_FAIL = "{function}(array of shape (3, 5)) failed: NotImplementedError:  (answer cell 1, line 4, in {function})"
# the messages of FAILS that name a known mistake (checks.diagnose matched a wrong variant): the grader stores them
# with the mistake's name as their id, the same in every check; the others' id is <check>.<property>
KNOWN = {
    "the weights are softmax of all scores with the masked ones zeroed afterwards: mask BEFORE softmax",
    "the weights match unscaled scores: divide by sqrt(d)",
    "the masked weights are zeroed after softmax",
}


def failed(check: str, name: str, message: str) -> Property:
    """A failed property as the grader stores it (answers.grading.evaluate): its message and its mistake's id."""
    said = Named(message, named_after(message)) if message in KNOWN else message
    return Property(name, False, message, mistake_id(check, name, said))


def make_verdict(student: str, check: str, function: str, points: float, fails: dict) -> Verdict:
    """The verdict the hidden checks would store for ``student``'s ``check``; ``fails``: {property: message}."""
    properties = []
    for name in PROPERTIES[check]:
        if student in ("blank_release", "unreadable"):
            properties.append(failed(check, name, BLANK_FAIL.format(function=function)))
        elif name in fails:
            properties.append(failed(check, name, fails[name]))
        elif name == "matches recorded statistics" and student == "crashed":
            properties.append(Property(name, None, "the store's model is not available"))
        else:
            properties.append(Property(name, True))
    return Verdict(check, function, points, EXPECTED["max_points"][check], tuple(properties), seed=1)


STUDENTS = {  # student -> (bundled submission, points like)
    "full_solution": "full_solution",
    "mask_after_softmax": "mask_after_softmax",
    "no_sqrt_scaling": "no_sqrt_scaling",
    "blank_release": "blank_release",
    "crashed": "kernel_crash",
    "unreadable": "blank_release",
    "copied_mask": "mask_after_softmax",
}


def copied(notebook: dict) -> None:
    """The same code with a variable renamed and comments: a near-copy."""
    for cell in notebook["cells"]:
        text = "".join(cell["source"]).replace("weights", "probs").replace("scores", "logits")
        cell["source"] = "\n".join(
            f"{line}  # mine" if line.strip().startswith("probs") else line for line in text.splitlines()
        )


def unreadable(notebook: dict) -> None:
    """What grading leaves of a notebook it could not read: the blank assignment, a note in front."""
    notebook["cells"].insert(
        0,
        {
            "cell_type": "markdown",
            "metadata": {},
            "source": (
                "**Your submission could not be graded: the file is empty.** It was graded "
                "as the blank assignment (0 points)."
            ),
        },
    )


EDITS = {"copied_mask": copied, "unreadable": unreadable}


def make_gradebook(course: Path, students: dict) -> None:
    """nbgrader's gradebook of the course: the source's grade cells, the students and the points they earned."""
    from nbgrader.api import Gradebook

    source = json.loads((course / "source" / "attention" / "attention.ipynb").read_text())
    os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])  # alembic
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        gradebook.add_assignment("attention")
        gradebook.add_notebook("attention", "attention")
        for cell in source["cells"]:
            meta = cell["metadata"].get("nbgrader", {})
            if meta.get("grade"):
                gradebook.add_grade_cell(
                    meta["grade_id"], "attention", "attention", max_score=meta["points"], cell_type=cell["cell_type"]
                )
        for student in [*students, "absent"]:
            gradebook.add_student(student)
        for student, like in students.items():
            gradebook.add_submission("attention", student)
            points = EXPECTED["students"][like]["points"]
            for grade_id, value in points.items():
                grade = gradebook.find_grade(grade_id, "attention", "attention", student)
                grade.auto_score, grade.needs_manual_grade = value, value is None
        gradebook.db.commit()


def grade_cells(notebook: dict, student: str, like: str, fails: dict, stored: bool) -> None:
    """Each check cell's verdict (in its metadata when ``stored``, in words in its output always), nbclient's
    timing of every code cell, and the crash of kernel_crash's notebook (its kernel's end in the notebook's
    metadata when ``stored``, as SurvivingExecute stores it)."""
    ends = []
    for number, cell in enumerate(notebook["cells"]):
        meta = cell["metadata"].get("nbgrader", {})
        if cell["cell_type"] == "code":
            cell["metadata"]["execution"] = {
                "iopub.execute_input": "2026-01-01T10:00:00.000000Z",
                "shell.execute_reply": f"2026-01-01T10:00:0{1 + number % 3}.500000Z",
            }
        if meta.get("grade") and cell["cell_type"] == "code":
            check = meta["grade_id"]
            function = "attention" if check == "check_masked_attention" else check.removeprefix("check_")
            points = EXPECTED["students"][like]["points"][check]
            verdict = make_verdict(student, check, function, points, fails.get(student, {}).get(check, {}))
            if stored:
                cell["metadata"][KEY] = verdict.to_dict()
            words = verdict.text() + "\nIn your notebook the visible checks ran without an error.\n"
            cell["outputs"] = [
                {"output_type": "stream", "name": "stdout", "text": words},
                {"output_type": "execute_result", "data": {"text/plain": f"{points:g}"}, "metadata": {}},
            ]
            cell["outputs"][1]["execution_count"] = 1
        if like == "kernel_crash" and cell["cell_type"] == "code" and "os._exit" in "".join(cell["source"]):
            end = KernelEnd(EXITED, number + 1, code=1)
            cell["outputs"] = [
                {"output_type": "error", "ename": "DeadKernelError", "evalue": end.text(), "traceback": []}
            ]
            ends.append(end)
    if stored:
        notebook["metadata"][KERNEL] = [end.to_dict() for end in ends]


def make_course(
    root: Path, *, students: dict = STUDENTS, fails: dict = FAILS, edits: dict = EDITS, stored: bool = True
) -> Path:
    """A course folder as a classroom run leaves it: source/, release/, gradebook.db, autograded/, .grading/.
    ``students``: {student: the bundled submission they handed in}; ``fails``: {student: {check: {property:
    message}}}; ``edits``: {student: a change to their notebook}; ``stored``: whether the check cells hold their
    verdicts as data (False: a course graded before verdicts were stored, their words only)."""
    course = root / "course"
    shutil.copytree(
        REPOSITORY / "source" / "attention",
        course / "source" / "attention",
        ignore=shutil.ignore_patterns(".ipynb_checkpoints"),
    )
    (course / "release" / "attention").mkdir(parents=True)
    shutil.copy(REPOSITORY / "release" / "attention" / "attention.ipynb", course / "release" / "attention")
    make_gradebook(course, students)
    ledger = course / ".grading" / "assignments" / "attention" / "students"
    ledger.mkdir(parents=True)
    for student, like in students.items():
        notebook = json.loads((EXAMPLES / "submissions" / like / "attention" / "attention.ipynb").read_text())
        if student in edits:
            edits[student](notebook)
        grade_cells(notebook, student, like, fails, stored)
        target = course / "autograded" / student / "attention"
        target.mkdir(parents=True)
        (target / "attention.ipynb").write_text(json.dumps(notebook))
        blank = Blank(EMPTY) if student == "unreadable" else None
        note = f"graded as blank: {blank.text()}" if blank else ""  # words for the table, read by nobody
        entry = {"student": student, "assignment": "attention", "fingerprint": "f", "note": note, "seconds": 150.0}
        entry["blank"] = blank.to_dict() if blank else None
        (ledger / f"{student}.json").write_text(json.dumps({**entry, "worker": "here:1"}))
    return course


def notebook_of(course: Path, student: str) -> dict:
    return json.loads((course / "autograded" / student / "attention" / "attention.ipynb").read_text())


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    return make_course(tmp_path_factory.mktemp("report"))


@pytest.fixture(scope="module")
def written(course) -> Path:
    return report.write_report(course=course, assignment="attention").page


def table(course: Path, name: str) -> list[dict]:
    with open(course / "reports" / "attention" / f"{name}.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def test_totals_and_states(course, written):
    rows = {row["student"]: row for row in table(course, "totals")}
    assert sorted(rows) == sorted([*STUDENTS, "absent"])
    assert {s: rows[s]["state"] for s in rows} == {
        "full_solution": "answered",
        "mask_after_softmax": "answered",
        "no_sqrt_scaling": "answered",
        "blank_release": "blank",
        "crashed": "answered",
        "unreadable": "unreadable",
        "copied_mask": "answered",
        "absent": "not submitted",
    }
    assert float(rows["mask_after_softmax"]["auto"]) == pytest.approx(25.8)
    assert rows["no_sqrt_scaling"]["lost"] == "attention masked_attention"
    assert rows["full_solution"]["written_to_grade"] == "4"
    page = written.read_text()
    assert "Mean <b>19.29</b>, median <b>25.80</b>" in page  # (29 + 25.8 + 25.4 + 0 + 29 + 0 + 25.8) / 7
    assert "1 blank and 1 unreadable notebooks" in page


def test_checks_and_properties(course, written):
    checks = {row["check"]: row for row in table(course, "checks")}
    assert list(checks) == [c for c in EXPECTED["max_points"] if c.startswith("check_")]
    masked = checks["check_masked_attention"]
    assert masked["function"] == "attention"
    assert (masked["students"], masked["full_points"]) == ("5", "2")  # blank and unreadable left out
    assert float(masked["difficulty"]) == pytest.approx((1 + 0.2 + 0.6 + 1 + 0.2) / 5, abs=1e-3)
    # against the rest of the total (29 - 4 = 25 for all but no_sqrt_scaling, 23): no correlation
    assert float(masked["discrimination"]) == pytest.approx(0.0, abs=1e-3)
    assert float(masked["top_minus_bottom_third"]) == pytest.approx(1 - 0.6)  # crashed (29) less no_sqrt (25.4)
    attention = checks["check_attention"]  # shares 1, 1, 0.5, 1, 1 against rests 25, 21.8, 23.4, 25, 21.8
    assert float(attention["discrimination"]) == pytest.approx(0.0, abs=1e-3)
    assert checks["check_softmax"]["discrimination"] == ""  # everyone passes: no correlation
    properties = {(row["check"], row["property"]): row for row in table(course, "properties")}
    rows = properties["check_masked_attention", "rows sum to 1"]
    assert (rows["passed"], rows["failed"], rows["difficulty"]) == ("3", "2", "0.6")
    scaled = properties["check_attention", "scaled by sqrt(d)"]  # fails for no_sqrt_scaling only
    passed, rest = (
        [1, 1, 0, 1, 1],
        [29 - 4, 25.8 - 4, 25.4 - 2, 29 - 4, 25.8 - 4],
    )  # full, mask, no_sqrt, crashed, copied
    assert float(scaled["discrimination"]) == pytest.approx(np.corrcoef(passed, rest)[0, 1], abs=1e-3)
    statistics = properties["check_previous_token_weight", "matches recorded statistics"]
    assert (statistics["passed"], statistics["not_applicable"]) == ("4", "1")


def test_named_mistakes_most_frequent_first(course, written):
    mistakes = table(course, "mistakes")
    top = mistakes[0]
    assert top["mistake"].startswith("the weights are softmax of all scores with the masked ones zeroed afterwards")
    assert (top["students"], top["functions"], top["checks"]) == ("2", "attention", "check_masked_attention")
    assert top["example"] == MASK_LINE, "taken from the student whose function is closest to the solution"
    second = mistakes[1]
    assert second["mistake"] == "the weights match unscaled scores: divide by sqrt(d)"
    assert (second["students"], second["checks"]) == ("1", "check_attention, check_masked_attention")
    assert second["example"] == "scores = queries @ np.swapaxes(keys, -1, -2)"
    assert len(mistakes) == 2, "blank and unreadable notebooks are not mistakes; later failures follow the first"
    failures = {(row["check"], row["property"]): row for row in table(course, "failures")}
    model = failures["check_masked_attention", "drives the store's model"]
    assert model["students"] == "3", "the same message with other numbers is one failure"
    assert "NotImplementedError" not in str(failures), "blank notebooks left out"


def test_problems_written_timing(course, written):
    problems = {(row["student"], row["cell"].split(":")[0], row["reason"]) for row in table(course, "problems")}
    crash = next(
        number
        for number, cell in enumerate(notebook_of(course, "crashed")["cells"], 1)
        if "os._exit" in "".join(cell["source"])
    )
    assert problems == {
        ("crashed", f"cell {crash}", "the kernel died (it exited, exit 1); later cells not run"),
        ("unreadable", "the whole notebook", "the file is empty"),
    }, "read from the kernel's ends and the ledger's blank reason, as stored"
    pending = table(course, "written")
    assert [row["student"] for row in pending] == ["full_solution"] * 4
    assert pending[0]["formgrader"].startswith("http://localhost:8888/formgrader/submissions/")
    timing = {row["student"]: row for row in table(course, "timing")}
    assert float(timing["full_solution"]["total"]) == 150.0
    assert 0 < float(timing["full_solution"]["kernel"]) < 150.0
    slow = table(course, "slow_cells")
    assert float(slow[0]["total"]) >= float(slow[-1]["total"])


def test_similar_pairs_listed_with_lines(course, written):
    pairs = {(row["a"], row["b"]): float(row["score"]) for row in table(course, "similarity")}
    assert pairs[("copied_mask", "mask_after_softmax")] >= 0.9
    assert ("blank_release", "full_solution") not in pairs
    page = written.read_text()
    assert "A flag is a reason to look at the two notebooks, not a verdict" in page
    assert 'class="hit"' in page


def test_code_that_matches_the_solution_is_listed_on_its_own(course, written):
    """The examples were written from the solution: full_solution is it, whole; the blank is not compared."""
    matches = {row["student"]: float(row["score"]) for row in table(course, "matches_solution")}
    assert matches["full_solution"] == 1.0
    assert "blank_release" not in matches and "(the solution)" not in matches
    assert list(matches.values()) == sorted(matches.values(), reverse=True)
    page = written.read_text()
    assert "Code that matches the solution" in page and "full_solution" in page


def test_command_line_and_student_filter(course, tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "autograder.report",
            "--course",
            str(course),
            "--student",
            "crashed",
            "--student",
            "full_solution",
            "--out",
            str(tmp_path),
        ],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "attention.html").exists()
    with open(tmp_path / "attention" / "totals.csv", newline="") as handle:
        assert [row["student"] for row in csv.DictReader(handle)] == ["crashed", "full_solution"]
    missing = subprocess.run(
        [sys.executable, "-m", "autograder.report", "--course", str(tmp_path / "nowhere")],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert missing.returncode == 1 and "grade the class first" in missing.stderr


def test_closing_table_fits_120_columns(course):
    from nbgrader.api import Gradebook

    from autograder.course.export import course_check_rows
    from autograder.course.table import grade_table, show

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        rows = course_check_rows(gradebook, course)
    notes = {
        "crashed": "kernel died in cell 41; later cells not run",
        "unreadable": "graded as blank: the file is not a notebook: NotJSONError: " + "x" * 200,
    }
    text = show(grade_table(rows, notes))
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 120, text
    rows = {line.split()[0]: line for line in lines[1:]}
    assert " 25.4 / 29 " in rows["no_sqrt_scaling"] and "attention masked_attention" in rows["no_sqrt_scaling"]
    assert "every check" in rows["blank_release"] and "kernel died" in rows["crashed"]
    assert "4 to grade" in rows["full_solution"]


# --- in a browser --------------------------------------------------------------------------------------------


ACTIVE = """() => ({
    title: document.title,
    scripts: document.scripts.length,
    handlers: Array.from(document.querySelectorAll("*"))
        .flatMap(e => e.getAttributeNames().filter(n => n.startsWith("on"))),
    links: Array.from(document.links).map(a => a.getAttribute("href")).filter(h => !/^(https?:|attention\\/)/.test(h)),
    ran: window.pwned || null,
})"""


@dataclass
class Seen:
    """What headless Chromium showed of a page: its text, its images [(loaded, natural width)], and what in it
    could run (ACTIVE: the title, scripts, on* attributes, links other than http(s) and the CSVs, window.pwned)."""

    text: str
    images: list
    active: dict


def browser_page(path: Path, screenshot: Path) -> Seen:
    """The page at ``path`` in headless Chromium, and a full-page screenshot of it; it asks no network."""
    playwright = playwright_or_skip()
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            requests = []
            page.on("request", lambda request: requests.append(request.url))
            page.goto(path.as_uri())
            page.wait_for_load_state("load")
            text = page.inner_text("body")
            images = page.evaluate("Array.from(document.images).map(i => [i.complete, i.naturalWidth])")
            active = page.evaluate(ACTIVE)
            page.screenshot(path=str(screenshot), full_page=True)
        finally:
            browser.close()
    outside = [url for url in requests if not url.startswith(("file:", "data:"))]
    assert not outside, f"the page asked the network for {outside}"
    print(f"\nscreenshot {screenshot}")
    return Seen(text, images, active)


def test_report_in_a_browser(written, tmp_path):
    seen = browser_page(written, tmp_path / "report-small-course.png")
    text, images = seen.text, seen.images
    assert seen.active == {"title": "attention report", "scripts": 0, "handlers": [], "links": [], "ran": None}
    assert len(images) >= 2 and all(done and width > 0 for done, width in images), images
    mistakes = text.split("Named mistakes", 1)[1]
    assert mistakes.index("the weights are softmax of all scores") < mistakes.index("the weights match unscaled")
    assert "copied_mask and mask_after_softmax" in text


def test_bundled_class_report_in_a_browser(graded_class, tmp_path):
    """The report of the class graded by the pipeline (written by the classroom run), and of its bundled
    students alone: there the top mistake is mask_after_softmax's (its line of code is the example)."""
    whole = graded_class.course / "reports" / "attention.html"
    assert whole.exists() and graded_class.run.report == str(whole), graded_class.run.report
    bundled = sorted(EXPECTED["students"])
    started = time.perf_counter()
    options = ReportOptions(students=tuple(bundled), out=tmp_path / "bundled")
    written = report.write_report(course=graded_class.course, assignment="attention", options=options)
    print(f"\nreport of the bundled class: {time.perf_counter() - started:.2f} s")
    assert written.stale_message == "", "graded now: every check cell holds its verdict"
    page = written.page
    with open(tmp_path / "bundled" / "attention" / "mistakes.csv", newline="") as handle:
        top = next(csv.DictReader(handle))
    assert (top["example"], top["functions"], top["checks"]) == (MASK_LINE, "attention", "check_masked_attention")
    seen = browser_page(page, tmp_path / "report-bundled-class.png")
    text, images = seen.text, seen.images
    assert all(done and width > 0 for done, width in images) and len(images) >= 2, images
    first_row = text.split("Named mistakes", 1)[1].split("example", 1)[1]
    assert first_row.index(MASK_LINE) < first_row.index("Notebooks that timed out")
    whole_seen = browser_page(whole, tmp_path / "report-graded-class.png")
    whole_text, whole_images = whole_seen.text, whole_seen.images
    assert all(done and width > 0 for done, width in whole_images), whole_images
    assert "Stale verdicts" not in whole_text
    assert whole_seen.active == {"title": "attention report", "scripts": 0, "handlers": [], "links": [], "ran": None}
    properties = whole_text.split("Per property", 1)[1].split("Named mistakes", 1)[0]
    assert "leak test: a later token leaves earlier outputs unchanged" in properties, "a name with a colon, whole"
    for student in ("kernel_crash", "never_ends"):
        assert student in whole_text.split("Notebooks that timed out", 1)[1].split("Written answers", 1)[0]


# --- a course graded before verdicts were stored ------------------------------------------------------------------


def test_stale_course_says_to_regrade_on_the_page_and_the_command_line(tmp_path, capsys):
    from autograder.report.command import main

    students = {"full_solution": "full_solution", "mask_after_softmax": "mask_after_softmax"}
    course = make_course(tmp_path, students=students, edits={}, stored=False)
    assert main(["--course", str(course), "--out", str(tmp_path / "out")]) == 0
    said = capsys.readouterr()
    assert str(tmp_path / "out" / "attention.html") in said.out
    assert "stale verdicts: 2 of 2 submitted notebooks of attention were autograded before" in said.err
    assert "(full_solution, mask_after_softmax)" in said.err
    assert "python -m autograder.course --regrade" in said.err
    page = (tmp_path / "out" / "attention.html").read_text()
    notice = page.split('<p class="stale" id="stale">', 1)[1].split("</p>", 1)[0]
    assert "2 of 2 submitted\nnotebooks of attention were autograded before" in notice
    assert "(full_solution, mask_after_softmax)" in notice
    assert "Grade the class again\n(<code>python -m autograder.course --regrade</code>)" in notice
    assert page.count('<a href="#stale">stale verdicts</a>') == 2, "said again above properties and mistakes"
    folder = tmp_path / "out" / "attention"
    with open(folder / "totals.csv", newline="") as handle:  # the gradebook's points are still there
        totals = {row["student"]: float(row["auto"]) for row in csv.DictReader(handle)}
    assert totals == {"absent": 0.0, "full_solution": 29.0, "mask_after_softmax": 25.8}
    with open(folder / "properties.csv", newline="") as handle:
        assert list(csv.DictReader(handle)) == [], "no property is guessed from the words"


# --- a hostile student: everything they wrote is text in the page -------------------------------------------------

HOSTILE = "<img src=x onerror=\"window.pwned='id'\">javascript:alert(1)<script>"
SCRIPT = "<script>window.pwned='code'</script>"
IMAGE = "<img src=x onerror=\"window.pwned='img'\">"
LINK = "<a href='javascript:window.pwned=1'>open</a>"
HOSTILE_LINE = f'weights = weights * mask; note = "{SCRIPT}{IMAGE}{LINK}"'


PAGE_TAGS = {
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "h1",
    "h2",
    "h3",
    "p",
    "b",
    "img",
    "table",
    "tr",
    "th",
    "td",
}
PAGE_TAGS |= {"a", "code", "details", "summary", "div", "pre", "span", "small"}


class Tags(HTMLParser):
    """The elements of a page as a browser's parser reads them: their names, on* attributes, links, images."""

    def __init__(self):
        super().__init__()
        self.names, self.handlers, self.links, self.images = set(), [], [], 0

    def handle_starttag(self, tag, attrs):
        self.names.add(tag)
        self.handlers += [name for name, _ in attrs if name.startswith("on")]
        self.links += [value for name, value in attrs if name == "href"]
        self.images += tag == "img"


def hostile_code(notebook: dict) -> None:
    """mask_after_softmax's notebook with markup in a string on the line where it differs from the solution."""
    for cell in notebook["cells"]:
        text = "".join(cell["source"])
        if MASK_LINE in text:
            cell["source"] = text.replace(MASK_LINE, HOSTILE_LINE)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Path:
    """A course of three where one student's id, code and the messages their verdicts quote hold markup."""
    students = {
        HOSTILE: "mask_after_softmax",
        "mask_after_softmax": "mask_after_softmax",
        "full_solution": "full_solution",
    }
    fails = {
        HOSTILE: {"check_masked_attention": {"rows sum to 1": f"{SCRIPT} mask BEFORE softmax", "leak test": IMAGE}},
        "mask_after_softmax": FAILS["mask_after_softmax"],
    }
    course = make_course(
        tmp_path_factory.mktemp("hostile"), students=students, fails=fails, edits={HOSTILE: hostile_code}
    )
    return report.write_report(course=course, assignment="attention").page


def test_hostile_student_is_text_in_the_page(hostile):
    page = hostile.read_text()
    with open(hostile.parent / "attention" / "mistakes.csv", newline="") as handle:
        examples = [row["example"] for row in csv.DictReader(handle)]
    assert HOSTILE_LINE[:100] in examples, "the hostile line is on the page, as the named mistake's example"
    for markup in (HOSTILE, SCRIPT, IMAGE, LINK):
        assert markup not in page
    assert "&lt;script&gt;window.pwned=&#39;code&#39;&lt;/script&gt;" in page  # code (the example, the pair)
    assert "&lt;img src=x onerror=&#34;window.pwned=&#39;id&#39;&#34;&gt;javascript:alert(1)&lt;script&gt;" in page
    # a message quoting markup is no mistake's name: its row names the property (the messages are in failures.csv)
    assert "&lt;script&gt;window.pwned=&#39;code&#39;&lt;/script&gt; mask BEFORE softmax" not in page
    assert "&#39;rows sum to 1&#39; fails, no named mistake matches" in page
    tags = Tags()
    tags.feed(page)
    assert tags.names <= PAGE_TAGS, tags.names - PAGE_TAGS
    assert tags.names.isdisjoint({"script", "iframe", "object", "embed", "svg"}) and tags.handlers == []
    assert tags.images == 2, "the two plots, no other image"
    assert all(href.startswith(("http://localhost:8888/", "attention/")) for href in tags.links), tags.links


def test_hostile_student_runs_nothing_in_a_browser(hostile, tmp_path):
    seen = browser_page(hostile, tmp_path / "report-hostile.png")
    assert seen.active == {"title": "attention report", "scripts": 0, "handlers": [], "links": [], "ran": None}
    assert len(seen.images) == 2
    assert HOSTILE in seen.text and SCRIPT in seen.text, "shown as text, as written (the pairs' code is folded)"


def test_formgrader_url_must_be_http():
    with pytest.raises(ValueError, match="not an http or https address"):
        ReportOptions(formgrader_url="javascript:alert(1)")


def test_instant_checks_per_student_beside_the_graded_score(course, tmp_path):
    copy = tmp_path / "course"
    shutil.copytree(course, copy)
    store = Attempts(f"sqlite:///{copy / 'gradebook.db'}")
    when = datetime.datetime(2026, 12, 1, 10, 0)
    for number, (points, status) in enumerate([(20.0, "done"), (25.8, "done"), (None, "queued")]):
        key = f"mask_after_softmax+attention+{number}"
        store.add(key=key, student="mask_after_softmax", assignment="attention", submitted=when)
        attempt = store.select(student="mask_after_softmax")[-1]
        if status == "done":
            store.start(attempt.id)
            store.finish(attempt.id, points=points, max_points=29.0, verdicts=[])
        else:
            store.set_status(attempt.id, status, expect=("pending",))
    store.add(key="positions+x", student="full_solution", assignment="positions", submitted=when)  # another one
    store.close()
    page = report.write_report(course=copy, assignment="attention").page.read_text()
    rows = table(copy, "attempts")
    assert [row["student"] for row in rows] == ["mask_after_softmax"]
    row = rows[0]
    assert (row["submits"], row["checked"], row["waiting"], row["not_checked"]) == ("3", "2", "1", "0")
    assert (float(row["first"]), float(row["best"]), float(row["last"])) == (20.0, 25.8, 25.8)
    assert float(row["graded"]) == pytest.approx(25.8) and row["scores"] == "20 25.8"
    assert "<h2>Instant checks</h2>" in page


def test_a_course_the_grading_service_never_saw_says_so(course, written):
    assert table(course, "attempts") == []
    assert "No Submit was checked by the grading service" in written.read_text()
