"""A submission read as its student left it: through folder descriptors, never through a link, into a private copy.

A student owns their submission's folder in the exchange's inbound and may change it while the instructor reads
it. ``shutil.copytree`` lists a folder once and then opens each file by its path, following links: a student who
renames a link over their notebook between the two gets the link's target copied, as the instructor (the course's
source notebook, a classmate's collected work, the gradebook). Here every step holds a descriptor:

- each folder is opened with ``O_DIRECTORY | O_NOFOLLOW`` relative to its parent's descriptor, each file with
  ``O_NOFOLLOW`` relative to its folder's; a link met anywhere, or swapped in at any moment, is refused (``ELOOP``),
  never read through;
- ``fstat`` after open: the thing opened must be the very entry that was listed (same device and inode), a plain
  file or folder, owned by the submitting account; anything else was swapped in or never was the student's;
- a file that changes while it is read (size or time) is refused: the copy is of one moment;
- bounded before anything is copied: entries, depth (no recursion: the walk keeps its own stack, so a folder
  1,100 deep is refused by its depth, not by Python's recursion limit) and bytes;
- the copy goes into a private folder first (``collect``), which replaces the collected folder only when whole.

``scan`` is the same walk without copying: the service and Collect judge a submission with it before copying.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from autograder.exchange.inbound import NotTheirs

FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # NONBLOCK: a FIFO swapped in never blocks
CHUNK = 2**20
READABLE = "nbgrader's submit leaves it readable"
FEW = "a Submit holds a few"


@dataclass(frozen=True)
class Limits:
    """What one submission may hold (a notebook's Submit holds a handful of files, a few MB)."""

    entries: int = 10_000  # files and folders
    depth: int = 32  # folders inside folders
    bytes: int = 512 * 2**20  # all its files together


class Refused(Exception):
    """The submission cannot be read as the student's own; ``reason`` says why (a NotTheirs when it is not theirs)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


# keep(relative path, is a folder, size in bytes) -> False to leave that entry (and a folder's contents) uncopied
Keep = Callable[[PurePosixPath, bool, int], bool]


def scan(submission: Path, *, owner: int, student: str = "", limits: Limits = Limits()) -> int:
    """Walk ``submission`` as ``collect`` does, copying nothing; the bytes it holds. Raises Refused (``student``:
    the name it states, for the reason's words)."""
    return _walk(submission, owner=owner, student=student, limits=limits, into=None, keep=None)


def copy(submission: Path, into: Path, *, owner: int, limits: Limits = Limits(), keep: Keep | None = None) -> int:
    """``submission`` copied into the new folder ``into`` (made here, mode 700; it must not exist); the bytes
    copied. Raises Refused, leaving ``into`` partly written for the caller to remove (``collect`` does)."""
    return _walk(submission, owner=owner, student="", limits=limits, into=Path(into), keep=keep)


def _walk(submission: Path, *, owner: int, student: str, limits: Limits, into: Path | None, keep: Keep | None) -> int:
    name = submission.name
    parent = os.open(submission.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)  # the inbound: not theirs
    try:
        try:
            top = os.open(name, FOLDER, dir_fd=parent)
        except OSError as error:
            if error.errno in (errno.ELOOP, errno.ENOTDIR):
                raise Refused(NotTheirs(f"{name} is not a folder (a link or a file)")) from None
            if error.errno == errno.EACCES:
                raise Refused(
                    f"{name} cannot be read by the instructor (nbgrader's submit leaves it readable)"
                ) from None
            raise Refused(NotTheirs(f"{name}: {error.strerror}")) from None
    finally:
        os.close(parent)
    status = os.fstat(top)
    if status.st_uid != owner:
        os.close(top)
        named = f" names {student} but" if student else ""
        raise Refused(NotTheirs(f"{name}{named} was made by another account (uid {status.st_uid})"))
    if into is not None:
        os.mkdir(into, 0o700)
    stack = [(top, PurePosixPath("."), 0)]
    entries = total = 0
    try:
        while stack:
            folder, relative, depth = stack.pop()
            try:
                try:
                    with os.scandir(folder) as listing:
                        names = sorted(entry.name for entry in listing)
                except PermissionError:
                    raise Refused(f"{name}: {relative}/ cannot be read by the instructor") from None
                for entry in names:
                    entries += 1
                    if entries > limits.entries:
                        raise Refused(
                            f"{name} holds more than {limits.entries:,} files and folders (a Submit holds a few)"
                        )
                    path = relative / entry
                    total += _entry(name, folder, entry, path, depth, owner, limits, into, keep, stack)
                    if total > limits.bytes:
                        raise Refused(f"{name} holds more than {limits.bytes / 2**20:g} MB ({FEW} MB)")
            finally:
                os.close(folder)
    finally:
        for folder, _, _ in stack:
            os.close(folder)
    return total


def _entry(name, folder, entry, path, depth, owner, limits, into, keep, stack) -> int:
    """One entry of a folder being walked: a folder pushed on the stack (made in the copy), a file checked (and
    copied); the bytes it counts."""
    try:
        listed = os.stat(entry, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        raise Refused(f"{name}: {path} changed while it was read (removed or renamed): submit again") from None
    if stat.S_ISLNK(listed.st_mode):
        raise Refused(f"{name}: {path} is a symbolic link (only files and folders are collected)")
    if not (stat.S_ISREG(listed.st_mode) or stat.S_ISDIR(listed.st_mode)):
        raise Refused(f"{name}: {path} is not a plain file (a pipe, socket or device)")
    if listed.st_uid != owner:
        raise Refused(f"{name}: {path} was written by another account (uid {listed.st_uid})")
    is_folder = stat.S_ISDIR(listed.st_mode)
    size = 0 if is_folder else listed.st_size
    wanted = into is not None and (keep is None or keep(path, is_folder, size))
    if is_folder and depth + 1 > limits.depth:
        raise Refused(f"{name}: {path} is more than {limits.depth} folders deep ({FEW})")
    if is_folder and (into is None or wanted):
        handle = _open(name, folder, entry, path, FOLDER, listed, owner)
        stack.append((handle, path, depth + 1))
        if wanted:
            os.mkdir(into / path, 0o700)
        return 0
    if into is None and not is_folder and not os.access(entry, os.R_OK, dir_fd=folder, follow_symlinks=False):
        raise Refused(f"{name}: {path} cannot be read by the instructor ({READABLE})")
    if is_folder or not wanted:  # a folder or file the copy leaves out (nbgrader's ignore, include, size)
        return size
    handle = _open(name, folder, entry, path, FILE, listed, owner)
    with os.fdopen(handle, "rb") as source, open(into / path, "xb") as target:
        copied = 0
        while chunk := source.read(CHUNK):
            copied += len(chunk)
            if copied > listed.st_size:
                break
            target.write(chunk)
        after = os.fstat(source.fileno())
    if copied != listed.st_size or (after.st_size, after.st_mtime_ns) != (listed.st_size, listed.st_mtime_ns):
        raise Refused(f"{name}: {path} changed while it was read: submit again")
    os.utime(into / path, ns=(listed.st_atime_ns, listed.st_mtime_ns))
    return size


def _open(name, folder, entry, path, flags, listed, owner) -> int:
    """``entry`` of ``folder`` opened without following a link, and proved to be what was listed."""
    try:
        handle = os.open(entry, flags, dir_fd=folder)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):
            raise Refused(f"{name}: {path} was swapped for something else while it was read: submit again") from None
        if error.errno == errno.EACCES:
            raise Refused(f"{name}: {path} cannot be read by the instructor ({READABLE})") from None
        raise
    opened = os.fstat(handle)
    same = (opened.st_dev, opened.st_ino, stat.S_IFMT(opened.st_mode)) == (
        listed.st_dev,
        listed.st_ino,
        stat.S_IFMT(listed.st_mode),
    )
    if not same or opened.st_uid != owner:
        os.close(handle)
        raise Refused(f"{name}: {path} was swapped for something else while it was read: submit again")
    return handle


def collect(submission: Path, destination: Path, *, owner: int, limits: Limits = Limits(), keep=None) -> int:
    """``submission`` copied to ``destination``: into a private folder beside it first, which then takes the place
    of ``destination`` whole (an earlier collected copy there is replaced only once the new one is complete, so a
    refused or failed copy leaves the earlier one as it was). Raises Refused; the bytes copied."""
    destination = Path(destination)
    destination.parent.mkdir(parents=True, exist_ok=True)
    private = destination.parent / f".collecting-{destination.name}-{os.getpid()}"
    old = destination.parent / f".replaced-{destination.name}-{os.getpid()}"
    _remove(private)
    try:
        copied = copy(submission, private, owner=owner, limits=limits, keep=keep)
        for folder in [private, *[p for p in private.rglob("*") if p.is_dir() and not p.is_symlink()]]:
            folder.chmod(0o755)  # the copy is the instructor's: readable as nbgrader's own collect leaves it
        if destination.exists():
            os.rename(destination, old)
        os.rename(private, destination)
    finally:
        _remove(private)
        _remove(old)
    return copied


def _remove(folder: Path) -> None:
    if folder.is_symlink() or folder.is_file():
        folder.unlink()
    elif folder.exists():
        shutil.rmtree(folder)
