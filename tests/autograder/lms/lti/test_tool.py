"""The course as an LTI 1.3 tool (autograder.lms.lti) against a real platform implementation (tests/lti_platform.py,
built on lti1p3platform) on 127.0.0.1: Deep Linking, launches, the refused launches, scores sent back (AGS)
and kept in the outbox while the LMS is down; the same in Debian's chromium through Playwright."""

import json
import os
import re
import secrets

import jwt
import pytest
import requests
from conftest import playwright_or_skip
from lms_course import HOSTILE
from lti_platform import key_pair
from lti_world import World, launch_form, place, refusal

from autograder.lms.lti.config import ConfigError, load_config
from autograder.lms.lti.passback import OUTBOX_FILE, PassbackOptions, send_instant, send_scores

pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")  # nbgrader's add_submission


@pytest.fixture
def world(tmp_path, monkeypatch):
    world = World(tmp_path, monkeypatch)
    yield world
    world.stop()


def test_deep_linking_places_the_assignment_with_its_points(world):
    assert "Placed: ps1" in place(world, requests.Session())
    assert world.platform.state.lineitems == {
        "1": {
            "label": "ps1",
            "scoreMaximum": 3.0,
            "resourceId": "ps1",
            "custom": {"assignment": "ps1"},
            "context": "course-101",
        }
    }
    bound = json.loads((world.course / "lti.json").read_text())["context"]  # the placement binds the course
    assert (bound["issuer"], bound["deployment_id"], bound["id"]) == (
        world.platform.state.url,
        "deployment-1",
        "course-101",
    )


def test_a_students_launch_signs_them_in_and_records_their_lms_identity(world):
    place(world, requests.Session())
    session = requests.Session()
    action, fields = launch_form(world, session, "ada", "ps1")
    landed = session.post(action, data=fields, timeout=20)
    assert landed.url == f"{world.tool_url}/home"
    assert re.search(
        r"<b id=username>ada</b>, course <b id=course>Attention</b>, assignment <b id=assignment>ps1", landed.text
    )
    assert str(world.course) not in landed.text and "/course" not in landed.text  # no folder of the server's
    links = json.loads((world.course / "lti.json").read_text())
    assert links["students"]["ada"] == {
        "issuer": world.platform.state.url,
        "client_id": "attention-tool",
        "sub": "lms-0",
        "deployment_id": "deployment-1",
    }
    assert links["assignments"]["ps1"]["lineitem"] == f"{world.platform.state.url}/lineitems/1"
    assert links["context"] == {
        "issuer": world.platform.state.url,
        "deployment_id": "deployment-1",
        "id": "course-101",
        "title": "Attention",
        "label": "COURSE-101",
    }
    assert oct((world.course / "lti.json").stat().st_mode & 0o777) == "0o600"


def test_a_wrong_signature_is_refused(world):
    place(world, requests.Session())
    session = requests.Session()
    action, fields = launch_form(world, session, "ada", "ps1")
    body = jwt.decode(fields["id_token"], options={"verify_signature": False})
    header = jwt.get_unverified_header(fields["id_token"])
    fields["id_token"] = jwt.encode(body, key_pair()[0], algorithm="RS256", headers={"kid": header["kid"]})
    assert "not signed with the platform's registered key (wrong signature)" in refusal(world, action, fields, session)
    links = json.loads((world.course / "lti.json").read_text())  # the placement's course, nothing of the launch
    assert links["students"] == {} and links["assignments"] == {}


def test_an_expired_token_is_refused(world):
    place(world, requests.Session())
    world.platform.state.id_token_lifetime = -60
    session = requests.Session()
    action, fields = launch_form(world, session, "ada", "ps1")
    assert "the launch token has expired" in refusal(world, action, fields, session)


def test_a_replayed_launch_is_refused(world):
    place(world, requests.Session())
    session = requests.Session()
    action, fields = launch_form(world, session, "ada", "ps1")
    assert session.post(action, data=fields, timeout=20).status_code == 200
    assert "already used (its nonce was seen before: a replay)" in refusal(world, action, fields, session)


def test_an_unknown_deployment_is_refused(world):
    place(world, requests.Session())
    world.platform.state.deployment_id = "deployment-9"
    session = requests.Session()
    action, fields = launch_form(world, session, "ada", "ps1")
    assert "deployment 'deployment-9' is not registered with this tool" in refusal(world, action, fields, session)


