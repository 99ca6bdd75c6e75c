"""Who a launch is, and where its scores and its browser may go: the LTI attacks of issue 24, each against the
platform on loopback (tests/lti_platform.py) and the tool, and the hand-off against a JupyterHub started here.

- another LMS user whose username is "ada" (or "instructor") never becomes ada (or the instructor): a person is
  the platform's (issuer, deployment, sub);
- a launch of ps1 from another LMS course does not move ps1's line item, and no score goes to that course;
- the hub's hand-off link is used once even after a restart, only in the browser that launched, and its ``next``
  stays on the hub;
- an instant check of a Submit not known to be its student's own puts nothing on their LMS grade;
- an unknown issuer at /login, and Deep Linking an assignment the gradebook does not know, get a page that says so.
"""

import html
import json
import os
import re
import secrets
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import parse_qs, urlsplit

import jwt
import pytest
import requests
from lti_platform import key_pair
from lti_world import LEARNER, World, form_fields, free_port, launch_form, place, refusal

from autograder.lms.lti.accounts import derived_account
from autograder.lms.lti.handoff import BROWSER_COOKIE, handoff_token, local_next
from autograder.lms.lti.passback import PassbackOptions, send_scores

pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")


@pytest.fixture
def world(tmp_path, monkeypatch):
    world = World(tmp_path, monkeypatch)
    yield world
    world.stop()


def launch(world, user, assignment="ps1", context=""):
    """A user's launch from the platform, through the tool; returns the tool's last answer (redirects followed)."""
    session = requests.Session()
    page = session.get(world.platform.start_url(user, assignment, context=context), timeout=20)
    assert page.status_code == 200, page.text
    action, fields = form_fields(page.text)
    return session.post(action, data=fields, timeout=20)


def text(answer) -> str:
    return html.unescape(answer.text)


def signed_in_as(answer) -> str:
    assert answer.status_code == 200, answer.text
    return re.search(r"<b id=username>([^<]+)</b>", answer.text).group(1)


def links(world) -> dict:
    return json.loads((world.course / "lti.json").read_text())


def identity(world, sub):
    return {"issuer": world.platform.state.url, "deployment_id": "deployment-1", "sub": sub}


# --- a person is (issuer, deployment, sub) -------------------------------------------------------------------


def test_another_lms_user_named_ada_never_becomes_ada(world):
    place(world, requests.Session())
    world.platform.state.users["impostor"] = {"sub": "lms-77", "roles": [LEARNER], "username": "ada"}
    # before ada's first launch, and after it
    first = signed_in_as(launch(world, "impostor"))
    assert signed_in_as(launch(world, "ada")) == "ada"
    again = signed_in_as(launch(world, "impostor"))
    assert first == again == derived_account(identity(world, "lms-77")) != "ada"
    assert re.fullmatch(r"lti-[a-z2-7]{12}", first)
    students = links(world)["students"]
    assert students["ada"]["sub"] == "lms-0" and students[first]["sub"] == "lms-77"
    # the impostor's score goes to the impostor: ada's grade on the LMS is hers alone
    send_scores(PassbackOptions(config=world.config))
    assert set(world.platform.state.scores["1"]) == {"lms-0"}  # ada's, on ada's LMS id; the impostor submitted nothing


def test_the_lms_username_never_chooses_the_account(world):
    """ada renamed in the LMS stays ada; bob named "cy" in the LMS is still bob (the roster's word)."""
    place(world, requests.Session())
    world.platform.state.users["ada"]["username"] = "ada-lovelace"
    world.platform.state.users["bob"]["username"] = "cy"
    assert signed_in_as(launch(world, "ada")) == "ada"
    assert signed_in_as(launch(world, "bob")) == "bob"
    assert signed_in_as(launch(world, "cy")) == "cy"


