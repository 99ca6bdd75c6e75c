"""The course's members from the LMS (autograder.lms.lti.roster) through Names and Role Provisioning Services, read
from the real platform library the LTI tests use (tests/lti_platform.py on lti1p3platform, on localhost): members by
issuer + sub with the platform's roles, learners' accounts from their identity or the roster (never a name the LMS
sends), staff kept as staff, dropped students marked and back again, and a second run that changes nothing."""

import json

import pytest
import requests
from lti_world import INSTRUCTOR, LEARNER, World, launch_form, place

from autograder.lms.lti.__main__ import main
from autograder.lms.lti.accounts import derived_account
from autograder.lms.lti.roster import RosterError, sync_members

pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")  # nbgrader's add_submission
ASSISTANT = "http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant"


@pytest.fixture
def world(tmp_path, monkeypatch):
    world = World(tmp_path, monkeypatch)
    yield world
    world.stop()


def member(sub: str, roles: list, status: str = "Active", name: str = "") -> dict:
    return {"user_id": sub, "roles": roles, "status": status, "name": name or sub}


def test_the_members_come_from_the_lms_by_issuer_and_sub_and_a_second_run_changes_nothing(world, capsys):
    with pytest.raises(RosterError, match="has not named the course's members' service yet"):
        sync_members(world.config)
    place(world, requests.Session())
    session = requests.Session()
    action, fields = launch_form(world, session, "ada", "ps1")
    assert session.post(action, data=fields, timeout=20).url == f"{world.tool_url}/home"
    service = json.loads((world.course / "lti.json").read_text())["memberships"]
    assert service["url"] == f"{world.platform.state.url}/memberships/course-101"
    world.platform.state.members = [
        member("lms-0", [LEARNER], name="Ada Lovelace"),  # the roster names her: ada
        member("lms-7", [LEARNER], name="instructor"),  # a new student who calls themselves "instructor"
        member("lms-teacher", [INSTRUCTOR]),
        member("lms-ta", [LEARNER, ASSISTANT]),  # a learner role and a staff one: staff
        member("lms-1", [LEARNER], status="Inactive"),  # cy, in the roster, has left the course
    ]
    new = derived_account({"issuer": world.platform.state.url, "deployment_id": "deployment-1", "sub": "lms-7"})
    change = sync_members(world.config)
    assert change.members == 5 and world.platform.state.members_read == 3  # three pages of two
    assert change.added == [
        "ada (Learner)",
        f"{new} (Learner)",
        "lms-teacher (Instructor)",
        "lms-ta (Instructor, Learner, TeachingAssistant)",
    ]
    assert change.dropped == ["cy (Learner)"] and change.learners == sorted(["ada", new])
    links = json.loads((world.course / "lti.json").read_text())
    members = links["members"][world.platform.state.url]
    assert members["lms-7"]["account"] == new and new.startswith("lti-") and "instructor" not in new
    assert links["students"][new]["sub"] == "lms-7"  # bound now: their first launch lands in that account
    assert (members["lms-teacher"]["learner"], members["lms-teacher"]["account"]) == (False, None)
    assert members["lms-ta"]["learner"] is False and members["lms-1"]["status"] == "dropped"
    written = (world.course / "lti.json").stat().st_mtime_ns
    again = sync_members(world.config)
    assert not again.changed and again.lines()[-1] == "nothing changed"
    assert (world.course / "lti.json").stat().st_mtime_ns == written  # nothing written
    world.platform.state.members = [m for m in world.platform.state.members if m["user_id"] != "lms-7"]
    world.platform.state.members[-1]["status"] = "Active"  # cy is back
    world.platform.state.members[2]["roles"] = [LEARNER]  # the assistant is now a student
    assistant = derived_account({"issuer": world.platform.state.url, "deployment_id": "deployment-1", "sub": "lms-ta"})
    assert main(["roster", "--config", str(world.config_path)]) == 0
    said = capsys.readouterr().out.splitlines()
    assert said == [
        "LMS roster: 4 members, 3 active learners",
        f"DROPPED {new} (no longer listed)",
        "BACK cy (Learner)",
        f"ROLES {assistant}: Instructor, Learner, TeachingAssistant -> Learner",  # a student now: an account
    ]
