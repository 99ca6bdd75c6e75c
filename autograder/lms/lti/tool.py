"""The LTI 1.3 tool as a small web service beside the hub (tornado, PyLTI1p3 for the protocol).

    python -m autograder.lms.lti --config /etc/attention/lti/tool.json --port 8020

Endpoints under the config's tool_url (register them in the LMS):

- ``/jwks``: the tool's public key, for the LMS to check what the tool signs (Deep Linking, score requests);
- ``/login``: the OIDC login the LMS starts; the browser is sent back to the LMS with a fresh state (a cookie)
  and nonce;
- ``/launch``: the LMS's signed launch. Refused with a message that says why: a signature that is not the
  platform's, a token issued to another client (its ``azp``, or several audiences and none chosen: OpenID Connect
  Core 3.1.3.7, the LTI security framework 5.1.3), an expired token, a nonce used before (a replay), a deployment
  this tool does not know, a course (context) other than the one the tool is bound to. A Learner's launch signs
  them in (a cookie signed by this process) as the account of their LMS identity, issuer + deployment + ``sub``
  (autograder.lms.lti.accounts: the roster's line, or a name derived from the identity; never the LMS's
  username), and records the assignment's line item in the course's lti.json; an instructor's Deep Linking
  launch shows the course's assignments to place;
- ``/deeplink``: the instructor's choice, sent back to the LMS as a signed Deep Linking response; the first
  placement binds the tool to that LMS course. A Deep Linking launch places once, from the browser that launched
  (autograder.lms.lti.placement): used again, or from another browser, it is refused and says so;
- ``/home``: who is signed in, in which LMS course and assignment (the landing page when no hub_url is set);
  with hub_url, a student goes on to their JupyterHub account (autograder.lms.lti.hub_login), in this browser only.
"""

from __future__ import annotations

import html
import json
import re
import secrets
from urllib.parse import quote, urlencode, urlparse

import jwt
import tornado.web
from pylti1p3.cookie import CookieService
from pylti1p3.deep_link_resource import DeepLinkResource
from pylti1p3.exception import LtiException, OIDCException
from pylti1p3.lineitem import LineItem
from pylti1p3.message_launch import MessageLaunch
from pylti1p3.oidc_login import OIDCLogin
from pylti1p3.redirect import Redirect
from pylti1p3.request import Request

from autograder.lms.lti import placement
from autograder.lms.lti.accounts import NoAccount, account_for, identity_of
from autograder.lms.lti.config import LtiConfig
from autograder.lms.lti.handoff import LIFETIME, browser_cookie, browser_value, handoff_token
from autograder.lms.lti.passback import TimedSession
from autograder.lms.lti.roster import record_memberships
from autograder.lms.lti.store import CourseLinks, IdentityTaken, OneTimeSessions, OneTimeStore, same_context
from autograder.settings import CourseSettings

ASSIGNMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
AGS_CLAIM = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
CUSTOM_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/custom"
CONTEXT_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/context"
DEPLOYMENT_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/deployment_id"
USER_COOKIE = "attention-lti-user"


class LaunchRefused(Exception):
    """A launch the tool will not accept; the message is shown to the person who launched."""


def explain(error: Exception, body: dict | None = None) -> str:
    """PyLTI1p3's reason for refusing a launch, said so that the person reading it knows what to do."""
    text = str(error)
    if text.startswith("refused: "):  # the tool's own checks (ToolLaunch) say it already
        return text
    if "Signature verification failed" in text or "Unable to find public key" in text:
        return "refused: the launch is not signed with the platform's registered key (wrong signature)"
    if "Signature has expired" in text:
        return "refused: the launch token has expired; launch the assignment again from the LMS"
    if "Invalid Nonce" in text:
        return "refused: this launch was already used (its nonce was seen before: a replay) or is too old"
    if "Unable to find deployment" in text:
        deployment = (body or {}).get(DEPLOYMENT_CLAIM, "?")
        return (
            f"refused: deployment {deployment!r} is not registered with this tool; the administrator adds it "
            "to the platform's deployment_ids in the LTI config"
        )
    if "State not found" in text or "Missing state" in text:
        return "refused: this launch did not start from a login in this browser; launch again from the LMS"
    if "Registration not found" in text or "Could not find registration" in text:
        return "refused: the platform (issuer and client id) is not registered with this tool"
    return f"refused: {text}"