def test_a_roster_line_added_later_moves_the_lms_user_to_the_rosters_account(world):
    place(world, requests.Session())
    world.platform.state.users["dan"] = {"sub": "lms-88", "roles": [LEARNER]}
    derived = signed_in_as(launch(world, "dan"))
    assert derived == derived_account(identity(world, "lms-88"))
    assert links(world)["students"][derived]["sub"] == "lms-88"  # what the instructor copies into the roster
    with open(world.course / "roster.csv", "a") as roster:
        roster.write("dan,Dan,lms-88\n")
    assert signed_in_as(launch(world, "dan")) == "dan"
    students = links(world)["students"]
    assert students["dan"]["sub"] == "lms-88" and derived not in students


def test_a_learner_named_instructor_never_lands_in_the_instructor_account(world):
    place(world, requests.Session())
    for number, name in enumerate(["instructor", "root", "admin", "teacher"]):
        world.platform.state.users[f"x{number}"] = {"sub": f"lms-9{number}", "roles": [LEARNER], "username": name}
        account = signed_in_as(launch(world, f"x{number}"))
        assert account == derived_account(identity(world, f"lms-9{number}")), name
    assert not {"instructor", "root", "admin", "teacher"} & set(links(world)["students"])


def test_a_launch_with_a_staff_role_is_not_signed_in_as_a_student(world):
    place(world, requests.Session())
    world.platform.state.users["ta"] = {
        "sub": "lms-50",
        "roles": [LEARNER, "http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant"],
    }
    for user in ("teacher", "ta"):
        answer = launch(world, user)
        assert answer.status_code == 403
        assert "roles are not a student's" in text(answer) and "hub with its own login" in text(answer)
    assert links(world)["students"] == {}


def test_an_account_bound_to_one_lms_user_is_never_given_to_another(world):
    """The roster changed by mistake to give ada's account to another sub: the instructor's word moves it (the roster
    is theirs), but a derived account is never handed on."""
    place(world, requests.Session())
    world.platform.state.users["impostor"] = {"sub": "lms-77", "roles": [LEARNER], "username": "ada"}
    impostor = signed_in_as(launch(world, "impostor"))
    from autograder.lms.lti.store import CourseLinks, IdentityTaken

    with pytest.raises(IdentityTaken, match="belongs to another LMS user"):
        CourseLinks(world.course).bind(impostor, identity(world, "lms-0") | {"client_id": "attention-tool"})


# --- a line item belongs to the LMS course that placed it -----------------------------------------------------


def ps1_lineitem(world, number: str, context: str) -> None:
    """ps1's line item ``number`` in the LMS course ``context``, with no score yet."""
    world.platform.state.lineitems[number] = {
        "label": "ps1",
        "scoreMaximum": 3.0,
        "resourceId": "ps1",
        "custom": {"assignment": "ps1"},
        "context": context,
    }
    world.platform.state.scores[number] = {}


def other_course_lineitem(world) -> None:
    """ps1 in another LMS course (course-999): a link of its own, with its own line item (id 9)."""
    ps1_lineitem(world, "9", "course-999")


def test_a_launch_from_another_course_does_not_move_the_line_item(world):
    place(world, requests.Session())
    assert signed_in_as(launch(world, "ada")) == "ada"
    other_course_lineitem(world)
    answer = launch(world, "bob", context="course-999")
    assert answer.status_code == 403
    assert "comes from another LMS course ('Another course (course-999)')" in text(answer)
    assert "than the one this tool serves ('Attention')" in text(answer)
    assert links(world)["assignments"]["ps1"]["lineitem"] == f"{world.platform.state.url}/lineitems/1"
    send_scores(PassbackOptions(config=world.config))
    assert world.platform.state.scores["9"] == {}  # nothing to the other course
    assert world.platform.state.scores["1"]["lms-0"]["scoreGiven"] == 2.5


def test_another_course_cannot_place_the_assignment(world):
    place(world, requests.Session())
    world.platform.state.context_id = "course-999"
    session = requests.Session()
    action, fields = launch_form(world, session, "teacher", deep=True)
    assert "comes from another LMS course" in refusal(world, action, fields, session)
    assert links(world)["context"]["id"] == "course-101"


