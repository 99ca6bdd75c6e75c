"""What the LTI tool remembers.

- ``OneTimeStore``: the OIDC states and nonces of launches under way, in the tool's memory, each for a few
  minutes; a nonce is taken when a launch uses it, so the same id_token sent again is refused.
- ``CourseLinks``: per course, ``lti.json`` in the course folder: the LMS course (context) the tool is bound
  to, set by the instructor's first placement (Deep Linking); each account's LMS identity (issuer, deployment,
  the LMS's user id ``sub``, and the client), bound at its first launch and never moved to another identity; and
  each assignment's line item (the AGS endpoint the LMS gave with a launch from the bound context). Written whole,
  then renamed into place.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from pylti1p3.launch_data_storage.base import LaunchDataStorage
from pylti1p3.session import SessionService

from autograder.files import atomic_path

LINKS_FILE = "lti.json"
USERNAME = re.compile(r"^[a-z_][a-z0-9_-]{0,31}$")  # a system account's name (useradd's default rule)


class OneTimeStore(LaunchDataStorage):
    """PyLTI1p3's launch storage in this process's memory, with an expiry per key (thread-safe)."""

    def __init__(self, lifetime: float = 600):
        super().__init__()
        self._values: dict[str, tuple[float, object]] = {}
        self._lock = threading.Lock()
        self.lifetime = lifetime

    def get_session_cookie_name(self):
        return None  # keys are random (states, nonces, launch ids): no session cookie needed

    def get_value(self, key):
        with self._lock:
            expires, value = self._values.get(key, (0.0, None))
            return value if expires > time.monotonic() else None

    def set_value(self, key, value, exp=None):
        with self._lock:
            self._values = {k: v for k, v in self._values.items() if v[0] > time.monotonic()}
            self._values[key] = (time.monotonic() + min(exp or self.lifetime, self.lifetime), value)

    def take(self, key) -> bool:
        """True once for a key that is there and alive, then it is gone."""
        with self._lock:
            expires, _ = self._values.pop(key, (0.0, None))
            return expires > time.monotonic()

    def check_value(self, key):
        return self.get_value(key) is not None

    def can_set_keys_expiration(self):
        return True


class OneTimeSessions(SessionService):
    """PyLTI1p3's session service over a OneTimeStore, where checking a nonce uses it up."""

    def __init__(self, store: OneTimeStore):
        self.data_storage = store

    def check_nonce(self, nonce: str) -> bool:
        return self.data_storage.take(self._get_key("nonce", nonce))


class IdentityTaken(Exception):
    """The account is bound to another LMS identity; the message says so, for the page."""


def same_person(one: dict, other: dict) -> bool:
    """Whether two identities are one person: the same issuer, deployment and ``sub`` (names never count)."""
    return all(str(one.get(key)) == str(other.get(key)) for key in ("issuer", "deployment_id", "sub"))


def same_context(one: dict, other: dict) -> bool:
    """Whether two contexts are one LMS course: the same issuer, deployment and context id."""
    return all(str(one.get(key)) == str(other.get(key)) for key in ("issuer", "deployment_id", "id"))


class CourseLinks:
    """The course's lti.json: {"context": the LMS course, "students": {account: identity}, "assignments": {name:
    line item}}."""

    _locks: dict[Path, threading.Lock] = {}  # one per file in this process, whichever object writes it

    def __init__(self, course: Path):
        self.path = (Path(course) / LINKS_FILE).resolve()
        self._lock = CourseLinks._locks.setdefault(self.path, threading.Lock())

    def read(self) -> dict:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {"students": {}, "assignments": {}}
        except ValueError as error:
            raise ValueError(f"{self.path} is not JSON ({error}): restore it from a backup or delete it") from None
        data.setdefault("students", {})
        data.setdefault("assignments", {})
        return data

    def update(self, section: str, key: str, value: dict) -> None:
        with self._lock:
            data = self.read()
            data[section][key] = value
            write_json(self.path, data)

    def account_of(self, identity: dict) -> str | None:
        """The account bound to ``identity`` (issuer, deployment_id, sub), or None."""
        for account, known in self.read()["students"].items():
            if same_person(known, identity):
                return account
        return None

    def bind(self, account: str, identity: dict, *, moves: bool = False) -> str:
        """``account`` bound to ``identity``, or the account it was bound to before (an identity keeps its
        account) and an account keeps its identity: IdentityTaken when ``account`` belongs to another. With
        ``moves`` (the roster names ``account`` for ``identity``: the instructor's word) the binding is made
        whatever was bound before."""
        with self._lock:
            data = self.read()
            for known_account, known in list(data["students"].items()):
                if same_person(known, identity):
                    if known_account == account or not moves:
                        return known_account
                    del data["students"][known_account]
            held = data["students"].get(account)
            if held is not None and not moves:
                raise IdentityTaken(
                    f"refused: the course account {account!r} belongs to another LMS user; ask the instructor"
                )
            data["students"][account] = identity
            write_json(self.path, data)
            return account

    def bind_context(self, context: dict) -> dict:
        """The course's LMS context: ``context`` when none is bound yet (then bound), else the one bound."""
        with self._lock:
            data = self.read()
            if not data.get("context"):
                data["context"] = context
                write_json(self.path, data)
            return data["context"]

    def record_lineitem(self, assignment: str, item: dict) -> bool:
        """The line item of ``assignment``, kept when ``item["context"]`` is the bound context (else nothing
        changes, and False)."""
        with self._lock:
            data = self.read()
            bound = data.get("context")
            if not bound or not same_context(bound, item["context"]):
                return False
            data["assignments"][assignment] = item
            write_json(self.path, data)
            return True

    def record_memberships(self, service: dict) -> bool:
        """The course's members' service (NRPS: its URL, issuer, client), kept when ``service["context"]`` is the
        bound context (else nothing changes, and False); unchanged, nothing is written."""
        with self._lock:
            data = self.read()
            bound = data.get("context")
            if not bound or not same_context(bound, service["context"]):
                return False
            if data.get("memberships") != service:
                data["memberships"] = service
                write_json(self.path, data)
            return True

    def record_members(self, issuer: str, members: dict) -> None:
        """The members the LMS lists for the course ({sub: their roles, status, account}), of ``issuer``."""
        with self._lock:
            data = self.read()
            data.setdefault("members", {})[issuer] = members
            write_json(self.path, data)


def write_json(path: Path, data) -> None:
    """``data`` as JSON at ``path``, whole or not at all (grading.ledger's one atomic write), flushed to disk, mode
    0600 (it names students)."""
    with atomic_path(path, durable=True) as temporary:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=1, sort_keys=True)


@dataclass
class Learners:
    """The learners lti.json lists, by account: active and dropped."""

    active: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # "name: why"


def roster_learners(course: Path, refused: tuple = ()) -> Learners:
    """The learners of the course's lti.json (every platform's), by the account the roster decided; an account
    that is not a plain system name, or one of ``refused`` (the hub's instructor), is refused with the reason."""
    learners = Learners()
    members = CourseLinks(course).read().get("members", {})
    for issuer in sorted(members):
        for sub, member in sorted(members[issuer].items()):
            account = member.get("account")
            if not member.get("learner") or account is None:
                continue
            if not isinstance(account, str) or not USERNAME.match(account) or account in refused:
                learners.refused.append(
                    f"{str(account)[:40]!r} (sub {str(sub)[:40]}): not an account name this hub makes"
                )
                continue
            (learners.active if member.get("status") == "active" else learners.dropped).append(account)
    learners.active = sorted(set(learners.active))
    learners.dropped = sorted(set(learners.dropped) - set(learners.active))
    return learners
