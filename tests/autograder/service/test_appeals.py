"""Appeals (autograder.service.appeals, the service's pages): a student asks for a review of one verdict line of
their own checked Submit, bounded and with hostile text kept as text; the instructor grades exactly that Submit
again (its digest, its seed) and sees the difference check by check; a decision with points reaches nbgrader's
gradebook as the check's manual score. The hub's OAuth is replaced by a header naming the user, as in test_app.py."""

from __future__ import annotations

import datetime
import http.cookiejar
import re
import shutil
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from gradebooks import make_course, outcome
from nbgrader.api import Gradebook

from autograder import sandbox
from autograder.attempts import Attempts
from autograder.grading.gradebook import record_in_gradebook
from autograder.service.appeals import MOST_OPEN, AppealError, Appeals, differences, main, notebook_digest, rerun_appeal
from autograder.service.checking import check_notebook
from autograder.service.instant import Checker, InstantChecks
from autograder.verdicts import Property, Verdict

REPOSITORY = Path(__file__).resolve().parents[3]
SOURCE = REPOSITORY / "source" / "attention"
UNSCALED = REPOSITORY / "examples" / "submissions" / "no_sqrt_scaling" / "attention" / "attention.ipynb"
T0 = datetime.datetime(2026, 12, 1, 10, 0, 0)


def checked(store: Attempts, student: str, verdicts: list[Verdict], key: str) -> object:
    """A checked attempt of ``student`` holding ``verdicts``."""
    store.add(key=key, student=student, assignment="attention", submitted=T0, now=T0)
    attempt = next(a for a in store.select(student=student) if a.key == key)
    store.start(attempt.id, now=T0)
    points = sum(v.points for v in verdicts)
    store.finish(attempt.id, points=points, max_points=3.0, verdicts=verdicts, now=T0)
    return store.get(attempt.id)


def two_checks(a: float = 1.0) -> list[Verdict]:
    return [
        Verdict("check_a", "f", a, 2.0, (Property("equal", a == 2.0, "the rows differ"),), seed=7),
        Verdict("check_b", "g", 1.0, 1.0, (Property("shape", True),), seed=7),
    ]


def test_a_request_is_bounded_its_text_kept_as_one_line_and_only_for_ones_own_checked_submit(tmp_path):
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    store, appeals = Attempts(url), Appeals(url)
    ada = checked(store, "ada", two_checks(), "ada+1")
    hostile = "the rows\nare right <script>alert(1)</script>\x00\x1b[31m   really"
    appeal = appeals.ask(student="ada", attempt=ada, check="check_a", text=hostile, digest="d" * 64)
    assert appeal.text == "the rows are right <script>alert(1)</script> [31m really"  # one printable line
    assert (appeal.seed, appeal.verdict.points, appeal.status, appeal.digest) == (7, 1.0, "open", "d" * 64)
    refusals = [
        (dict(student="bo", attempt=ada, check="check_a", text="mine"), "only their own Submits"),
        (dict(student="ada", attempt=ada, check="check_z", text="x"), "no verdict line 'check_z'"),
        (dict(student="ada", attempt=ada, check="check_b", text=" \n\t "), "write a sentence"),
        (dict(student="ada", attempt=ada, check="check_b", text="x" * 501), "501 characters: say it in at most 500"),
        (dict(student="ada", attempt=ada, check="check_a", text="again"), "already: it is open"),
    ]
    for keywords, words in refusals:
        with pytest.raises(AppealError, match=words):
            appeals.ask(digest="d" * 64, **keywords)
    for number in range(2, MOST_OPEN + 1):  # up to the bound, each on another Submit
        other = checked(store, "ada", two_checks(), f"ada+{number}")
        appeals.ask(student="ada", attempt=other, check="check_a", text="please", digest="d" * 64)
    with pytest.raises(AppealError, match=f"you have {MOST_OPEN} reviews open, the most"):
        appeals.ask(student="ada", attempt=ada, check="check_b", text="one more", digest="d" * 64)
    store.add(key="ada+waiting", student="ada", assignment="attention", submitted=T0)
    waiting = next(a for a in store.select(student="ada") if a.key == "ada+waiting")
    with pytest.raises(AppealError, match="only a checked Submit"):
        appeals.ask(student="ada", attempt=waiting, check="check_a", text="x", digest="d" * 64)
    assert len(appeals.select(student="ada")) == MOST_OPEN and appeals.select(student="bo") == []