def test_a_line_item_recorded_from_another_course_gets_no_score(world):
    """lti.json written before the binding (or by hand) with ps1's line item from course-999: never sent there."""
    place(world, requests.Session())
    launch(world, "ada")
    other_course_lineitem(world)
    data = links(world)
    data["assignments"]["ps1"] |= {
        "lineitem": f"{world.platform.state.url}/lineitems/9",
        "context": data["context"] | {"id": "course-999"},
    }
    (world.course / "lti.json").write_text(json.dumps(data))
    result = send_scores(PassbackOptions(config=world.config))
    assert world.platform.state.scores["9"] == {} and result.sent == []
    assert "not recorded from the LMS course the tool is bound to" in result.not_placed["ps1"]


def test_a_launch_before_any_placement_is_refused(world):
    ps1_lineitem(world, "1", "course-101")
    answer = launch(world, "ada")
    assert answer.status_code == 403 and "the instructor places it with Deep Linking first" in text(answer)


# --- pages that say what is wrong, never a 500 or the server's folders -------------------------------------------


def test_login_from_an_unknown_issuer_says_so(world):
    for method in ("get", "post"):
        answer = getattr(requests, method)(
            f"{world.tool_url}/login",
            params={"iss": "https://lms.elsewhere.edu", "login_hint": "ada", "target_link_uri": world.tool_url},
            timeout=20,
        )
        assert answer.status_code == 400, answer.text
        assert "the platform 'https://lms.elsewhere.edu' is not registered with this tool" in text(answer)


def test_login_from_a_known_issuer_with_an_unknown_client_says_so(world):
    query = {"iss": world.platform.state.url, "client_id": "someone-else", "login_hint": "ada"}
    answer = requests.get(f"{world.tool_url}/login", params=query | {"target_link_uri": world.tool_url}, timeout=20)
    assert answer.status_code == 400, answer.text
    assert "is not registered with this tool" in text(answer)


def test_a_launch_from_an_unknown_issuer_says_so(world):
    place(world, requests.Session())
    session = requests.Session()
    action, fields = launch_form(world, session, "ada", "ps1")
    body = jwt.decode(fields["id_token"], options={"verify_signature": False}) | {"iss": "https://lms.elsewhere.edu"}
    fields["id_token"] = jwt.encode(body, key_pair()[0], algorithm="RS256", headers={"kid": "elsewhere"})
    assert "the platform 'https://lms.elsewhere.edu' is not registered with this tool" in refusal(
        world, action, fields, session
    )
    assert links(world)["students"] == {}
    # the platform's issuer, another client id
    action, fields = launch_form(world, session, "ada", "ps1")
    body = jwt.decode(fields["id_token"], options={"verify_signature": False}) | {"aud": "someone-else"}
    fields["id_token"] = jwt.encode(body, key_pair()[0], algorithm="RS256", headers={"kid": "elsewhere"})
    assert "with client id 'someone-else' is not registered with this tool" in refusal(world, action, fields, session)
    for audience in ([], 7, ""):  # no client id at all: refused the same way, never a 500
        action, fields = launch_form(world, session, "ada", "ps1")
        body = jwt.decode(fields["id_token"], options={"verify_signature": False}) | {"aud": audience}
        fields["id_token"] = jwt.encode(body, key_pair()[0], algorithm="RS256", headers={"kid": "elsewhere"})
        assert "is not registered with this tool" in refusal(world, action, fields, session)


def test_deep_linking_an_assignment_the_gradebook_does_not_know_says_so(world):
    (world.course / "source" / "ps3").mkdir()
    session = requests.Session()
    action, fields = launch_form(world, session, "teacher", deep=True)
    picker = session.post(action, data=fields, timeout=20)
    assert "<option>ps3</option>" in picker.text
    launch_id = re.search(r"name=launch_id value='([^']+)'", picker.text).group(1)
    answer = session.post(f"{world.tool_url}/deeplink", data={"launch_id": launch_id, "assignment": "ps3"})
    assert answer.status_code == 409, answer.text
    assert "the gradebook does not know 'ps3' yet" in text(answer) and "nbgrader generate_assignment" in text(answer)
    assert world.platform.state.lineitems == {}


def placement_page(world, session) -> str:
    """The instructor's Deep Linking launch in ``session`` (a browser) up to the tool's page; returns its launch id."""
    action, fields = launch_form(world, session, "teacher", deep=True)
    picker = session.post(action, data=fields, timeout=20)
    assert picker.status_code == 200 and "Place an assignment" in picker.text, picker.text
    return re.search(r"name=launch_id value='([^']+)'", picker.text).group(1)


