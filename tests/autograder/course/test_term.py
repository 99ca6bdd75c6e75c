"""Each student's own due date (autograder.course.term): extensions, late days spent once under real concurrency
(threads and processes, SQLite and PostgreSQL), the command, and the class run's late penalty from it."""

from __future__ import annotations

import datetime
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from autograder.course.term.__main__ import main
from autograder.term import LateDays, Term, TermError

DUE = datetime.datetime(2026, 12, 14, 17, 0)
HOUR = datetime.timedelta(hours=1)


def make_term(url: str, tokens: int = 0, hours: float = 24.0) -> Term:
    return Term(url, rule=LateDays(tokens=tokens, hours=hours))


def sqlite(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'gradebook.db'}"


def test_an_extension_is_hours_or_a_due_date_and_replaces_the_one_before(tmp_path):
    term = make_term(sqlite(tmp_path))
    own = lambda student: term.standing(student=student, assignment="attention", base=DUE)  # noqa: E731
    term.extend(student="ada", assignment="attention", hours=48)
    assert own("ada").due == DUE + 48 * HOUR and own("ada").extension == 48 * HOUR
    assert own("bo").due == DUE and own("bo").extension is None  # a classmate keeps the assignment's
    term.extend(student="ada", assignment="attention", due=datetime.datetime(2026, 12, 20, 9, 0))
    assert own("ada").due == datetime.datetime(2026, 12, 20, 9, 0)  # replaced, not added
    zoned = datetime.datetime(2026, 12, 20, 10, 0, tzinfo=datetime.timezone(datetime.timedelta(hours=1)))
    term.extend(student="ada", assignment="attention", due=zoned)
    assert own("ada").due == datetime.datetime(2026, 12, 20, 9, 0)  # kept in UTC
    assert own("ada").describe()[0] == "Your due date: 2026-12-20 09:00 UTC (an extension)."
    term.extend(student="ada", assignment="attention")
    assert own("ada").due == DUE and term.standings(assignment="attention", base=DUE) == {}
    no_due = term.standing(student="ada", assignment="positions", base=None)
    assert no_due.due is None and no_due.extension is None and not no_due.late(DUE)


@pytest.mark.parametrize(
    "change, words",
    [
        (dict(student="ada", assignment="attention", hours=-3), "an extension is a number of hours above 0"),
        (dict(student="ada", assignment="attention", hours=10**6), "at most 8784"),
        (dict(student="ada", assignment="attention", hours=2, due=DUE), "not both"),
        (dict(student="<script>", assignment="attention", hours=2), "is not a student id"),
        (dict(student="ada", assignment="../x", hours=2), "is not a assignment id"),
    ],
)
def test_a_wrong_extension_is_refused_saying_what_is_wrong(tmp_path, change, words):
    term = make_term(sqlite(tmp_path))
    with pytest.raises(TermError, match=words):
        term.extend(**change)
    assert term.standings(assignment="attention", base=DUE) == {}  # nothing half written


def test_a_students_click_spends_one_late_day_once_and_they_run_out(tmp_path):
    term = make_term(sqlite(tmp_path), tokens=2)
    first = term.spend(student="ada", assignment="attention", base=DUE, seen=0)
    assert first.tokens == 1 and first.standing.due == DUE + 24 * HOUR and first.standing.left == 1
    again = term.spend(student="ada", assignment="attention", base=DUE, seen=0)  # the same page's click again
    assert again.tokens == 0 and again.why.startswith("already done: 1 late days")
    assert term.spend(student="ada", assignment="positions", base=DUE, seen=0).tokens == 1
    out = term.spend(student="ada", assignment="attention", base=DUE, seen=1)
    assert out.tokens == 0 and out.why == "you have no late day left" and out.standing.left == 0
    assert term.standing(student="ada", assignment="attention", base=DUE).due == DUE + 24 * HOUR
    term.grant(student="ada", tokens=3)  # the instructor's word for her, over the course's 2
    assert term.spend(student="ada", assignment="attention", base=DUE, seen=1).standing.left == 0
    assert term.standing(student="ada", assignment="attention", base=DUE).due == DUE + 48 * HOUR
    assert term.spend(student="bo", assignment="attention", base=None, seen=0).why.endswith("has no due date to move")
    with pytest.raises(TermError, match="tokens = -1"):
        term.grant(student="ada", tokens=-1)


