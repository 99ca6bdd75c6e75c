"""Which course account an LMS user is: decided by what the platform signs, never by a name.

A person is (issuer, deployment_id, sub): the platform's signed id_token proves those three. The LMS's
``preferred_username``, name and email are the LMS's words about that person, which another LMS user (or
another platform registered with the tool) may share; they choose nothing here.

The account of a Learner's first launch is, in this order:

1. the account already bound to that identity in the course's lti.json (an identity keeps its account);
2. the ``student_id`` of the roster line (``<course>/roster.csv``) whose ``lti_sub`` is the launch's ``sub``
   (``lti_issuer`` and ``lti_deployment_id`` must match too when written; they may be left empty only while the
   config registers a single platform with a single deployment);
3. otherwise a name derived from the identity, ``lti-`` and 12 characters of its SHA-256 (``lti-k3x7...``):
   stable, a valid system account name, and never the name of an existing person's account.

An account once bound to an identity is never given to another (store.CourseLinks.bind). Only a launch whose
roles are a Learner's and nobody's staff (no Instructor, Administrator, TeachingAssistant, ContentDeveloper,
Mentor, no institution or system staff role) is signed in: staff open the hub with its own login.
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

from autograder.lms.files import ExportError, read_roster
from autograder.lms.lti.config import LtiConfig
from autograder.lms.lti.store import USERNAME

ROLES_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/roles"
STAFF_ROLES = frozenset(
    {
        "Instructor",
        "Administrator",
        "TeachingAssistant",
        "ContentDeveloper",
        "Mentor",
        "SysAdmin",
        "SysSupport",
        "AccountAdmin",
        "Creator",
        "Faculty",
        "Staff",
    }
)
DERIVED_PREFIX = "lti-"


class NoAccount(Exception):
    """The launch maps to no account it may use; the message says why, for the page."""


def role_names(roles) -> set[str]:
    """Every name in the launch's role URIs (``.../membership/Instructor#TeachingAssistant`` gives Instructor and
    TeachingAssistant; a short role such as ``Learner`` gives itself)."""
    names = set()
    for role in roles if isinstance(roles, list) else []:
        tail = str(role).rsplit("/lis/v2/", 1)[-1]
        names.update(part for part in tail.replace("#", "/").split("/") if part)
    return names


def is_learner_only(body: dict) -> bool:
    """Whether the launch's roles are a Learner's and no staff role's."""
    names = role_names(body.get(ROLES_CLAIM))
    return "Learner" in names and not names & STAFF_ROLES


def identity_of(body: dict) -> dict:
    """The person the platform signed for: issuer, deployment, sub (and the client, for the scores)."""
    audience = body["aud"] if isinstance(body["aud"], str) else body["aud"][0]
    return {
        "issuer": str(body["iss"]),
        "client_id": str(audience),
        "deployment_id": str(body["https://purl.imsglobal.org/spec/lti/claim/deployment_id"]),
        "sub": str(body["sub"]),
    }


def derived_account(identity: dict) -> str:
    """``lti-`` and 12 base32 characters of SHA-256(issuer, deployment, sub): the same person, the same name."""
    text = "\n".join((identity["issuer"], identity["deployment_id"], identity["sub"]))
    digest = base64.b32encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii").lower()
    return DERIVED_PREFIX + digest[:12]


def roster_account(config: LtiConfig, identity: dict) -> str | None:
    """The roster's ``student_id`` for ``identity``, or None when no line names it."""
    path = Path(config.course) / "roster.csv"
    if not path.is_file():
        return None
    try:
        roster = read_roster(path)
    except ExportError as error:
        raise NoAccount(f"refused: the course's roster cannot be read ({error}); ask the instructor") from None
    issuers = {platform.issuer for platform in config.platforms}
    deployments = {d for p in config.platforms if p.issuer == identity["issuer"] for d in p.deployment_ids}
    found = []
    for student, row in roster.items():
        if not row.lti_sub or row.lti_sub != identity["sub"]:
            continue
        if (row.lti_issuer or (next(iter(issuers)) if len(issuers) == 1 else "")) != identity["issuer"]:
            continue
        if (row.lti_deployment_id or (next(iter(deployments)) if len(deployments) == 1 else "")) != identity[
            "deployment_id"
        ]:
            continue
        found.append(student)
    if len(found) > 1:
        raise NoAccount(f"refused: the course's roster gives this LMS user {len(found)} accounts; ask the instructor")
    if found and not USERNAME.match(found[0]):
        raise NoAccount(f"refused: the roster's account {found[0]!r} is not a course account name; ask the instructor")
    return found[0] if found else None


def account_for(config: LtiConfig, links, body: dict) -> str:
    """The course account of a Learner's launch, bound to its identity in lti.json. Raises NoAccount, or
    store.IdentityTaken when the account belongs to another LMS user."""
    if not is_learner_only(body):
        raise NoAccount(
            "refused: this launch's roles are not a student's (an instructor, assistant or administrator of the "
            "LMS): staff sign in to the hub with its own login"
        )
    identity = identity_of(body)
    listed = roster_account(config, identity)
    if listed is not None:
        return links.bind(listed, identity, moves=True)
    return links.account_of(identity) or links.bind(derived_account(identity), identity)
