"""Each student's own due date in the grading service: an extended student's late Submit is checked and scored in
full while a classmate's identical one is not, late days are spent automatically once and run out, and on the checks
page a student sees their own due date and tokens and spends a late day (theirs only, with the page's XSRF token).
The hub's OAuth is replaced by a header naming the user, as in test_app.py."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import http.cookiejar
import json
import re
import shutil
import threading
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from autograder import sandbox
from autograder.attempts import Attempts
from autograder.service.checking import check_notebook
from autograder.service.instant import Checker, InstantChecks
from autograder.term import LateDays, Term

REPOSITORY = Path(__file__).resolve().parents[3]
SOURCE = REPOSITORY / "source" / "attention"
FULL = REPOSITORY / "examples" / "submissions" / "full_solution" / "attention" / "attention.ipynb"
NOW = datetime.datetime.now(datetime.UTC).replace(tzinfo=None).replace(microsecond=0)
DUE = NOW - datetime.timedelta(hours=1)  # every Submit below is an hour late, for the assignment


def make_checker(tmp_path: Path, term: Term, students=("ada", "bo", "cy", "dee"), due=DUE) -> Checker:
    return Checker(
        source=SOURCE,
        inbound=tmp_path / "inbound",
        store=Attempts(f"sqlite:///{tmp_path / 'gradebook.db'}"),
        policy=InstantChecks(due=due.isoformat(), attempts=10),
        students=lambda: set(students),
        slots=4,
        term=term,
    )


def test_an_extended_students_late_submit_is_checked_in_full_and_a_classmates_identical_one_is_not(
    tmp_path, inline_pool, inbound_submit
):
    if sandbox.bubblewrap() is None and not sandbox.unsandboxed_allowed():
        pytest.skip("bubblewrap is not available (apt-get install bubblewrap): the checks do not run without it")
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None, microsecond=0)
    due = now - datetime.timedelta(hours=1)  # every Submit below is an hour late
    term = Term(f"sqlite:///{tmp_path / 'gradebook.db'}", rule=LateDays(tokens=0))
    term.extend(student="ada", assignment="attention", hours=48)
    checker = make_checker(tmp_path, term, due=due)
    for student in ("ada", "bo"):
        inbound_submit(tmp_path / "inbound", student, now, notebook=FULL)  # the same notebook, both an hour late
    pool = inline_pool(check_notebook)
    checker.step(pool, now=now + datetime.timedelta(seconds=5))
    checker.collect(now=now + datetime.timedelta(seconds=5))
    (ada,) = checker.store.select(student="ada")
    (bo,) = checker.store.select(student="bo")
    assert (ada.status, ada.points, ada.max_points) == ("done", 29.0, 29.0)
    assert bo.status == "late" and bo.points is None
    assert (
        bo.message == f"received after your due date ({due:%Y-%m-%d %H:%M} UTC): not checked (the class run grades it)"
    )
    assert [call["notebook_path"].parent.name.split("+")[0] for call in pool.calls] == ["ada"]


def test_late_days_are_spent_automatically_once_and_run_out(tmp_path, inline_pool, inbound_submit):
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None, microsecond=0)
    due = now - datetime.timedelta(hours=1)  # every Submit below is an hour late
    term = Term(f"sqlite:///{tmp_path / 'gradebook.db'}", rule=LateDays(tokens=1, hours=24, automatic=True))
    checker = make_checker(tmp_path, term, due=due)
    pool = inline_pool(lambda **_: (29.0, 29.0, []))
    inbound_submit(tmp_path / "inbound", "cy", now)  # an hour late: her one token covers it
    checker.step(pool, now=now + datetime.timedelta(seconds=5))
    checker.collect(now=now + datetime.timedelta(seconds=5))
    inbound_submit(tmp_path / "inbound", "cy", now + datetime.timedelta(seconds=10))  # again: no second token
    checker.step(pool, now=now + datetime.timedelta(seconds=15))
    checker.collect(now=now + datetime.timedelta(seconds=15))
    assert [a.status for a in checker.store.select(student="cy")] == ["done", "done"]
    cy = term.standing(student="cy", assignment="attention", base=due)
    assert (cy.spent, cy.left, cy.due) == (1, 0, due + datetime.timedelta(hours=24))
    # dee is 30 hours late: two tokens would cover it, she has one, so none is spent and it is not checked
    term.extend(student="dee", assignment="attention", due=due - datetime.timedelta(hours=29))
    inbound_submit(tmp_path / "inbound", "dee", now + datetime.timedelta(seconds=20))
    checker.step(pool, now=now + datetime.timedelta(seconds=25))
    (dee,) = checker.store.select(student="dee")
    assert dee.status == "late" and "1 late day left" in dee.message
    assert term.standing(student="dee", assignment="attention", base=due).left == 1
    assert len(pool.calls) == 2


def test_late_days_are_spent_automatically_also_where_late_submits_are_checked(tmp_path, inbound_submit):
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None, microsecond=0)
    due = now - datetime.timedelta(hours=1)
    term = Term(f"sqlite:///{tmp_path / 'gradebook.db'}", rule=LateDays(tokens=2, hours=24, automatic=True))
    checker = make_checker(tmp_path, term, due=due)
    checker.policy = InstantChecks(due=due.isoformat(), check_after_due=True)
    inbound_submit(tmp_path / "inbound", "cy", now)
    checker.scan(now + datetime.timedelta(seconds=5))
    assert [a.status for a in checker.store.select(student="cy")] == ["pending"]
    assert term.standing(student="cy", assignment="attention", base=due).spent == 1  # the class run's due date moves


# --- the checks page -------------------------------------------------------------------------------------------------

service = pytest.importorskip("autograder.service.app", reason="the service is a JupyterHub service: '.[hub]'")
USERS = {name: {"name": name, "admin": False} for name in ("ada", "bo")} | {"prof": {"name": "prof"}}


@pytest.fixture
def page(tmp_path, monkeypatch, inline_pool, inbound_submit):
    monkeypatch.setattr(service.Page, "get_current_user", lambda self: USERS.get(self.request.headers.get("X-User")))
    shutil.copytree(SOURCE, tmp_path / "course" / "source" / "attention")
    term = Term(f"sqlite:///{tmp_path / 'gradebook.db'}", rule=LateDays(tokens=2, hours=24))
    term.extend(student="ada", assignment="attention", hours=2)
    checker = make_checker(tmp_path, term, students=("ada", "bo"))
    checker.source = tmp_path / "course" / "source" / "attention"
    options = service.ServiceOptions(course=tmp_path, exchange=tmp_path, instructors=("prof",))
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
    yield f"http://127.0.0.1:{holder['port']}/services/grading/", term
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)


class Browser:
    """One person's cookies, as a browser keeps them."""

    def __init__(self, user: str):
        self.user = user
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))

    def open(self, url: str, form: dict | None = None) -> tuple[int, str]:
        data = urllib.parse.urlencode(form).encode() if form is not None else None
        request = urllib.request.Request(url, data=data, headers={"X-User": self.user})
        try:
            with self.opener.open(request, timeout=10) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()


