"""The hub's student accounts from the LMS roster, made on the instructor's command.

    python -m autograder.lms.lti roster --config tool.json      # the members read from the LMS (NRPS) into lti.json
    python -m autograder.hub.roster --state .hub/state           # their accounts made here; prints what changed

The learners are those ``autograder.lms.lti.roster.sync_members`` recorded in the course's lti.json, each under
the account decided from their identity (issuer + sub: the instructor's roster line, the account bound to them,
or the name derived from the identity), never under a name the LMS or the student chose. For each active learner
the command makes what ``autograder.hub.launch.prepare`` makes for a student: a system account (useradd, marked as
the hub's), its home (mode 700, its own), the instructor in its group (to collect), and the student in the
course's gradebook. A dropped learner keeps their account, their work and their grades, but is no longer let in
(``python -m autograder.hub --roster`` starts the hub with the active learners only). An account name that is not
a plain system name, or that belongs to an account the hub did not make, is refused with the reason; nothing else
stops. Run twice, the second run makes nothing and says so.
"""

from __future__ import annotations

import argparse
import os
import pwd
import sys
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.api import Gradebook

from autograder.course.run import course_db, nbgrader_environment
from autograder.hub import launch
from autograder.lms.lti.store import Learners, roster_learners


@dataclass
class AccountsChange:
    learners: Learners
    made: list[str] = field(default_factory=list)  # accounts made now
    enrolled: list[str] = field(default_factory=list)  # students added to the gradebook now

    def lines(self) -> list[str]:
        said = [f"roster: {len(self.learners.active)} active learners, {len(self.learners.dropped)} dropped"]
        said += [f"MADE {name}" for name in self.made]
        said += [f"ENROLLED {name}" for name in self.enrolled if name not in self.made]
        said += [f"DROPPED {name} (account and work kept; not let in)" for name in self.learners.dropped]
        said += [f"REFUSED {line}" for line in self.learners.refused]
        return said if self.made or self.enrolled or self.learners.refused else [*said, "nothing changed"]


def make_accounts(state: Path, course: Path, learners: Learners) -> AccountsChange:
    """Each active learner's account, home, group and gradebook entry, made where missing (see the module)."""
    change, ready = AccountsChange(learners), []
    for name in learners.active:
        made_before = account_exists(name)
        try:
            account = launch.ensure_account(name, state / "home" / name)
            launch.own(state / "home" / name, account, 0o700)
        except launch.HubError as error:
            learners.refused.append(f"{name}: {error}")
            continue
        ready.append(name)
        if not made_before:
            change.made.append(name)
    if ready:
        launch.join_groups(launch.INSTRUCTOR, ready)
    os.environ["PATH"] = nbgrader_environment()["PATH"]  # a new gradebook runs alembic from PATH
    with Gradebook(course_db(course)) as gradebook:
        known = {student.id for student in gradebook.students}
        for name in ready:
            if name not in known:
                gradebook.add_student(name)
                change.enrolled.append(name)
    return change


def account_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.hub.roster", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--state", type=Path, default=launch.REPOSITORY / ".hub" / "state", help="the hub's state folder"
    )
    parser.add_argument("--course-id", default=launch.COURSE_ID, help=f"the course (default {launch.COURSE_ID})")
    args = parser.parse_args(argv)
    state = args.state.resolve()
    course = state / "home" / launch.INSTRUCTOR / args.course_id
    if not course.is_dir():
        print(f"FAILED: no course at {course}: start the hub once (python -m autograder.hub)", file=sys.stderr)
        return 1
    why = launch.why_no_accounts()
    if why is not None:
        print(f"FAILED: {why}", file=sys.stderr)
        return 1
    try:
        change = make_accounts(state, course, roster_learners(course, refused=(launch.INSTRUCTOR,)))
    except (launch.HubError, ValueError) as error:
        print(f"FAILED: {error}", file=sys.stderr)
        return 1
    print("\n".join(change.lines()))
    return 1 if change.learners.refused else 0


if __name__ == "__main__":
    sys.exit(main())
