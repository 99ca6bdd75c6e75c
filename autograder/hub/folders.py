"""The folders root makes for the hub's accounts, never through a path component an account controls.

Root prepares the exchange at every start and a student's home before each of their servers starts. A student
owns everything in their home and may put a link wherever root is about to look (``~/.exchange`` pointing at the
instructor's home): root following it would hand the instructor's course to the student. So every step here holds
a folder descriptor: a folder is opened with ``O_DIRECTORY | O_NOFOLLOW`` relative to its parent's descriptor,
and ownership and modes are set on the descriptor (``fchown``, ``fchmod``), so what is changed is the very folder
that was opened. No step walks a tree: only the folders the hub itself makes are ever touched, one by one, and
the owner and times of anything else (a submission in the inbound, a student's files) are never rewritten.

Where a student left something else at a name the hub needs in their home (a link, a file), it is moved aside,
never followed or deleted: renamed to ``<name>.moved-<time>`` in the same folder (``rename`` acts on the link
itself), so nothing of the student's is lost and the server starts.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from pathlib import Path

FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Unsafe(RuntimeError):
    """A folder the hub prepares is not what it must be (a link, a file, another account's); says what to do."""


def open_folder(path: Path) -> int:
    """A descriptor of ``path``, a folder whose every component is root's or the hub's own (the state folder)."""
    return os.open(path, FOLDER)


def made(parent: int, name: str, *, uid: int, gid: int, mode: int, owners: tuple[int, ...] = ()) -> int:
    """The folder ``name`` in the open folder ``parent``, made when missing, handed to ``uid``:``gid`` with
    ``mode``; its descriptor. An existing folder is taken only when root, ``uid`` or one of ``owners`` made it;
    a link, a file or another account's folder there raises Unsafe (``aside`` moves it instead)."""
    try:
        os.mkdir(name, 0o700, dir_fd=parent)
    except FileExistsError:
        pass
    try:
        handle = os.open(name, FOLDER, dir_fd=parent)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            raise Unsafe(f"{name} is a link or a file, not a folder") from None
        raise
    status = os.fstat(handle)
    if status.st_uid not in (0, uid, *owners):
        os.close(handle)
        raise Unsafe(f"{name} belongs to another account (uid {status.st_uid})")
    if (status.st_uid, status.st_gid) != (uid, gid):
        os.fchown(handle, uid, gid)
    if stat.S_IMODE(status.st_mode) != mode:
        os.fchmod(handle, mode)
    return handle


def aside(parent: int, name: str) -> str:
    """Whatever is at ``name`` in ``parent`` renamed to ``name.moved-<time>`` (a link is moved, not followed);
    the new name."""
    moved = f"{name}.moved-{time.strftime('%Y%m%d-%H%M%S')}-{time.monotonic_ns() % 10**6}"
    os.rename(name, moved, src_dir_fd=parent, dst_dir_fd=parent)
    return moved


def made_for(parent: int, name: str, *, uid: int, gid: int, mode: int = 0o700, moved: list | None = None) -> int:
    """``made`` in a folder the account owns: what the account left at ``name`` that is not its own folder is
    moved aside first (listed in ``moved``), so the hub's folder is always made."""
    try:
        return made(parent, name, uid=uid, gid=gid, mode=mode)
    except Unsafe:
        new = aside(parent, name)
        if moved is not None:
            moved.append((name, new))
        return made(parent, name, uid=uid, gid=gid, mode=mode)


def linked(parent: int, name: str, target: Path, *, uid: int, gid: int, moved: list | None = None) -> None:
    """A symbolic link ``name`` in ``parent`` to ``target``, handed to ``uid``:``gid``: kept when it already leads
    there, else what is at ``name`` is moved aside and the link made."""
    try:
        if os.readlink(name, dir_fd=parent) == str(target):
            os.chown(name, uid, gid, dir_fd=parent, follow_symlinks=False)
            return
    except FileNotFoundError:
        pass
    except OSError as error:
        if error.errno != errno.EINVAL:  # EINVAL: there, but not a link
            raise
    try:
        os.lstat(name, dir_fd=parent)
    except FileNotFoundError:
        pass
    else:
        new = aside(parent, name)
        if moved is not None:
            moved.append((name, new))
    os.symlink(target, name, target_is_directory=True, dir_fd=parent)
    os.chown(name, uid, gid, dir_fd=parent, follow_symlinks=False)
