"""One way in for a course's Submits, whatever exchange carries them: the grading service and Collect read only this.

    exchange = open_exchange(settings.exchange, folder=ROOT / course_id, course_id=course_id)
    exchange.marker()                         # (stamp, when it last changed, epoch seconds), None: no inbound yet
    exchange.names()                          # {raw name} of every Submit it holds (names as read_name reads them)
    exchange.examine(raw, assignment, notebook)  # a Submit of that assignment, a reason it is none, None: another's
    exchange.refusal(folder, student)         # why that Submit is not the student's own readable work, else None
    exchange.collect(name, destination, keep=...)  # the Submit's files copied whole into destination; Refused
    exchange.inbound                          # where each Submit's files lie for the checks (folder / name / ...)
    exchange.settles                          # whether a Submit's files may still change after it arrived

Two implementations:

- ``Folder``: nbgrader's exchange folder on one machine, read as before this module existed. Who submitted is the
  folder's owner (a system account per student), when it arrived is the system's change time (st_ctime: its owner
  cannot set it), never the time the name states; files are read through folder descriptors, no link followed
  (autograder.exchange.snapshot).
- ``autograder.exchange.ngshare.NgShare``: an ngshare service (the exchange of a hub on Kubernetes). Who submitted
  is the hub account whose token made the Submit, when it arrived is the time ngshare recorded; each Submit's files
  come as bytes and are judged by the same rules and words as snapshot's before a private copy is written.
"""

from __future__ import annotations

import datetime
import os
import pwd
import stat
from pathlib import Path
from typing import Protocol

from autograder.exchange import snapshot
from autograder.exchange.inbound import Entry, NotTheirs, Submit, read_name
from autograder.exchange.ngshare import NgShare, token_from
from autograder.settings import ExchangeService

MOST_ENTRIES = snapshot.Limits().entries  # files and folders one submission may hold
__all__ = ["Exchange", "Folder", "NgShare", "Submit", "open_exchange"]


class Exchange(Protocol):
    inbound: Path
    settles: bool

    def marker(self) -> tuple[object, float] | None: ...

    def names(self) -> set[bytes]: ...

    def examine(self, raw: bytes, assignment: str, notebook: str) -> Submit | str | None: ...

    def refusal(self, folder: Path, student: str) -> str | None: ...

    def collect(self, name: str, destination: Path, *, keep: snapshot.Keep | None = None) -> int: ...


def changed_at(status: os.stat_result) -> datetime.datetime:
    """A change time (st_ctime: set by the system, never by the file's owner) as naive UTC."""
    return datetime.datetime.fromtimestamp(status.st_ctime, datetime.UTC).replace(tzinfo=None)


def account_id(name: str) -> int | None:
    try:
        return pwd.getpwnam(name).pw_uid
    except KeyError:
        return None


class Folder:
    """nbgrader's exchange folder of one course (``inbound``: its inbound/), a system account per student."""

    settles = True  # the student owns the Submit's folder: its files may change after it arrived

    def __init__(self, inbound: Path, limits: snapshot.Limits = snapshot.Limits(entries=MOST_ENTRIES)):
        self.inbound, self.limits = Path(inbound), limits

    def marker(self) -> tuple[object, float] | None:
        """The inbound's (inode, modification time) and that time, or None when there is no inbound."""
        try:
            status = os.stat(self.inbound)
        except FileNotFoundError:
            return None
        return (status.st_ino, status.st_mtime_ns), status.st_mtime

    def names(self) -> set[bytes]:
        try:
            return set(os.listdir(os.fsencode(self.inbound)))
        except FileNotFoundError:
            return set()

    def examine(self, raw: bytes, assignment: str, notebook: str) -> Submit | str | None:
        """One entry of the inbound, judged alone: a Submit of ``assignment``, else why it is not one (a sentence),
        or None when it is another assignment's. Never follows a link; reads the folder's metadata only."""
        entry = read_name(raw)
        if not isinstance(entry, Entry):
            return None if entry.assignment not in (None, assignment) else entry.reason
        if entry.assignment != assignment:
            return None
        name, student, stated = entry.name, entry.student, entry.stated
        folder = self.inbound / name
        try:
            status = os.lstat(folder)
        except OSError as error:
            return f"it cannot be examined ({error.strerror})"
        if stat.S_ISLNK(status.st_mode):
            return "it is a symbolic link, not a folder"
        if not stat.S_ISDIR(status.st_mode):
            return "it is not a folder (a file, a pipe or a device)"
        observed = changed_at(status)
        try:
            observed = max(observed, changed_at(os.lstat(folder / notebook)))
        except OSError:  # no notebook (yet), or a folder the grader cannot enter: the check says so
            pass
        return Submit(name, student, assignment, stated, observed, folder)

    def refusal(self, folder: Path, student: str) -> str | None:
        """Why ``folder`` (a Submit of the inbound) cannot be collected as ``student``'s, or None (a NotTheirs when
        it is not that student's own). Reads the folder as ``snapshot.copy`` would, copying nothing."""
        uid = account_id(student)
        if uid is None:
            return NotTheirs(f"{Path(folder).name}: no account {student!r} on this machine")
        try:
            snapshot.scan(Path(folder), owner=uid, student=student, limits=self.limits)
        except snapshot.Refused as refused:
            return refused.reason
        return None

    def collect(self, name: str, destination: Path, *, keep: snapshot.Keep | None = None) -> int:
        """The Submit ``name`` copied to ``destination`` by ``snapshot.collect`` (whole or not at all); Refused."""
        student = name.split("+", 1)[0]
        uid = account_id(student)
        if uid is None:
            raise snapshot.Refused(NotTheirs(f"{name}: no account {student!r} on this machine"))
        return snapshot.collect(self.inbound / name, Path(destination), owner=uid, limits=self.limits, keep=keep)


def open_exchange(chosen: ExchangeService, *, folder: Path, course_id: str, copies: Path | None = None) -> Exchange:
    """The course's exchange as its settings choose (``chosen``: CourseSettings.exchange, c.ExchangeService.*):
    ``folder`` is nbgrader's exchange folder of the course (ROOT/<course id>, holding inbound/); ``copies``: where
    an ngshare exchange keeps its private copies of the Submits (default: beside the folder, made private)."""
    if chosen.kind == "folder":
        return Folder(Path(folder) / "inbound")
    return NgShare(
        chosen.url,
        token_from(chosen.token_env),
        course_id=course_id,
        copies=Path(copies) if copies is not None else Path(folder) / "ngshare-copies",
    )
