"""Instant checks (autograder.service.instant, autograder.attempts): the policy's window, the fair queue,
each Submit
recorded and checked exactly once, plain verdicts for what cannot be checked, and the same score as the class run."""

import concurrent.futures
import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder import sandbox
from autograder.attempts import Attempts
from autograder.hub import collect
from autograder.service import checking, instant
from autograder.service.checking import NotCheckable, check_notebook, read_notebook
from autograder.service.instant import Checker, InstantChecks, inbound_submits, window_reopens
from autograder.settings import CourseSettings
from autograder.verdicts import Verdict

REPOSITORY = Path(__file__).resolve().parents[3]
SOURCE = REPOSITORY / "source" / "attention"
EXAMPLES = REPOSITORY / "examples" / "submissions"
EXPECTED = json.loads((REPOSITORY / "examples" / "expected.json").read_text())
T0 = datetime.datetime(2026, 12, 1, 10, 0, 0)


def fake_check(*, source, notebook_path, **_):
    if Path(notebook_path).read_bytes().startswith(b"not json"):
        raise NotCheckable("attention.ipynb is not a notebook")
    return 29.0, 29.0, []


def make_checker(tmp_path, policy=None, students=("ada", "bo", "cy"), slots=1) -> Checker:
    store = Attempts(f"sqlite:///{tmp_path / 'gradebook.db'}")
    return Checker(
        source=SOURCE,
        inbound=tmp_path / "inbound",
        store=store,
        policy=policy or InstantChecks(),
        students=lambda: set(students),
        slots=slots,
    )


def test_the_window_counts_checks_started_in_the_period():
    policy = InstantChecks(attempts=3, period=3600)
    history = [T0, T0 + datetime.timedelta(minutes=10), T0 + datetime.timedelta(minutes=20)]
    assert window_reopens(history[:2], policy, T0 + datetime.timedelta(minutes=30)) is None
    assert window_reopens(history, policy, T0 + datetime.timedelta(minutes=30)) == T0 + datetime.timedelta(hours=1)
    assert window_reopens(history, policy, T0 + datetime.timedelta(minutes=61)) is None  # the first one left it


def test_a_fourth_submit_in_the_hour_is_queued_then_checked_when_the_window_reopens(
    tmp_path, inline_pool, inbound_submit
):
    checker = make_checker(tmp_path, InstantChecks(attempts=3, period=3600), slots=4)
    pool = inline_pool(fake_check)
    for minute in range(4):  # one Submit a minute, each found half a minute later
        inbound_submit(tmp_path / "inbound", "ada", T0 + datetime.timedelta(minutes=minute))
        checker.step(pool, now=T0 + datetime.timedelta(minutes=minute, seconds=30))
        checker.collect(now=T0 + datetime.timedelta(minutes=minute, seconds=30))
    statuses = [a.status for a in checker.store.select(student="ada")]
    assert statuses == ["done", "done", "done", "queued"]
    inbound_submit(tmp_path / "inbound", "ada", T0 + datetime.timedelta(minutes=4))  # a fix while queued
    checker.step(pool, now=T0 + datetime.timedelta(minutes=4, seconds=30))
    assert [a.status for a in checker.store.select(student="ada")] == ["done"] * 3 + ["superseded", "queued"]
    checker.step(pool, now=T0 + datetime.timedelta(minutes=61))  # the first check left the window at 60:30
    checker.collect(now=T0 + datetime.timedelta(minutes=61))
    assert [a.status for a in checker.store.select(student="ada")] == ["done"] * 3 + ["superseded", "done"]
    assert len(pool.calls) == 4


def test_a_students_newest_submit_is_checked_never_a_stale_one_before_it(tmp_path, inline_pool, inbound_submit):
    checker = make_checker(tmp_path, slots=1)
    keys = [inbound_submit(tmp_path / "inbound", "ada", T0 + datetime.timedelta(seconds=s)) for s in range(3)]
    pool = inline_pool(fake_check)
    checker.step(pool, now=T0 + datetime.timedelta(seconds=10))
    assert [call["notebook_path"].parent.name for call in pool.calls] == [keys[-1]]  # the fix, not the first
    stale = checker.store.select(student="ada")[:2]
    assert [a.status for a in stale] == ["superseded", "superseded"]
    newest = checker.store.select(student="ada")[-1]
    assert stale[0].message == f"your later Submit (received {newest.submitted:%H:%M:%S} UTC) is checked in its place"
    checker.collect(now=T0 + datetime.timedelta(seconds=10))
    for _ in range(3):  # the stale ones are never checked later either
        checker.step(pool, now=T0 + datetime.timedelta(seconds=20))
    assert len(pool.calls) == 1 and checker.store.select(student="ada")[-1].status == "done"


