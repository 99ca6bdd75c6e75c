"""autograder.lms.lti.handoff alone: the hand-off token is bound to the launching browser, used once (across a
restart: a new UsedTokens on the same file), and the hub sends the browser only to a path under its own base URL."""

from __future__ import annotations

import time

import jwt
import pytest

from autograder.lms.lti import handoff

SECRET = "s" * 64


def claims_of(token: str) -> dict:
    return jwt.decode(token, SECRET, algorithms=["HS256"], audience=handoff.AUDIENCE)


def test_the_token_names_the_account_the_assignment_and_expires_in_a_minute():
    browser = handoff.browser_value()
    claims = claims_of(handoff.handoff_token(SECRET, "ada", "ps1", browser))
    assert (claims["sub"], claims["assignment"], claims["bnc"]) == ("ada", "ps1", handoff.BROWSER_COOKIE)
    assert claims["exp"] - claims["iat"] == handoff.LIFETIME == 60
    assert claims["bnd"] == handoff.browser_hash(browser) and browser not in str(claims)


def test_only_the_launching_browser_holds_the_token():
    browser = handoff.browser_value()
    claims = claims_of(handoff.handoff_token(SECRET, "ada", "ps1", browser, handoff.SECURE_BROWSER_COOKIE))
    assert handoff.same_browser(claims, {handoff.SECURE_BROWSER_COOKIE: browser})
    assert not handoff.same_browser(claims, {handoff.SECURE_BROWSER_COOKIE: handoff.browser_value()})
    assert not handoff.same_browser(claims, {handoff.BROWSER_COOKIE: browser}), "the cookie the token names only"
    assert not handoff.same_browser(claims, {})
    assert not handoff.same_browser({**claims, "bnc": "session"}, {"session": browser}), "never another cookie"


def test_a_token_signed_with_another_secret_is_refused():
    token = handoff.handoff_token("another secret " * 4, "ada", "ps1", handoff.browser_value())
    with pytest.raises(jwt.InvalidSignatureError):
        claims_of(token)


@pytest.mark.parametrize(
    "hub, cookie",
    [
        ("https://hub.school.edu/", {"name": handoff.SECURE_BROWSER_COOKIE, "path": "/", "secure": True}),
        ("http://localhost:8000/", {"name": handoff.BROWSER_COOKIE, "path": "/hub/lti/", "secure": False}),
        ("http://localhost:8000/course", {"name": handoff.BROWSER_COOKIE, "path": "/course/hub/lti/", "secure": False}),
    ],
)
def test_the_browser_cookie_is_host_only_and_prefixed_on_https(hub, cookie):
    assert handoff.browser_cookie(hub) == cookie


def test_a_token_id_is_taken_once_even_after_a_restart(tmp_path):
    path = tmp_path / "used.sqlite"
    later = time.time() + 60
    assert handoff.UsedTokens(path).take("abc", later)
    assert not handoff.UsedTokens(path).take("abc", later), "a new UsedTokens is the hub after a restart"
    assert handoff.UsedTokens(path).take("def", later)
    assert not handoff.UsedTokens(path).take("", later), "a token without an id is never taken"
    assert path.stat().st_mode & 0o777 == 0o600


def test_expired_ids_are_forgotten(tmp_path):
    used = handoff.UsedTokens(tmp_path / "used.sqlite")
    assert used.take("old", time.time() - 1)
    assert used.take("new", time.time() + 60)  # the round that deletes what has expired
    assert used.take("old", time.time() + 60), "an expired id's token is refused by its exp claim, not by this table"


@pytest.mark.parametrize(
    "value, base, expected",
    [
        ("/user/ada/lab/tree/ps1", "/", "/user/ada/lab/tree/ps1"),
        ("/course/user/ada/lab", "/course/", "/course/user/ada/lab"),
        ("/user/ada/lab", "/course/", None),  # outside the hub's base URL
        ("https://evil.example/", "/", None),
        ("//evil.example/", "/", None),
        ("/\\evil.example", "/", None),
        ("/%2F%2Fevil.example", "/", None),  # decoded once: //evil.example
        ("/%252F%252Fevil.example", "/", None),  # decoded twice
        ("/user/../hub/admin", "/", None),
        ("/user/%2e%2e/hub/admin", "/", None),
        ("/user/ada\r\nSet-Cookie: x=1", "/", None),
        ("", "/", None),
        ("/" + "a" * 2000, "/", None),
    ],
)
def test_next_is_a_path_under_the_hub_only(value, base, expected):
    assert handoff.local_next(value, base) == expected
