"""nbgrader's collect, taking only what each student made: no links, no special files, no submission in another's name.

nbgrader's own collect (nbgrader.exchange.default.ExchangeCollect) copies each submission out of the exchange's
inbound folder with ``shutil.copytree``, which follows symbolic links: a student who puts a link to
``source/<assignment>/checks.py`` or to the hub's cookie secret in a submission gets the target copied, as the
instructor, into the course's submitted/ folder and on into the grading and the feedback. A submission whose
folder is owned by another account than the student it names (a forged name) is only logged ("cheating attempt?")
and collected all the same.

``OwnCollect`` is nbgrader's documented plugin point for this (``c.ExchangeFactory.collect``): before copying it
refuses, with a message in the instructor's log, a submission that

- is not a plain folder owned by the account of the student it names (a name forged by someone else);
- holds a symbolic link, a named pipe, a socket or a device, a file or folder owned by another account, or one
  the instructor cannot read (nbgrader's submit leaves every file readable);

and it copies without following links (a link swapped in after the check is copied as a link, then removed), so a
link's target is never read. The student's earlier submission, if one passes, is collected instead of a refused one.
"""

from __future__ import annotations

import os
import pwd
import shutil
import stat
from pathlib import Path

from nbgrader.exchange.default.collect import ExchangeCollect, groupby
from nbgrader.utils import ignore_patterns


def account_id(name: str) -> int | None:
    try:
        return pwd.getpwnam(name).pw_uid
    except KeyError:
        return None


MOST_ENTRIES = 10_000  # files and folders one submission may hold (a notebook's Submit holds a handful)


class NotTheirs(str):
    """A refusal saying the submission is not the named student's own (another account made it, or no account
    of that name exists, or it is not a folder): shown to the instructor only, never on that student's pages."""


def refusal(submission: Path, student: str) -> str | None:
    """Why ``submission`` (a folder of the inbound) cannot be collected as ``student``'s, or None (a NotTheirs
    when it is not that student's own)."""
    uid = account_id(student)
    if uid is None:
        return NotTheirs(f"{submission.name}: no account {student!r} on this machine")
    try:
        top = os.lstat(submission)
    except OSError as error:
        return NotTheirs(f"{submission.name}: {error.strerror}")
    if not stat.S_ISDIR(top.st_mode):
        return NotTheirs(f"{submission.name} is not a folder (a link or a file)")
    if top.st_uid != uid:
        return NotTheirs(f"{submission.name} names {student} but was made by another account (uid {top.st_uid})")
    unreadable: list[OSError] = []  # what the instructor could not list or read
    seen = 0
    for folder, folders, files in os.walk(submission, followlinks=False, onerror=unreadable.append):
        if not os.access(folder, os.R_OK | os.X_OK):
            unreadable.append(PermissionError(f"{Path(folder).relative_to(submission)}/"))
        seen += len(folders) + len(files)
        if seen > MOST_ENTRIES:
            return f"{submission.name} holds more than {MOST_ENTRIES:,} files and folders (a Submit holds a few)"
        for name in folders + files:
            path = Path(folder) / name
            entry = os.lstat(path)
            relative = path.relative_to(submission)
            if stat.S_ISLNK(entry.st_mode):
                return f"{submission.name}: {relative} is a symbolic link (only files and folders are collected)"
            if not (stat.S_ISREG(entry.st_mode) or stat.S_ISDIR(entry.st_mode)):
                return f"{submission.name}: {relative} is not a plain file (a pipe, socket or device)"
            if entry.st_uid != uid:
                return f"{submission.name}: {relative} was written by another account (uid {entry.st_uid})"
            if stat.S_ISREG(entry.st_mode) and not os.access(path, os.R_OK):
                unreadable.append(PermissionError(str(relative)))
    if unreadable:
        first = unreadable[0]
        what = first.filename if getattr(first, "filename", None) else str(first)
        return f"{submission.name}: {what} cannot be read by the instructor (nbgrader's submit leaves it readable)"
    return None


def remove_links(folder: Path) -> list[Path]:
    """Delete every symbolic link under ``folder`` (never following one); the links removed."""
    removed = []
    for parent, folders, files in os.walk(folder, followlinks=False):
        for name in folders + files:
            path = Path(parent) / name
            if path.is_symlink():
                path.unlink()
                removed.append(path)
    return removed


class OwnCollect(ExchangeCollect):
    """nbgrader's collect over the submissions that pass ``refusal``; copies never follow a link."""

    def init_src(self):
        super().init_src()  # the course's paths, the due date; its choice is made again below from what passes
        inbound = Path(self.inbound_path)
        student = self.coursedir.student_id or "*"
        records = [
            self._path_to_record(str(path)) for path in inbound.glob(f"{student}+{self.coursedir.assignment_id}+*")
        ]
        accepted = []
        for record in records:
            why = refusal(inbound / record["filename"], record["username"])
            if why is None:
                accepted.append(record)
            else:
                self.log.error("Not collected: %s", why)
        self.src_records = [self.choose(group) for group in groupby(accepted, lambda r: r["username"]).values()]

    def choose(self, records: list[dict]) -> dict:
        """The submission nbgrader would take: the latest, or with before_duedate the latest before the due date."""
        ordered = self._sort_by_timestamp(records)
        if self.duedate is not None and self.before_duedate:
            on_time = [record for record in ordered if record["timestamp"] <= self.duedate]
            return (on_time or ordered)[0]
        return ordered[0]

    def do_copy(self, src, dest, log=None):
        student = Path(src).name.split("+", 1)[0]
        why = refusal(Path(src), student)
        if why is not None:
            raise RuntimeError(f"Not collected: {why}")
        ignore = ignore_patterns(
            exclude=self.coursedir.ignore,
            include=self.coursedir.include,
            max_file_size=self.coursedir.max_file_size,
            log=self.log,
        )
        shutil.copytree(src, dest, symlinks=True, ignore=ignore)
        for link in remove_links(Path(dest)):  # one swapped in after the check: copied as a link, never followed
            self.log.error("Not collected: %s is a symbolic link, removed", link)
