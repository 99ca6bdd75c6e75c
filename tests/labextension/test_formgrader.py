"""labextension/attention_checks/formgrader: Formgrader's Generate and Collect answers open their log with what came
of the action, read from the log nbgrader itself writes (nbgrader's API runs here on a small course); any other
answer of the server passes through untouched (tests/autograder/hub/test_launch.py shows the dialogs in a browser)."""

import asyncio
import json
import sys
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("jupyter_server", reason="the extension runs in a Jupyter server: pip install jupyterlab")

from nbgrader.apps import NbGraderAPI
from tornado import httpclient, web
from traitlets.config import Config

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "labextension"))
from attention_checks import formgrader

STUDENTS = ["student1", "student2"]


def small_course(root: Path) -> NbGraderAPI:
    """A course of one assignment, 'tiny', with one notebook, and an exchange of its own, under ``root``."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    (root / "source" / "tiny").mkdir(parents=True)
    nbformat.write(notebook, root / "source" / "tiny" / "tiny.ipynb")
    config = Config()
    config.CourseDirectory.root = str(root)
    config.CourseDirectory.course_id = "course"
    config.CollectApp.check_owner = False  # the test's files are root's, not each student's account's
    config.Exchange.root = str(root / "exchange")
    return NbGraderAPI(config=config)


def hand_in(root: Path, student: str, timestamp: str) -> None:
    """A submission of ``student``'s in the exchange's inbound, as nbgrader's submit leaves it."""
    folder = root / "exchange" / "course" / "inbound" / f"{student}+tiny+{timestamp}+abc{student[-1]}"
    folder.mkdir(parents=True)
    (folder / "timestamp.txt").write_text(timestamp)
    nbformat.write(nbformat.v4.new_notebook(), folder / "tiny.ipynb")


def test_generate_says_which_notebooks_it_made_before_nbgraders_log(tmp_path):
    api = small_course(tmp_path)
    reply = api.generate_assignment("tiny")
    assert reply["success"], reply
    shown = formgrader.result_first("assign", "tiny", reply)["log"].splitlines()
    assert shown[:2] == ["The student version of 'tiny' is made: 1 notebook, tiny.ipynb.", "Release it next."]
    assert shown[3] == "nbgrader's log:" and "\n".join(shown[4:]) == reply["log"].rstrip()  # kept whole, below


def test_nbgraders_debug_lines_are_left_out_and_counted_and_long_lines_wrap():
    log = (
        "[INFO] Converting notebook /course/source/./tiny/tiny.ipynb\n[DEBUG] Student: .\n"
        "[DEBUG] Applying preprocessor: LockCells\n  a second line of that message\n"
        "[INFO] Writing 1200 bytes to /course/release/tiny/tiny.ipynb\n"
    )
    shown = formgrader.result_first("assign", "tiny", {"success": True, "log": log})["log"].splitlines()
    assert shown[3:] == [
        "nbgrader's log (2 DEBUG lines left out):",
        "[INFO] Converting notebook /course/source/./tiny/tiny.ipynb",
        "[INFO] Writing 1200 bytes to /course/release/tiny/tiny.ipynb",
    ]
    why = "student1+tiny+2099-01-01 00:00:00.000000 UTC+forged names student1 but was made by student3's account"
    reply = {"success": True, "log": f"[ERROR] Not collected: {why}\n[INFO] Collecting submission: student2 tiny\n"}
    said = formgrader.result_first("collect", "tiny", reply)["log"].split("\n\n")[0].splitlines()
    assert said[:2] == ["Collected 1 submission of 'tiny': student2.", "Not collected, 1:"]
    assert all(len(line) <= formgrader.WIDTH for line in said) and len(said) == 4, said  # the reason on two lines
    assert " ".join(line.strip() for line in said[2:]) == f"- {why}" and said[3].startswith("      ")


def test_collect_names_whom_it_collected_before_a_refusal_and_the_log(tmp_path):
    api = small_course(tmp_path)
    (tmp_path / "exchange" / "course" / "inbound").mkdir(parents=True)
    for student in STUDENTS:
        hand_in(tmp_path, student, "2026-12-01 10:00:00.000000 UTC")
    first = api.collect("tiny")
    assert first["success"], first
    # a refusal of autograder.hub.collect's comes first in the log, before nbgrader's own lines
    refused = "[ERROR] Not collected: student2+tiny+x was made by student3's account, not student2's\n"
    first["log"] = refused + first["log"]
    shown = formgrader.result_first("collect", "tiny", first)["log"].splitlines()
    assert shown[:3] == [
        "Collected 2 submissions of 'tiny': student1, student2.",
        "Not collected, 1:",
        "  - student2+tiny+x was made by student3's account, not student2's",
    ]
    hand_in(tmp_path, "student1", "2026-12-01 11:00:00.000000 UTC")  # student1 submits again; student2 does not
    again = api.collect("tiny")
    shown = formgrader.result_first("collect", "tiny", again)["log"].splitlines()
    assert shown[:2] == [
        "Collected 1 submission of 'tiny': student1.",
        "Already collected, no newer submission: student2.",
    ]


def test_a_failure_leads_with_the_last_line_of_its_traceback():
    reply = {"success": False, "log": "[INFO] Processing\n", "error": "Traceback ...\nOSError: the inbound is closed\n"}
    shown = formgrader.result_first("collect", "tiny", reply)
    assert shown["log"].startswith("It failed: OSError: the inbound is closed\n")
    assert shown["error"] == reply["error"] and shown["success"] is False


def test_the_server_rewrites_formgraders_assign_and_collect_answers_and_no_other():
    answer = {"success": True, "log": "[INFO] Collecting submission: student1 tiny\n"}

    class Formgrader(web.RequestHandler):
        def post(self, assignment, action):
            self.write(json.dumps(answer))

    formgrader.ResultFirst.pattern = formgrader.route_pattern("/user/instructor/")

    async def ask(path: str) -> httpclient.HTTPResponse:
        routes = [(r"/user/instructor/formgrader/api/assignment/([^/]+)/(\w+)", Formgrader)]
        server = web.Application(routes, transforms=[formgrader.ResultFirst]).listen(0, address="127.0.0.1")
        port = next(iter(server._sockets.values())).getsockname()[1]
        try:
            return await httpclient.AsyncHTTPClient().fetch(f"http://127.0.0.1:{port}{path}", method="POST", body="")
        finally:
            server.stop()

    collect = asyncio.run(ask("/user/instructor/formgrader/api/assignment/tiny/collect"))
    assert json.loads(collect.body)["log"].startswith("Collected 1 submission of 'tiny': student1.\n")
    assert int(collect.headers["Content-Length"]) == len(collect.body)
    release = asyncio.run(ask("/user/instructor/formgrader/api/assignment/tiny/release_assignment"))
    assert json.loads(release.body) == answer  # not one of the two: as nbgrader wrote it