def test_a_decision_with_points_becomes_the_checks_manual_score_in_the_gradebook(tmp_path):
    url = f"sqlite:///{tmp_path / 'course' / 'gradebook.db'}"
    course = make_course(tmp_path, url)
    record_in_gradebook(course, outcome("ada", 1, a=1.0, b=1.0), db=url)
    store, appeals = Attempts(url), Appeals(url)
    ada = checked(store, "ada", two_checks(), "ada+1")
    bo = checked(store, "bo", two_checks(), "bo+1")
    first = appeals.ask(student="ada", attempt=ada, check="check_a", text="right", digest="d" * 64)
    second = appeals.ask(student="bo", attempt=bo, check="check_a", text="right", digest="d" * 64)
    with pytest.raises(AppealError, match="worth 0 to 2"):
        appeals.decide(first.id, points=5, comment="", db=url)
    decided = appeals.decide(first.id, points=2.0, comment="Your rows\nare right.", db=url)
    assert decided.status == "decided" and decided.comment == "Your rows are right."
    assert decided.gradebook == "check_a of ada is now 2 / 2 in the gradebook"
    with Gradebook(url) as gradebook:
        grade = gradebook.find_grade("check_a", "attention", "attention", "ada")
        assert (grade.auto_score, grade.manual_score, grade.score) == (1.0, 2.0, 2.0)
    with pytest.raises(AppealError, match="decided already"):
        appeals.decide(first.id, points=0.0, comment="", db=url)
    kept = appeals.decide(second.id, points=1.5, comment="", db=url)  # bo is not in the gradebook yet
    assert kept.gradebook.startswith("the class run has not graded this student yet")


def test_the_differences_are_check_by_check_on_the_gradebooks_scale():
    lines = differences(two_checks(a=1.0), two_checks(a=2.0), {"check_a": 4.0, "check_b": 1.0})
    assert [(d.check, d.before, d.after, d.changed) for d in lines] == [
        ("check_a", 2.0, 4.0, True),
        ("check_b", 1.0, 1.0, False),
    ]
    assert lines[0].failed_before == ("the rows differ",) and lines[0].failed_after == ()


def test_the_same_submit_and_seed_grade_the_same_and_a_changed_notebook_is_refused(
    tmp_path, inline_pool, inbound_submit
):
    if sandbox.bubblewrap() is None and not sandbox.unsandboxed_allowed():
        pytest.skip("bubblewrap is not available (apt-get install bubblewrap): the checks do not run without it")
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    checker = Checker(
        source=SOURCE,
        inbound=tmp_path / "inbound",
        store=Attempts(url),
        policy=InstantChecks(),
        students=lambda: {"ada"},
        slots=1,
    )
    key = inbound_submit(tmp_path / "inbound", "ada", T0, notebook=UNSCALED)
    checker.step(inline_pool(check_notebook))
    checker.collect()
    (attempt,) = checker.store.select()
    assert attempt.status == "done" and attempt.points < 29
    lost = next(v for v in attempt.verdicts if not v.passed)
    path = tmp_path / "inbound" / key / "attention.ipynb"
    appeals = Appeals(url)
    appeal = appeals.ask(student="ada", attempt=attempt, check=lost.check, text="scaled", digest=notebook_digest(path))
    again = rerun_appeal(appeal, attempt, source=SOURCE, inbound=tmp_path / "inbound")
    assert [(v.check, v.points, v.seed) for v in again] == [(v.check, v.points, v.seed) for v in attempt.verdicts]
    assert not any(d.changed for d in differences(attempt.verdicts, again))
    path.write_bytes(path.read_bytes() + b" ")  # the notebook is not the one appealed any more
    said = rerun_appeal(appeal, attempt, source=SOURCE, inbound=tmp_path / "inbound")
    assert said == "the Submit's notebook is not the one appealed (its digest differs): it cannot be graded again"


