"""autograder.lms.lti.hub_login's authenticator, in process (no hub): a handoff token signs in its student once, in
the browser that launched, within its minute; refused, with the sentence the student sees, are a token signed
with another secret, expired, for another audience, unsigned, without an id, naming no valid account, from
another browser, naming an admin or staff account, or a user the hub does not allow; the secret is read as the
tool reads it (too short or readable by others: refused); the taken ids survive a restart; and the hub config's
switch. The whole way through a hub is tests/autograder/lms/lti/test_tool.py's and test_identity.py's."""

from __future__ import annotations

import asyncio
import os
import secrets
import time
from pathlib import Path
from types import SimpleNamespace

import jwt
import pytest

pytest.importorskip("jupyterhub", reason="the hub's side of the handoff: pip install -e '.[hub]'")

from jupyterhub.auth import Authenticator, DummyAuthenticator, PAMAuthenticator
from jupyterhub.handlers.login import LoginHandler
from tornado import web
from traitlets.config import Config

from autograder.lms.lti.handoff import BROWSER_COOKIE, SECURE_BROWSER_COOKIE, handoff_token
from autograder.lms.lti.hub_login import REFUSED, Handoff, LtiHandoffAuthenticator, LtiLogin, enable_if_configured

COOKIE = "the-launching-browsers-own-value"


@pytest.fixture
def secret(tmp_path):
    path = tmp_path / "lti-hub-secret"
    path.write_text(secrets.token_hex(32))
    os.chmod(path, 0o600)
    return path


def sign_in(hub, token, cookies=None, handler=None) -> tuple[dict | None, str | None]:
    """(what authenticate returns, the refusal the student is shown)."""
    data = Handoff(token=token, browsers={BROWSER_COOKIE: COOKIE} if cookies is None else cookies)
    return asyncio.run(hub.authenticate(handler, data)), data.get("refused")


def token_for(secret, name="ada", **claims) -> str:
    """A token as the tool makes it, with ``claims`` changed."""
    made = jwt.decode(handoff_token(secret.read_text(), name, "ps1", COOKIE), options={"verify_signature": False})
    return jwt.encode({**made, **claims}, secret.read_text(), algorithm="HS256")


def test_a_token_signs_in_its_student_once(secret):
    hub = LtiHandoffAuthenticator(secret_file=str(secret))
    token = handoff_token(secret.read_text(), "ada", "ps1", COOKIE)
    assert sign_in(hub, token) == ({"name": "ada"}, None)
    assert sign_in(hub, token) == (None, REFUSED)
    restarted = LtiHandoffAuthenticator(secret_file=str(secret))  # the taken ids are on disk
    assert sign_in(restarted, token) == (None, REFUSED)
    assert (secret.parent / "lti-hub-secret.used.sqlite").exists()


def test_the_taken_ids_file_can_be_moved(secret, tmp_path):
    used = tmp_path / "elsewhere.sqlite"
    hub = LtiHandoffAuthenticator(secret_file=str(secret), used_file=str(used))
    assert sign_in(hub, handoff_token(secret.read_text(), "ada", "ps1", COOKIE))[0] == {"name": "ada"}
    assert used.exists() and not (secret.parent / "lti-hub-secret.used.sqlite").exists()


@pytest.mark.parametrize(
    "change",
    [
        {"exp": int(time.time()) - 5},  # past its minute
        {"aud": "another-service"},
        {"jti": ""},  # no id: it could not be taken once
        {"sub": "../root"},
        {"sub": "Ada"},  # not a system account's name
        {"sub": ""},
    ],
    ids=["expired", "audience", "no_id", "path", "capital", "empty"],
)
def test_a_token_not_as_the_tool_makes_it_is_refused(secret, change):
    hub = LtiHandoffAuthenticator(secret_file=str(secret))
    assert sign_in(hub, token_for(secret, **change)) == (None, REFUSED)


@pytest.mark.parametrize("claim", ["exp", "jti", "sub"])
def test_a_signed_token_that_lacks_a_claim_is_refused_not_an_error(secret, claim):
    made = jwt.decode(token_for(secret), options={"verify_signature": False})
    del made[claim]
    hub = LtiHandoffAuthenticator(secret_file=str(secret))
    assert sign_in(hub, jwt.encode(made, secret.read_text(), algorithm="HS256")) == (None, REFUSED)