def test_a_late_submit_spends_the_tokens_that_cover_it_or_none(tmp_path):
    term = make_term(sqlite(tmp_path), tokens=2, hours=24)
    on_time = term.cover(student="ada", assignment="attention", base=DUE, at=DUE - HOUR)
    assert on_time.tokens == 0 and on_time.standing.spent == 0
    covered = term.cover(student="ada", assignment="attention", base=DUE, at=DUE + 30 * HOUR)  # two days' worth
    assert covered.tokens == 2 and not covered.standing.late(DUE + 30 * HOUR)
    too_late = term.cover(student="bo", assignment="attention", base=DUE, at=DUE + 80 * HOUR)  # 4 needed, 2 held
    assert too_late.tokens == 0 and too_late.why == "4 late days would cover it; 2 left"
    assert term.standing(student="bo", assignment="attention", base=DUE).left == 2  # none wasted


def race(url: str, student: str, assignment: str, at: datetime.datetime, start, results):
    """One racer: waits for the others at ``start``, then covers a Submit received ``at``."""
    term = make_term(url, tokens=3)
    try:
        start.wait(timeout=30)
        results.append(term.cover(student=student, assignment=assignment, base=DUE, at=at).tokens)
    finally:
        term.close()


def test_submits_racing_at_the_deadline_on_threads_spend_one_token(tmp_path, database):
    url = database(tmp_path)
    Path(tmp_path / "course").mkdir(exist_ok=True)
    make_term(url).close()  # the tables made once, before the race
    start, results = threading.Barrier(8), []
    threads = [
        threading.Thread(target=race, args=(url, "ada", "attention", DUE + HOUR, start, results)) for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(results) == [0] * 7 + [1]  # eight late Submits of the same hour: one token
    standing = make_term(url, tokens=3).standing(student="ada", assignment="attention", base=DUE)
    assert (standing.spent, standing.left, standing.due) == (1, 2, DUE + 24 * HOUR)


RACER = """
import datetime, os, sys, time
from autograder.term import LateDays, Term
url, go = sys.argv[1], sys.argv[2]
term = Term(url, rule=LateDays(tokens=3))
due = datetime.datetime(2026, 12, 14, 17, 0)
term.standing(student="ada", assignment="attention", base=due)  # connected
open(f"{go}.ready.{os.getpid()}", "w").close()
while not os.path.exists(go):  # every racer ready, then all at once
    time.sleep(0.001)
print(term.cover(student="ada", assignment="attention", base=due, at=due + datetime.timedelta(hours=1)).tokens)
"""


def test_submits_racing_in_processes_spend_one_token(tmp_path, database):
    url = database(tmp_path)
    Path(tmp_path / "course").mkdir(exist_ok=True)
    make_term(url).close()
    go = tmp_path / "go"
    racers = [
        subprocess.Popen([sys.executable, "-c", RACER, url, str(go)], stdout=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    deadline = time.monotonic() + 60
    while len(list(tmp_path.glob("go.ready.*"))) < len(racers) and time.monotonic() < deadline:
        time.sleep(0.01)  # each has imported the store and connected
    go.touch()
    spent = sorted(int(racer.communicate(timeout=60)[0]) for racer in racers)
    assert spent == [0, 0, 0, 1] and all(racer.returncode == 0 for racer in racers)
    assert make_term(url, tokens=3).standing(student="ada", assignment="attention", base=DUE).spent == 1


def test_the_last_token_raced_for_by_two_assignments_goes_to_one(tmp_path, database):
    url = database(tmp_path)
    Path(tmp_path / "course").mkdir(exist_ok=True)
    term = make_term(url, tokens=3)
    term.grant(student="ada", tokens=1)
    start, results = threading.Barrier(6), []
    threads = [
        threading.Thread(target=race, args=(url, "ada", name, DUE + HOUR, start, results))
        for name in ("attention", "positions") * 3
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(results) == [0] * 5 + [1]
    assert term.grants() == {"ada": 1} and term.standing(student="ada", assignment="attention", base=DUE).left == 0


# --- the command -----------------------------------------------------------------------------------------------------


def course_with_gradebook(tmp_path: Path) -> Path:
    from nbgrader.api import Gradebook

    course = tmp_path / "course"
    course.mkdir()
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        gradebook.update_or_create_assignment("attention", duedate=DUE)
    return course


def test_the_command_extends_grants_and_shows_and_its_help_changes_nothing(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SystemExit) as helped:
        main(["--course", str(empty), "extend", "--help"])
    assert helped.value.code == 0 and list(empty.iterdir()) == []  # --help: no database made
    with pytest.raises(SystemExit) as refused:
        main(["--course", str(empty), "grant", "ada", "2"])
    assert refused.value.code == 2 and "has no gradebook yet" in capsys.readouterr().err
    course = course_with_gradebook(tmp_path)
    assert main(["--course", str(course), "extend", "ada", "attention", "--hours", "36"]) == 0
    assert capsys.readouterr().out == "ada attention: due 2026-12-16 05:00 UTC (an extension)\n"
    assert main(["--course", str(course), "extend", "bo", "attention", "--due", "2026-12-15 18:00+01:00"]) == 0
    assert capsys.readouterr().out == "bo attention: due 2026-12-15 17:00 UTC (an extension)\n"
    assert main(["--course", str(course), "grant", "ada", "2"]) == 0
    capsys.readouterr()
    assert main(["--course", str(course), "show"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "ada attention: due 2026-12-16 05:00 UTC (an extension); late days 2 of 2 left",
        "bo attention: due 2026-12-15 17:00 UTC (an extension); late days 0 of 0 left",
        "ada: 2 late days for the term",
    ]
    with pytest.raises(SystemExit) as wrong:
        main(["--course", str(course), "extend", "ada", "attention", "--hours", "-1"])
    assert wrong.value.code == 2 and "a number of hours above 0" in capsys.readouterr().err
    assert main(["--course", str(course), "extend", "ada", "attention", "--remove"]) == 0
    assert capsys.readouterr().out == "ada attention: due 2026-12-14 17:00 UTC\n"


# --- the class run's late penalty -----------------------------------------------------------------------------------


@pytest.mark.skipif(
    not (Path(sys.executable).parent / "nbgrader").exists(), reason="nbgrader is not installed next to this Python"
)
def test_the_class_run_counts_the_late_penalty_from_each_students_own_due_date(tmp_path, monkeypatch):
    """Two identical notebooks handed in an hour after the due date, under nbgrader's 'zero' penalty: the student
    with an extension keeps every point, the classmate's penalty is their score; the extension is nbgrader's own
    (SubmittedAssignment.extension, so grades.csv's duedate is hers), the LMS gets the score less the penalty, and
    a change of her extension changes her submission's fingerprint only (the next run grades her alone again)."""
    import os

    from nbgrader.api import Gradebook

    from autograder.assignments import Layout
    from autograder.course import run as steps
    from autograder.grading import dispatch, worker
    from autograder.grading.gradebook import record_in_gradebook
    from autograder.lms.files import scored
    from autograder.notebook.pipeline import ChainOptions
    from autograder.sandbox import bubblewrap, unsandboxed_allowed
    from autograder.settings import CourseSettings

    if bubblewrap() is None and not unsandboxed_allowed():
        pytest.skip("bubblewrap is not available (apt-get install bubblewrap): no student code runs without it")
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    course, layout = tmp_path / "course", Layout("positions", "positions")
    repository = Path(__file__).resolve().parents[3]
    steps.prepare_course(course, source=repository / "source", layout=layout, cell_timeout=20)
    steps.register(course, layout, ["ada", "bo"])
    steps.release(course, layout)
    db = f"sqlite:///{course / 'gradebook.db'}"
    with Gradebook(db) as gradebook:
        gradebook.update_or_create_assignment("positions", duedate=DUE)
    full = repository / "examples" / "submissions" / "full_solution" / "positions" / "positions.ipynb"
    for student in ("ada", "bo"):
        folder = course / "submitted" / student / "positions"
        folder.mkdir(parents=True)
        (folder / "positions.ipynb").write_bytes(full.read_bytes())
        (folder / "timestamp.txt").write_text(f"{DUE + HOUR:%Y-%m-%d %H:%M:%S}.000000 UTC")
    with (course / "nbgrader_config.py").open("a") as config:
        config.write("c.LateSubmissionPlugin.penalty_method = 'zero'\n")
    settings = CourseSettings.read(course)
    assert settings.late_penalty == "zero"
    settings.term().extend(student="ada", assignment="positions", hours=48)
    extensions = dispatch.own_extensions(settings, db, "positions")
    assert extensions == {"ada": 48 * HOUR}
    assignment = dispatch.load_assignment(
        course, "positions", chain=ChainOptions(cell_timeout=20, late_penalty=settings.late_penalty)
    )
    plain = {s: dispatch.load_submission(course, s, assignment) for s in ("ada", "bo")}
    own = {s: dispatch.load_submission(course, s, assignment, extension=extensions.get(s)) for s in ("ada", "bo")}
    assert own["ada"].fingerprint != plain["ada"].fingerprint and own["bo"].fingerprint == plain["bo"].fingerprint
    for student in ("ada", "bo"):
        outcome = worker.grade_submission(assignment, own[student])
        assert outcome.error == "", outcome.error
        record_in_gradebook(course, outcome, db=db)
    with Gradebook(db) as gradebook:
        ada, bo = (gradebook.find_submission("positions", s) for s in ("ada", "bo"))
        assert (ada.score, ada.late_submission_penalty, ada.duedate) == (5.0, 0.0, DUE + 48 * HOUR)
        assert (bo.score, bo.late_submission_penalty, bo.duedate) == (5.0, 5.0, DUE)
        assert (scored(ada), scored(bo)) == (5.0, 0.0)  # what the LMS files and the passback send


def test_a_changed_extension_grades_that_student_again_and_no_one_else(tmp_path, cluster):
    from gradebooks import instant, synthetic_course
    from nbgrader.api import Gradebook

    from autograder.grading import dispatch

    course, url = synthetic_course(tmp_path, {"ada": "2", "bo": "2", "cy": "1"})
    with Gradebook(url) as gradebook:
        gradebook.update_or_create_assignment("attention", duedate=DUE)
    options = dispatch.ClassOptions(scheduler=cluster, progress=False, db=url, task=instant)
    first = dispatch.grade_class(course, "attention", ["ada", "bo", "cy"], options=options)
    assert sorted(first.graded) == ["ada", "bo", "cy"]
    term = Term(url)
    term.extend(student="bo", assignment="attention", hours=12)
    again = dispatch.grade_class(course, "attention", ["ada", "bo", "cy"], options=options)
    assert again.graded == ["bo"] and sorted(again.skipped) == ["ada", "cy"]
    with Gradebook(url) as gradebook:
        assert gradebook.find_submission("attention", "bo").extension == 12 * HOUR
        assert gradebook.find_submission("attention", "ada").extension is None
    term.extend(student="bo", assignment="attention", hours=12)  # the same extension again: nothing to grade
    assert dispatch.grade_class(course, "attention", ["ada", "bo", "cy"], options=options).graded == []
    term.extend(student="bo", assignment="attention")  # removed: bo again, back to the assignment's due date
    assert dispatch.grade_class(course, "attention", ["ada", "bo", "cy"], options=options).graded == ["bo"]
    with Gradebook(url) as gradebook:
        assert gradebook.find_submission("attention", "bo").extension is None