@pytest.mark.parametrize(
    "claims",
    [
        {"azp": "another-tool"},  # signed by the platform, for another of its clients
        {"aud": ["attention-tool", "another-tool"], "azp": "another-tool"},
        {"aud": ["attention-tool", "another-tool"], "azp": None},  # several audiences and no azp to choose
    ],
    ids=["azp_another_client", "several_audiences_azp_another", "several_audiences_no_azp"],
)
def test_a_launch_issued_to_another_client_is_refused(world, claims):
    """OpenID Connect Core 3.1.3.7 and the LTI security framework 5.1.3: an id_token whose authorised party (azp)
    is another client, or with several audiences and no azp naming this tool, is not this tool's launch."""
    place(world, requests.Session())
    world.platform.state.claims = claims
    session = requests.Session()
    action, fields = launch_form(world, session, "ada", "ps1")
    refused = refusal(world, action, fields, session)
    assert refused.startswith("refused: the launch was issued to another tool"), refused
    assert "the client id 'attention-tool'" in refused
    assert json.loads((world.course / "lti.json").read_text())["students"] == {}  # nobody signed in or bound


def test_a_launch_with_several_audiences_whose_azp_is_this_tool_signs_in(world):
    place(world, requests.Session())
    world.platform.state.claims = {"aud": ["attention-tool", "another-tool"], "azp": "attention-tool"}
    session = requests.Session()
    action, fields = launch_form(world, session, "ada", "ps1")
    assert session.post(action, data=fields, timeout=20).url == f"{world.tool_url}/home"


def launch_students(world, *names):
    for name in names:
        session = requests.Session()
        action, fields = launch_form(world, session, name, "ps1")
        assert session.post(action, data=fields, timeout=20).status_code == 200


def test_scores_reach_the_line_item_fully_graded_only_after_hand_grading(world):
    place(world, requests.Session())
    launch_students(world, "ada", "cy")
    result = send_scores(PassbackOptions(config=world.config))
    scores = world.platform.state.scores["1"]
    assert {sub: (s["scoreGiven"], s["scoreMaximum"], s["gradingProgress"]) for sub, s in scores.items()} == {
        "lms-0": (2.5, 3.0, "FullyGraded"),
        "lms-1": (2.0, 3.0, "PendingManual"),
    }
    assert scores["lms-1"]["activityProgress"] == "Submitted"
    assert result.pending == {}
    assert set(result.not_launched) == {HOSTILE}  # submitted, never launched from the LMS
    assert "open the assignment once from the LMS" in result.not_launched[HOSTILE]
    assert set(result.not_placed) == {"ps2"}
    # nothing changed: nothing sent again
    assert send_scores(PassbackOptions(config=world.config)).sent == []


def test_scores_stay_in_the_outbox_while_the_lms_is_down_and_go_on_the_next_run(world):
    place(world, requests.Session())
    launch_students(world, "ada", "cy")
    world.platform.state.refuse_scores = True
    down = send_scores(PassbackOptions(config=world.config))
    assert set(down.pending) == {"ada/ps1", "cy/ps1"} and down.sent == []
    assert "the LMS refused it" in down.pending["ada/ps1"] and "503" in down.pending["ada/ps1"]
    assert "PENDING ada/ps1" in "\n".join(down.summary())
    outbox = json.loads((world.course / OUTBOX_FILE).read_text())
    assert set(outbox["pending"]) == {"ada/ps1", "cy/ps1"} and outbox["pending"]["ada/ps1"]["score"] == 2.5
    assert world.platform.state.scores["1"] == {}
    world.platform.stop()  # unreachable
    unreachable = send_scores(PassbackOptions(config=world.config))
    assert "could not be reached" in unreachable.pending["ada/ps1"]


def test_scores_kept_while_down_are_sent_on_the_next_run(world):
    place(world, requests.Session())
    launch_students(world, "ada")
    world.platform.state.refuse_scores = True
    assert set(send_scores(PassbackOptions(config=world.config)).pending) == {"ada/ps1"}
    world.platform.state.refuse_scores = False
    again = send_scores(PassbackOptions(config=world.config))
    assert again.sent == ["ada/ps1: 2.5/3 FullyGraded"] and again.pending == {}
    assert world.platform.state.scores["1"]["lms-0"]["scoreGiven"] == 2.5
    assert json.loads((world.course / OUTBOX_FILE).read_text())["pending"] == {}


