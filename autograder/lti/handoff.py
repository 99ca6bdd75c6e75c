"""The tool's one-minute handoff token to the hub: made by the LTI tool, read by the hub's authenticator
(autograder.lti.hub_login). Kept apart from the hub's side so that the tool runs without JupyterHub installed."""

from __future__ import annotations

import secrets
import time
from pathlib import Path

import jwt

from autograder.lti.config import ConfigError, read_private_key

AUDIENCE = "attention-hub"
LIFETIME = 60  # seconds from the launch to the hub


def handoff_token(secret: str, username: str, assignment: str) -> str:
    """The tool's signed word that ``username`` launched ``assignment`` just now."""
    now = int(time.time())
    claims = {"sub": username, "assignment": assignment, "aud": AUDIENCE, "iat": now, "exp": now + LIFETIME}
    return jwt.encode({**claims, "jti": secrets.token_hex(16)}, secret, algorithm="HS256")


def read_secret(path: Path) -> str:
    """The shared secret, refused if others can read it (as the tool's private key)."""
    secret = read_private_key(Path(path)).strip()
    if len(secret) < 32:
        raise ConfigError(f"the hub's LTI secret {path} is too short: write at least 32 random characters in it")
    return secret
