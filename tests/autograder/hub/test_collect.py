"""autograder.hub.collect: what the instructor's collect refuses (links, special files, another account's files or
name), on folders made here and owned by two system accounts (nobody and daemon; root only chowns them)."""

from __future__ import annotations

import datetime
import os
import pwd
from pathlib import Path

import pytest

from autograder.hub import collect


@pytest.fixture
def inbound(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("handing files to other accounts needs root")
    for name in ("nobody", "daemon"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            pytest.skip(f"no account {name!r} on this machine")
    return tmp_path


def submission(inbound: Path, student: str, owner: str | None = None) -> Path:
    folder = inbound / f"{student}+attention+2026-11-30 20:00:00.000000 UTC+abc"
    (folder / "sub").mkdir(parents=True)
    (folder / "attention.ipynb").write_text("{}")
    (folder / "sub" / "notes.txt").write_text("mine")
    account = pwd.getpwnam(owner or student)
    for path in [folder, *folder.rglob("*")]:
        os.lchown(path, account.pw_uid, account.pw_gid)
    return folder


def test_a_students_own_plain_submission_passes(inbound):
    assert collect.refusal(submission(inbound, "nobody"), "nobody") is None


def test_a_submission_in_another_students_name_is_refused(inbound):
    forged = submission(inbound, "nobody", owner="daemon")
    assert "names nobody but was made by another account" in collect.refusal(forged, "nobody")


def test_a_symbolic_link_anywhere_in_a_submission_is_refused(inbound, tmp_path):
    secret = tmp_path / "checks.py"
    secret.write_text("HIDDEN")
    folder = submission(inbound, "nobody")
    (folder / "sub" / "checks.py").symlink_to(secret)
    assert (
        collect.refusal(folder, "nobody")
        == f"{folder.name}: sub/checks.py is a symbolic link (only files and folders are collected)"
    )
    link = inbound / "nobody+attention+2026-11-30 21:00:00.000000 UTC+def"
    link.symlink_to(submission(inbound / "elsewhere", "nobody"))
    assert "is not a folder (a link or a file)" in collect.refusal(link, "nobody")


def test_a_named_pipe_and_a_file_written_by_another_account_are_refused(inbound):
    folder = submission(inbound, "nobody")
    os.mkfifo(folder / "pipe")
    os.lchown(folder / "pipe", pwd.getpwnam("nobody").pw_uid, -1)
    assert collect.refusal(folder, "nobody") == f"{folder.name}: pipe is not a plain file (a pipe, socket or device)"
    (folder / "pipe").unlink()
    (folder / "sub" / "notes.txt").unlink()
    (folder / "sub" / "notes.txt").write_text("replaced by someone else")  # root here: another account
    assert collect.refusal(folder, "nobody") == f"{folder.name}: sub/notes.txt was written by another account (uid 0)"


def test_an_unknown_account_is_refused(inbound):
    folder = submission(inbound, "nobody")
    assert collect.refusal(folder, "no-such-student") == f"{folder.name}: no account 'no-such-student' on this machine"


def test_the_choice_among_what_passes_is_nbgraders_latest_or_latest_before_the_due_date():
    chooser = collect.OwnCollect.__new__(collect.OwnCollect)
    chooser.term_standings = {}  # no student has a due date of their own
    early, late = (
        {"username": "s", "filename": name, "timestamp": datetime.datetime(2026, 11, day)}
        for name, day in (("early", 1), ("late", 20))
    )
    chooser.duedate, chooser.before_duedate = datetime.datetime(2026, 11, 10), False
    assert chooser.choose([early, late]) is late
    chooser.before_duedate = True
    assert chooser.choose([early, late]) is early
    assert chooser.choose([late]) is late
