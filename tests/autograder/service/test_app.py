"""The grading service's pages (autograder.service.app): a student sees their own attempts only (403 for another's),
the instructor sees everyone's and the queue, and what a student wrote is shown as text; the JSON a student's
JupyterLab reads (api/latest) is the asking student's own. The hub's OAuth is replaced by a header naming the user;
tests/autograder/hub/test_launch.py drives the real one."""

import asyncio
import datetime
import json
import re
import shutil
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("jupyterhub", reason="the grading service is a JupyterHub service: pip install -e '.[hub]'")

from nbgrader.utils import notebook_hash

from autograder.attempts import Attempts
from autograder.hub import collect
from autograder.service import app as service
from autograder.service.instant import Checker, InstantChecks
from autograder.verdicts import ChecksEnd, Property, Verdict

SOURCE = Path(__file__).resolve().parents[3] / "source" / "attention"
USERS = {name: {"name": name, "admin": False} for name in ("ada", "bo", "cy")} | {"prof": {"name": "prof"}}


def hostile_check(*, source, notebook_path, **_):
    scaled = Property("scaled", False, "the weights match unscaled scores <script>x=1</script>")
    attention = Verdict("check_attention", "attention", 2.4, 4.0, (scaled, Property("shape", True)))
    softmax = Verdict("check_softmax", "softmax", 2.0, 2.0, (Property("rows sum to 1", True),))
    masked = Verdict(
        "check_masked_attention",
        "attention",
        3.0,
        4.0,
        (scaled, Property("masked", False, "")),
        end=ChecksEnd("idle", "attention", limit=2.0),
    )
    return 25.4, 29.0, [attention, softmax, masked]


@pytest.fixture
def running(tmp_path, monkeypatch, inline_pool, inbound_submit):
    monkeypatch.setattr(service.Page, "get_current_user", lambda self: USERS.get(self.request.headers.get("X-User")))
    store = Attempts(f"sqlite:///{tmp_path / 'gradebook.db'}")
    shutil.copytree(SOURCE, tmp_path / "course" / "source" / "attention")
    checker = Checker(
        source=tmp_path / "course" / "source" / "attention",
        inbound=tmp_path / "exchange" / "inbound",
        store=store,
        policy=InstantChecks(attempts=1, period=3600),
        students=lambda: {"ada", "bo", "cy"},
        slots=2,
    )
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    inbound = tmp_path / "exchange" / "inbound"
    inbound_submit(inbound, "ada", now - datetime.timedelta(minutes=3))  # checked
    inbound_submit(inbound, "cy", now - datetime.timedelta(minutes=3))  # checked
    inbound_submit(inbound, "bo", now)  # made in bo's name by another account: refused, for the instructor only
    (inbound / "<b>bold<b>+attention+2026-12-01 10:00:00 UTC+1").mkdir()
    (inbound / "ada+attention+9999-12-31 23:59:59-01:00+1\nforged line").mkdir()
    checker.admit = lambda folder, student: (
        collect.NotTheirs(f"{folder.name} names bo but was made by another account") if student == "bo" else None
    )
    checker.step(inline_pool(hostile_check), now=now)
    checker.collect(now=now)
    inbound_submit(inbound, "ada", now - datetime.timedelta(minutes=2))  # superseded by the next one
    inbound_submit(inbound, "ada", now - datetime.timedelta(minutes=1))  # queued: one check per hour
    checker.step(inline_pool(hostile_check), now=now)
    options = service.ServiceOptions(course=tmp_path, exchange=tmp_path, instructors=("prof",))
    loop = asyncio.new_event_loop()
    ready, holder = threading.Event(), {}

    def serve():
        asyncio.set_event_loop(loop)
        app = service.make_app(options, checker)
        holder["server"] = app.listen(0, address="127.0.0.1")
        holder["port"] = next(iter(holder["server"]._sockets.values())).getsockname()[1]
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    ready.wait(10)
    yield f"http://127.0.0.1:{holder['port']}/services/grading/"
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)