def test_a_forged_or_unsigned_token_is_refused(secret):
    hub = LtiHandoffAuthenticator(secret_file=str(secret))
    forged = handoff_token("another-secret-of-more-than-32-characters", "ada", "ps1", COOKIE)
    claims = jwt.decode(forged, options={"verify_signature": False})
    unsigned = jwt.encode(claims, None, algorithm="none")
    assert sign_in(hub, forged) == (None, REFUSED)
    assert sign_in(hub, unsigned) == (None, REFUSED)
    assert sign_in(hub, "") == (None, REFUSED)
    assert sign_in(hub, "not.a.token") == (None, REFUSED)


def test_a_token_from_another_browser_is_refused_saying_so(secret):
    hub = LtiHandoffAuthenticator(secret_file=str(secret))
    token = handoff_token(secret.read_text(), "ada", "ps1", COOKIE)
    for cookies in ({}, {BROWSER_COOKIE: "another-value"}, {SECURE_BROWSER_COOKIE: COOKIE}):
        user, refused = sign_in(hub, token, cookies)
        assert user is None and refused.startswith("refused: this link from the LMS was made for another browser")
    assert sign_in(hub, token)[0] == {"name": "ada"}  # none of those used it up


def test_an_admin_or_staff_account_is_never_signed_in(secret):
    hub = LtiHandoffAuthenticator(secret_file=str(secret), admin_users={"root"}, staff_accounts={"instructor"})
    admin_in_db = SimpleNamespace(find_user=lambda name: SimpleNamespace(admin=name == "grader"))
    for name, handler in (("root", None), ("instructor", None), ("grader", admin_in_db)):
        user, refused = sign_in(hub, token_for(secret, name), handler=handler)
        assert (user, refused) == (
            None,
            "refused: a launch from the LMS signs in students only; staff use the hub's own login",
        )
    assert sign_in(hub, token_for(secret, "ada"), handler=admin_in_db)[0] == {"name": "ada"}


def test_a_user_the_hub_does_not_allow_is_told_what_to_do(secret):
    hub = LtiHandoffAuthenticator(secret_file=str(secret), allowed_users={"ada"})
    user, refused = sign_in(hub, token_for(secret, "bob"))
    assert user is None
    assert refused.startswith("refused: the course account of your LMS user (bob) is not on this hub")
    assert "lti_sub column" in refused
    assert sign_in(hub, token_for(secret, "ada"))[0] == {"name": "ada"}


@pytest.mark.filterwarnings("ignore::jwt.warnings.InsecureKeyLengthWarning")
def test_a_secret_too_short_or_readable_by_others_refuses_every_token(secret):
    token = handoff_token(secret.read_text(), "ada", "ps1", COOKIE)
    hub = LtiHandoffAuthenticator(secret_file=str(secret))
    os.chmod(secret, 0o644)
    assert sign_in(hub, token) == (None, REFUSED)
    short = secret.parent / "short"
    short.write_text("x" * 31)
    os.chmod(short, 0o600)
    too_short = handoff_token(short.read_text(), "ada", "ps1", COOKIE)  # valid, were the secret long enough
    assert sign_in(LtiHandoffAuthenticator(secret_file=str(short)), too_short) == (None, REFUSED)
    missing = LtiHandoffAuthenticator(secret_file=str(secret.parent / "missing"))
    assert sign_in(missing, token) == (None, REFUSED)


def test_the_handoffs_page_is_the_hubs_lti_login_beside_its_own_login():
    assert LtiHandoffAuthenticator().get_handlers(None) == [("/login", LoginHandler), ("/lti/login", LtiLogin)]


# --- staff keep the hub's own login, students come from the LMS: the authenticator the hub's config builds --------

REPOSITORY = Path(__file__).resolve().parents[4]
STAFF_ONLY_SAID = (
    "refused: students sign in from the LMS: open the assignment there; this login is for the course's staff"
)


def hubs_authenticator(state: Path, monkeypatch):
    """The authenticator JupyterHub builds from hub/jupyterhub_config.py (its own loader, its trait resolving the
    class, the instance made with the hub as parent), for a course of ``instructor``, ``student1`` and ``student2``."""
    from jupyterhub.app import JupyterHub
    from traitlets.config.loader import PyFileConfigLoader

    environment = {"STATE": str(state), "PORTS": "8101,8102,8103", "PROXY": "configurable-http-proxy"}
    for name, value in (environment | {"INSTRUCTOR": "instructor", "STUDENTS": "student1,student2"}).items():
        monkeypatch.setenv(f"ATTENTION_HUB_{name}", value)
    config = PyFileConfigLoader("jupyterhub_config.py", path=str(REPOSITORY / "hub")).load_config()
    hub = JupyterHub(config=config)
    return hub.authenticator_class(parent=hub)


