"""The LTI tool's config file: the tool's key pair and the platforms (LMSs) registered with it.

    {
      "course": "/srv/attention",
      "tool_url": "https://hub.school.edu/lti",
      "private_key_file": "/etc/attention/lti/private.pem",
      "public_key_file": "/etc/attention/lti/public.pem",
      "hub_url": "https://hub.school.edu",
      "hub_secret_file": "/srv/hub/state/lti-hub-secret",
      "platforms": [
        {
          "issuer": "https://school.instructure.com",
          "client_id": "10000000000042",
          "deployment_ids": ["1:8865aa05b4b79b64a91a86042e43af5ea8ae79eb"],
          "auth_login_url": "https://sso.canvaslms.com/api/lti/authorize_redirect",
          "auth_token_url": "https://sso.canvaslms.com/login/oauth2/token",
          "key_set_url": "https://sso.canvaslms.com/api/lti/security/jwks"
        }
      ]
    }

hub_url and hub_secret_file are optional: without them a launched student stays on the tool's page. hub_url's
host is tool_url's (the ports may differ): the hub reads the cookie the tool sets in the launching browser.
The private key file and the hub's secret must be readable by their owner only (mode 0600): the tool refuses
them otherwise. Only the
tool's process (beside the hub, as the hub's user) reads it; students' servers run in their sandbox, which
does not show the folder it is in.
"""

from __future__ import annotations

import json
import stat
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from pylti1p3.tool_config import ToolConfDict

PLATFORM_KEYS = ("issuer", "client_id", "deployment_ids", "auth_login_url", "auth_token_url", "key_set_url")


class ConfigError(ValueError):
    """The config file is wrong; the message says what and how to fix it."""


@dataclass(frozen=True)
class Platform:
    issuer: str
    client_id: str
    deployment_ids: tuple[str, ...]
    auth_login_url: str
    auth_token_url: str
    key_set_url: str


@dataclass(frozen=True)
class LtiConfig:
    course: Path
    tool_url: str  # where the platform reaches this tool: <tool_url>/login, /launch, /jwks
    private_key: str
    public_key: str
    platforms: tuple[Platform, ...]
    hub_url: str = ""  # the hub a launched student goes on to; "" stays on the tool's own page
    hub_secret: str = ""  # shared with the hub (autograder.lms.lti.hub_login), read from hub_secret_file

    def tool_conf(self) -> ToolConfDict:
        """PyLTI1p3's configuration of this tool (one client per issuer, or several)."""
        issuers: dict[str, list] = {}
        for platform in self.platforms:
            issuers.setdefault(platform.issuer, []).append(
                {
                    "default": not issuers.get(platform.issuer),
                    "client_id": platform.client_id,
                    "auth_login_url": platform.auth_login_url,
                    "auth_token_url": platform.auth_token_url,
                    "key_set_url": platform.key_set_url,
                    "key_set": None,
                    "deployment_ids": list(platform.deployment_ids),
                }
            )
        conf = ToolConfDict(issuers)
        for platform in self.platforms:
            conf.set_private_key(platform.issuer, self.private_key, client_id=platform.client_id)
            conf.set_public_key(platform.issuer, self.public_key, client_id=platform.client_id)
        return conf

    def platform(self, issuer: str, client_id: str) -> Platform | None:
        for platform in self.platforms:
            if platform.issuer == issuer and platform.client_id == client_id:
                return platform
        return None


def read_private_key(path: Path) -> str:
    """The key's text, refused unless only its owner can read it."""
    try:
        mode = path.stat().st_mode
    except OSError as error:
        raise ConfigError(f"cannot read the tool's private key {path}: {error.strerror}") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ConfigError(
            f"the tool's private key {path} can be read by others (mode {stat.S_IMODE(mode):04o}): run chmod 600 {path}"
        )
    return path.read_text(encoding="ascii")


def read_secret(path: Path) -> str:
    """The shared secret, refused if others can read it (as the tool's private key)."""
    secret = read_private_key(Path(path)).strip()
    if len(secret) < 32:
        raise ConfigError(f"the hub's LTI secret {path} is too short: write at least 32 random characters in it")
    return secret


def hub_secret(path: Path) -> str:
    return read_secret(path)  # the hub's side (lti.hub_login) reads it the same way


def load_config(path: Path) -> LtiConfig:
    """The config file at ``path``, checked: every required key, every platform whole, keys readable."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"cannot read the LTI config {path}: {error.strerror}") from None
    except ValueError as error:
        raise ConfigError(f"the LTI config {path} is not JSON: {error}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"the LTI config {path} must be a JSON object (see the README's LTI section)")
    missing = [
        key for key in ("course", "tool_url", "private_key_file", "public_key_file", "platforms") if key not in data
    ]
    if missing:
        raise ConfigError(f"the LTI config {path} lacks {', '.join(missing)} (see the README's LTI section)")
    if not isinstance(data["platforms"], list) or not data["platforms"]:
        raise ConfigError(f"the LTI config {path}: platforms must be a list of at least one registration")
    platforms = []
    for number, entry in enumerate(data["platforms"], start=1):
        absent = [key for key in PLATFORM_KEYS if not entry.get(key)]
        if absent:
            raise ConfigError(f"the LTI config {path}: platform {number} lacks {', '.join(absent)}")
        values = {key: entry[key] for key in PLATFORM_KEYS}
        values["deployment_ids"] = tuple(str(item) for item in values["deployment_ids"])
        platforms.append(Platform(**values))
    if data.get("hub_url") and not data.get("hub_secret_file"):
        raise ConfigError(f"the LTI config {path} has hub_url but no hub_secret_file (the secret shared with the hub)")
    if data.get("hub_url") and urlsplit(str(data["hub_url"])).hostname != urlsplit(str(data["tool_url"])).hostname:
        raise ConfigError(
            f"the LTI config {path}: hub_url and tool_url must name the same host (the hub reads the cookie the "
            "tool sets in the launching browser), e.g. https://hub.school.edu and https://hub.school.edu/lti"
        )
    base = path.parent
    return LtiConfig(
        course=(base / data["course"]).resolve(),
        tool_url=str(data["tool_url"]).rstrip("/"),
        private_key=read_private_key(base / data["private_key_file"]),
        public_key=(base / data["public_key_file"]).read_text(encoding="ascii"),
        platforms=tuple(platforms),
        hub_url=str(data.get("hub_url", "")).rstrip("/"),
        hub_secret=hub_secret(base / data["hub_secret_file"]) if data.get("hub_url") else "",
    )