def test_a_student_who_hammers_submit_waits_behind_the_others(tmp_path, inline_pool, inbound_submit):
    checker = make_checker(tmp_path, InstantChecks(attempts=100, period=3600), slots=1)
    inbound = tmp_path / "inbound"
    for second in range(6):
        inbound_submit(inbound, "ada", T0 + datetime.timedelta(seconds=second))
    inbound_submit(inbound, "bo", T0 + datetime.timedelta(seconds=10))
    inbound_submit(inbound, "cy", T0 + datetime.timedelta(seconds=11))
    order, pool = [], inline_pool(fake_check)
    for tick in range(8):
        now = T0 + datetime.timedelta(seconds=20 + tick)
        checker.step(pool, now=now)
        order += [checker.store.get(i).student for i in checker.running]
        checker.collect(now=now)
        if tick == 0:  # ada submits again while bo and cy still wait
            inbound_submit(inbound, "ada", T0 + datetime.timedelta(seconds=21))
    assert order == ["ada", "bo", "cy", "ada"]  # bo and cy after ada's first, not after all seven
    assert [a.status for a in checker.store.select(student="ada")] == ["superseded"] * 5 + ["done", "done"]


def test_a_finished_check_wakes_the_service_at_once(tmp_path, inbound_submit):
    class Later:  # a pool whose check finishes when the test says
        def submit(self, function, **keywords):
            self.future = concurrent.futures.Future()
            return self.future

    checker, pool = make_checker(tmp_path), Later()
    inbound_submit(tmp_path / "inbound", "ada", T0)
    checker.step(pool, now=T0)
    assert not checker.wake.is_set()
    pool.future.set_result((29.0, 29.0, []))
    assert checker.wake.is_set()  # the service's thread records it now, not at its next round


def test_the_workers_are_warmed_at_start_on_the_releases_blank_notebook(tmp_path, inline_pool):
    if sandbox.bubblewrap() is None and not sandbox.unsandboxed_allowed():
        pytest.skip("bubblewrap is not available (apt-get install bubblewrap)")
    checker, pool = make_checker(tmp_path, slots=2), inline_pool()
    futures = checker.warm(pool)
    blank = REPOSITORY / "release" / "attention" / "attention.ipynb"
    assert [call["notebook_path"] for call in pool.calls] == [blank, blank]
    assert all(future.result() > 0 for future in futures)  # a whole check ran: its seconds
    points, top, verdicts = checking.check_answers(SOURCE, nbformat.read(blank, 4))
    assert points == 0 and top == 29 and all(isinstance(v, Verdict) and not v.passed for v in verdicts)


def test_each_submit_is_recorded_once_and_unknown_or_malformed_ones_are_refused_for_the_instructor(
    tmp_path, inline_pool, inbound_submit
):
    checker = make_checker(tmp_path, slots=4)
    inbound = tmp_path / "inbound"
    inbound_submit(inbound, "ada", T0)
    inbound_submit(inbound, "mallory", T0)  # not a student of the course
    (inbound / "not-a-submission").mkdir()
    (inbound / "ada+attention+garbage+1").mkdir()
    assert checker.scan(T0) == 1
    assert checker.scan(T0) == 0  # found again: nothing new
    assert [a.student for a in checker.store.select()] == ["ada"]
    count, refused = checker.refused_entries()
    reasons = {entry.name: entry.reason for entry in refused}
    assert count == 3
    assert "not a student of this course" in next(r for n, r in reasons.items() if n.startswith("mallory+"))
    assert reasons["not-a-submission"].startswith("its name is not a Submit's")
    assert reasons["ada+attention+garbage+1"].startswith("the time in its name is not one nbgrader writes")
    pool = inline_pool(fake_check)
    checker.step(pool, now=T0)
    checker.collect(now=T0)
    assert [call["notebook_path"].parent.name.split("+")[0] for call in pool.calls] == ["ada"]


def test_a_submit_is_timed_by_when_it_was_received_not_by_the_time_its_name_states(tmp_path, inbound_submit):
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    checker = make_checker(tmp_path, InstantChecks(due=f"{now - datetime.timedelta(minutes=5):%Y-%m-%dT%H:%M:%S}"))
    inbound = tmp_path / "inbound"
    inbound_submit(inbound, "ada", now - datetime.timedelta(days=2))  # made now, after the due date, named earlier
    later = now + datetime.timedelta(seconds=30)
    assert checker.scan(later) == 1
    (attempt,) = checker.store.select()
    assert attempt.status == "late" and "received after the due date" in attempt.message
    assert now - datetime.timedelta(seconds=5) <= attempt.submitted <= later  # the folder's change time
    assert attempt.received == later


def test_a_submit_received_before_the_due_date_is_on_time_whatever_its_name_says(tmp_path, inbound_submit):
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    checker = make_checker(tmp_path, InstantChecks(due=f"{now + datetime.timedelta(hours=1):%Y-%m-%dT%H:%M:%S}"))
    inbound_submit(tmp_path / "inbound", "ada", now + datetime.timedelta(days=300))  # a name from the future
    checker.scan(now + datetime.timedelta(seconds=1))
    assert [a.status for a in checker.store.select()] == ["pending"]


