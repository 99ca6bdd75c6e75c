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
from types import SimpleNamespace

import jwt
import pytest

pytest.importorskip("jupyterhub", reason="the hub's side of the handoff: pip install -e '.[hub]'")

from traitlets.config import Config

from autograder.lms.lti.handoff import BROWSER_COOKIE, SECURE_BROWSER_COOKIE, handoff_token
from autograder.lms.lti.hub_login import REFUSED, LtiHandoffAuthenticator, LtiLogin, enable_if_configured

COOKIE = "the-launching-browsers-own-value"


@pytest.fixture
def secret(tmp_path):
    path = tmp_path / "lti-hub-secret"
    path.write_text(secrets.token_hex(32))
    os.chmod(path, 0o600)
    return path


def sign_in(hub, token, cookies=None, handler=None) -> tuple[dict | None, str | None]:
    """(what authenticate returns, the refusal the student is shown)."""
    data = {"token": token, "browsers": {BROWSER_COOKIE: COOKIE} if cookies is None else cookies}
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


def test_the_login_page_is_the_hubs_lti_login():
    assert LtiHandoffAuthenticator().get_handlers(None) == [("/lti/login", LtiLogin)]


def test_the_hub_config_switches_to_the_handoff_only_when_the_secret_is_there(secret, tmp_path):
    c = Config()
    assert enable_if_configured(c, tmp_path / "missing", staff={"instructor"}) is False
    assert "JupyterHub" not in c and "LtiHandoffAuthenticator" not in c
    assert enable_if_configured(c, secret, staff=["instructor", "ta"]) is True
    assert c.JupyterHub.authenticator_class is LtiHandoffAuthenticator
    assert c.LtiHandoffAuthenticator.secret_file == str(secret)
    assert c.LtiHandoffAuthenticator.staff_accounts == {"instructor", "ta"}
