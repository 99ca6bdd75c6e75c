"""A student launched from the LMS arrives in their JupyterHub account: the tool's one-minute handoff.

After the tool (autograder.lms.lti.tool) has checked a student's launch, it sets a random value as a cookie in the
launching browser (autograder.lms.lti.handoff.browser_cookie) and sends the browser to the hub's
``/hub/lti/login?token=...&next=<base>/hub/user-redirect/lab/tree/<assignment>``, the token signed (HS256) with a
secret that only the tool's and the hub's processes read (a file of mode 0600, e.g. ``<hub state>/lti-hub-secret``).
The hub's ``LtiHandoffAuthenticator`` signs the account in when the token is the tool's, within its minute, never
taken before (its id is kept in ``<secret>.used.sqlite`` until it expires, so a restart forgets nothing), comes
from the browser that launched (the cookie's value is the token's), and names a student: never one of the hub's
admins or the accounts in ``staff_accounts``. ``next`` is followed only when it is a path under the hub's base
URL (autograder.lms.lti.handoff.local_next); otherwise the browser goes to the hub's home page.

Staff keep the hub's own login: the handoff is added to the authenticator the hub's config names (dummy, PAM, an
OAuthenticator: its login page, its handlers and its settings stay), and that login then signs in staff only, the
hub's admins and the ``staff_accounts``; a student who types their name there is refused before any password is
checked, and told to open the assignment from the LMS. So students sign in only through the LMS, staff only
through the hub's login.

The token itself (made by the tool, read here) is autograder.lms.lti.handoff, which needs no JupyterHub. The hub's
config switches the handoff on when the secret file is there, after it has named its own authenticator:

    from autograder.lms.lti.hub_login import enable_if_configured
    c.JupyterHub.authenticator_class = "dummy"
    enable_if_configured(c, state / "lti-hub-secret", staff={instructor})
"""

from __future__ import annotations

from pathlib import Path

import jwt
from jupyterhub.auth import Authenticator
from jupyterhub.handlers import BaseHandler
from jupyterhub.utils import maybe_future, url_path_join
from tornado import web
from traitlets import Set, Unicode

from autograder.lms.lti.config import ConfigError, read_secret
from autograder.lms.lti.handoff import (
    AUDIENCE,
    BROWSER_COOKIES,
    SECURE_BROWSER_COOKIE,
    UsedTokens,
    local_next,
    same_browser,
)
from autograder.lms.lti.store import USERNAME

REFUSED = "refused: this link from the LMS has expired or was used before; open the assignment again"
STAFF_ONLY = "refused: students sign in from the LMS: open the assignment there; this login is for the course's staff"


class Handoff(dict):
    """What LtiLogin hands to the authenticator: the token and the browser's cookies. A login form's fields are
    never one, so a form posted to the hub's own login cannot take this way."""


class LtiLogin(BaseHandler):
    async def get(self):
        cookies = {name: self.get_cookie(name) for name in BROWSER_COOKIES}
        data = Handoff(token=self.get_argument("token", ""), browsers=cookies)
        user = await self.login_user(data)
        if user is None:
            self.set_status(403)
            self.set_header("Content-Type", "text/plain; charset=utf-8")
            self.finish(data.get("refused", REFUSED))
            return
        for name, value in cookies.items():  # its one use is done
            if value and name == SECURE_BROWSER_COOKIE:
                self.clear_cookie(name, path="/", secure=True)
            elif value:
                self.clear_cookie(name, path=self.request.path.rsplit("/", 1)[0] + "/")
        following = local_next(self.get_argument("next", ""), self.base_url)
        self.redirect(following or url_path_join(self.hub.base_url, "home"))  # not get_next_url: it reads next