def test_a_notebook_changed_after_its_submit_was_received_is_not_checked(tmp_path, inbound_submit):
    empty = b'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
    key = inbound_submit(tmp_path / "inbound", "ada", T0, notebook=empty)
    path = tmp_path / "inbound" / key / "attention.ipynb"
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    with pytest.raises(NotCheckable, match="after this Submit was received"):
        read_notebook(path, now - datetime.timedelta(minutes=30))  # written 30 minutes after it was received
    assert read_notebook(path, now).cells == []  # written when it was received: read as usual


def test_a_service_stopped_mid_check_checks_it_again_once_on_restart(tmp_path, inline_pool, inbound_submit):
    checker = make_checker(tmp_path, slots=2)
    inbound_submit(tmp_path / "inbound", "ada", T0)
    inbound_submit(tmp_path / "inbound", "bo", T0)

    class Never:
        def submit(self, function, **keywords):
            return concurrent.futures.Future()  # never finishes: the service is killed meanwhile

    checker.step(Never(), now=T0)
    assert [a.status for a in checker.store.select()] == ["checking", "checking"]
    restarted = make_checker(tmp_path, slots=2)  # a new process on the same database
    assert [a.status for a in restarted.store.select()] == ["pending", "pending"]
    pool = inline_pool(fake_check)
    for _ in range(3):
        restarted.step(pool, now=T0)
        restarted.collect(now=T0)
    assert len(pool.calls) == 2
    assert [a.status for a in restarted.store.select()] == ["done", "done"]
    assert not restarted.store.finish(restarted.store.select()[0].id, points=0, max_points=29, verdicts=[])


@pytest.mark.parametrize(
    "content, reason",
    [
        (b"", "is empty"),
        (b"not json at all {", "is not a notebook"),
        (b"\xff\xfe\x00garbage", "is not text"),
    ],
)
def test_a_notebook_that_cannot_be_read_gets_a_plain_reason(tmp_path, content, reason):
    path = tmp_path / "attention.ipynb"
    path.write_bytes(content)
    with pytest.raises(NotCheckable, match=reason):
        read_notebook(path)


def test_a_notebook_too_large_is_refused_saying_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setattr("autograder.service.checking.LARGEST", 1000)
    path = tmp_path / "attention.ipynb"
    path.write_bytes(b"{" + b" " * 2000 + b"}")
    with pytest.raises(NotCheckable, match="Clear Outputs"):
        read_notebook(path)


def test_a_refused_check_is_recorded_with_its_reason(tmp_path, inline_pool, inbound_submit):
    checker = make_checker(tmp_path, slots=2)
    inbound_submit(tmp_path / "inbound", "ada", T0, notebook=b"not json")
    pool = inline_pool(fake_check)
    checker.step(pool, now=T0)
    checker.collect(now=T0)
    (attempt,) = checker.store.select()
    assert attempt.status == "refused" and attempt.message == "attention.ipynb is not a notebook"


def test_inbound_ignores_symlinks_and_other_assignments(tmp_path, inbound_submit):
    inbound = tmp_path / "inbound"
    key = inbound_submit(inbound, "ada", T0)
    (inbound / "bo+attention+2026-12-01 10:00:00.000000 UTC+9").symlink_to(inbound / key)
    (inbound / "cy+positions+2026-12-01 10:00:00.000000 UTC+9").mkdir()
    assert [s.student for s in inbound_submits(inbound, "attention")] == ["ada"]


def test_the_policy_comes_from_the_course_config(tmp_path):
    (tmp_path / "nbgrader_config.py").write_text(
        "c = get_config()\nc.InstantChecks.attempts = 5\nc.InstantChecks.period = 1800\n"
        "c.InstantChecks.before_due = 'score'\nc.InstantChecks.due = '2026-12-14T17:00:00+01:00'\n"
    )
    policy = CourseSettings.read(tmp_path).policy
    assert (policy.attempts, policy.period, policy.before_due) == (5, 1800.0, "score")
    assert policy.due_date() == datetime.datetime(2026, 12, 14, 16, 0)
    text = " ".join(policy.describe())
    assert "Up to 5 Submits are checked per 1800 s" in text and "the score per function only" in text
    assert "after the due date (2026-12-14 16:00 UTC) are not checked" in text


@pytest.mark.parametrize("student", ["full_solution", "no_sqrt_scaling", "mask_after_softmax"])
def test_the_instant_score_is_the_class_runs_automatic_score(student):
    points, top, verdicts = check_notebook(
        source=SOURCE, notebook_path=EXAMPLES / student / "attention" / "attention.ipynb"
    )
    expected = EXPECTED["students"][student]
    assert points == pytest.approx(expected["auto_total"])
    assert top == 29.0
    for verdict in verdicts:
        assert verdict.points == pytest.approx(expected["points"][verdict.check])