class TornadoRequest(Request):
    def __init__(self, handler: tornado.web.RequestHandler):
        self.handler = handler

    def is_secure(self) -> bool:
        return self.handler.request.protocol == "https"

    def get_param(self, key: str) -> str:
        return self.handler.get_argument(key, None)


class TornadoCookies(CookieService):
    def __init__(self, handler: tornado.web.RequestHandler):
        self.handler = handler

    def get_cookie(self, name):
        return self.handler.get_cookie(f"{self._cookie_prefix}-{name}")

    def set_cookie(self, name, value, exp=3600):
        secure = self.handler.request.protocol == "https"
        self.handler.set_cookie(
            f"{self._cookie_prefix}-{name}",
            str(value),
            expires_days=(exp or 3600) / 86400,
            httponly=True,
            secure=secure,
            samesite="None" if secure else "Lax",  # the launch is a POST from the LMS's site
        )


class TornadoRedirect(Redirect):
    def __init__(self, handler: tornado.web.RequestHandler, location: str):
        self.handler, self.location = handler, location

    def do_redirect(self):
        self.handler.redirect(self.location)

    def do_js_redirect(self):
        self.handler.write(f"<script>window.location.href={json.dumps(self.location)};</script>")

    def set_redirect_url(self, location):
        self.location = location

    def get_redirect_url(self):
        return self.location


class ToolLogin(OIDCLogin):
    def __init__(self, handler, tool_conf, sessions):
        super().__init__(TornadoRequest(handler), tool_conf, sessions, TornadoCookies(handler))
        self.handler = handler

    def get_redirect(self, url):
        return TornadoRedirect(self.handler, url)


class ToolLaunch(MessageLaunch):
    def _get_request_param(self, key):
        return self._request.get_param(key)

    def validate_registration(self):
        """The registration PyLTI1p3 finds, and the token issued to it: PyLTI1p3 reads the client id from the
        first audience and checks neither the others nor ``azp``."""
        super().validate_registration()
        problem = not_for_client(self._get_jwt_body(), self._registration.get_client_id())
        if problem:
            raise LtiException(problem)
        return self


class Base(tornado.web.RequestHandler):
    @property
    def lti(self) -> LtiConfig:
        return self.settings["lti"]

    def services(self) -> dict:
        return {
            "tool_config": self.settings["tool_conf"],
            "session_service": OneTimeSessions(self.settings["store"]),
            "cookie_service": TornadoCookies(self),
            "requests_session": TimedSession(),  # the platform's keys: never wait on the LMS for long
        }

    def refuse(self, status: int, message: str) -> None:
        self.set_status(status)
        self.write(f"<!doctype html><title>LTI launch refused</title><p id=refused>{html.escape(message)}</p>")


class Jwks(Base):
    def get(self):
        self.write(self.settings["tool_conf"].get_jwks())


class Login(Base):
    def get(self):
        self.login()

    def post(self):
        self.login()

    def login(self):
        issuer, client = self.get_argument("iss", ""), self.get_argument("client_id", "")
        if not registered(self.lti, issuer, client):
            # PyLTI1p3 would raise a bare Exception (a 500) for a platform it does not know
            self.refuse(400, unknown_issuer(issuer, client if registered(self.lti, issuer) else ""))
            return
        try:
            ToolLogin(self, self.settings["tool_conf"], OneTimeSessions(self.settings["store"])).redirect(
                f"{self.lti.tool_url}/launch"
            )
        except (OIDCException, LtiException) as error:
            self.refuse(400, explain(error))