def logged_in(authenticator, data, admins=()):
    """What the hub's login (LoginHandler.post, through get_authenticated_user) makes of ``data``: the user, or the
    refusal's (status, message)."""
    handler = SimpleNamespace(find_user=lambda name: SimpleNamespace(admin=name in admins))
    try:
        return asyncio.run(authenticator.get_authenticated_user(handler, data))
    except web.HTTPError as error:
        return error.status_code, error.log_message


def test_with_the_handoff_on_staff_use_the_hubs_own_login_and_students_the_lms(tmp_path, monkeypatch):
    secret = tmp_path / "lti-hub-secret"
    secret.write_text(secrets.token_hex(32))
    os.chmod(secret, 0o600)
    hub = hubs_authenticator(tmp_path, monkeypatch)
    assert isinstance(hub, DummyAuthenticator) and isinstance(hub, LtiHandoffAuthenticator)  # the config's own login
    assert hub.admin_users == {"instructor"} and hub.staff_accounts == {"instructor"}
    instructor = logged_in(hub, {"username": "instructor", "password": "any"})
    assert (instructor["name"], instructor["admin"]) == ("instructor", True)
    for name in ("student1", "student2", "mallory", " Student1 "):  # not staff: refused, whatever their password
        assert logged_in(hub, {"username": name, "password": "any"}) == (403, STAFF_ONLY_SAID)
    # made an admin in the hub's database (the admin page): staff too
    assert logged_in(hub, {"username": "student2", "password": "x"}, admins={"student2"})["name"] == "student2"
    # the students come from the LMS, the staff never do
    tokens = {name: token_for(secret, name) for name in ("student1", "instructor")}
    assert logged_in(hub, Handoff(token=tokens["student1"], browsers={BROWSER_COOKIE: COOKIE}))["name"] == "student1"
    assert logged_in(hub, Handoff(token=tokens["instructor"], browsers={BROWSER_COOKIE: COOKIE})) is None
    routes = dict(hub.get_handlers(None))
    assert routes["/lti/login"] is LtiLogin and issubclass(routes["/login"], LoginHandler)


def test_without_the_secret_the_hubs_own_login_signs_in_everyone_it_allows(tmp_path, monkeypatch):
    hub = hubs_authenticator(tmp_path, monkeypatch)
    assert type(hub) is DummyAuthenticator
    assert logged_in(hub, {"username": "student1", "password": "any"})["name"] == "student1"


class Recorded(Authenticator):
    """A hub's own login that records whom it was asked to check (a PAM or an OAuth stand-in): it signs in the
    name typed, or ``student1`` when none is (as an OAuth callback names the user it was told)."""

    asked: list = []

    async def authenticate(self, handler, data):
        Recorded.asked.append(data.get("username"))
        return data.get("username") or "student1"


def test_a_students_name_is_refused_before_the_hubs_own_login_checks_a_password(secret, monkeypatch):
    c = Config()
    c.JupyterHub.authenticator_class = Recorded
    c.Authenticator.admin_users = {"instructor"}
    c.Authenticator.allow_all = True
    assert enable_if_configured(c, secret, staff={"ta"}) is True
    hub = c.JupyterHub.authenticator_class(config=c)
    monkeypatch.setattr(Recorded, "asked", [])
    assert logged_in(hub, {"username": "student1", "password": "guess"}) == (403, STAFF_ONLY_SAID)
    assert Recorded.asked == []  # the password was never tried: the refusal says nothing of it
    assert logged_in(hub, {"username": "ta", "password": "right"})["name"] == "ta"
    assert logged_in(hub, {"username": "instructor", "password": "right"})["name"] == "instructor"
    assert logged_in(hub, {"code": "oauth"}) == (403, STAFF_ONLY_SAID)  # no typed name: the name it signs in counts
    assert Recorded.asked == ["ta", "instructor", None]


def test_the_hub_config_switches_to_the_handoff_only_when_the_secret_is_there(secret, tmp_path):
    c = Config()
    assert enable_if_configured(c, tmp_path / "missing", staff={"instructor"}) is False
    assert "JupyterHub" not in c and "LtiHandoffAuthenticator" not in c
    assert enable_if_configured(c, secret, staff=["instructor", "ta"]) is True
    hub = c.JupyterHub.authenticator_class  # the hub's own login, JupyterHub's default (PAM), with the handoff
    assert issubclass(hub, LtiHandoffAuthenticator) and issubclass(hub, PAMAuthenticator)
    assert enable_if_configured(c, secret, staff=["instructor", "ta"]) is True  # again: the same class, once
    assert c.JupyterHub.authenticator_class is hub
    assert c.LtiHandoffAuthenticator.secret_file == str(secret)
    assert c.LtiHandoffAuthenticator.staff_accounts == {"instructor", "ta"}