def placed(world, session, launch_id, assignment="ps1"):
    return session.post(f"{world.tool_url}/deeplink", data={"launch_id": launch_id, "assignment": assignment})


def test_a_deep_linking_launch_places_once(world):
    """Its launch id, used again (the page sent twice, or the response replayed), places nothing more; a choice
    the tool refuses (an assignment the gradebook does not know yet) does not use it up."""
    (world.course / "source" / "ps3").mkdir()
    session = requests.Session()
    launch_id = placement_page(world, session)
    assert placed(world, session, launch_id, "ps3").status_code == 409
    first = placed(world, session, launch_id)
    assert first.status_code == 200 and 'name="JWT"' in first.text, first.text
    for assignment in ("ps1", "ps2"):
        again = placed(world, session, launch_id, assignment)
        assert again.status_code == 403, again.text
        assert "refused: this placement was made already (a Deep Linking launch places once)" in text(again)
        assert "open Deep Linking again from the LMS" in text(again) and 'name="JWT"' not in again.text
    assert placed(world, session, placement_page(world, session), "ps2").status_code == 200  # a new launch does


def test_a_deep_linking_launch_places_only_from_the_browser_that_launched(world):
    """Its launch id, copied into another browser (one with no cookie of the tool's, then one that made a Deep
    Linking launch of its own), places nothing; the browser that launched still can."""
    teacher, stranger = requests.Session(), requests.Session()
    launch_id = placement_page(world, teacher)
    for _ in ("no cookie", "its own launch's cookie"):
        answer = placed(world, stranger, launch_id)
        assert answer.status_code == 403, answer.text
        assert "refused: this placement was opened in another browser" in text(answer)
        assert "open Deep Linking from the LMS in this one" in text(answer) and 'name="JWT"' not in answer.text
        placement_page(world, stranger)
    assert placed(world, teacher, launch_id).status_code == 200  # none of those used it up


def test_the_landing_page_shows_the_lms_course_not_the_servers_folder(world):
    place(world, requests.Session())
    page = launch(world, "ada")
    assert re.search(r"course <b id=course>Attention</b>", page.text)
    assert str(world.course) not in page.text and str(world.course.parent) not in page.text


# --- instant scores: only a Submit known to be the student's own ----------------------------------------------


def test_a_submit_in_another_name_puts_nothing_on_the_classmates_lms_grade(world):
    pytest.importorskip("jupyterhub", reason="the grading service is a JupyterHub service: pip install -e '.[hub]'")
    from autograder.service.app import ServiceOptions, lms_sender

    place(world, requests.Session())
    launch(world, "ada")

    class Policy:  # the course's policy asking for instant scores: read as policy.lms, or as policy(assignment).lms
        lms = True

        def __call__(self, assignment=None):
            return self

    policy = Policy()
    attempt = SimpleNamespace(id=1, student="ada", assignment="ps1", points=0.0, max_points=3.0)

    def options(own):
        return ServiceOptions(
            course=world.course, exchange=world.course, own_submissions_only=own, lti=world.config_path
        )

    def sent_within(seconds) -> bool:
        deadline = time.monotonic() + seconds
        while "lms-0" not in world.platform.state.scores["1"] and time.monotonic() < deadline:
            time.sleep(0.1)
        return "lms-0" in world.platform.state.scores["1"]

    # --any-owner: the exchange cannot tell who made a folder named for ada, so her grade gets nothing from it
    sender = lms_sender(options(own=False), policy)
    if sender is not None:
        sender(attempt)
    on_adas_grade = sent_within(3)
    assert not on_adas_grade and sender is None
    # the same check, known as ada's own (her account made the folder): sent as Pending
    lms_sender(options(own=True), policy)(attempt)
    assert sent_within(20)
    assert world.platform.state.scores["1"]["lms-0"]["gradingProgress"] == "Pending"


# --- the hand-off to the hub -----------------------------------------------------------------------------------