def test_the_command_lists_and_decides(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'course' / 'gradebook.db'}"
    course = make_course(tmp_path, url)
    record_in_gradebook(course, outcome("ada", 1, a=1.0, b=1.0), db=url)
    ada = checked(Attempts(url), "ada", two_checks(), "ada+1")
    appeal = Appeals(url).ask(student="ada", attempt=ada, check="check_a", text="right", digest="d" * 64)
    assert main(["--course", str(course), "list", "--open"]) == 0
    assert capsys.readouterr().out == f"{appeal.id} ada attention check_a open: right\n"
    assert main(["--course", str(course), "decide", str(appeal.id), "--points", "2", "--comment", "yes"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"appeal {appeal.id} decided: check_a of ada is now 2 / 2 in the gradebook",
        "no feedback page of ada to make again (the class run has not made one yet)",  # after_decision, at once
    ]
    with pytest.raises(SystemExit) as refused:
        main(["--course", str(course), "rerun", str(appeal.id)])
    assert refused.value.code == 2 and "rerun needs --exchange" in capsys.readouterr().err


# --- the pages -------------------------------------------------------------------------------------------------------

service = pytest.importorskip("autograder.service.app", reason="the service is a JupyterHub service: '.[hub]'")
USERS = {name: {"name": name, "admin": False} for name in ("ada", "bo")} | {"prof": {"name": "prof"}}


def fake_recheck(**_):
    return 3.0, 3.0, two_checks(a=2.0)  # the grade again: check_a now full (as a fixed grader would)


@pytest.fixture
def served(tmp_path, monkeypatch, inbound_submit):
    import asyncio
    import threading

    monkeypatch.setattr(service.Page, "get_current_user", lambda self: USERS.get(self.request.headers.get("X-User")))
    monkeypatch.setattr(service, "rerun_appeal", lambda appeal, attempt, **_: fake_recheck()[2])
    url = f"sqlite:///{tmp_path / 'course' / 'gradebook.db'}"
    course = make_course(tmp_path, url)
    record_in_gradebook(course, outcome("ada", 1, a=1.0, b=1.0), db=url)
    shutil.copytree(SOURCE, course / "source" / "attention")
    store = Attempts(url)
    checker = Checker(
        source=course / "source" / "attention",
        inbound=tmp_path / "exchange" / "inbound",
        store=store,
        policy=InstantChecks(),
        students=lambda: {"ada", "bo"},
        slots=1,
    )
    checker.appeals = Appeals(url)
    for student in ("ada", "bo"):
        key = inbound_submit(tmp_path / "exchange" / "inbound", student, T0)
        checked(store, student, two_checks(), key)
    options = service.ServiceOptions(course=course, exchange=tmp_path / "exchange", instructors=("prof",))
    loop, ready, holder = asyncio.new_event_loop(), threading.Event(), {}

    def serve():
        asyncio.set_event_loop(loop)
        holder["server"] = service.make_app(options, checker).listen(0, address="127.0.0.1")
        holder["port"] = next(iter(holder["server"]._sockets.values())).getsockname()[1]
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    ready.wait(10)
    yield f"http://127.0.0.1:{holder['port']}/services/grading/", checker, url
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)


class Browser:
    def __init__(self, user: str):
        self.user = user
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))

    def open(self, url: str, form: dict | None = None) -> tuple[int, str]:
        data = urllib.parse.urlencode(form).encode() if form is not None else None
        request = urllib.request.Request(url, data=data, headers={"X-User": self.user})
        try:
            with self.opener.open(request, timeout=20) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()