def get(url: str, user: str, headers: dict | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, headers={"X-User": user})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            if headers is not None:
                headers.update(response.headers)
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_a_student_sees_their_verdicts_as_text_and_the_queued_submit(running):
    status, page = get(running, "ada")
    assert status == 200
    assert "attention: 2.4 of 4" in page
    assert "the weights match unscaled scores &lt;script&gt;x=1&lt;/script&gt;" in page and "<script>" not in page
    assert re.search(r"queued: checked when your window reopens, at \d\d:\d\d UTC", page), page
    assert re.search(r"not checked: your later Submit \(received \d\d:\d\d:\d\d UTC\) is checked in its", page)
    assert '<meta http-equiv="refresh" content="5">' in page  # a Submit waits: the page refreshes itself
    assert "Up to 1 Submit is checked per 1 hour" in page
    cut = "stopped: attention waited 2 s without computing (sleep, input or a lock?)"
    assert (
        f'<p id="ends" class="lost">The hidden checks were cut short:</p>\n<ul class="ends"><li>{cut}</li></ul>' in page
    )


def test_a_student_cannot_open_another_students_attempts(running):
    status, page = get(running + "students/ada", "bo")
    assert status == 403
    assert "A student sees only their own attempts." in page  # why, as a sentence
    assert 'href="/services/grading/students/bo">Back to your checks' in page and 'href="/hub/home"' in page
    assert "2.4 of 4" not in page and "Traceback" not in page
    assert get(running + "students/ada", "ada")[0] == 200
    status, page = get(running, "bo")
    assert status == 200 and "No Submit yet" in page and "2.4 of 4" not in page
    assert 'http-equiv="refresh"' not in page  # nothing waits: no refresh


def test_the_instructor_sees_the_queue_and_everyone(running):
    status, page = get(running, "prof")
    assert status == 200
    assert "Queue (1)" in page and ">ada<" in page  # the superseded Submit waits no more
    status, page = get(running + "students/ada", "prof")
    assert status == 200 and "attention: 2.4 of 4" in page
    assert "checks of ada&#39;s Submits" in page and "ada&#39;s Submits</h2>" in page and "your Submits" not in page
    status, page = get(running + "students/ada", "ada")
    assert "checks of your Submits" in page and "Your Submits</h2>" in page


def release_feedback_to(course, exchange, student: str, page: str) -> None:
    """What nbgrader's release_feedback does: the page, named by the hash of the submission's secret."""
    folder = course / "feedback" / student / "attention"
    folder.mkdir(parents=True)
    (folder / "submission_secret.txt").write_text("s3cret-of-" + student)
    (exchange / "feedback").mkdir(parents=True, exist_ok=True)
    name = notebook_hash(secret="s3cret-of-" + student, notebook_id="attention")
    (exchange / "feedback" / f"{name}.html").write_text(page)


def test_a_student_reaches_their_released_feedback_in_one_click_and_only_theirs(running, tmp_path):
    status, page = get(running, "ada")
    assert 'id="feedback"' not in page  # nothing released yet
    assert get(running + "students/ada/feedback", "ada")[0] == 404
    release_feedback_to(
        tmp_path / "course", tmp_path / "exchange", "ada", "<h1>Score: 29 / 33</h1><script>x=1</script>"
    )
    status, page = get(running, "ada")
    assert 'href="/services/grading/students/ada/feedback/attention"' in page
    assert get(running + "students/ada/feedback/attention", "ada")[0] == 200
    assert get(running + "students/ada/feedback/positions", "ada")[0] == 404  # no such assignment here
    headers = {}
    status, page = get(running + "students/ada/feedback", "ada", headers)
    assert status == 200 and "Score: 29 / 33" in page
    assert headers["Content-Security-Policy"].startswith("sandbox;")  # its own origin, no script runs
    assert get(running + "students/ada/feedback", "bo")[0] == 403
    assert get(running + "students/ada/feedback", "prof")[0] == 200
    assert get(running + "students/..%2F..%2Fetc/feedback", "prof")[0] == 404


