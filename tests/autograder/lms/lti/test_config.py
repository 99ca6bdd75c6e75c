"""autograder.lms.lti.config alone: a good config file is read whole, and each mistake an instructor can make in it
is refused with a message that names the file, the key and the fix."""

from __future__ import annotations

import json

import pytest

from autograder.lms.lti.config import ConfigError, load_config

PLATFORM = {
    "issuer": "https://school.instructure.com",
    "client_id": "10000000000042",
    "deployment_ids": [1, "d2"],
    "auth_login_url": "https://sso.example/authorize",
    "auth_token_url": "https://sso.example/token",
    "key_set_url": "https://sso.example/jwks",
}


def write(folder, secret_mode=0o600, key_mode=0o600, **changes):
    (folder / "private.pem").write_text("PRIVATE")
    (folder / "private.pem").chmod(key_mode)
    (folder / "public.pem").write_text("PUBLIC")
    (folder / "hub-secret").write_text("x" * 40 + "\n")
    (folder / "hub-secret").chmod(secret_mode)
    data = {
        "course": "course",
        "tool_url": "https://hub.school.edu/lti/",
        "private_key_file": "private.pem",
        "public_key_file": "public.pem",
        "hub_url": "https://hub.school.edu/",
        "hub_secret_file": "hub-secret",
        "platforms": [PLATFORM],
        **changes,
    }
    data = {key: value for key, value in data.items() if value is not None}
    (folder / "tool.json").write_text(json.dumps(data))
    return folder / "tool.json"


def test_a_good_config_is_read_relative_to_its_folder(tmp_path):
    config = load_config(write(tmp_path))
    assert config.course == (tmp_path / "course").resolve()
    assert (config.tool_url, config.hub_url) == ("https://hub.school.edu/lti", "https://hub.school.edu")
    assert (config.private_key, config.public_key, config.hub_secret) == ("PRIVATE", "PUBLIC", "x" * 40)
    [platform] = config.platforms
    assert platform.deployment_ids == ("1", "d2"), "ids are text, whatever the JSON held"
    assert config.platform(PLATFORM["issuer"], PLATFORM["client_id"]) == platform
    assert config.platform(PLATFORM["issuer"], "another client") is None


def test_without_a_hub_a_student_stays_on_the_tools_page(tmp_path):
    config = load_config(write(tmp_path, hub_url=None, hub_secret_file=None))
    assert (config.hub_url, config.hub_secret) == ("", "")


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"course": None}, "lacks course"),
        ({"platforms": []}, "platforms must be a list of at least one registration"),
        ({"platforms": [{**PLATFORM, "key_set_url": ""}]}, "platform 1 lacks key_set_url"),
        ({"hub_secret_file": None}, "has hub_url but no hub_secret_file"),
        ({"hub_url": "https://other.school.edu"}, "must name the same host"),
        ({"private_key_file": "absent.pem"}, "cannot read the tool's private key"),
    ],
)
def test_each_mistake_is_named(tmp_path, changes, message):
    with pytest.raises(ConfigError, match=message):
        load_config(write(tmp_path, **changes))


@pytest.mark.parametrize("which", ["key_mode", "secret_mode"])
def test_a_key_or_secret_others_can_read_is_refused_with_the_chmod_to_run(tmp_path, which):
    with pytest.raises(ConfigError, match="chmod 600"):
        load_config(write(tmp_path, **{which: 0o644}))


def test_a_short_secret_is_refused(tmp_path):
    path = write(tmp_path)
    (tmp_path / "hub-secret").write_text("short")
    with pytest.raises(ConfigError, match="at least 32 random characters"):
        load_config(path)


@pytest.mark.parametrize("text, message", [("{not json", "is not JSON"), ("[1, 2]", "must be a JSON object")])
def test_a_file_that_is_not_a_config_says_so(tmp_path, text, message):
    (tmp_path / "tool.json").write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_config(tmp_path / "tool.json")
    with pytest.raises(ConfigError, match="cannot read the LTI config"):
        load_config(tmp_path / "absent.json")