NEXT_ATTACKS = [
    "/\\127.0.0.1:8699/phish",
    "/%5C127.0.0.1:8699/phish",
    "/%255C127.0.0.1:8699/phish",
    "//127.0.0.1:8699/phish",
    "/%2F127.0.0.1:8699/phish",
    "%2F%2F127.0.0.1:8699/phish",
    "http://127.0.0.1:8699/phish",
    "https:127.0.0.1:8699/phish",
    "javascript:alert(1)",
    "/\t/127.0.0.1:8699/phish",
    "/%09/127.0.0.1:8699/phish",
    "/hub/../../phish",
    "phish",
    "",
]


@pytest.mark.parametrize("value", NEXT_ATTACKS)
def test_next_stays_on_the_hub(value):
    assert local_next(value, "/") is None
    assert local_next("/prefix/hub/home", "/prefix/") == "/prefix/hub/home"
    assert local_next("/hub/home", "/prefix/") is None  # not under the hub's base URL


def test_a_path_on_the_hub_is_followed():
    assert local_next("/hub/user-redirect/lab/tree/ps1", "/") == "/hub/user-redirect/lab/tree/ps1"
    assert local_next("/hub/user-redirect/lab/tree/ps%201", "/") == "/hub/user-redirect/lab/tree/ps%201"


HUB_CONFIG = """
from pathlib import Path
from autograder.lms.lti.hub_login import enable_if_configured

c = get_config()  # noqa: F821
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_port}"
c.ConfigurableHTTPProxy.command = [{proxy!r}]
c.JupyterHub.db_url = "sqlite:///{state}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = "{state}/cookie_secret"
c.JupyterHub.pid_file = "{state}/jupyterhub.pid"
c.JupyterHub.authenticator_class = "dummy"  # the hub's own login, as hub/jupyterhub_config.py's
c.Authenticator.allowed_users = {{"instructor", "ada", "bob"}}
c.Authenticator.admin_users = {{"instructor"}}
c.Spawner.cmd = ["false"]  # no server is started here: only the hub's login is tried
enable_if_configured(c, Path("{secret}"), staff={{"instructor"}})
"""


class SmallHub:
    """JupyterHub on localhost with the LTI hand-off login and nothing else (no server is started)."""

    def __init__(self, state: Path, secret: Path):
        from autograder.hub import launch as hub

        why = hub.why_unavailable()
        if why is not None:
            pytest.skip(why)
        self.state, self.port = state, free_port()
        self.url = f"http://localhost:{self.port}"
        state.mkdir(parents=True, exist_ok=True)
        (state / "jupyterhub_config.py").write_text(
            HUB_CONFIG.format(
                port=self.port,
                hub_port=free_port(),
                proxy_port=free_port(),
                proxy=str(hub.proxy_program()),
                state=state,
                secret=secret,
            )
        )
        self.process = None

    def start(self):
        log = open(self.state / "jupyterhub.log", "ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub", "-f", str(self.state / "jupyterhub_config.py")],
            cwd=self.state,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if requests.get(f"{self.url}/hub/health", timeout=2).status_code == 200:
                    return
            except requests.RequestException:
                pass
            if self.process.poll() is not None:
                break
            time.sleep(0.3)
        self.stop()
        pytest.fail("the hub did not start: " + (self.state / "jupyterhub.log").read_text()[-3000:])

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self.process = None


@pytest.fixture
def hub_world(world, tmp_path):
    secret = tmp_path / "secrets" / "hub-secret"
    secret.write_text(secrets.token_hex(32))
    os.chmod(secret, 0o600)
    small = SmallHub(tmp_path / "hub", secret)
    world.reconfigure(hub_url=small.url, hub_secret_file=str(secret))
    place(world, requests.Session())
    small.start()
    yield world, small
    small.stop()


def launched(world, user) -> tuple[requests.Session, str]:
    """The browser (a requests session, its cookies) of ``user``'s launch, and the hub link the tool gave it."""
    browser = requests.Session()
    action, fields = launch_form(world, browser, user, "ps1")
    answer = browser.post(action, data=fields, timeout=20, allow_redirects=False)
    assert answer.status_code == 302, answer.text
    return browser, answer.headers["Location"]


