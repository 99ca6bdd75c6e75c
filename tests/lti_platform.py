"""An LTI 1.3 platform (an LMS's side) for the tests, built on lti1p3platform, served by tornado on 127.0.0.1.

It knows a few users (students and one instructor), starts launches (``/start?user=ada&assignment=ps1``, or
``/start?user=teacher&deep=1`` for Deep Linking; ``&context=course-999`` launches from another course than
``context_id``), answers the tool's OIDC authorization request with a signed
id_token posted to the tool, takes Deep Linking responses (creating a line item per placed assignment), issues
access tokens (the tool's signed client assertion, checked against the tool's JWKS) and records the scores posted
to a line item. ``refuse_scores`` makes the score endpoint answer 503, as an LMS that is down; ``claims`` changes
the id_tokens it signs (a value of None removes that claim), as a platform that names another client would.
"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass, field
from urllib.parse import urlencode

import tornado.httpserver
import tornado.web
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from lti1p3platform.exceptions import LtiException as PlatformError
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.message_launch import LTIAdvantageMessageLaunchAbstract
from lti1p3platform.oidc_login import OIDCLoginAbstract
from lti1p3platform.registration import Registration
from lti1p3platform.request import Request

SCORE_TYPE = "application/vnd.ims.lis.v1.score+json"
LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"


def key_pair() -> tuple[str, str]:
    """(private PEM, public PEM) of a new RSA key."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private, public


@dataclass
class PlatformState:
    url: str
    tool_url: str
    client_id: str = "attention-tool"
    deployment_id: str = "deployment-1"
    context_id: str = "course-101"  # the course launches come from, unless the start names another
    users: dict = field(default_factory=dict)  # login -> {"sub", "roles", "username" (default the login)}
    # id -> {"label", "scoreMaximum", "resourceId", "custom", "context"}
    lineitems: dict = field(default_factory=dict)
    scores: dict = field(default_factory=dict)  # lineitem id -> {sub: score JSON}
    refuse_scores: bool = False
    # the course's members as Names and Role Provisioning lists them: [{"user_id", "roles", "status", "name"}]
    members: list = field(default_factory=list)
    members_page: int = 2  # members per page of /memberships (a longer list is paged, Link: rel="next")
    members_read: int = 0  # requests /memberships answered
    id_token_lifetime: int = 300
    claims: dict = field(default_factory=dict)  # set in (None: taken out of) every id_token signed
    keys: tuple[str, str] = field(default_factory=key_pair)


class Conf(LTI1P3PlatformConfAbstract):
    def __init__(self, state: PlatformState):
        self.state = state
        super().__init__()

    def init_platform_config(self, **kwargs):
        state = self.state
        self._registration = (
            Registration()
            .set_iss(state.url)
            .set_client_id(state.client_id)
            .set_deployment_id(state.deployment_id)
            .set_launch_url(f"{state.tool_url}/launch")
            .set_deeplink_launch_url(f"{state.tool_url}/launch")
            .set_oidc_login_url(f"{state.tool_url}/login")
            .set_tool_key_set_url(f"{state.tool_url}/jwks")
            .set_platform_private_key(state.keys[0])
            .set_platform_public_key(state.keys[1])
        )

    def get_registration_by_params(self, **kwargs):
        return self._registration


class PlatformRequest(Request):
    def build_metadata(self, handler):
        arguments = {key: handler.get_argument(key) for key in handler.request.arguments}
        return {
            "method": handler.request.method,
            "form_data": arguments if handler.request.method == "POST" else {},
            "get_data": arguments if handler.request.method == "GET" else {},
            "headers": handler.request.headers,
            "content_type": handler.request.headers.get("Content-Type"),
            "path": handler.request.path,
            "json": None,
        }


class Login(OIDCLoginAbstract):
    def set_lti_message_hint(self, **kwargs):
        self._lti_message_hint = json.dumps(kwargs)

    def get_redirect(self, url):
        return url


