"""Instant checks (autograder.instant, autograder.attempts): the policy's window, the fair queue, each Submit
recorded and checked exactly once, plain verdicts for what cannot be checked, and the same score as the class run."""

import concurrent.futures
import datetime
import json
import os
from pathlib import Path

import pytest

from autograder.attempts import Attempts
from autograder.instant import (
    Checker,
    InstantChecks,
    NotCheckable,
    check_notebook,
    inbound_submits,
    load_policy,
    read_notebook,
    window_reopens,
)

REPOSITORY = Path(__file__).resolve().parents[2]
SOURCE = REPOSITORY / "source" / "attention"
EXAMPLES = REPOSITORY / "examples" / "submissions"
EXPECTED = json.loads((REPOSITORY / "examples" / "expected.json").read_text())
T0 = datetime.datetime(2026, 12, 1, 10, 0, 0)


def fake_check(*, source, notebook_path):
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
    started = [T0, T0 + datetime.timedelta(minutes=10), T0 + datetime.timedelta(minutes=20)]
    history = [type("A", (), {"started": s})() for s in started]
    assert window_reopens(history[:2], policy, T0 + datetime.timedelta(minutes=30)) is None
    assert window_reopens(history, policy, T0 + datetime.timedelta(minutes=30)) == T0 + datetime.timedelta(hours=1)
    assert window_reopens(history, policy, T0 + datetime.timedelta(minutes=61)) is None  # the first one left it


def test_a_fourth_submit_in_the_hour_is_queued_then_checked_when_the_window_reopens(
    tmp_path, inline_pool, inbound_submit
):
    checker = make_checker(tmp_path, InstantChecks(attempts=3, period=3600), slots=4)
    pool = inline_pool(fake_check)
    for minute in range(4):
        inbound_submit(tmp_path / "inbound", "ada", T0 + datetime.timedelta(minutes=minute))
    for minute in range(4):
        checker.step(pool, now=T0 + datetime.timedelta(minutes=5 + minute))
        checker.collect(now=T0 + datetime.timedelta(minutes=5 + minute))
    statuses = [a.status for a in checker.store.select(student="ada")]
    assert statuses == ["done", "done", "done", "queued"]
    checker.step(pool, now=T0 + datetime.timedelta(minutes=66))
    checker.collect(now=T0 + datetime.timedelta(minutes=66))
    assert [a.status for a in checker.store.select(student="ada")] == ["done"] * 4
    assert len(pool.calls) == 4


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
    assert order[:4] == ["ada", "bo", "cy", "ada"]  # bo and cy after ada's first, not after all six
    assert sorted(order) == sorted(["ada"] * 6 + ["bo", "cy"])


def test_each_submit_is_recorded_once_and_late_or_unknown_ones_are_not_checked(tmp_path, inline_pool, inbound_submit):
    policy = InstantChecks(due="2026-12-01T12:00:00")
    checker = make_checker(tmp_path, policy, slots=4)
    inbound = tmp_path / "inbound"
    inbound_submit(inbound, "ada", T0)
    inbound_submit(inbound, "bo", T0 + datetime.timedelta(hours=3))  # after the due date
    inbound_submit(inbound, "mallory", T0)  # not a student of the course
    (inbound / "not-a-submission").mkdir()
    (inbound / "ada+attention+garbage+1").mkdir()
    assert checker.scan(T0) == 3
    assert checker.scan(T0) == 0  # found again: nothing new
    by_student = {a.student: a for a in checker.store.select()}
    assert by_student["bo"].status == "late" and "after the due date" in by_student["bo"].message
    assert by_student["mallory"].status == "refused" and "not a student of this course" in by_student["mallory"].message
    pool = inline_pool(fake_check)
    checker.step(pool, now=T0)
    checker.collect(now=T0)
    assert [call["notebook_path"].parent.name.split("+")[0] for call in pool.calls] == ["ada"]


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
    monkeypatch.setattr("autograder.instant.LARGEST", 1000)
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
    policy = load_policy(tmp_path)
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
        assert verdict["points"] == pytest.approx(expected["points"][verdict["check"]])


def test_a_submit_made_by_another_account_is_refused_not_checked(tmp_path, inline_pool, inbound_submit):
    def admit(folder, student):  # as autograder.collect.refusal on a server with an account per student
        return f"{folder.name} names {student} but was made by another account" if student == "bo" else None

    checker = make_checker(tmp_path, slots=4)
    checker.admit = admit
    inbound_submit(tmp_path / "inbound", "ada", T0)
    inbound_submit(tmp_path / "inbound", "bo", T0)  # forged: made by someone else in bo's name
    pool = inline_pool(fake_check)
    checker.step(pool, now=T0)
    checker.collect(now=T0)
    by_student = {a.student: a for a in checker.store.select()}
    assert by_student["ada"].status == "done"
    assert by_student["bo"].status == "refused" and "made by another account" in by_student["bo"].message
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