def open_link(browser, link, cookie=None, **changes):
    """The hub's answer to ``link`` (with its query's values changed) from ``browser`` (or a browser holding only
    the launch's ``cookie``), not followed."""
    parts = urlsplit(link)
    query = {key: values[0] for key, values in parse_qs(parts.query).items()} | changes
    cookies = {BROWSER_COOKIE: cookie} if cookie else None
    return browser.get(
        f"{parts.scheme}://{parts.netloc}{parts.path}", params=query, cookies=cookies, timeout=20, allow_redirects=False
    )


def test_a_hand_off_link_opened_in_another_browser_signs_nobody_in(hub_world):
    world, small = hub_world
    ada_browser, _ = launched(world, "ada")
    bob_browser, bob_link = launched(world, "bob")
    stolen = open_link(ada_browser, bob_link)  # ada's browser opens bob's link
    assert stolen.status_code == 403 and "made for another browser" in stolen.text
    assert ada_browser.cookies[BROWSER_COOKIE] != bob_browser.cookies[BROWSER_COOKIE]
    assert open_link(requests.Session(), bob_link).status_code == 403  # a browser that launched nothing
    assert ada_browser.get(f"{small.url}/hub/home", timeout=20, allow_redirects=False).status_code == 302  # to login
    own = open_link(bob_browser, bob_link)  # bob's link still works, in bob's browser
    assert own.status_code == 302 and own.headers["Location"] == "/hub/user-redirect/lab/tree/ps1"
    home = bob_browser.get(f"{small.url}/hub/home", timeout=20, allow_redirects=False)
    assert home.status_code == 200 and "bob" in home.text and "ada" not in home.text


def test_a_used_hand_off_link_is_refused_after_a_restart_of_the_hub(hub_world):
    world, small = hub_world
    browser, link = launched(world, "bob")
    cookie = browser.cookies.get(BROWSER_COOKIE)
    assert open_link(browser, link).status_code == 302
    assert open_link(requests.Session(), link, cookie=cookie).status_code == 403  # the same browser's value, again
    small.stop()
    small.start()
    again = open_link(requests.Session(), link, cookie=cookie)
    assert again.status_code == 403 and "expired or was used before" in again.text
    assert "jupyterhub-hub-login" not in again.headers.get("Set-Cookie", "")


def test_the_hand_off_sends_the_browser_only_to_a_path_of_the_hub(hub_world):
    world, small = hub_world
    for value in [
        "/\\127.0.0.1:8699/phish",
        "//127.0.0.1:8699/phish",
        "/%5C127.0.0.1:8699/phish",
        "/%2F127.0.0.1:8699/phish",
        "http://127.0.0.1:8699/phish",
        "/\t/127.0.0.1:8699/phish",
    ]:
        browser, link = launched(world, "ada")
        answer = open_link(browser, link, next=value)
        assert answer.status_code == 302, answer.text
        assert answer.headers["Location"] == "/hub/home", (value, answer.headers["Location"])
    browser, link = launched(world, "ada")
    assert open_link(browser, link).headers["Location"] == "/hub/user-redirect/lab/tree/ps1"  # the tool's own next


def test_an_lms_user_the_roster_does_not_name_is_told_what_to_ask_for(hub_world):
    world, small = hub_world
    world.platform.state.users["newcomer"] = {"sub": "lms-88", "roles": [LEARNER]}
    browser, link = launched(world, "newcomer")
    answer = open_link(browser, link)
    account = derived_account(identity(world, "lms-88"))
    assert answer.status_code == 403
    assert f"the course account of your LMS user ({account}) is not on this hub" in answer.text
    assert "roster (its lti_sub column)" in answer.text