class Launch(LTIAdvantageMessageLaunchAbstract):
    def __init__(self, request, conf, state: PlatformState):
        super().__init__(request, conf)
        self.state = state

    def prepare_launch(self, preflight_response):
        hint = json.loads(preflight_response["lti_message_hint"])
        login = preflight_response["login_hint"]
        user = self.state.users[login]
        self.set_user_data(user["sub"], user["roles"], preferred_username=user.get("username", login))
        context = hint.get("context") or self.state.context_id
        title = "Attention" if context == "course-101" else f"Another course ({context})"
        self.set_launch_context_claim(context, context_title=title, context_label=context.upper())
        self.set_nrps(f"{self.state.url}/memberships/{context}")
        if hint.get("deep"):
            self.set_dl(
                f"{self.state.url}/deeplink-return", title="Place an assignment", accept_types={"ltiResourceLink"}
            )
            return
        item_id, item = next(
            (i, v)
            for i, v in self.state.lineitems.items()
            if v["resourceId"] == hint["assignment"] and v.get("context", "course-101") == context
        )
        self.set_resource_link_claim(f"link-{item_id}", title=item["label"])
        self.set_custom_parameters_claim(item["custom"])
        self.set_ags(
            f"{self.state.url}/lineitems", f"{self.state.url}/lineitems/{item_id}", allow_creating_lineitems=False
        )

    def get_launch_message(self, include_extra_claims=True):
        message = super().get_launch_message(include_extra_claims) | self.state.claims
        return {name: value for name, value in message.items() if value is not None}

    def render_launch_form(self, launch_data, **kwargs):
        fields = "".join(
            f'<input type="hidden" name="{name}" value="{launch_data[name]}">' for name in ("id_token", "state")
        )
        return (
            f'<form id="launch" method="post" action="{launch_data["launch_url"]}">{fields}</form>'
            "<script>document.getElementById('launch').submit()</script>"
        )


class Handler(tornado.web.RequestHandler):
    def initialize(self, state: PlatformState):
        self.state = state

    def conf(self) -> Conf:
        return Conf(self.state)

    def check_xsrf_cookie(self):
        pass


class Start(Handler):
    def get(self):
        user = self.get_argument("user")
        login = Login(None, self.conf())
        login.set_lti_message_hint(
            deep=bool(self.get_argument("deep", "")),
            assignment=self.get_argument("assignment", ""),
            context=self.get_argument("context", ""),
        )
        if self.get_argument("deep", ""):
            login.set_deeplinking_launch_url()
        self.redirect(login.initiate_login(user))


class Authorize(Handler):
    def get(self):
        launch = Launch(PlatformRequest(self), self.conf(), self.state)
        launch.set_id_token_expiration(self.state.id_token_lifetime)
        self.write(launch.lti_launch())


class Jwks(Handler):
    def get(self):
        conf = self.conf()
        conf.get_registration()
        self.write(conf.get_jwks())


class DeepLinkReturn(Handler):
    def post(self):
        conf = self.conf()
        conf.get_registration()
        items = conf.validate_deeplinking_resp({"JWT": self.get_argument("JWT")})
        for item in items:
            number = str(len(self.state.lineitems) + 1)
            line = item.get("lineItem", {})
            self.state.lineitems[number] = {
                "label": line.get("label", item.get("title")),
                "scoreMaximum": line.get("scoreMaximum"),
                "resourceId": line.get("resourceId", item.get("title")),
                "custom": item.get("custom", {}),
                "context": self.state.context_id,
            }
            self.state.scores[number] = {}
        titles = ", ".join(item.get("title", "") for item in items)
        self.write(f"<p id=placed>Placed: {tornado.escape.xhtml_escape(titles)}</p>")


class Token(Handler):
    def post(self):
        conf = self.conf()
        conf.get_registration()
        form = {key: self.get_argument(key) for key in self.request.arguments}
        try:
            self.write(dict(conf.get_access_token(form)))
        except (PlatformError, Exception) as error:  # noqa: BLE001 - any bad assertion is a 400
            self.set_status(400)
            self.write({"error": "invalid_client", "error_description": str(error)})


class Scores(Handler):
    def post(self, item_id):
        if self.state.refuse_scores:
            self.set_status(503)
            self.write({"error": "the gradebook is down for maintenance"})
            return
        conf = self.conf()
        conf.get_registration()
        token = self.request.headers.get("Authorization", "").removeprefix("Bearer ")
        try:
            allowed = conf.validate_token(token, allowed_scopes=["https://purl.imsglobal.org/spec/lti-ags/scope/score"])
        except Exception:  # noqa: BLE001
            allowed = False
        if not allowed or self.request.headers.get("Content-Type") != SCORE_TYPE or item_id not in self.state.scores:
            self.set_status(401 if not allowed else 400)
            return
        score = json.loads(self.request.body)
        self.state.scores[item_id][score["userId"]] = score
        self.set_status(200)