class Launch(Base):
    def check_xsrf_cookie(self):  # the LMS posts the signed launch: the id_token is the proof
        pass

    def post(self):
        issuer, client = unverified_platform(self.get_argument("id_token", ""))
        if not client or not registered(self.lti, issuer, client):
            # PyLTI1p3 would raise a bare Exception (a 500) for a platform it does not know
            self.refuse(403, unknown_issuer(issuer, client if registered(self.lti, issuer) else ""))
            return
        launch = ToolLaunch(TornadoRequest(self), **self.services())
        try:
            body = launch.get_launch_data()
        except LtiException as error:
            self.refuse(403, explain(error, launch._jwt.get("body")))
            return
        try:
            if launch.is_deep_link_launch():
                self.deep_link_page(launch, body)
            else:
                self.sign_in(launch, body)
        except (LaunchRefused, NoAccount, IdentityTaken) as error:
            self.refuse(403, str(error))

    def deep_link_page(self, launch: ToolLaunch, body: dict) -> None:
        if not (launch.check_teacher_access() or launch.check_staff_access() or launch.check_designer_access()):
            raise LaunchRefused("refused: only an instructor places assignments (Deep Linking)")
        context = check_context(self.lti, body, "offer")
        record_memberships(self.lti, body, context)  # kept once the tool is bound to this course
        cookie = placement.new_cookie(tool_url=self.lti.tool_url)
        store = self.settings["store"]
        placement.remember(store=store, launch_id=launch.get_launch_id(), cookie=cookie)
        self.set_cookie(
            cookie.name,
            cookie.value,
            path=cookie.path,
            expires_days=store.lifetime / 86400,
            httponly=True,
            secure=cookie.secure,
            samesite=cookie.same_site,
        )
        names = course_assignments(self.lti)
        options = "".join(f"<option>{html.escape(name)}</option>" for name in names)
        self.write(
            "<!doctype html><title>Place an assignment</title><h1>Place an assignment</h1>"
            f"<form method=post action='{html.escape(self.lti.tool_url)}/deeplink'>"
            f"<input type=hidden name=launch_id value='{html.escape(launch.get_launch_id())}'>"
            f"<select name=assignment id=assignment>{options}</select> <button id=place>Place</button></form>"
        )

    def sign_in(self, launch: ToolLaunch, body: dict) -> None:
        assignment = str((body.get(CUSTOM_CLAIM) or {}).get("assignment", ""))
        if assignment not in course_assignments(self.lti):
            raise LaunchRefused(
                f"refused: this link names no assignment of the course ({assignment!r}); the instructor places "
                "it again with Deep Linking"
            )
        context = check_context(self.lti, body)
        username = account_for(self.lti, CourseLinks(self.lti.course), body)
        record_lineitem(self.lti, body, assignment)
        record_memberships(self.lti, body, context)  # the course's members' service, for the roster (NRPS)
        title = context.get("title") or context.get("label") or context["id"]
        self.set_signed_cookie(
            USER_COOKIE,
            json.dumps({"username": username, "assignment": assignment, "course": title}),
            expires_days=1,
            httponly=True,
        )
        if self.lti.hub_url:  # into their JupyterHub account (autograder.lms.lti.hub_login), in this browser only
            browser, cookie = browser_value(), browser_cookie(self.lti.hub_url)
            hub_path = urlparse(self.lti.hub_url).path.rstrip("/")
            self.set_cookie(
                cookie["name"],
                browser,
                path=cookie["path"],
                expires_days=2 * LIFETIME / 86400,
                httponly=True,
                secure=cookie["secure"],
                samesite="Lax",
            )
            token = handoff_token(self.lti.hub_secret, username, assignment, browser, cookie["name"])
            following = f"{hub_path}/hub/user-redirect/lab/tree/{quote(assignment)}"
            self.redirect(f"{self.lti.hub_url}/hub/lti/login?{urlencode({'token': token, 'next': following})}")
            return
        self.redirect(f"{self.lti.tool_url}/home")


