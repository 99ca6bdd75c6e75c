"""The tool's one-minute handoff to the hub: the token made by the LTI tool and the rules the hub's authenticator
(autograder.lms.lti.hub_login) reads it by. Kept apart from the hub's side so that the tool runs without JupyterHub.

- The token (HS256, the secret shared by the tool and the hub) names the account, the assignment, a random id
  (``jti``), the SHA-256 of a random value the tool set as a cookie in the launching browser (``bnd``) and that
  cookie's name (``bnc``): the hub takes the token only from a browser that holds that value, so a link copied
  into another browser signs nobody in. On https the cookie is ``__Host-attention-lti-browser`` (Secure, Path=/,
  no Domain: a page of another subdomain, a student's server, cannot set it in a classmate's browser); on http
  (one machine) ``attention-lti-browser``, host-only, path ``<hub>/hub/lti/``.
- ``UsedTokens``: the ids the hub has taken, in a small SQLite file kept until they expire, so that a token is
  used once even across a restart of the hub.
- ``local_next``: where the hub may send the browser afterwards: a path under the hub's base URL, nothing else.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import sqlite3
import time
from contextlib import closing
from pathlib import Path
from urllib.parse import unquote, urlsplit

import jwt

AUDIENCE = "attention-hub"
LIFETIME = 60  # seconds from the launch to the hub
BROWSER_COOKIE = "attention-lti-browser"  # http: host-only, path <hub>/hub/lti/
SECURE_BROWSER_COOKIE = "__Host-attention-lti-browser"  # https: no subdomain can set it (the __Host- prefix)
BROWSER_COOKIES = (BROWSER_COOKIE, SECURE_BROWSER_COOKIE)


def browser_cookie(hub_url: str) -> dict:
    """The launching browser's cookie for the hub at ``hub_url``: name, path and secure."""
    parts = urlsplit(hub_url)
    if parts.scheme == "https":
        return {"name": SECURE_BROWSER_COOKIE, "path": "/", "secure": True}
    return {"name": BROWSER_COOKIE, "path": parts.path.rstrip("/") + "/hub/lti/", "secure": False}


def browser_value() -> str:
    """A new random value for the launching browser's cookie."""
    return secrets.token_urlsafe(32)


def browser_hash(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


def handoff_token(secret: str, username: str, assignment: str, browser: str, cookie: str = BROWSER_COOKIE) -> str:
    """The tool's signed word that ``username`` launched ``assignment`` just now, in the browser whose cookie
    ``cookie`` holds ``browser``."""
    now = int(time.time())
    claims = {"sub": username, "assignment": assignment, "aud": AUDIENCE, "iat": now, "exp": now + LIFETIME}
    bound = {"bnd": browser_hash(browser), "bnc": cookie}
    return jwt.encode({**claims, **bound, "jti": secrets.token_hex(16)}, secret, algorithm="HS256")


def same_browser(claims: dict, cookies: dict) -> bool:
    """Whether the browser holds, in the cookie the token names, the value the token was made for."""
    name = claims.get("bnc")
    value = cookies.get(name) if name in BROWSER_COOKIES else None
    return bool(value) and hmac.compare_digest(str(claims.get("bnd", "")), browser_hash(value))


class UsedTokens:
    """The token ids taken, in a SQLite file (mode 0600) with their expiry: ``take`` is true once per id, across
    processes and restarts."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def take(self, token_id: str, expires: float) -> bool:
        if not token_id:
            return False
        if not self.path.exists():
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))
        with closing(sqlite3.connect(self.path, timeout=10)) as db, db:
            db.execute("CREATE TABLE IF NOT EXISTS used (id TEXT PRIMARY KEY, expires REAL NOT NULL)")
            db.execute("DELETE FROM used WHERE expires < ?", (time.time(),))
            try:
                db.execute("INSERT INTO used (id, expires) VALUES (?, ?)", (token_id, float(expires)))
            except sqlite3.IntegrityError:
                return False
        return True


def local_next(value: str, base_url: str = "/") -> str | None:
    """``value`` when it is a path under the hub's ``base_url`` (as written and once decoded, any number of times),
    else None: no scheme or host, no ``//`` or backslash (``/\\host`` is a host to browsers), no control
    characters, no ``..`` segment."""
    base = "/" + base_url.strip("/") + "/" if base_url.strip("/") else "/"
    if not isinstance(value, str) or not value or len(value) > 2000:
        return None
    seen, text = {value}, value
    for _ in range(5):  # every decoding a browser or a proxy may do
        decoded = unquote(text)
        if decoded == text:
            break
        text = decoded
        seen.add(text)
    for form in seen:
        if "\\" in form or any(ord(char) < 32 or ord(char) == 127 for char in form):
            return None
        if not form.startswith(base) or form.startswith("//"):
            return None
        parts = urlsplit(form)
        if parts.scheme or parts.netloc or ".." in parts.path.split("/"):
            return None
    return value