def form_of(page: str) -> tuple[str, dict]:
    action = re.search(r'<form id="late-day" method="post" action="([^"]+)"', page)[1]
    fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', page))
    return action, fields


def test_a_student_sees_their_own_due_date_and_spends_a_late_day_once(page):
    url, term = page
    ada = Browser("ada")
    status, text = ada.open(url)
    own_due = DUE + datetime.timedelta(hours=2)
    assert status == 200 and f"Your due date: {own_due:%Y-%m-%d %H:%M} UTC (an extension)." in text
    assert "Late days: 2 of 2 left for the term (0 spent on attention)" in text
    assert f"Submits after your due date ({own_due:%Y-%m-%d %H:%M} UTC) are not checked." in text
    action, fields = form_of(text)
    assert fields["seen"] == "0" and fields["_xsrf"]
    answer = json.loads(ada.open(url + "api/latest")[1])  # what her JupyterLab reads
    assert (answer["due"], answer["late_days_left"]) == (own_due.isoformat() + "Z", 2)
    origin = url.split("/services/")[0]
    status, after = ada.open(origin + action, fields)
    moved = own_due + datetime.timedelta(hours=24)
    assert (
        status == 200 and f"One late day spent on attention: your due date is now {moved:%Y-%m-%d %H:%M} UTC" in after
    )
    assert "Late days: 1 of 2 left for the term (1 spent on attention)" in after
    status, again = ada.open(origin + action, fields)  # the same click again (a double click, a replay)
    assert status == 200 and "No late day spent on attention: already done: 1 late days are spent" in again
    assert term.standing(student="ada", assignment="attention", base=DUE).spent == 1


