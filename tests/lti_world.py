"""The LTI tests' world (tests/autograder/lms/lti/): a course with a small gradebook and a roster, the tool serving it
on localhost, the LTI 1.3 platform (tests/lti_platform.py) beside it, and the steps of a launch."""

import html
import json
import os
import re
import socket

from lms_course import make_gradebook
from lti_platform import Platform, key_pair, serve_tool

from autograder.lms.lti.config import load_config
from autograder.lms.lti.tool import make_app


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# the course's roster: which LMS user (the platform's sub) is which course account (autograder.lms.lti.accounts)
LTI_ROSTER = "student_id,name,lti_sub\nada,Ada,lms-0\ncy,Cy,lms-1\nbob,Bob,lms-2\n"


class World:
    """A course (the small gradebook, source/ps1 and ps2, a roster naming ada, cy and bob's LMS ids), the tool
    serving it, the platform."""

    def __init__(self, folder, monkeypatch):
        self.course = folder / "course"
        (self.course / "source" / "ps1").mkdir(parents=True)
        (self.course / "source" / "ps2").mkdir(parents=True)
        make_gradebook(self.course, monkeypatch)
        (self.course / "roster.csv").write_text(LTI_ROSTER)
        tool_port, platform_port = free_port(), free_port()
        # on localhost, the name the course's hub has (autograder.hub.launch): the hub reads the tool's browser cookie
        self.tool_url = f"http://localhost:{tool_port}/lti"
        self.platform = Platform(platform_port, self.tool_url, host="localhost")
        self.platform.state.users = {
            name: {"sub": f"lms-{number}", "roles": [LEARNER]} for number, name in enumerate(["ada", "cy", "bob"])
        } | {"teacher": {"sub": "lms-teacher", "roles": [INSTRUCTOR]}}
        private, public = key_pair()
        secrets = folder / "secrets"
        secrets.mkdir()
        (secrets / "private.pem").write_text(private)
        os.chmod(secrets / "private.pem", 0o600)
        (secrets / "public.pem").write_text(public)
        self.config_path = secrets / "tool.json"
        self.config_path.write_text(
            json.dumps(
                {
                    "course": str(self.course),
                    "tool_url": self.tool_url,
                    "private_key_file": "private.pem",
                    "public_key_file": "public.pem",
                    "platforms": [self.platform.registration()],
                }
            )
        )
        self.config = load_config(self.config_path)
        self.stop_tool = serve_tool(make_app(self.config), tool_port)

    def reconfigure(self, **settings):
        """The config file with ``settings`` added, and the tool restarted on it."""
        self.config_path.write_text(json.dumps(json.loads(self.config_path.read_text()) | settings))
        self.config = load_config(self.config_path)
        self.stop_tool()
        self.stop_tool = serve_tool(make_app(self.config), int(self.tool_url.split(":")[2].split("/")[0]))

    def stop(self):
        self.stop_tool()
        self.platform.stop()


LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"


def form_fields(page: str) -> tuple[str, dict]:
    """(action, {name: value}) of the auto-submitted form in ``page``."""
    action = re.search(r'action="([^"]+)"', page).group(1)
    return action, dict(re.findall(r'name="(\w+)" value="([^"]*)"', page))


def launch_form(world, session, user, assignment="", deep=False) -> tuple[str, dict]:
    """The platform's signed launch for ``user``, up to the form it posts to the tool (the OIDC login done)."""
    page = session.get(world.platform.start_url(user, assignment, deep), timeout=20)
    assert page.status_code == 200, page.text
    return form_fields(page.text)


def place(world, session, assignment="ps1") -> str:
    """The instructor's Deep Linking of ``assignment``; returns the platform's answer."""
    action, fields = launch_form(world, session, "teacher", deep=True)
    picker = session.post(action, data=fields, timeout=20)
    assert picker.status_code == 200 and "Place an assignment" in picker.text, picker.text
    launch_id = re.search(r"name=launch_id value='([^']+)'", picker.text).group(1)
    answer = session.post(f"{world.tool_url}/deeplink", data={"launch_id": launch_id, "assignment": assignment})
    action, fields = form_fields(answer.text.replace("/>", ">"))
    return session.post(action, data=fields, timeout=20).text


def refusal(world, action, fields, session) -> str:
    answer = session.post(action, data=fields, timeout=20)
    assert answer.status_code == 403, answer.text
    return html.unescape(re.search(r"<p id=refused>(.*)</p>", answer.text).group(1))