def forms(page: str, kind: str) -> list[tuple[str, dict]]:
    found = []
    for action, body in re.findall(rf'<form class="{kind}" method="post" action="([^"]+)">(.*?)</form>', page, re.S):
        found.append((action, dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', body))))
    return found


def test_an_appeals_round_trip_from_the_students_line_to_the_gradebook(served):
    url, checker, db = served
    origin = url.split("/services/")[0]
    ada, bo, prof = Browser("ada"), Browser("bo"), Browser("prof")
    started = time.monotonic()
    status, page = ada.open(url)
    lines = forms(page, "appeal")
    assert status == 200 and [fields["check"] for _, fields in lines] == ["check_a", "check_b"]
    action, fields = lines[0]
    status, page = ada.open(origin + action, fields | {"text": "My rows are right <img src=x onerror=alert(1)>"})
    assert status == 200 and "Your review of check_a is asked" in page
    assert "open: waiting for the instructor" in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "<img src=x" not in page
    asked = time.monotonic()
    # bo: not on ada's URL, not with ada's Submit on his own, not the queue, not ada's page
    _, bo_page = bo.open(url)
    bo_action, bo_fields = forms(bo_page, "appeal")[0]
    assert bo.open(origin + action, bo_fields | {"text": "x"})[0] == 403
    assert bo.open(origin + bo_action, bo_fields | {"attempt": fields["attempt"], "text": "x"})[0] == 403
    assert bo.open(url + "appeals")[0] == 403 and bo.open(url + "students/ada")[0] == 403
    assert ada.open(origin + action, {k: v for k, v in fields.items() if k != "_xsrf"} | {"text": "x"})[0] == 403
    # the instructor: the queue, the grade again, the decision
    status, queue = prof.open(url)
    assert status == 200 and 'href="/services/grading/appeals"' in queue
    status, queue = prof.open(url + "appeals")
    assert status == 200 and "&lt;img src=x onerror=alert(1)&gt;" in queue and "<img src=x" not in queue
    ((rerun_action, rerun_fields),) = forms(queue, "rerun")
    assert bo.open(origin + rerun_action, rerun_fields)[0] == 403
    status, queue = prof.open(origin + rerun_action, rerun_fields)
    assert status == 200 and re.search(r"graded again in \d+\.\d s", queue)
    rows = re.findall(r"<tr class=\"(\w+)[^\"]*\">\n<td>(check_\w)</td><td>([\d.]+)</td><td>([\d.]+)</td>", queue)
    assert rows == [("lost", "check_a", "1.0", "2.0"), ("full", "check_b", "1.0", "1.0")]
    ((decide_action, decide_fields),) = forms(queue, "decide")
    status, queue = prof.open(origin + decide_action, decide_fields | {"points": "2", "comment": "Agreed <b>"})
    assert status == 200 and "decided: check_a of ada is now 2 / 2 in the gradebook" in queue
    decided = time.monotonic()
    with Gradebook(db) as gradebook:
        assert gradebook.find_grade("check_a", "attention", "attention", "ada").manual_score == 2.0
    status, page = ada.open(url)
    assert "decided: check_a is now worth 2 points" in page and "Agreed &lt;b&gt;" in page
    print(f"appeal round trip: asked {asked - started:.2f} s, decided {decided - asked:.2f} s after")


def test_in_chromium_an_appeal_goes_from_the_students_line_to_the_decision(served, tmp_path):
    """The pages in a real browser: ada asks for a review of check_a with a sentence holding markup (shown as text,
    nothing runs), the instructor grades it again and decides with points and a comment, ada reads the decision.
    Screenshots: appeal-asked, appeal-rerun, appeal-decided."""
    from conftest import CHROMIUM, playwright_or_skip

    playwright = playwright_or_skip()
    url, checker, db = served
    shots = tmp_path / "screenshots"
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            ada = browser.new_context(extra_http_headers={"X-User": "ada"}).new_page()
            ada.goto(url)
            ada.click("details.appeal >> nth=0 >> summary")
            ada.fill("details.appeal >> nth=0 >> textarea", "My rows are right <img src=x onerror=window.pwned=1>")
            ada.click("details.appeal >> nth=0 >> button")
            ada.wait_for_selector("#notice")
            assert "Your review of check_a is asked" in ada.inner_text("#notice")
            assert "open: waiting for the instructor" in ada.inner_text("#appeals")
            assert ada.evaluate("typeof window.pwned") == "undefined" and ada.locator("#appeals img").count() == 0
            ada.screenshot(path=str(shots / "appeal-asked.png"), full_page=True)
            prof = browser.new_context(extra_http_headers={"X-User": "prof"}).new_page()
            prof.goto(url + "appeals")
            prof.click("form.rerun button")
            prof.wait_for_selector("table.differences")
            assert prof.locator("table.differences tr.lost td").first.inner_text() == "check_a"
            assert prof.evaluate("typeof window.pwned") == "undefined"
            prof.screenshot(path=str(shots / "appeal-rerun.png"), full_page=True)
            prof.fill("form.decide input[name=points]", "2")
            prof.fill("form.decide input[name=comment]", "Agreed: your rows are right.")
            prof.click("form.decide button")
            prof.wait_for_selector("p.decision")
            assert "check_a of ada is now 2 / 2 in the gradebook" in prof.inner_text("p.decision")
            ada.goto(url)
            assert "decided: check_a is now worth 2 points" in ada.inner_text("#appeals")
            ada.screenshot(path=str(shots / "appeal-decided.png"), full_page=True)
        finally:
            browser.close()
    with Gradebook(db) as gradebook:
        assert gradebook.find_grade("check_a", "attention", "attention", "ada").manual_score == 2.0