def test_a_late_day_is_spent_by_its_student_only_and_only_with_the_pages_token(page):
    url, term = page
    origin = url.split("/services/")[0]
    ada, bo = Browser("ada"), Browser("bo")
    action, fields = form_of(ada.open(url)[1])
    status, text = bo.open(url + "students/ada")
    assert status == 403  # bo does not see ada's due date or tokens
    _, bo_fields = form_of(bo.open(url)[1])  # bo's own page: his own XSRF cookie and token
    status, text = bo.open(origin + action, bo_fields)  # his valid token, on ada's late days
    assert status == 403 and "A student spends only their own late days" in text
    status, _ = bo.open(origin + action, {"seen": "0", "_xsrf": fields["_xsrf"]})  # ada's form, ada's token
    assert status == 403
    status, _ = bo.open(origin + action, {"seen": "0"})  # no token at all
    assert status == 403
    status, _ = ada.open(origin + action, {"seen": "0"})  # ada herself, without the page's token
    assert status == 403
    status, _ = ada.open(origin + action, {"seen": "zero", "_xsrf": fields["_xsrf"]})
    assert status == 400
    assert term.standing(student="ada", assignment="attention", base=DUE).spent == 0
    status, text = bo.open(url)
    assert status == 200 and "Your due date: " + f"{DUE:%Y-%m-%d %H:%M} UTC." in text and "(an extension)" not in text
    assert f"Submits after the due date ({DUE:%Y-%m-%d %H:%M} UTC) are not checked." in text  # bo's is the class's
    status, text = Browser("prof").open(url + "students/ada")
    assert status == 200 and "late-day" not in text  # the instructor reads it; only the student spends


@contextlib.contextmanager
def chromium():
    """Debian's Chromium driven by Playwright (skipped without either), closed on the way out."""
    from conftest import CHROMIUM, playwright_or_skip

    playwright = playwright_or_skip()
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


def test_in_chromium_a_student_spends_a_late_day_and_a_classmate_cannot(page, tmp_path):
    """The page in a real browser: ada reads her own due date and late days and spends one with the button (a
    double click spends one); bo, on his own page, rewrites his form to spend ada's late day (his identity, his
    own valid token): refused, and ada's tokens are untouched. Screenshots: late-days-before, late-days-spent,
    late-days-attacker-refused."""
    url, term = page
    shots = tmp_path / "screenshots"
    with chromium() as browser:
        ada = browser.new_context(extra_http_headers={"X-User": "ada"}).new_page()
        ada.goto(url)
        assert "Late days: 2 of 2 left for the term" in ada.inner_text("#due")
        ada.screenshot(path=str(shots / "late-days-before.png"), full_page=True)
        ada.dblclick("#late-day button")  # a double click: the second request carries the same count
        ada.wait_for_selector("#notice")
        ada.wait_for_load_state("load")
        assert "Late days: 1 of 2 left" in ada.inner_text("#due")
        ada.screenshot(path=str(shots / "late-days-spent.png"), full_page=True)
        bo = browser.new_context(extra_http_headers={"X-User": "bo"}).new_page()
        bo.goto(url)
        bo.evaluate(
            """(target) => { const form = document.querySelector('#late-day');
                form.action = target; form.querySelector('[name=seen]').value = '1'; form.submit(); }""",
            url + "students/ada/late-days/attention",
        )
        bo.wait_for_selector("#error")
        assert "A student spends only their own late days" in bo.inner_text("#reason")
        bo.screenshot(path=str(shots / "late-days-attacker-refused.png"), full_page=True)
    assert term.standing(student="ada", assignment="attention", base=DUE).spent == 1
    assert sorted(path.name for path in shots.iterdir()) == [
        "late-days-attacker-refused.png",
        "late-days-before.png",
        "late-days-spent.png",
    ]


def test_the_instructor_sets_an_extension_on_their_page_and_a_student_cannot(page):
    url, term = page
    origin = url.split("/services/")[0]
    prof, bo = Browser("prof"), Browser("bo")
    status, text = prof.open(url)
    assert status == 200 and re.search(r"<tr><td>ada</td><td>[\d: -]+ UTC</td><td>an extension</td>", text)
    action = re.search(r'<form class="extend" method="post" action="([^"]+)">', text)[1]
    token = re.search(r'<form class="extend"[^>]*><input type="hidden" name="_xsrf" value="([^"]+)"', text)[1]
    status, text = prof.open(origin + action, {"_xsrf": token, "student": "bo", "hours": "5"})
    assert status == 200 and "bo: an extension on attention is set." in text
    assert term.standing(student="bo", assignment="attention", base=DUE).due == DUE + datetime.timedelta(hours=5)
    status, text = prof.open(origin + action, {"_xsrf": token, "student": "bo", "hours": "-2"})
    assert "Nothing changed: hours = -2.0: an extension is a number of hours above 0" in text
    status, text = prof.open(origin + action, {"_xsrf": token, "student": "<b>x", "hours": "2"})
    assert "Nothing changed: &#39;&lt;b&gt;x&#39; is not a student id" in text and "<b>x" not in text
    _, fields = form_of(bo.open(url)[1])  # bo's own valid token: still not an instructor
    assert bo.open(origin + action, {"_xsrf": fields["_xsrf"], "student": "bo", "hours": "500"})[0] == 403
    assert prof.open(origin + action, {"student": "bo", "hours": "500"})[0] == 403  # no token
    assert term.standing(student="bo", assignment="attention", base=DUE).due == DUE + datetime.timedelta(hours=5)
    status, text = prof.open(origin + action, {"_xsrf": token, "student": "bo", "remove": "1"})
    assert "bo: back to the due date of attention." in text
    assert term.standing(student="bo", assignment="attention", base=DUE).due == DUE