def test_a_private_key_others_can_read_is_refused(world):
    os.chmod(world.config_path.parent / "private.pem", 0o644)
    with pytest.raises(ConfigError, match=r"can be read by others \(mode 0644\): run chmod 600"):
        load_config(world.config_path)


def test_in_chromium_the_instructor_places_the_assignment_and_a_student_lands_signed_in(world, tmp_path):
    sync_api = playwright_or_skip()
    from conftest import CHROMIUM

    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            teacher = browser.new_context().new_page()
            teacher.goto(world.platform.start_url("teacher", deep=True))
            teacher.wait_for_selector("#assignment")
            teacher.select_option("#assignment", "ps1")
            teacher.click("#place")
            teacher.wait_for_selector("#placed")
            assert teacher.inner_text("#placed") == "Placed: ps1"
            teacher.screenshot(path=str(tmp_path / "placed.png"))
            student = browser.new_context().new_page()
            student.goto(world.platform.start_url("ada", "ps1"))
            student.wait_for_selector("#username")
            assert (student.inner_text("#username"), student.inner_text("#assignment")) == ("ada", "ps1")
            assert student.url == f"{world.tool_url}/home"
            student.screenshot(path=str(tmp_path / "landed.png"))
        finally:
            browser.close()
    send_scores(PassbackOptions(config=world.config))
    assert world.platform.state.scores["1"]["lms-0"]["scoreGiven"] == 2.5


def test_the_class_runs_closing_lines_say_what_was_sent_and_what_waits(world, tmp_path):
    from autograder.lms.lti.passback import passback_lines

    place(world, requests.Session())
    launch_students(world, "ada")
    world.platform.state.refuse_scores = True
    lines = passback_lines(world.config_path, world.course)
    assert lines[0] == "LMS: 0 scores sent, 1 pending"
    assert any(line.startswith("  PENDING ada/ps1: the LMS refused it") for line in lines)
    assert any(line.startswith(f"  NOT LAUNCHED FROM THE LMS: {HOSTILE}") for line in lines)
    world.platform.state.refuse_scores = False
    assert passback_lines(world.config_path, world.course)[:2] == [
        "LMS: 1 scores sent, 0 pending",
        "  sent ada/ps1: 2.5/3 FullyGraded",
    ]
    other = passback_lines(world.config_path, tmp_path / "elsewhere")
    assert other[0].startswith("LMS: scores not sent:") and "is for the course" in other[0]


def test_with_a_hub_the_launch_hands_the_student_to_their_account_once(world, tmp_path):
    pytest.importorskip("jupyterhub", reason="the hub's side of the handoff: pip install -e '.[hub]'")
    import asyncio

    from autograder.lms.lti.handoff import handoff_token
    from autograder.lms.lti.hub_login import Handoff, LtiHandoffAuthenticator

    secret = world.config_path.parent / "hub-secret"
    secret.write_text("a-secret-only-the-tool-and-the-hub-read")
    os.chmod(secret, 0o600)
    world.reconfigure(hub_url="http://localhost:1", hub_secret_file="hub-secret")
    place(world, requests.Session())
    session = requests.Session()
    action, fields = launch_form(world, session, "ada", "ps1")
    answer = session.post(action, data=fields, timeout=20, allow_redirects=False)
    location = answer.headers["Location"]
    assert location.startswith("http://localhost:1/hub/lti/login?token=")
    assert "next=%2Fhub%2Fuser-redirect%2Flab%2Ftree%2Fps1" in location
    token = re.search(r"token=([^&]+)", location).group(1)
    cookie = answer.cookies["attention-lti-browser"]  # the launching browser's own value
    assert re.search(r"attention-lti-browser=[^;]+;.*HttpOnly", answer.headers["Set-Cookie"])
    assert "Path=/hub/lti/" in answer.headers["Set-Cookie"]

    hub = LtiHandoffAuthenticator(secret_file=str(secret))
    assert asyncio.run(hub.authenticate(None, Handoff(token=token, browsers={"attention-lti-browser": cookie}))) == {
        "name": "ada"
    }
    assert (
        asyncio.run(hub.authenticate(None, Handoff(token=token, browsers={"attention-lti-browser": cookie}))) is None
    )  # used once
    forged = handoff_token("another-secret-of-more-than-32-characters", "ada", "ps1", cookie)
    assert (
        asyncio.run(hub.authenticate(None, Handoff(token=forged, browsers={"attention-lti-browser": cookie}))) is None
    )
    expired = jwt.encode({"sub": "ada", "aud": "attention-hub", "exp": 1, "jti": "x"}, secret.read_text(), "HS256")
    assert (
        asyncio.run(hub.authenticate(None, Handoff(token=expired, browsers={"attention-lti-browser": cookie}))) is None
    )
    os.chmod(secret, 0o644)
    with pytest.raises(ConfigError, match="can be read by others"):
        load_config(world.config_path)