class LtiHandoffAuthenticator(Authenticator):
    """Signs in the student named by a handoff token from the course's LTI tool: once per token, in the browser
    that launched, never an admin or staff account. Made one with the hub's own authenticator (with_handoff),
    that one signs in staff only."""

    secret_file = Unicode(help="the secret shared with the LTI tool (mode 0600)").tag(config=True)
    used_file = Unicode(help="the taken tokens' ids (default: <secret_file>.used.sqlite)").tag(config=True)
    staff_accounts = Set(Unicode(), help="accounts a launch from the LMS never signs in (besides admins)").tag(
        config=True
    )

    def get_handlers(self, app):
        """The hub's own login's handlers (the authenticator's beside this one), and the handoff's."""
        return [*super().get_handlers(app), ("/lti/login", LtiLogin)]

    def refuse(self, data: dict, why: str, log: str):
        self.log.warning("LTI handoff refused: %s", log)
        data["refused"] = why
        return None

    def is_staff(self, name: str, handler) -> bool:
        """An admin (configured, or made one in the hub's database) or one of the ``staff_accounts``."""
        known = handler.find_user(name) if handler is not None else None
        return name in self.admin_users or name in self.staff_accounts or bool(getattr(known, "admin", False))

    async def authenticate(self, handler, data):
        """A handoff signs in a student; anything else is the hub's own login, for staff only."""
        if isinstance(data, Handoff):
            return await self.hand_off(handler, data)
        typed = data.get("username") if isinstance(data, dict) else None
        if isinstance(typed, str) and not self.is_staff(self.normalize_username(typed), handler):
            self.log.warning("the hub's own login refused %r: not staff, a student signs in from the LMS", typed[:32])
            raise web.HTTPError(403, STAFF_ONLY)  # before the password is checked: it says nothing of it
        signed = await maybe_future(super().authenticate(handler, data))
        name = signed.get("name") if isinstance(signed, dict) else signed
        if name is not None and not self.is_staff(self.normalize_username(str(name)), handler):
            self.log.warning("the hub's own login refused %r: not staff, a student signs in from the LMS", name)
            raise web.HTTPError(403, STAFF_ONLY)
        return signed

    async def hand_off(self, handler, data: Handoff):
        try:
            claims = jwt.decode(
                data.get("token", ""),
                read_secret(self.secret_file),
                algorithms=["HS256"],
                audience=AUDIENCE,
                options={"require": ["exp", "jti", "sub"]},  # a token without them is refused, never a 500
            )
        except (jwt.InvalidTokenError, ConfigError) as error:
            return self.refuse(data, REFUSED, str(error))
        name = str(claims.get("sub", ""))
        if not USERNAME.match(name):
            return self.refuse(data, REFUSED, f"a bad account name {name!r}")
        if not same_browser(claims, data.get("browsers") or {}):
            return self.refuse(
                data,
                "refused: this link from the LMS was made for another browser; open the assignment from the LMS "
                "in this one",
                f"{name}: the token came from another browser than the launch",
            )
        if self.is_staff(name, handler):
            return self.refuse(
                data,
                "refused: a launch from the LMS signs in students only; staff use the hub's own login",
                f"{name} is an admin or staff account",
            )
        if self.allowed_users and name not in self.allowed_users:
            return self.refuse(
                data,
                f"refused: the course account of your LMS user ({name}) is not on this hub; the instructor names you "
                "in the course's roster (its lti_sub column) or adds the account to the hub",
                f"{name} is not an allowed user",
            )
        used = Path(self.used_file or f"{self.secret_file}.used.sqlite")
        if not UsedTokens(used).take(str(claims.get("jti", "")), claims["exp"] + 1):
            return self.refuse(data, REFUSED, f"{name}: a token used before")
        return {"name": name}


def with_handoff(own) -> type[LtiHandoffAuthenticator]:
    """The hub's own authenticator class ``own`` with the handoff added: its login (for staff only), its handlers
    and its settings (``c.<its class>``, ``c.Authenticator``), and ``c.LtiHandoffAuthenticator``'s."""
    if issubclass(own, LtiHandoffAuthenticator):
        return own
    return type(f"LtiHandoff{own.__name__}", (LtiHandoffAuthenticator, own), {"__module__": __name__})


def enable_if_configured(c, secret_file: Path, staff=()) -> bool:
    """Add the LTI handoff to the hub's login when ``secret_file`` exists (the hub config calls this, after it has
    set ``c.JupyterHub.authenticator_class``: its own login, then for staff only, default PAM as JupyterHub's);
    the ``staff`` accounts (the instructor's) are never signed in by the handoff, nor are the hub's admins."""
    if not Path(secret_file).is_file():
        return False
    from jupyterhub.app import JupyterHub  # the trait reads the name as JupyterHub does ("dummy", "pam", a.Class)

    trait = JupyterHub.authenticator_class
    own = trait.validate(None, c.JupyterHub.get("authenticator_class", trait.default_value))
    c.JupyterHub.authenticator_class = with_handoff(own)
    c.LtiHandoffAuthenticator.secret_file = str(secret_file)
    c.LtiHandoffAuthenticator.staff_accounts = set(staff)
    return True