def test_the_instructor_grants_late_days_on_their_page_and_a_student_cannot(page):
    url, term = page
    origin = url.split("/services/")[0]
    prof, bo = Browser("prof"), Browser("bo")
    status, text = prof.open(url)
    assert status == 200 and "Each student has 2 (<code>c.LateDays.tokens</code>)." in text
    assert 'id="grants"' not in text
    action = re.search(r'<form class="grant" method="post" action="([^"]+)">', text)[1]
    token = re.search(r'<form class="grant"[^>]*><input type="hidden" name="_xsrf" value="([^"]+)"', text)[1]
    assert action == "/services/grading/term"
    status, text = prof.open(origin + action, {"_xsrf": token, "student": "bo", "tokens": "5"})
    assert status == 200 and "bo: 5 late days for the term." in text
    assert "<tr><td>bo</td><td>5</td></tr>" in text and "but for those\nbelow" in text
    assert term.standing(student="bo", assignment="attention", base=DUE).left == 5
    status, text = prof.open(origin + action, {"_xsrf": token, "student": "bo", "tokens": "two"})
    assert "Nothing changed: &#39;two&#39; is not a whole number of late days." in text
    status, text = prof.open(origin + action, {"_xsrf": token, "student": "bo", "tokens": "5000"})
    assert "Nothing changed: tokens = 5000: a whole number from 0 to 1000." in text
    status, text = prof.open(origin + action, {"_xsrf": token, "student": "<b>x", "tokens": "2"})
    assert "Nothing changed: &#39;&lt;b&gt;x&#39; is not a student id" in text and "<b>x" not in text
    _, fields = form_of(bo.open(url)[1])  # bo's own valid token: still not an instructor
    status, text = bo.open(origin + action, {"_xsrf": fields["_xsrf"], "student": "bo", "tokens": "900"})
    assert status == 403 and "Only an instructor grants late days." in text
    assert prof.open(origin + action, {"student": "bo", "tokens": "900"})[0] == 403  # no token
    assert term.grants() == {"bo": 5}


def test_in_chromium_the_instructor_sets_an_extension_and_a_student_cannot(page, tmp_path):
    """The instructor's extension form in a real browser: prof gives bo 5 hours more and the page says so; bo, on
    his own page, points his late-day form at the extension URL for himself (his identity, his own valid token):
    refused, his due date unchanged. Screenshots: extension-set, extension-attacker-refused."""
    url, term = page
    shots = tmp_path / "screenshots"
    with chromium() as browser:
        prof = browser.new_context(extra_http_headers={"X-User": "prof"}).new_page()
        prof.goto(url)
        prof.fill("form.extend [name=student]", "bo")
        prof.fill("form.extend [name=hours]", "5")
        prof.click("form.extend button")
        prof.wait_for_load_state("load")
        assert "bo: an extension on attention is set." in prof.inner_text("body")
        prof.screenshot(path=str(shots / "extension-set.png"), full_page=True)
        bo = browser.new_context(extra_http_headers={"X-User": "bo"}).new_page()
        bo.goto(url)
        bo.evaluate(
            """(target) => { const form = document.querySelector('#late-day');
                for (const [name, value] of [['student', 'bo'], ['hours', '500']]) {
                    const field = document.createElement('input');
                    field.type = 'hidden'; field.name = name; field.value = value; form.appendChild(field); }
                form.action = target; form.submit(); }""",
            url + "term/attention",
        )
        bo.wait_for_selector("#error")
        assert "Only an instructor gives extensions." in bo.inner_text("#reason")
        bo.screenshot(path=str(shots / "extension-attacker-refused.png"), full_page=True)
    assert term.standing(student="bo", assignment="attention", base=DUE).due == DUE + datetime.timedelta(hours=5)
    assert sorted(path.name for path in shots.iterdir()) == ["extension-attacker-refused.png", "extension-set.png"]