def test_on_https_the_browser_cookie_is_one_no_other_subdomain_can_set(world, tmp_path):
    """A student's server on bob.hub.school.edu can set a cookie for Domain=hub.school.edu, but not a __Host- one:
    with the plain name, bob could plant his own launch's value in ada's browser and sign her into his account."""
    pytest.importorskip("jupyterhub", reason="the hub's side of the handoff: pip install -e '.[hub]'")
    import asyncio

    from autograder.lms.lti.hub_login import Handoff, LtiHandoffAuthenticator

    secret = tmp_path / "secrets" / "hub-secret"
    secret.write_text(secrets.token_hex(32))
    os.chmod(secret, 0o600)
    world.reconfigure(hub_url="https://localhost:1", hub_secret_file=str(secret))
    place(world, requests.Session())
    browser = requests.Session()
    action, fields = launch_form(world, browser, "bob", "ps1")
    answer = browser.post(action, data=fields, timeout=20, allow_redirects=False)
    set_cookie = next(c for c in answer.raw.headers.getlist("Set-Cookie") if "attention-lti-browser" in c)
    assert set_cookie.startswith("__Host-attention-lti-browser=") and "Path=/;" in set_cookie
    assert "Secure" in set_cookie and "HttpOnly" in set_cookie and "Domain" not in set_cookie
    value = set_cookie.split(";")[0].split("=", 1)[1]
    token = parse_qs(urlsplit(answer.headers["Location"]).query)["token"][0]
    hub = LtiHandoffAuthenticator(secret_file=str(secret))
    tossed = Handoff(token=token, browsers={BROWSER_COOKIE: value})  # the name a sibling subdomain can set
    assert asyncio.run(hub.authenticate(None, tossed)) is None and "another browser" in tossed["refused"]
    own = Handoff(token=token, browsers={"__Host-attention-lti-browser": value})
    assert asyncio.run(hub.authenticate(None, own)) == {"name": "bob"}


def form_login(small, name) -> tuple[requests.Session, requests.Response]:
    """``name`` at the hub's own login page, as a browser fills its form in (any password: the dummy login)."""
    browser = requests.Session()
    page = browser.get(f"{small.url}/hub/login", timeout=20)
    xsrf = re.search(r'name="_xsrf" value="([^"]+)"', page.text).group(1)
    fields = {"username": name, "password": "any", "_xsrf": xsrf}
    return browser, browser.post(f"{small.url}/hub/login", data=fields, timeout=20, allow_redirects=False)


def test_with_the_hand_off_on_the_instructor_keeps_the_hubs_own_login_and_students_come_from_the_lms(hub_world):
    world, small = hub_world
    teacher, answer = form_login(small, "instructor")
    assert answer.status_code == 302 and "jupyterhub-hub-login" in answer.headers.get("Set-Cookie", ""), answer.text
    home = teacher.get(f"{small.url}/hub/home", timeout=20, allow_redirects=False)
    assert home.status_code == 200 and "instructor" in home.text
    for name in ("ada", "bob", "someone"):
        _, refused = form_login(small, name)
        assert refused.status_code == 403 and "jupyterhub-hub-login" not in refused.headers.get("Set-Cookie", "")
        assert "students sign in from the LMS: open the assignment there" in html.unescape(refused.text)
    browser, link = launched(world, "ada")  # ada's way in
    assert open_link(browser, link).status_code == 302
    assert "ada" in browser.get(f"{small.url}/hub/home", timeout=20, allow_redirects=False).text


def test_the_hub_never_signs_in_an_admin_or_staff_account_from_the_lms(hub_world):
    """Even when the roster, by mistake, maps a Learner to the instructor's account."""
    world, small = hub_world
    world.platform.state.users["x"] = {"sub": "lms-66", "roles": [LEARNER], "username": "instructor"}
    (world.course / "roster.csv").write_text("student_id,lti_sub\ninstructor,lms-66\n")
    browser, link = launched(world, "x")
    answer = open_link(browser, link)
    assert answer.status_code == 403 and "signs in students only" in answer.text
    # a token the tool never made for a student (signed with the secret) is refused the same way
    cookie = browser.cookies.get(BROWSER_COOKIE) or "v"
    token = handoff_token(world.config.hub_secret, "instructor", "ps1", cookie)
    browser.cookies.set(BROWSER_COOKIE, cookie)
    forged = open_link(browser, link, token=token)
    assert forged.status_code == 403
    assert requests.get(f"{small.url}/hub/admin", cookies=browser.cookies, allow_redirects=False).status_code != 200