def test_a_submit_made_by_another_account_is_refused_not_checked(tmp_path, inline_pool, inbound_submit):
    def admit(folder, student):  # as autograder.hub.collect.refusal on a server with an account per student
        return (
            collect.NotTheirs(f"{folder.name} names {student} but was made by another account")
            if student == "bo"
            else None
        )

    checker = make_checker(tmp_path, slots=4)
    checker.admit = admit
    inbound_submit(tmp_path / "inbound", "ada", T0)
    inbound_submit(tmp_path / "inbound", "bo", T0)  # forged: made by someone else in bo's name
    pool = inline_pool(fake_check)
    checker.step(pool, now=T0)
    checker.collect(now=T0)
    assert [(a.student, a.status) for a in checker.store.select()] == [("ada", "done")]  # nothing in bo's name
    assert checker.store.select(student="bo") == []
    count, (refused,) = checker.refused_entries()
    assert count == 1 and refused.name.startswith("bo+attention+")
    assert refused.reason.startswith("not that student's own Submit:") and "made by another account" in refused.reason
    assert len(pool.calls) == 1


def test_each_recorded_check_is_handed_on_once(tmp_path, inline_pool, inbound_submit):
    checker = make_checker(tmp_path, slots=4)
    handed = []
    checker.checked = handed.append
    inbound_submit(tmp_path / "inbound", "ada", T0)
    inbound_submit(tmp_path / "inbound", "bo", T0, notebook=b"not json")  # refused: nothing to send
    pool = inline_pool(fake_check)
    for _ in range(3):
        checker.step(pool, now=T0)
        checker.collect(now=T0)
    assert [(a.student, a.status, a.points) for a in handed] == [("ada", "done", 29.0)]


def test_a_submit_swapped_for_a_link_after_the_scan_reads_nothing_of_the_instructors(tmp_path):
    secret = tmp_path / "checks.py"
    secret.write_text('HIDDEN = "the hidden checks"\n')
    linked_file = tmp_path / "student+attention+1"
    linked_file.mkdir()
    (linked_file / "attention.ipynb").symlink_to(secret)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "attention.ipynb").write_text(secret.read_text())
    (tmp_path / "student+attention+2").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    pipe = tmp_path / "student+attention+3"
    pipe.mkdir()
    os.mkfifo(pipe / "attention.ipynb")  # would block a reader that waits for a writer
    for folder in ("student+attention+1", "student+attention+2", "student+attention+3"):
        with pytest.raises(NotCheckable) as refused:
            read_notebook(tmp_path / folder / "attention.ipynb")
        assert "is not a plain file in its Submit" in str(refused.value)
        assert "hidden" not in str(refused.value)


# --- no inbound entry, count or content stops or slows the rounds (issue 24, findings 3-5) ------------------

STAMP = "2026-12-01 10:00:00.000000 UTC"


def make_folder(inbound: Path, name: bytes):
    os.mkdir(os.path.join(os.fsencode(inbound), name))


def make_file(inbound: Path, name: bytes):
    with open(os.path.join(os.fsencode(inbound), name), "wb") as file:
        file.write(b"{}")


def make_link(inbound: Path, name: bytes):
    os.symlink(b"/etc", os.path.join(os.fsencode(inbound), name))


def make_pipe(inbound: Path, name: bytes):
    os.mkfifo(os.path.join(os.fsencode(inbound), name))


