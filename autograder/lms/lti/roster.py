"""The course's members from the LMS (LTI Names and Role Provisioning Services), each by issuer + sub, with roles.

A launch or Deep Linking from the bound LMS course names its members' service (the NRPS claim); the tool keeps its
URL in the course's lti.json (``record_memberships``). ``sync_members`` then reads every member with their roles
through PyLTI1p3's NamesRolesProvisioningService (the tool's signed client assertion, as for the scores) and
merges them into lti.json's ``members`` (issuer -> sub -> roles, status, account):

- a Learner (and nobody's staff: accounts.is_learner_only's rule) gets their course account now, decided as at
  their first launch (accounts.py: the roster's ``lti_sub`` line, else the account bound to them, else the name
  derived from issuer, deployment and sub), never from a name the LMS or the student chose;
- staff keep their roles from the platform's claim (they sign in to the hub with its own login: no account here);
- a member the LMS no longer lists, or lists as Inactive or Deleted, is marked dropped (their account and grades
  stay); one listed again Active is back.

What changed is said (added, dropped, back, roles changed); a run with nothing changed writes nothing.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field

from pylti1p3.names_roles import NamesRolesProvisioningService
from pylti1p3.service_connector import ServiceConnector

from autograder.lms.lti.accounts import STAFF_ROLES, NoAccount, derived_account, role_names, roster_account
from autograder.lms.lti.config import LtiConfig
from autograder.lms.lti.passback import TimedSession
from autograder.lms.lti.store import CourseLinks

NRPS_CLAIM = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
GONE = ("Inactive", "Deleted")  # NRPS statuses of a member who left the course
VOCABULARY = frozenset({"membership", "institution", "system", "person"})  # parts of a role's URI, not roles


class RosterError(Exception):
    """The members cannot be read; the message says why and what to do."""


@dataclass
class RosterChange:
    added: list[str] = field(default_factory=list)  # "account (roles)" or "sub (roles)" for staff
    dropped: list[str] = field(default_factory=list)
    back: list[str] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)  # "who: old -> new"
    members: int = 0
    learners: list[str] = field(default_factory=list)  # the learners' accounts, active ones

    @property
    def changed(self) -> bool:
        return bool(self.added or self.dropped or self.back or self.roles)

    def lines(self) -> list[str]:
        said = [f"LMS roster: {self.members} members, {len(self.learners)} active learners"]
        said += [f"ADDED {who}" for who in self.added] + [f"DROPPED {who}" for who in self.dropped]
        said += [f"BACK {who}" for who in self.back] + [f"ROLES {who}" for who in self.roles]
        return said if self.changed else [*said, "nothing changed"]


def record_memberships(config: LtiConfig, body: dict, context: dict) -> bool:
    """The members' service URL of a launch from the bound course, kept in lti.json (False: none, or another
    course)."""
    claim = body.get(NRPS_CLAIM) or {}
    url = claim.get("context_memberships_url")
    if not isinstance(url, str) or not url.startswith(("https://", "http://")):
        return False
    audience = body["aud"] if isinstance(body["aud"], str) else body["aud"][0]
    service = {"url": url, "issuer": str(body["iss"]), "client_id": str(audience), "context": context}
    return CourseLinks(config.course).record_memberships(service)


def read_members(config: LtiConfig, service: dict) -> list[dict]:
    """Every member the LMS lists for the course (each NRPS page followed)."""
    registration = config.tool_conf().find_registration_by_params(service["issuer"], service["client_id"])
    if registration is None:
        raise RosterError(f"the platform {service['issuer']} is no longer in the LTI config")
    connector = ServiceConnector(registration, requests_session=TimedSession())
    nrps = NamesRolesProvisioningService(connector, {"context_memberships_url": service["url"]})
    return nrps.get_members()


def sync_members(config: LtiConfig, *, now: datetime.datetime | None = None) -> RosterChange:
    """The course's members read from the LMS and merged into lti.json (see the module); what changed."""
    links = CourseLinks(config.course)
    service = links.read().get("memberships")
    if not service:
        raise RosterError(
            "the LMS has not named the course's members' service yet: open an assignment (or Deep Linking) from "
            "the LMS course once, then run this again"
        )
    listed = read_members(config, service)
    stamp = (now or datetime.datetime.now(datetime.UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    deployment = service["context"].get("deployment_id", "")
    change, seen = RosterChange(members=len(listed)), set()
    known = dict(links.read().get("members", {}).get(service["issuer"], {}))
    merged = dict(known)
    for member in listed:
        sub = str(member.get("user_id", ""))
        if not sub or sub in seen:
            continue
        seen.add(sub)
        roles = sorted(role_names(member.get("roles", [])) - VOCABULARY)
        learner = "Learner" in roles and not set(roles) & STAFF_ROLES
        identity = {"issuer": service["issuer"], "deployment_id": deployment, "sub": sub}
        account = None
        if learner:
            try:
                listed_account = roster_account(config, identity)
            except NoAccount as error:
                raise RosterError(str(error).removeprefix("refused: ")) from None
            account = listed_account or links.account_of(identity) or links.bind(derived_account(identity), identity)
        status = "dropped" if member.get("status") in GONE else "active"
        before = known.get(sub)
        who = f"{account or sub} ({', '.join(roles) or 'no role'})"
        if before is None:
            (change.added if status == "active" else change.dropped).append(who)
        elif before["status"] != status:
            (change.back if status == "active" else change.dropped).append(who)
        elif before["roles"] != roles:
            change.roles.append(f"{account or sub}: {', '.join(before['roles'])} -> {', '.join(roles)}")
        entry = {"roles": roles, "learner": learner, "account": account, "status": status}
        if before is not None and all(before.get(key) == value for key, value in entry.items()):
            entry = before  # unchanged: its dates kept
        else:
            entry = {**entry, "changed": stamp}
        merged[sub] = entry
        if learner and status == "active":
            change.learners.append(account)
    for sub, before in known.items():
        if sub not in seen and before["status"] != "dropped":
            merged[sub] = {**before, "status": "dropped", "changed": stamp}
            change.dropped.append(f"{before.get('account') or sub} (no longer listed)")
    if change.changed:
        links.record_members(service["issuer"], merged)
    change.learners.sort()
    return change
