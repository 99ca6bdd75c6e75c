"""autograder.attempts: the attempts table of instant checks, in a new course database. Pinned: a
Submit is recorded once (add, add_many, a refused row costing only itself), an unknown status is refused with the
known ones named, only a student's newest waiting Submit is checked (waiting_heads, supersede), the state machine's
guards (start, finish, refuse, recover each only from the states they name), verdicts read back as Verdicts (and a
row of another format as none), starts counted after a moment, and read_attempts creating no table.
Each runs on SQLite and on PostgreSQL (where its server can be started)."""

from __future__ import annotations

import datetime

import pytest
import sqlalchemy as sa

from autograder.attempts import TABLE, Attempts, read_attempts, stored_verdicts
from autograder.verdicts import Property, Verdict

T0 = datetime.datetime(2026, 12, 1, 10, 0, 0)


def at(minutes: float) -> datetime.datetime:
    return T0 + datetime.timedelta(minutes=minutes)


@pytest.fixture
def url(tmp_path, database):
    """A new course database: SQLite, and PostgreSQL where its server can be started (conftest's ``database``)."""
    (tmp_path / "course").mkdir()
    return database(tmp_path)


@pytest.fixture
def store(url):
    attempts = Attempts(url)
    yield attempts
    attempts.close()


def submit(store, key, minutes=0.0, **extra):
    """Record the Submit ``key`` ("<student>+<n>") received ``minutes`` after T0."""
    return store.add(
        key=key, student=key.split("+")[0], assignment="attention", submitted=at(minutes), now=at(minutes), **extra
    )


def test_a_submit_is_recorded_once(store):
    assert submit(store, "ada+1") is True
    assert submit(store, "ada+1", minutes=5) is False
    [attempt] = store.select()
    assert (attempt.key, attempt.status, attempt.submitted, attempt.received) == ("ada+1", "pending", T0, T0)
    assert attempt.waiting and attempt.verdicts == () and attempt.message == ""


def test_an_unknown_status_is_refused_naming_the_known_ones(store):
    with pytest.raises(ValueError, match=r"unknown attempt status 'graded': one of pending, queued, checking"):
        submit(store, "ada+1", status="graded")
    with pytest.raises(ValueError, match="unknown attempt status 'graded'"):
        store.add_many([{"key": "k", "student": "s", "assignment": "a", "submitted": T0, "status": "graded"}])
    with pytest.raises(ValueError, match="unknown attempt status 'nope'"):
        store.set_status(1, "nope", expect=("pending",))
    assert store.select() == []


def test_add_many_skips_known_keys_and_defaults_to_pending(store):
    submit(store, "ada+1")
    rows = [
        {"key": "ada+1", "student": "ada", "assignment": "attention", "submitted": at(9)},
        {"key": "bob+1", "student": "bob", "assignment": "attention", "submitted": at(1)},
        {"key": "cy+1", "student": "cy", "assignment": "attention", "submitted": at(2), "status": "late"},
    ]
    assert store.add_many(rows, now=at(3)) == {}
    found = {a.key: (a.status, a.submitted, a.received) for a in store.select()}
    assert found == {"ada+1": ("pending", T0, T0), "bob+1": ("pending", at(1), at(3)), "cy+1": ("late", at(2), at(3))}
    assert store.existing(["ada+1", "zed+1", "bob+1", "ada+1"]) == {"ada+1", "bob+1"}
    assert store.known_keys() == {"ada+1", "bob+1", "cy+1"}


def test_a_row_the_database_refuses_costs_only_itself(store):
    rows = [
        {"key": "ada+1", "student": "ada", "assignment": "attention", "submitted": T0},
        {"key": "bad+1", "student": None, "assignment": "attention", "submitted": T0},  # NOT NULL
        {"key": "bob+1", "student": "bob", "assignment": "attention", "submitted": T0},
    ]
    failed = store.add_many(rows, now=T0)
    assert list(failed) == ["bad+1"]  # the driver's own name for it: IntegrityError, NotNullViolation
    assert failed["bad+1"] in {f"the database refused it ({name})" for name in ("IntegrityError", "NotNullViolation")}
    assert store.known_keys() == {"ada+1", "bob+1"}


def test_waiting_heads_are_each_students_newest_waiting_submit(store):
    submit(store, "ada+1", minutes=0)
    submit(store, "ada+2", minutes=5)
    submit(store, "ada+3", minutes=9, status="done")  # not waiting
    submit(store, "bob+1", minutes=1, status="queued")
    heads = {a.student: a.key for a in store.waiting_heads()}
    assert heads == {"ada": "ada+2", "bob": "bob+1"}


def test_supersede_leaves_only_the_newest_waiting_submit(store):
    submit(store, "ada+1", minutes=0)
    submit(store, "ada+2", minutes=1, status="queued")
    submit(store, "ada+3", minutes=2)
    submit(store, "bob+1", minutes=0)
    assert store.supersede(["ada", "bob", "ada"], now=at(10)) == 2
    states = {a.key: (a.status, a.message) for a in store.select()}
    later = "your later Submit (received 10:02:00 UTC) is checked in its place"
    assert states == {
        "ada+1": ("superseded", later),
        "ada+2": ("superseded", later),
        "ada+3": ("pending", ""),
        "bob+1": ("pending", ""),
    }
    assert store.supersede(["ada", "bob"]) == 0