class DeepLinkResponse(Base):
    def check_xsrf_cookie(self):  # the launch id and the cookie bound to it (autograder.lms.lti.placement): the proof
        pass

    def post(self):
        launch_id, store = self.get_argument("launch_id", ""), self.settings["store"]
        refused = placement.refusal(store=store, launch_id=launch_id, cookie_of=self.get_cookie)
        if refused:
            self.refuse(403, refused)
            return
        try:
            launch = ToolLaunch.from_cache(launch_id, TornadoRequest(self), **self.services())
        except LtiException:
            self.refuse(403, placement.EXPIRED)
            return
        assignment = self.get_argument("assignment", "")
        maximum = course_assignments(self.lti).get(assignment)
        if not launch.is_deep_link_launch() or maximum is None:
            self.refuse(400, f"refused: {assignment!r} is not an assignment of the course")
            return
        if not maximum:
            self.refuse(
                409,
                f"refused: the gradebook does not know {assignment!r} yet, so its points are not known: the "
                "instructor generates it (nbgrader generate_assignment, or Formgrader's Generate) and places it then",
            )
            return
        taken = placement.take(store=store, launch_id=launch_id)
        if taken is None:  # another request placed with it first
            self.refuse(403, placement.MADE_ALREADY)
            return
        self.clear_cookie(taken["cookie"], path=taken["path"], secure=taken["secure"])
        try:
            check_context(self.lti, launch.get_launch_data(), "place")
        except LaunchRefused as error:
            self.refuse(403, str(error))
            return
        lineitem = LineItem().set_label(assignment).set_score_maximum(maximum).set_resource_id(assignment)
        resource = (
            DeepLinkResource()
            .set_url(f"{self.lti.tool_url}/launch")
            .set_title(assignment)
            .set_custom_params({"assignment": assignment})
            .set_lineitem(lineitem)
        )
        self.write(launch.get_deep_link().output_response_form([resource]))


class Home(Base):
    def get(self):
        signed = self.get_signed_cookie(USER_COOKIE)
        if not signed:
            self.refuse(401, "not signed in: open the assignment from the LMS")
            return
        who = json.loads(signed)
        self.write(
            "<!doctype html><title>Signed in</title>"
            f"<p>Signed in as <b id=username>{html.escape(who['username'])}</b>, "
            f"course <b id=course>{html.escape(who['course'])}</b>, "
            f"assignment <b id=assignment>{html.escape(who['assignment'])}</b></p>"
        )


def course_assignments(config: LtiConfig) -> dict[str, float]:
    """{assignment: points} of the course: its source/ folders, with the gradebook's points when known (else 0)."""
    from nbgrader.api import Gradebook

    names = sorted(p.name for p in (config.course / "source").glob("*") if p.is_dir() and ASSIGNMENT.match(p.name))
    points = dict.fromkeys(names, 0.0)
    settings = CourseSettings.read(config.course)  # the gradebook the course's settings name, SQLite or not
    if settings.has_gradebook():
        with Gradebook(settings.db) as gradebook:
            for assignment in gradebook.assignments:
                if assignment.name in points:
                    points[assignment.name] = float(assignment.max_score)
    return points


def unverified_platform(token: str) -> tuple[str, str]:
    """(iss, client id) a launch's id_token claims, read before its signature is checked (to say which platform)."""
    try:
        body = jwt.decode(token, options={"verify_signature": False})
    except (jwt.InvalidTokenError, AttributeError):
        return "", ""
    audience = body.get("aud", "")  # the client id, as PyLTI1p3 reads it (MessageLaunch.get_client_id)
    client = audience[0] if isinstance(audience, list) and audience else audience
    return str(body.get("iss", "")), client if isinstance(client, str) else ""


def not_for_client(body: dict, client: str) -> str | None:
    """Why an id_token is not issued to the tool's ``client`` id (None: it is): OpenID Connect Core 3.1.3.7, steps
    3 to 5, as the LTI security framework (5.1.3) makes them a tool's duty: ``aud`` holds the client id; with
    several audiences ``azp`` is there; an ``azp`` there is the client id."""
    audience = body.get("aud")
    audiences = audience if isinstance(audience, list) else [audience]
    issued = f"refused: the launch was issued to another tool ({{}}), not to the client id {client!r} this tool " + (
        "is registered with; the LMS's administrator checks the tool's registration there"
    )
    if client not in audiences:
        return issued.format(f"its audience, aud, is {shown(audience)}")
    if "azp" in body and body["azp"] != client:
        return issued.format(f"its authorised party, azp, is {shown(body['azp'])}")
    if len(audiences) > 1 and "azp" not in body:
        return issued.format(f"it names several audiences, {shown(audience)}, and no authorised party, azp")
    return None


