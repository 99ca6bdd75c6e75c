"""Files written whole or not at all: ``atomic_path``, the one "write to a temporary, then rename" of autograder, and
the writers built on it (a file's bytes, a JSON value, a folder of files swapped in). Every stage that writes a file
another process reads (the ledger, the course's configuration, the report, the LMS files, the LTI tool's store)
writes it here, so a reader sees the old file or the new one, never half of one.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(target: Path, *, durable: bool = False, scratch: Path | None = None):
    """A temporary path to write ``target`` in, a file or a folder: renamed into place when the block ends
    without an error (a folder already there is swapped out, then removed), removed when it fails, so that
    ``target`` is whole or as it was, never half-written. The temporary is beside ``target``, or in ``scratch``
    (a folder of the same file system, emptied by the caller's next run). ``durable``: a file is flushed to disk
    before the rename (without it a killed process still leaves it whole or absent; only a crash of the machine
    can leave it empty)."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    place = scratch if scratch is not None else target.parent
    temporary = place / f".{target.name[:180]}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp"
    try:
        yield temporary
        if durable and temporary.is_file():
            with open(temporary, "rb") as handle:
                os.fsync(handle.fileno())
        if temporary.is_dir() and target.is_dir() and not target.is_symlink():
            old = place / f".{target.name[:180]}.{os.getpid()}.{uuid.uuid4().hex[:8]}.old"
            os.replace(target, old)
            os.replace(temporary, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(temporary, target)
    finally:
        if temporary.is_dir() and not temporary.is_symlink():
            shutil.rmtree(temporary, ignore_errors=True)
        else:
            temporary.unlink(missing_ok=True)  # gone already when it was renamed


def write_atomic(target: Path, data: bytes | str, *, durable: bool = False) -> None:
    """``data`` written to ``target`` whole or not at all (atomic_path)."""
    with atomic_path(target, durable=durable) as temporary:
        temporary.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)


def write_json(path: Path, value, *, durable: bool = True) -> None:
    """``value`` as JSON at ``path``, whole or not at all (atomic_path), flushed to disk unless not ``durable``
    (a ledger entry lost to a crash of the machine only makes the student be graded again)."""
    write_atomic(path, json.dumps(value, indent=1, default=str), durable=durable)


def place_folder(files: dict, target: Path, scratch: Path) -> None:
    """The folder ``target`` holding exactly ``files`` ({relative path: bytes}), written under ``scratch`` and
    swapped in (atomic_path): when writing fails (a full disk), ``target`` is left as it was."""
    with atomic_path(target, scratch=scratch) as fresh:
        for relative, data in files.items():
            (fresh / relative).parent.mkdir(parents=True, exist_ok=True)
            (fresh / relative).write_bytes(data)
        fresh.mkdir(exist_ok=True)
