"""A Deep Linking launch places once, and only from the browser that made it.

When the tool (autograder.lms.lti.tool) has checked an instructor's Deep Linking launch, it sets a cookie of a new
random value in that browser and keeps, in its memory beside the launch (store.OneTimeStore, as long as the launch),
the cookie's name and the value's SHA-256 under the launch id. The placement (``/deeplink``) is made only from a
browser whose cookie holds that value, and once: the first placement takes the record, so the same launch id sent
again, from any browser, is refused and says so. A choice the tool refuses (an assignment the gradebook does not
know yet) takes nothing: the instructor chooses again on the same page.

Each launch has a cookie of its own (two placement pages open in one browser keep theirs): on https
``__Host-attention-lti-placement-<id>`` (Secure, Path=/, no Domain: a page of another subdomain, such as a student's
server, cannot set it in the instructor's browser), SameSite=None (the LMS may show the tool's page in a frame of
its own site); on http (one machine) ``attention-lti-placement-<id>``, host-only, path ``<tool>/deeplink``, Lax.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from autograder.lms.lti.handoff import browser_hash
from autograder.lms.lti.store import OneTimeStore

COOKIE_PREFIX = "attention-lti-placement-"
SECURE_COOKIE_PREFIX = "__Host-" + COOKIE_PREFIX
MADE_ALREADY = (
    "refused: this placement was made already (a Deep Linking launch places once); to place another assignment, "
    "open Deep Linking again from the LMS"
)
ANOTHER_BROWSER = "refused: this placement was opened in another browser; open Deep Linking from the LMS in this one"
EXPIRED = "refused: this placement has expired; open Deep Linking again from the LMS"


@dataclass(frozen=True)
class PlacementCookie:
    """The cookie a Deep Linking launch sets in its browser."""

    name: str
    value: str
    path: str
    secure: bool

    @property
    def same_site(self) -> str:
        return "None" if self.secure else "Lax"  # None only with Secure, as browsers require


def new_cookie(*, tool_url: str) -> PlacementCookie:
    """A new launch's cookie, for the tool served at ``tool_url``."""
    parts = urlsplit(tool_url)
    suffix, value = secrets.token_hex(8), secrets.token_urlsafe(32)
    if parts.scheme == "https":
        return PlacementCookie(SECURE_COOKIE_PREFIX + suffix, value, "/", True)
    return PlacementCookie(COOKIE_PREFIX + suffix, value, parts.path.rstrip("/") + "/deeplink", False)


def _key(launch_id: str) -> str:
    return f"placement-{launch_id}"


def _made_key(launch_id: str) -> str:
    return f"placement-made-{launch_id}"


def remember(*, store: OneTimeStore, launch_id: str, cookie: PlacementCookie) -> None:
    """Bind the launch ``launch_id`` to the browser that holds ``cookie``."""
    record = {"cookie": cookie.name, "path": cookie.path, "secure": cookie.secure, "hash": browser_hash(cookie.value)}
    store.set_value(_key(launch_id), record)


def refusal(*, store: OneTimeStore, launch_id: str, cookie_of: Callable[[str], str | None]) -> str | None:
    """Why the browser whose cookies ``cookie_of`` reads cannot place with ``launch_id`` (None: it can)."""
    record = store.get_value(_key(launch_id)) if launch_id else None
    if record is None:
        return MADE_ALREADY if launch_id and store.get_value(_made_key(launch_id)) else EXPIRED
    held = cookie_of(record["cookie"])
    if not held or not hmac.compare_digest(record["hash"], browser_hash(held)):
        return ANOTHER_BROWSER
    return None


def take(*, store: OneTimeStore, launch_id: str) -> dict | None:
    """Use the launch up; its cookie's name, path and secure (to clear it), or None when another request took it
    first."""
    record = store.get_value(_key(launch_id))
    if record is None:
        return None
    store.set_value(_made_key(launch_id), True)  # before the take: a request between them reads "made already"
    return {key: record[key] for key in ("cookie", "path", "secure")} if store.take(_key(launch_id)) else None