def test_a_folder_made_in_a_students_name_by_another_account_is_shown_to_the_instructor_only(running):
    status, page = get(running, "bo")
    assert status == 200 and "No Submit yet" in page and "another account" not in page
    status, page = get(running, "prof")
    assert status == 200 and "Not checked: entries in the exchange's inbound (3)" in page
    assert "not that student&#39;s own Submit: bo+attention+" in page and "made by another account" in page
    assert ">bo<" not in page.split('id="refused"')[0]  # not among the students' Submits and totals


def test_the_instructor_sees_each_bad_inbound_name_with_its_reason_as_text(running):
    status, page = get(running, "prof")
    assert "<code>&lt;b&gt;bold&lt;b&gt;+attention+2026-12-01 10:00:00 UTC+1</code>" in page
    assert "its student part is not a student id" in page and "<b>bold" not in page
    assert "ada+attention+9999-12-31 23:59:59-01:00+1\\nforged line" in page  # the newline as an escape
    assert "is not a date and time" in page
    assert "A check is stopped after 30 s by the clock" in page


def latest(url: str, user: str, headers: dict | None = None) -> tuple[int, dict]:
    status, body = get(url + "api/latest", user, headers)
    return status, json.loads(body) if status == 200 else body


def test_a_students_lab_reads_their_newest_submit_its_score_and_what_lost_points(running):
    status, answer = latest(running, "cy")
    assert status == 200 and answer["student"] == "cy" and answer["assignment"] == "attention", answer
    newest = answer["newest"]
    assert newest["status"] == "done" and newest["words"] == "checked" and not newest["waiting"]
    assert newest["score"] == "25.4 / 29"
    failed = ["the weights match unscaled scores <script>x=1</script>", "masked"]  # JSON: the Lab shows it as text
    # attention once, its two checks' points added up, each failure said once; softmax kept its points: not named
    assert newest["lost"] == [{"function": "attention", "points": "5.4 of 8", "failed": failed}]
    assert newest["ends"] == ["stopped: attention waited 2 s without computing (sleep, input or a lock?)"]
    status, answer = latest(running, "ada")  # ada's newest waits for her window: when it is checked, in words
    assert answer["newest"]["status"] == "queued" and answer["newest"]["waiting"]
    assert re.fullmatch(r"queued: checked when your window reopens, at \d\d:\d\d UTC", answer["newest"]["words"])
    assert answer["newest"]["score"] is None and answer["newest"]["lost"] == []


def test_the_lab_json_is_the_asking_students_own_and_no_other_origin_reads_it(running):
    status, body = get(running + "api/latest?student=cy&user=cy", "bo")  # no parameter names another student
    answer = json.loads(body)
    assert status == 200 and answer == {"student": "bo", "assignment": "attention", "shown": "verdicts", "newest": None}
    request = urllib.request.Request(
        running + "api/latest", headers={"X-User": "cy", "Origin": "http://bo.localhost:8000"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert "Access-Control-Allow-Origin" not in response.headers  # a page of bo's origin cannot read cy's
        assert response.headers["Cache-Control"] == "no-store"
    status, body = get(running + "api/latest", "nobody")  # not logged in through the hub: sent to log in
    assert status != 200 and "25.4" not in body


def test_the_lab_json_shows_what_the_policy_shows(running, monkeypatch):
    monkeypatch.setattr(InstantChecks, "shown", lambda self, now: "nothing")
    status, answer = latest(running, "cy")
    assert answer["newest"]["words"] == "checked" and answer["newest"]["score"] is None
    assert answer["newest"]["lost"] == [] and answer["shown"] == "nothing"