def test_the_state_machine_guards_each_move(store):
    submit(store, "ada+1")
    [attempt] = store.select()
    verdict = Verdict("causal", "attention", 1.0, 2.0, (Property("masks the future", False, "it peeks"),), seed=3)
    assert store.finish(attempt.id, points=1, max_points=2, verdicts=[verdict]) is False  # not checking yet
    assert store.start(attempt.id, now=at(1)) is True
    assert store.start(attempt.id, now=at(2)) is False  # a second worker cannot take it
    assert store.students_in("checking") == {"ada"}
    assert store.finish(attempt.id, points=1, max_points=2, verdicts=[verdict], now=at(3)) is True
    assert store.finish(attempt.id, points=2, max_points=2, verdicts=[], now=at(4)) is False  # only once
    assert store.refuse(attempt.id, "too late") is False  # done is final
    done = store.get(attempt.id)
    assert (done.status, done.started, done.checked, done.points, done.max_points) == ("done", at(1), at(3), 1, 2)
    assert done.verdicts == (verdict,) and not done.waiting
    assert store.get(attempt.id + 100) is None


def test_refuse_and_recover(store):
    submit(store, "ada+1")
    submit(store, "bob+1")
    ada, bob = store.select()
    store.start(ada.id, now=at(1))
    assert store.refuse(bob.id, "the notebook is missing", now=at(2)) is True
    assert store.recover() == 1
    back = store.get(ada.id)
    assert (back.status, back.started) == ("pending", None)
    refused = store.get(bob.id)
    assert (refused.status, refused.message, refused.checked) == ("refused", "the notebook is missing", at(2))
    assert store.recover() == 0


def test_queue_pending_moves_only_that_students_pending(store):
    submit(store, "ada+1")
    submit(store, "ada+2", status="late")
    submit(store, "bob+1")
    assert store.queue_pending("ada") == 1
    assert {a.key: a.status for a in store.select()} == {"ada+1": "queued", "ada+2": "late", "bob+1": "pending"}
    assert store.select(student="bob", status=("pending",))[0].key == "bob+1"
    assert store.select(status=("queued", "late"))[0].key == "ada+1"  # oldest first, then id


def test_starts_counts_those_after_the_moment_and_each_latest(store):
    for number in range(3):
        submit(store, f"ada+{number}")
    submit(store, "bob+1")
    submit(store, "cy+1")
    ada = store.select(student="ada")
    for attempt, minutes in zip(ada, (0, 10, 20)):
        store.start(attempt.id, now=at(minutes))
    store.start(store.select(student="bob")[0].id, now=at(1))
    recent, latest = store.starts(["ada", "bob", "cy"], since=at(5))
    assert {student: sorted(times) for student, times in recent.items()} == {"ada": [at(10), at(20)]}
    assert latest == {"ada": at(20), "bob": at(1)}


def test_stored_verdicts_of_another_format_read_as_none():
    assert stored_verdicts(None) == () and stored_verdicts("") == ()
    assert stored_verdicts("not json") == ()
    assert stored_verdicts('[{"format": 0, "check": "x"}]') == ()  # StaleVerdicts
    assert stored_verdicts("[1]") == ()


def test_read_attempts_creates_no_table(url, store, tmp_path):
    fresh = f"sqlite:///{tmp_path / 'never-served.db'}"
    assert read_attempts(fresh, "attention") == []
    assert not sa.inspect(sa.create_engine(fresh)).has_table(TABLE)
    submit(store, "ada+2", minutes=3)
    submit(store, "ada+1", minutes=1)
    store.add(key="x", student="ada", assignment="other", submitted=T0)
    assert [a.key for a in read_attempts(url, "attention")] == ["ada+1", "ada+2"]


def test_a_scoped_store_reads_and_changes_its_own_assignments_rows_only(store):
    """Two assignments in one table: each one's queue, window, superseding and recovering stay within it."""
    attention, positions = store.scoped("attention"), store.scoped("positions")
    for minutes, assignment in ((0, "attention"), (1, "positions"), (2, "attention"), (3, "positions")):
        store.add(key=f"ada+{assignment}+{minutes}", student="ada", assignment=assignment, submitted=at(minutes))
    assert attention.supersede(["ada"]) == 1 and positions.supersede(["ada"]) == 1  # one each, not three
    assert [a.key for a in attention.waiting_heads()] == ["ada+attention+2"]
    assert [a.key for a in positions.waiting_heads()] == ["ada+positions+3"]
    assert attention.start(attention.waiting_heads()[0].id, now=at(4))
    assert positions.students_in("checking") == set() and attention.students_in("checking") == {"ada"}
    assert positions.starts(["ada"], at(0)) == ({}, {}) and attention.starts(["ada"], at(0))[0] == {"ada": [at(4)]}
    assert positions.recover() == 0 and attention.recover() == 1  # a restart of one assignment's checker only
    assert [(a.assignment, a.status) for a in store.select(student="ada")] == [
        ("attention", "superseded"),
        ("positions", "superseded"),
        ("attention", "pending"),
        ("positions", "pending"),
    ]
    assert {a.assignment for a in positions.select()} == {"positions"} and positions.engine is store.engine