ATTACKS = {  # name: (how it is made, the entry's name, words of the reason the instructor's page gives)
    "not UTF-8": (make_folder, f"ada+attention+{STAMP}+".encode() + b"\xff\xfe", "its name is not UTF-8"),
    "a time that overflows": (make_folder, b"ada+attention+9999-12-31 23:59:59-01:00+1", "is not a date and time"),
    "a time that is no time": (make_folder, b"ada+attention+nan+1", "is not a date and time"),
    "a student part over 128 characters": (
        make_folder,
        b"a" * 130 + f"+attention+{STAMP}+1".encode(),
        "its student part is not a student id",
    ),
    "a newline in the student part": (make_folder, f"ada\nbo+attention+{STAMP}+1".encode(), "not a student id"),
    "markup in the student part": (make_folder, f"<i>ada<i>+attention+{STAMP}+1".encode(), "not a student id"),
    "an empty student part": (make_folder, f"+attention+{STAMP}+1".encode(), "its name is not a Submit's"),
    "an empty time": (make_folder, b"ada+attention++1", "its name is not a Submit's"),
    "no plus at all": (make_folder, b"junk", "its name is not a Submit's"),
    "a file": (make_file, f"ada+attention+{STAMP}+file".encode(), "not a folder (a file"),
    "a pipe": (make_pipe, f"ada+attention+{STAMP}+pipe".encode(), "not a folder (a file, a pipe"),
    "a link to a folder": (make_link, f"ada+attention+{STAMP}+link".encode(), "symbolic link, not a folder"),
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_no_inbound_entry_stops_the_round_for_the_others(tmp_path, inline_pool, inbound_submit, attack):
    make, name, reason = ATTACKS[attack]
    long_student = "a" * 130  # in the class's list, as a PostgreSQL column of 128 would refuse it
    checker = make_checker(tmp_path, students=("ada", "bo", long_student), slots=2)
    inbound_submit(tmp_path / "inbound", "bo", T0)  # an honest Submit, found in the same round
    make(tmp_path / "inbound", name)
    pool = inline_pool(fake_check)
    checker.step(pool, now=T0)  # before: UnicodeEncodeError, OverflowError or DataError, every round
    checker.collect(now=T0)
    assert [(a.student, a.status) for a in checker.store.select()] == [("bo", "done")]
    count, (refused,) = checker.refused_entries()
    assert count == 1 and reason in refused.reason, refused
    assert "\n" not in refused.name and refused.name.isprintable()


def test_extra_plus_signs_and_odd_characters_in_a_students_own_submit_are_still_checked(tmp_path, inline_pool):
    checker = make_checker(tmp_path, slots=2)
    (tmp_path / "inbound").mkdir()
    for name in (f"ada+attention+{STAMP}+1+2+3", f"bo+attention+{STAMP}+\u202eevil\nline"):
        (tmp_path / "inbound" / name).mkdir()
        (tmp_path / "inbound" / name / "attention.ipynb").write_bytes(b"{}")
    pool = inline_pool(fake_check)
    checker.step(pool, now=T0)
    checker.collect(now=T0)
    assert sorted((a.student, a.status) for a in checker.store.select()) == [("ada", "done"), ("bo", "done")]
    assert checker.refused_entries() == (0, [])


def test_an_entry_that_fails_to_be_judged_costs_only_itself(tmp_path, inline_pool, inbound_submit, monkeypatch):
    examine = instant.examine

    def breaks_on_cy(inbound, raw, assignment, notebook):
        if raw.startswith(b"cy+"):
            raise RecursionError("a folder nested too deep")
        return examine(inbound, raw, assignment, notebook)

    monkeypatch.setattr(instant, "examine", breaks_on_cy)
    checker = make_checker(tmp_path, slots=2)
    inbound_submit(tmp_path / "inbound", "ada", T0)
    inbound_submit(tmp_path / "inbound", "cy", T0)
    pool = inline_pool(fake_check)
    checker.step(pool, now=T0)
    checker.collect(now=T0)
    assert [(a.student, a.status) for a in checker.store.select()] == [("ada", "done")]
    count, (refused,) = checker.refused_entries()
    assert refused.reason == "it could not be examined (RecursionError)"


def test_a_row_the_database_refuses_costs_only_itself(tmp_path, inline_pool, inbound_submit):
    checker = make_checker(tmp_path, slots=2)
    with checker.store.engine.begin() as connection:  # a database that refuses one row, as PostgreSQL a long one
        connection.exec_driver_sql(
            "CREATE TRIGGER refuse_bo BEFORE INSERT ON autograder_attempts WHEN NEW.student = 'bo' "
            "BEGIN SELECT RAISE(ABORT, 'value too long'); END"
        )
    inbound_submit(tmp_path / "inbound", "ada", T0)
    key = inbound_submit(tmp_path / "inbound", "bo", T0)
    pool = inline_pool(fake_check)
    checker.step(pool, now=T0)
    checker.collect(now=T0)
    assert [(a.student, a.status) for a in checker.store.select()] == [("ada", "done")]
    count, (refused,) = checker.refused_entries()
    assert refused.name == key and refused.reason == "the database refused it (IntegrityError)"


def test_a_folder_in_a_students_name_by_another_account_never_counts_in_their_totals(tmp_path, inbound_submit):
    checker = make_checker(tmp_path)
    checker.admit = collect.refusal  # the service's rule on a server with an account per student
    inbound_submit(tmp_path / "inbound", "root", T0)  # made by this account (root here): its own
    inbound_submit(tmp_path / "inbound", "daemon", T0)  # made by this account in daemon's name: forged
    checker.students = lambda: {"root", "daemon"}
    if collect.account_id("root") != os.geteuid() or collect.account_id("daemon") is None:
        pytest.skip("needs to run as root with a 'daemon' account (the CI image)")
    checker.scan(T0)
    assert [a.student for a in checker.store.select()] == ["root"]
    assert checker.store.select(student="daemon") == []
    count, (refused,) = checker.refused_entries()
    assert refused.name.startswith("daemon+") and "was made by another account" in refused.reason


def test_a_round_lists_the_inbound_again_only_when_it_changed(tmp_path, inline_pool, inbound_submit, monkeypatch):
    monkeypatch.setattr(instant, "RACY", 0.0)
    listed = []
    real = os.listdir
    monkeypatch.setattr(instant.os, "listdir", lambda path: listed.append(path) or real(path))
    checker = make_checker(tmp_path, slots=2)
    inbound_submit(tmp_path / "inbound", "ada", T0)
    pool = inline_pool(fake_check)
    for _ in range(5):
        checker.step(pool, now=T0)
    assert len(listed) == 1
    inbound_submit(tmp_path / "inbound", "bo", T0 + datetime.timedelta(seconds=1))
    checker.step(pool, now=T0)
    assert len(listed) == 2 and len(pool.calls) == 2


def test_a_round_never_reads_the_whole_table(tmp_path, inline_pool, inbound_submit, monkeypatch):
    checker = make_checker(tmp_path, slots=2)
    for student in ("ada", "bo"):
        inbound_submit(tmp_path / "inbound", student, T0)
    whole = []
    monkeypatch.setattr(checker.store, "select", lambda **kw: whole.append(kw) or [])
    monkeypatch.setattr(checker.store, "known_keys", lambda: whole.append("keys") or set())
    pool = inline_pool(fake_check)
    for _ in range(3):
        checker.step(pool, now=T0)
        checker.collect(now=T0)
    assert len(pool.calls) == 2 and whole == []


def test_one_check_per_student_at_a_time(tmp_path, inbound_submit):
    class Never:
        def __init__(self):
            self.calls = []

        def submit(self, function, **keywords):
            self.calls.append(keywords)
            return concurrent.futures.Future()  # a notebook that sleeps: never done in this test

    checker = make_checker(tmp_path, InstantChecks(attempts=10, period=3600), slots=2)
    inbound_submit(tmp_path / "inbound", "ada", T0)
    inbound_submit(tmp_path / "inbound", "ada", T0 + datetime.timedelta(seconds=1))
    pool = Never()
    for _ in range(3):
        checker.step(pool, now=T0)
    assert [call["notebook_path"].parent.name.split("+")[0] for call in pool.calls] == ["ada"]  # before: ada twice
    inbound_submit(tmp_path / "inbound", "bo", T0 + datetime.timedelta(seconds=2))
    checker.step(pool, now=T0)
    assert [call["notebook_path"].parent.name.split("+")[0] for call in pool.calls] == ["ada", "bo"]
    assert {call["wall"] for call in pool.calls} == {instant.WALL}


@pytest.mark.parametrize(
    "first_lines, said",
    [
        # busy: no limit of the answers' budget comes first, the check's clock does: the service's reason, no verdict
        ("while True:\n    pass\n", ()),
        # asleep: stopped as waiting without computing after 2 s (autograder.answers.budget), its cell's functions
        # lost, or, on a machine too busy to tell sooner, cut by the check's clock (no verdict)
        ("import time\ntime.sleep(600)\n", ("waited 2 s without computing",)),
    ],
)
def test_a_notebook_that_never_ends_costs_at_most_its_wall_clock_seconds_and_loses_no_point_to_the_clock(
    tmp_path, first_lines, said
):
    if sandbox.bubblewrap() is None and not sandbox.unsandboxed_allowed():
        pytest.skip("the checks run only in the sandbox (bubblewrap)")
    notebook = json.loads((EXAMPLES / "full_solution" / "attention" / "attention.ipynb").read_text())
    first = next(c for c in notebook["cells"] if c["metadata"].get("nbgrader", {}).get("solution"))
    first["source"] = first_lines + "".join(first["source"])
    path = tmp_path / "attention.ipynb"
    path.write_text(json.dumps(notebook))
    began = datetime.datetime.now()
    try:
        points, top, verdicts = check_notebook(source=SOURCE, notebook_path=path, wall=3)
    except checking.NotCheckedYet as cut:
        assert "too busy to finish your check within its 3 s by the clock" in str(cut)
        assert "cost you no check" in str(cut)
        verdicts = None
    took = (datetime.datetime.now() - began).total_seconds()
    assert took < 3 + 20  # the wall-clock bound, plus the runner's start and the judging (before: ~4 minutes)
    if verdicts is not None:  # the student's own limit came first: the class run cuts it the same way
        assert said, "an endless loop was cut by something else than the clock"
        assert top == 29.0 and points < 29.0
        softmax = next(verdict for verdict in verdicts if verdict.function == "softmax")  # defined in answer cell 1
        assert softmax.points == 0 and any(words in softmax.properties[0].message for words in said)
        assert all(v.limit != "notebook time" for v in verdicts)


def test_a_check_the_services_clock_cuts_costs_no_check_and_is_checked_again(tmp_path, inbound_submit):
    """The service's own reason (its clock on a busy machine) never costs points nor a check of the window: the
    attempt waits again, with ``started`` cleared, and after CUT_AGAIN more cuts it is left to the class run."""
    cuts = []

    class Busy:  # every check is cut by the service's clock
        def submit(self, function, **keywords):
            cuts.append(keywords)
            future = concurrent.futures.Future()
            future.set_exception(checking.NotCheckedYet("the checking service was too busy; no check spent"))
            return future

    checker = make_checker(tmp_path, InstantChecks(attempts=1, period=3600), slots=1)
    inbound_submit(tmp_path / "inbound", "ada", T0)
    pool = Busy()
    for round_ in range(instant.CUT_AGAIN + 1):
        checker.step(pool, now=T0 + datetime.timedelta(seconds=round_))
        checker.collect(now=T0 + datetime.timedelta(seconds=round_))
        (attempt,) = checker.store.select(student="ada")
        if round_ < instant.CUT_AGAIN:
            assert attempt.status == "pending" and attempt.started is None, attempt
            assert "too busy" in attempt.message
    assert len(cuts) == instant.CUT_AGAIN + 1  # checked again each time, though the window allows one check an hour
    assert attempt.status == "refused" and attempt.started is None
    assert "the class run grades it as usual" in attempt.message
    recent, _ = checker.store.starts(["ada"], T0 - datetime.timedelta(hours=1))
    assert recent == {}  # no check of ada's window was spent
    inbound_submit(tmp_path / "inbound", "ada", T0 + datetime.timedelta(minutes=1))  # her next Submit: checked now

    class Quiet:
        def submit(self, function, **keywords):
            future = concurrent.futures.Future()
            future.set_result(fake_check(**keywords))
            return future

    checker.step(Quiet(), now=T0 + datetime.timedelta(minutes=1))
    checker.collect(now=T0 + datetime.timedelta(minutes=1))
    assert checker.store.select(student="ada")[-1].status == "done"


def test_the_page_says_a_cut_check_is_not_checked_yet():
    status_words = pytest.importorskip("autograder.service.app", reason="the service's pages: '.[hub]'").status_words
    from autograder.attempts import Attempt

    fields = {name: None for name in Attempt.__dataclass_fields__}
    waiting = Attempt(**{**fields, "status": "pending", "message": "the checking service was too busy"})
    assert status_words(waiting) == "not checked yet, waiting for a free checker: the checking service was too busy"
    assert status_words(Attempt(**{**fields, "status": "pending", "message": ""})) == "waiting for a free checker"


def test_the_service_cuts_checks_where_the_class_run_does(tmp_path, inbound_submit):
    """The CPU seconds of a notebook's checks are the course's (c.ExternalVerdicts.timeout), in the service too."""
    seen = []

    class Recording:
        def submit(self, function, **keywords):
            seen.append(keywords)
            future = concurrent.futures.Future()
            future.set_result((29.0, 29.0, []))
            return future

    class Settings:  # what LiveSettings gives: the policy in force and the course's settings
        settings = type("Course", (), {"checks_budget": 45.0, "late_days": None})()

        def policy(self):
            return InstantChecks()

    checker = make_checker(tmp_path)
    inbound_submit(tmp_path / "inbound", "ada", T0)
    checker.step(Recording(), now=T0)
    checker.settings = Settings()
    inbound_submit(tmp_path / "inbound", "bo", T0)
    checker.step(Recording(), now=T0 + datetime.timedelta(seconds=1))
    assert [call["timeout"] for call in seen] == [None, 45.0]


def test_a_submit_of_too_many_files_is_refused_before_it_is_walked_whole(tmp_path, inbound_submit, monkeypatch):
    monkeypatch.setattr(collect, "MOST_ENTRIES", 5)
    key = inbound_submit(tmp_path / "inbound", "root", T0)
    for number in range(10):
        (tmp_path / "inbound" / key / f"{number}.txt").write_text("x")
    if collect.account_id("root") != os.geteuid():
        pytest.skip("needs to run as root (the folder must be the named account's own)")
    checker = make_checker(tmp_path, students=("root",))
    checker.admit = collect.refusal
    checker.scan(T0)
    (attempt,) = checker.store.select()  # the student's own folder: the reason is on their page
    assert attempt.status == "refused" and "holds more than 5 files and folders" in attempt.message


def test_a_submit_the_grader_may_not_read_gets_that_reason(tmp_path, inbound_submit, monkeypatch):
    key = inbound_submit(tmp_path / "inbound", "ada", T0)
    real = os.open

    def closed(path, flags, *args, **kwargs):
        if str(path).endswith(key):
            raise PermissionError(13, "Permission denied")
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(instant.os, "open", closed)
    with pytest.raises(NotCheckable, match="the grader may not read attention.ipynb"):
        read_notebook(tmp_path / "inbound" / key / "attention.ipynb")


def test_the_attacks_leave_a_round_whole_on_sqlite_and_postgresql(tmp_path, inline_pool, inbound_submit, database):
    (tmp_path / "course").mkdir()
    long_student = "a" * 130  # over PostgreSQL's 128-character column: a DataError stopped every round
    checker = make_checker(tmp_path, InstantChecks(attempts=1, period=3600), students=("ada", "bo", long_student))
    checker.store = Attempts(database(tmp_path))
    inbound = tmp_path / "inbound"
    inbound.mkdir()
    for make, name, _ in ATTACKS.values():
        make(inbound, name)
    inbound_submit(inbound, "ada", T0)
    inbound_submit(inbound, "bo", T0 + datetime.timedelta(seconds=2))
    pool = inline_pool(fake_check)
    for _ in range(2):
        checker.step(pool, now=T0)
        checker.collect(now=T0)
    inbound_submit(inbound, "ada", T0 + datetime.timedelta(seconds=3))  # queued: one per hour
    inbound_submit(inbound, "ada", T0 + datetime.timedelta(seconds=4))  # supersedes the one before
    checker.step(pool, now=T0)
    assert sorted((a.student, a.status) for a in checker.store.select()) == [
        ("ada", "done"),
        ("ada", "queued"),
        ("ada", "superseded"),
        ("bo", "done"),
    ]
    assert checker.refused_entries()[0] == len(ATTACKS)
    checker.store.close()


def test_a_submit_refused_as_not_in_the_class_is_judged_again_once_the_class_has_them(
    tmp_path, inline_pool, inbound_submit, monkeypatch
):
    monkeypatch.setattr(instant, "RETRY", 0.0)
    students = {"ada"}
    checker = make_checker(tmp_path)
    checker.students = lambda: set(students)
    inbound_submit(tmp_path / "inbound", "dee", T0)
    checker.scan(T0)
    assert checker.store.select() == [] and checker.refused_entries()[1][0].unknown == "dee"
    checker.scan(T0)
    assert checker.store.select() == []  # the class has not changed: nothing judged again
    students.add("dee")  # the instructor adds the account
    assert checker.scan(T0) == 1
    assert [(a.student, a.status) for a in checker.store.select()] == [("dee", "pending")]
    assert checker.refused_entries() == (0, [])


def test_a_notebook_put_in_a_classmates_submit_by_another_account_is_not_checked(tmp_path, inbound_submit):
    key = inbound_submit(tmp_path / "inbound", "ada", T0)  # nbgrader's submit leaves the folder writable by all
    path = tmp_path / "inbound" / key / "attention.ipynb"
    daemon = collect.account_id("daemon")
    if os.geteuid() != 0 or daemon is None:
        pytest.skip("needs root and a 'daemon' account to write as another account")
    os.chown(path, daemon, daemon)  # the classmate's notebook, in place of ada's
    with pytest.raises(NotCheckable, match="written by another account than its folder's"):
        read_notebook(path)


def test_a_failing_round_is_logged_once_shown_to_the_instructor_and_tried_again_less_often(caplog):
    class Failing:  # the database is down for two rounds, then back
        trouble, rounds, seen = "", 0, []

        def step(self, pool):
            self.seen.append(self.trouble)
            self.rounds += 1
            if self.rounds <= 3:
                raise RuntimeError("database is locked")

    class Waits:  # the thread's stop and wake events: records each wait instead of waiting, stops after six
        waited = []

        def is_set(self):
            return len(self.waited) >= 6

        def wait(self, seconds):
            self.waited.append(seconds)

        def clear(self):
            pass

    checker = Failing()
    thread = instant.CheckerThread(checker, pool=None, poll=10.0)
    thread.stopping = thread.wake = Waits()
    with caplog.at_level("ERROR", logger="autograder.service.instant"):
        thread.run()
    assert thread.wake.waited == [20.0, 30.0, 30.0, 10.0, 10.0, 10.0]  # twice as long each time, at most 30 s
    assert checker.seen[1:5] == ["RuntimeError: database is locked"] * 3 + [""]  # what the instructor's page says
    assert checker.trouble == ""
    assert [r.message for r in caplog.records] == ["a round of instant checks failed; trying again"]  # once


def test_a_worker_imports_only_the_check_and_still_reads_and_validates_notebooks():
    """A worker's first import (autograder.service.checking, as a pool's process unpickles check_notebook) leaves out
    nbgrader, the database, the web server and rfc3987_syntax, whose grammar alone cost about 1 s of CPU per worker
    start; nbformat still reads and validates a Submit, and a broken one is still refused."""
    solved = REPOSITORY / "examples" / "submissions" / "full_solution" / "attention" / "attention.ipynb"
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from autograder.service.checking import check_notebook, read_notebook\n"
        "import nbformat\n"
        f"notebook = read_notebook(Path({str(solved)!r}))\n"
        "nbformat.validate(notebook)\n"
        "notebook.cells[0]['cell_type'] = 'nonsense'\n"
        "try:\n"
        "    nbformat.validate(notebook)\n"
        "except nbformat.ValidationError:\n"
        "    print('refused')\n"
        "print('worker from', check_notebook.__module__)\n"
        "heavy = ('rfc3987_syntax', 'nbgrader', 'sqlalchemy', 'tornado', 'jupyterhub')\n"
        "print('imported:', [name for name in heavy if sys.modules.get(name) is not None])\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=REPOSITORY, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["refused", "worker from autograder.service.checking", "imported: []"]