def shown(value, limit: int = 200) -> str:
    """A claim's value for a refusal, cut to ``limit`` characters (what the platform signed, not a name of ours)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def registered(config: LtiConfig, issuer: str, client: str = "") -> bool:
    """Whether the config registers ``issuer`` (with ``client`` when one is named)."""
    return any(p.issuer == issuer and (not client or p.client_id == client) for p in config.platforms)


def unknown_issuer(issuer: str, client: str = "") -> str:
    shown = issuer if len(issuer) <= 200 else issuer[:200] + "..."
    which = f" with client id {client[:100]!r}" if client else ""
    return (
        f"refused: the platform {shown!r}{which} is not registered with this tool; the administrator adds it to "
        "the platforms of the LTI config (issuer, client_id, deployment_ids and its URLs)"
    )


def context_of(body: dict) -> dict:
    """The launch's LMS course: issuer, deployment and context id (its title and label for pages)."""
    claim = body.get(CONTEXT_CLAIM) or {}
    return {
        "issuer": str(body.get("iss", "")),
        "deployment_id": str(body.get(DEPLOYMENT_CLAIM, "")),
        "id": str(claim.get("id", "")),
        "title": str(claim.get("title", "")),
        "label": str(claim.get("label", "")),
    }


def check_context(config: LtiConfig, body: dict, mode: str = "launch") -> dict:
    """The launch's context, when it is the LMS course this tool serves (LaunchRefused otherwise). ``mode``:
    "launch", a student's (the course must be bound: placed before); "offer", the instructor's Deep Linking page
    (any course while none is bound); "place", the instructor's choice, whose course is bound when none is."""
    context = context_of(body)
    if not context["id"]:
        raise LaunchRefused("refused: the launch names no course (no context claim); launch it from the course")
    links = CourseLinks(config.course)
    bound = links.bind_context(context) if mode == "place" else links.read().get("context")
    if not bound and mode == "offer":
        return context
    if not bound:
        raise LaunchRefused(
            "refused: no assignment of this course has been placed in the LMS yet: the instructor places it with "
            "Deep Linking first"
        )
    if not same_context(bound, context):
        name = bound.get("title") or bound.get("id")
        raise LaunchRefused(
            f"refused: this link comes from another LMS course ({context['title'] or context['id']!r}) than the "
            f"one this tool serves ({name!r}); its scores go only to that course. To move the course to another "
            "LMS course, the administrator removes the context entry from the course's lti.json"
        )
    return bound


def record_lineitem(config: LtiConfig, body: dict, assignment: str) -> None:
    """The assignment's line item (the launch's AGS endpoint), kept when it comes from the bound course."""
    identity = identity_of(body)
    endpoint = body.get(AGS_CLAIM) or {}
    if endpoint.get("lineitem"):
        item = {"issuer": identity["issuer"], "client_id": identity["client_id"], "context": context_of(body)}
        CourseLinks(config.course).record_lineitem(assignment, {**endpoint, **item})


def make_app(config: LtiConfig) -> tornado.web.Application:
    """The tool's web application; its paths are those of config.tool_url."""
    from urllib.parse import urlparse

    prefix = urlparse(config.tool_url).path.rstrip("/")
    routes = [("/jwks", Jwks), ("/login", Login), ("/launch", Launch), ("/deeplink", DeepLinkResponse), ("/home", Home)]
    return tornado.web.Application(
        [(prefix + path, handler) for path, handler in routes],
        lti=config,
        tool_conf=config.tool_conf(),
        store=OneTimeStore(),
        cookie_secret=secrets.token_hex(32),
    )