def test_in_chromium_a_student_from_the_lms_lands_in_their_notebook_server_on_the_hub(world, tmp_path, open_state):
    """The whole way: the platform's launch, the tool, the hub's LTI login, the student's own JupyterLab (in
    its sandbox), opened on the assignment's folder."""
    sync_api = playwright_or_skip()
    from conftest import CHROMIUM

    from autograder import sandbox
    from autograder.hub import launch as hub

    why = hub.why_unavailable()
    if sandbox.bubblewrap() is None:
        why = "bubblewrap is not available (apt-get install bubblewrap): a student's server starts only in it"
    if why is not None:
        pytest.skip(why)
    state = open_state  # a folder the students' accounts can reach (pytest's own are closed to them)
    hub.prepare(state, ["ada"])
    (state / "home" / "ada" / "ps1").mkdir()
    secret = state / "lti-hub-secret"
    secret.write_text(secrets.token_hex(32))
    os.chmod(secret, 0o600)
    course_hub = hub.Hub(state, ["ada"], port=hub.free_port())
    world.reconfigure(hub_url=course_hub.url, hub_secret_file=str(secret))
    place(world, requests.Session())
    course_hub.start()
    try:
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
            try:
                page = browser.new_context().new_page()
                page.set_default_timeout(120_000)
                page.goto(world.platform.start_url("ada", "ps1"))
                page.wait_for_url("**/user/ada/lab/tree/ps1**")
                page.wait_for_selector(".jp-LabShell")
                page.wait_for_selector(".jp-BreadCrumbs-item:has-text('ps1')")  # the file browser in ~/ps1
                page.screenshot(path=str(tmp_path / "ada-on-the-hub.png"))
                assert page.url.startswith(f"{course_hub.user_url('ada')}lab/tree/ps1")  # ada's own origin
                # the same link again: a token is used once, the hub refuses it
                again = page.request.get(f"{course_hub.url}/hub/lti/login?token=x")
                assert again.status == 403 and "expired or was used before" in again.text()
            finally:
                browser.close()
    finally:
        course_hub.stop()
    assert course_hub.left_behind == []


def test_an_instant_score_reaches_the_lms_as_pending_and_the_class_runs_score_replaces_it(world):
    place(world, requests.Session())
    launch_students(world, "ada", "cy")
    sent = send_instant(world.config, student="ada", assignment="ps1", points=1.5, maximum=3.0)
    scores = world.platform.state.scores["1"]
    assert (scores["lms-0"]["scoreGiven"], scores["lms-0"]["gradingProgress"]) == (1.5, "Pending")
    assert scores["lms-0"]["activityProgress"] == "Submitted" and sent.pending == {}
    send_scores(PassbackOptions(config=world.config))  # the class run: the grade of record
    assert (scores["lms-0"]["scoreGiven"], scores["lms-0"]["gradingProgress"]) == (2.5, "FullyGraded")
    unknown = send_instant(world.config, student="bob", assignment="ps1", points=1.0, maximum=3.0)
    assert "open the assignment once from the LMS" in unknown.not_launched["bob"] and unknown.sent == []
    unplaced = send_instant(world.config, student="ada", assignment="ps2", points=1.0, maximum=1.0)
    assert "Deep Linking" in unplaced.not_placed["ps2"]
