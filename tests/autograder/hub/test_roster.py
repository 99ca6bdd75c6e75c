"""The hub's accounts from the LMS roster (autograder.hub.roster), made on the instructor's command: real system
accounts for the active learners lti.json lists (by the account their issuer + sub decided), their homes closed,
the instructor in their groups, the gradebook's students; dropped learners kept but not let in; names that are no
plain account, or an account the hub did not make, refused; a second run makes nothing."""

from __future__ import annotations

import grp
import json
import os
import pwd
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from autograder.hub import launch as hub
from autograder.hub import roster
from autograder.lms.lti.store import roster_learners

ISSUER = "https://lms.example.edu"


def members(**accounts) -> dict:
    """lti.json's members section: {sub: member} for accounts given as sub=(account, status, learner)."""
    return {
        "members": {
            ISSUER: {
                sub: {"roles": ["Learner"], "learner": learner, "account": account, "status": status}
                for sub, (account, status, learner) in accounts.items()
            }
        }
    }


def write_links(course: Path, data: dict) -> None:
    path = course / "lti.json"
    before = json.loads(path.read_text()) if path.exists() else {"students": {}, "assignments": {}}
    path.write_text(json.dumps({**before, **data}))


def test_the_learners_are_read_by_account_and_hostile_names_are_refused(tmp_path):
    write_links(
        tmp_path,
        members(
            s1=("rosterada", "active", True),
            s2=("rostercy", "dropped", True),
            s3=(None, "active", False),  # staff: no account
            s4=("../../root", "active", True),
            s5=("instructor", "active", True),  # the instructor's account is never a student's
            s6=(["list"], "active", True),
            s7=("rosterada", "active", True),  # the same account twice: once
        ),
    )
    learners = roster_learners(tmp_path, refused=("instructor",))
    assert learners.active == ["rosterada"] and learners.dropped == ["rostercy"]
    assert len(learners.refused) == 3 and all("not an account name this hub makes" in line for line in learners.refused)
    assert roster_learners(tmp_path / "nowhere").active == []  # no lti.json: nobody


@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")
def test_accounts_are_made_for_active_learners_once_and_what_changed_is_said(open_state, monkeypatch, capsys):
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    course = hub.prepare(open_state, ["student1"])
    foreign, made = "attnrosterx", ("rosterada", "rosterbo")
    for name in made:  # left by an earlier run: this run makes them
        forget_account(name)
    subprocess.run(["useradd", "--no-create-home", "--comment", "someone", foreign], check=True)
    try:
        write_links(
            course,
            members(
                a=("rosterada", "active", True),
                b=("rosterbo", "active", True),
                c=("rostercy", "dropped", True),
                d=(foreign, "active", True),
            ),
        )
        assert roster.main(["--state", str(open_state)]) == 1  # the foreign account is refused, the rest made
        said = capsys.readouterr().out.splitlines()
        assert said[0] == "roster: 3 active learners, 1 dropped"
        assert "MADE rosterada" in said and "MADE rosterbo" in said
        assert "DROPPED rostercy (account and work kept; not let in)" in said
        assert any(line.startswith(f"REFUSED {foreign}: an account '{foreign}' already exists") for line in said)
        for name in ("rosterada", "rosterbo"):
            account = pwd.getpwnam(name)
            home = open_state / "home" / name
            assert account.pw_gecos == hub.ACCOUNT_NOTE and account.pw_dir == str(home)
            assert home.stat().st_uid == account.pw_uid and stat.S_IMODE(home.stat().st_mode) == 0o700
            assert "instructor" in grp.getgrnam(name).gr_mem
        with pytest.raises(KeyError):
            pwd.getpwnam("rostercy")  # dropped before any account was made: none is
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
            assert {"rosterada", "rosterbo"} <= {student.id for student in gradebook.students}
            assert foreign not in {student.id for student in gradebook.students}
        write_links(course, members(a=("rosterada", "active", True), b=("rosterbo", "active", True)))
        assert roster.main(["--state", str(open_state)]) == 0
        assert capsys.readouterr().out.splitlines() == ["roster: 2 active learners, 0 dropped", "nothing changed"]
    finally:
        for name in (foreign, *made):
            forget_account(name)


def forget_account(name: str) -> None:
    """The account and its group gone (userdel keeps a group the instructor is a member of)."""
    subprocess.run(["userdel", name], capture_output=True, check=False)
    subprocess.run(["groupdel", name], capture_output=True, check=False)


def test_the_command_says_what_to_do_without_a_course(tmp_path, capsys):
    assert roster.main(["--state", str(tmp_path)]) == 1
    assert "no course at" in capsys.readouterr().err
