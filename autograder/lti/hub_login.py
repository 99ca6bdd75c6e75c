"""A student launched from the LMS arrives in their JupyterHub account: the tool's one-minute handoff.

After the tool (autograder.lti.tool) has checked a student's launch, it sends the browser to the hub's
``/hub/lti/login?token=...&next=/hub/user-redirect/lab/tree/<assignment>``, the token signed (HS256) with a
secret that only the tool's and the hub's processes read (a file of mode 0600, e.g. ``<hub state>/lti-hub-secret``).
The hub's ``LtiHandoffAuthenticator`` takes a token once, within its minute, and signs the account in.

The token itself (made by the tool, read here) is autograder.lti.handoff, which needs no JupyterHub. The hub's
config switches the login on when the secret file is there:

    from autograder.lti.hub_login import enable_if_configured
    enable_if_configured(c, state / "lti-hub-secret")
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import jwt
from jupyterhub.auth import Authenticator
from jupyterhub.handlers import BaseHandler
from traitlets import Unicode

from autograder.lti.config import ConfigError
from autograder.lti.handoff import AUDIENCE, read_secret
from autograder.lti.store import USERNAME


class LtiLogin(BaseHandler):
    async def get(self):
        user = await self.login_user({"token": self.get_argument("token", "")})
        if user is None:
            self.set_status(403)
            self.finish("refused: this link from the LMS has expired or was used before; open the assignment again")
            return
        following = self.get_argument("next", "")
        local = following.startswith("/") and not following.startswith("//")
        self.redirect(following if local else self.get_next_url(user))


class LtiHandoffAuthenticator(Authenticator):
    """Signs in the account named by a handoff token from the course's LTI tool, once per token."""

    secret_file = Unicode(help="the secret shared with the LTI tool (mode 0600)").tag(config=True)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._used: dict[str, float] = {}
        self._lock = threading.Lock()

    def get_handlers(self, app):
        return [("/lti/login", LtiLogin)]

    async def authenticate(self, handler, data):
        try:
            claims = jwt.decode(
                data.get("token", ""), read_secret(self.secret_file), algorithms=["HS256"], audience=AUDIENCE
            )
        except (jwt.InvalidTokenError, ConfigError) as error:
            self.log.warning("LTI handoff refused: %s", error)
            return None
        with self._lock:
            now = time.time()
            self._used = {jti: until for jti, until in self._used.items() if until > now}
            if claims.get("jti") in self._used or not USERNAME.match(str(claims.get("sub", ""))):
                self.log.warning("LTI handoff refused: a token used before, or a bad name")
                return None
            self._used[claims["jti"]] = claims["exp"] + 1
        return {"name": claims["sub"]}


def enable_if_configured(c, secret_file: Path) -> bool:
    """Switch the hub's login to the LTI handoff when ``secret_file`` exists (the hub config calls this)."""
    if not Path(secret_file).is_file():
        return False
    c.JupyterHub.authenticator_class = LtiHandoffAuthenticator
    c.LtiHandoffAuthenticator.secret_file = str(secret_file)
    return True