class Memberships(Handler):
    """Names and Role Provisioning Services: the course's members, a page at a time, for a token with its scope."""

    def get(self, context):
        conf = self.conf()
        conf.get_registration()
        token = self.request.headers.get("Authorization", "").removeprefix("Bearer ")
        scope = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
        try:
            allowed = conf.validate_token(token, allowed_scopes=[scope])
        except Exception:  # noqa: BLE001
            allowed = False
        if not allowed or context != self.state.context_id:
            self.set_status(401 if not allowed else 404)
            return
        self.state.members_read += 1
        page = int(self.get_argument("page", "1"))
        size = self.state.members_page
        members = self.state.members[(page - 1) * size : page * size]
        if page * size < len(self.state.members):
            self.set_header("Link", f'<{self.state.url}/memberships/{context}?page={page + 1}>; rel="next"')
        self.set_header("Content-Type", "application/vnd.ims.lti-nrps.v2.membershipcontainer+json")
        url = f"{self.state.url}/memberships/{context}"
        self.write(json.dumps({"id": url, "context": {"id": context}, "members": members}))


class Platform:
    """The platform, served from its own thread and event loop (the tool's requests to it block)."""

    def __init__(self, port: int, tool_url: str, host: str = "127.0.0.1"):
        """Served on 127.0.0.1:``port``, known as ``host`` (localhost: the same site as a tool there, as an LMS
        and a tool on https are to each other's cookies)."""
        self.state = PlatformState(url=f"http://{host}:{port}", tool_url=tool_url)
        self.port = port
        self._loop = None
        self._ready = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()
        self._ready.wait(10)

    def _serve(self):
        async def run():
            routes = [
                ("/start", Start),
                ("/authorize", Authorize),
                ("/jwks", Jwks),
                ("/deeplink-return", DeepLinkReturn),
                ("/token", Token),
                (r"/lineitems/(\w+)/scores", Scores),
                (r"/memberships/([\w-]+)", Memberships),
            ]
            app = tornado.web.Application([(path, h, {"state": self.state}) for path, h in routes])
            server = tornado.httpserver.HTTPServer(app)
            server.listen(self.port, address="127.0.0.1")
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            self._ready.set()
            await self._stop.wait()
            server.stop()

        asyncio.run(run())

    def stop(self):
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._stop.set)
            self._loop = None

    def start_url(self, user: str, assignment: str = "", deep: bool = False, context: str = "") -> str:
        query = {"user": user, "assignment": assignment} | ({"deep": "1"} if deep else {})
        query |= {"context": context} if context else {}
        return f"{self.state.url}/start?{urlencode(query)}"

    def registration(self) -> dict:
        """The platform's entry for the tool's config file."""
        return {
            "issuer": self.state.url,
            "client_id": self.state.client_id,
            "deployment_ids": [self.state.deployment_id],
            "auth_login_url": f"{self.state.url}/authorize",
            "auth_token_url": f"{self.state.url}/token",
            "key_set_url": f"{self.state.url}/jwks",
        }


def serve_tool(app, port: int):
    """The tool's tornado application on 127.0.0.1:port from its own thread; returns a function that stops it
    and waits until it has."""
    ready, holder = threading.Event(), {}

    async def run():
        server = tornado.httpserver.HTTPServer(app)
        server.listen(port, address="127.0.0.1")
        holder["loop"], holder["stop"] = asyncio.get_running_loop(), asyncio.Event()
        ready.set()
        await holder["stop"].wait()
        server.stop()

    thread = threading.Thread(target=lambda: asyncio.run(run()), daemon=True)
    thread.start()
    assert ready.wait(10), f"the tool did not start on 127.0.0.1:{port}"

    def stop():  # returns once the port is closed: a tool started again on it (reconfigure) can listen
        holder["loop"].call_soon_threadsafe(holder["stop"].set)
        thread.join(10)

    return stop
