"""Every assignment of a course checked by one service: a checker per assignment, on one pool of workers.

    checkers = Checkers({"attention": Checker(...), "positions": Checker(...)}, slots=2)
    checkers.warm(pool)      # each assignment's checks tried (authoring_trouble) unless remembered passing
                             # (ProbeMemory), Submits already waiting started, then the workers warmed on each
    checkers.step(pool)      # one round of every checker, the pool's slots shared: what CheckerThread runs

Each assignment keeps its own checker (autograder.service.instant.Checker): its checks, reference and notebook, its
policy and due date (autograder.settings.LiveSettings), its attempts (autograder.attempts, scoped to it), so
a Submit is routed by the assignment its inbound name states and judged by that assignment's checks only; the queue
(one check per student at a time, the newest Submit checked, older ones superseded) and the policy's window hold
per student per assignment. The pool's slots are shared: the checkers take their turn first in rotation, so a rush
on one assignment does not keep the other's Submits waiting behind all of it.

An assignment whose own checks fail (checks.py that cannot be imported, a check that raises on the solution, the
notebook and checks.py that disagree: the class run's check before grading, autograder.validate) stops none of the
others: its Submits are recorded and wait, queued, and its students read "cannot be checked now: the instructor's
checks for <name> fail: ...", while the instructor's page says what to fix; once its files change the checks are
tried again, and the waiting Submits are checked when they pass.

A passing probe is remembered on disk (ProbeMemory: ``grading-probes.json`` in the course folder, the instructor's,
mode 0600) under the digest of everything it depends on (probe_digest: the assignment's files, the engine's and
lib's code, lib's model data, Python's and NumPy's versions), so a restart with none of them changed skips it and
checks a Submit waiting at start as soon as a worker is warm; any change, a file the service did not write itself
or one another account may write, and the probe runs as before (benchmarks/service_rounds.py --start).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import platform
import stat
import threading
import time
from pathlib import Path

import numpy as np

from autograder import REPOSITORY
from autograder.model import MODEL_DIR
from autograder.service.instant import Broken, Checker
from autograder.validate import KINDS, AuthoringError, check_before_grading

log = logging.getLogger("autograder.service.checkers")

MEMORY_FILE = "grading-probes.json"  # in the course folder: {assignment: the digest its probe last passed with}
ENGINE = Path(__file__).resolve().parent.parent  # autograder/: the grading engine's code
LARGEST_MEMORY = 2**20  # bytes: a memory file larger than this is not the service's


def folder_files(folder: Path, pattern: str = "*") -> list[Path]:
    """The plain files under ``folder`` matching ``pattern`` (compiled bytecode left out), in a fixed order."""
    if not folder.is_dir():
        return []
    found = (path for path in folder.rglob(pattern) if "__pycache__" not in path.parts and path.is_file())
    return sorted(found, key=lambda path: path.relative_to(folder).as_posix())


def lib_folders() -> list[Path]:
    """Where the student library the checks run against is, as the runner imports it (installed, or the repository's
    lib/)."""
    spec = importlib.util.find_spec("lib")
    found = [Path(location) for location in (spec.submodule_search_locations or [])] if spec else []
    return found or [REPOSITORY / "lib"]


def probe_digest(source: Path) -> str:
    """The SHA-256 of everything an assignment's probe (authoring_trouble) depends on: its folder's files (checks.py,
    reference.py, the source notebook, any data), the engine's code (autograder/), lib's code and the store's model
    data (data/model, the catalogue), and Python's and NumPy's versions. Equal digests: the probe would say the same."""
    source = Path(source)
    hashed = hashlib.sha256(f"python {platform.python_version()} numpy {np.__version__}\0".encode())
    parts = [
        ("assignment", source, folder_files(source)),
        ("engine", ENGINE, folder_files(ENGINE, "*.py")),
        *(("lib", folder, folder_files(folder, "*.py")) for folder in lib_folders()),
        ("model", MODEL_DIR, folder_files(MODEL_DIR)),
        ("data", REPOSITORY / "data", sorted((REPOSITORY / "data").glob("products*"))),
    ]
    for part, root, files in parts:
        for path in files:
            name = f"{part}/{path.relative_to(root).as_posix()}"
            data = path.read_bytes()
            hashed.update(f"{name}\0{len(data)}\0".encode() + data)
    return hashed.hexdigest()


class ProbeMemory:
    """The probes that passed, remembered across restarts: ``grading-probes.json`` in the course folder holds, per
    assignment, the probe_digest its probe last passed with.

    Trusted only when it is a plain file of the service's own account that no other account may write (the course
    folder is the instructor's: no student writes there); otherwise, or unreadable, or for another digest, nothing is
    remembered and the probe runs. Written whole (a temporary file renamed), mode 0600."""

    def __init__(self, course: Path):
        self.path = Path(course) / MEMORY_FILE

    def read(self) -> dict[str, str]:
        """{assignment: digest} when the file can be trusted, else {} (the reason logged)."""
        try:
            handle = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            return {}
        except OSError as error:  # a link, or a file the service may not read
            log.warning("%s is not trusted (%s): every assignment's checks are tried", self.path, error.strerror)
            return {}
        with os.fdopen(handle, "rb") as file:
            status = os.fstat(file.fileno())
            why = self.distrust(status)
            if why:
                log.warning("%s is not trusted (%s): every assignment's checks are tried", self.path, why)
                return {}
            data = file.read(LARGEST_MEMORY)
        try:
            remembered = json.loads(data)
        except ValueError:
            log.warning("%s is not JSON: every assignment's checks are tried", self.path)
            return {}
        if not isinstance(remembered, dict):
            return {}
        return {name: digest for name, digest in remembered.items() if isinstance(digest, str)}

    @staticmethod
    def distrust(status: os.stat_result) -> str:
        """Why a memory file with this status is not the service's own ("" when it is)."""
        if not stat.S_ISREG(status.st_mode):
            return "not a plain file"
        if status.st_uid != os.geteuid():
            return f"owned by account {status.st_uid}, not the service's"
        if status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return "other accounts may write it"
        if status.st_size > LARGEST_MEMORY:
            return f"{status.st_size} bytes, over the {LARGEST_MEMORY} it may have"
        return ""

    def passed(self, assignment: str, digest: str) -> bool:
        """Whether ``assignment``'s probe passed with exactly ``digest``."""
        return self.read().get(assignment) == digest

    def remember(self, assignment: str, digest: str) -> None:
        """``assignment``'s probe passed with ``digest`` (what it passed with before is forgotten: a digest that
        comes back after a change is probed again). A memory that cannot be written is logged: the probe then runs
        at the next start, as without one."""
        remembered = self.read() | {assignment: digest}
        temporary = self.path.with_name(f".{MEMORY_FILE}.{os.getpid()}")
        try:
            temporary.unlink(missing_ok=True)
            handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                json.dump(remembered, file, indent=1, sort_keys=True)
            os.replace(temporary, self.path)
        except OSError as error:
            log.warning("the passing checks of %s are not remembered in %s: %s", assignment, self.path, error)
            temporary.unlink(missing_ok=True)


def authoring_trouble(source: Path) -> Broken | None:
    """None when the assignment in ``source`` can check Submits, else why not: the class run's check before grading
    (autograder.validate.check_before_grading: checks.py imported, the notebook's ids and points against it, one
    seed of the solution), run on a worker of the pool. The students' words name the kinds of mistake only (never
    the checks' code, a place in them or an input); the instructor's say each mistake, where, and what to fix."""
    source = Path(source)
    try:
        check_before_grading(source)
    except AuthoringError as error:
        kinds = dict.fromkeys(finding.kind for finding in error.report.findings)
        said = "; ".join(KINDS.get(kind, kind) for kind in kinds)
        return Broken(f"the instructor's checks for {source.name} fail: {said}", str(error))
    except Exception as error:  # noqa: BLE001 - anything else that stops the checks (two notebooks, no sandbox...)
        return Broken(
            f"the instructor's checks for {source.name} fail ({type(error).__name__})",
            f"the checks of {source.name} cannot run: {type(error).__name__}: {error}",
            lasting=False,  # maybe not the files' fault: tried again every RETRY seconds
        )
    return None


DISCOVER_EVERY = 10.0  # seconds between two looks for an assignment added to the course while the service runs


class Checkers:
    """The checkers of a course's assignments (by name), run as one: CheckerThread(checkers, pool) steps them all.

    A round steps each checker in turn (the first one rotates from round to round), all of them within the
    pool's ``slots`` together; one checker's failing round (its trouble shown on the instructor's page) stops no
    other's, and the round fails (tried again, less often) only when every checker's did.

    discover: a function (the names checked already) -> {name: Checker} of the assignments added to the course
    since (service.make_checkers: a folder of source/ with its notebook and checks.py), asked every DISCOVER_EVERY
    seconds; a new one's checks are tried (its probe) before its first Submit, and its Submits already in the
    inbound are found by its first round. An assignment whose checker cannot be made yet (a folder still being
    copied) is asked for again at the next look."""

    def __init__(self, checkers: dict[str, Checker], slots: int = 2, discover=None):
        if not checkers:
            raise ValueError("no assignment to check: a service checks at least one")
        self.checkers = dict(sorted(checkers.items()))
        self.slots = slots
        self.wake = threading.Event()  # set when any check finishes: the service's thread records it at once
        self.trouble = ""  # why the last round failed for every checker ("" when it did not)
        self.turn = 0
        self.discover, self.looked_at = discover, time.monotonic()
        for checker in self.checkers.values():
            self.join(checker)

    def join(self, checker: Checker) -> None:
        checker.wake, checker.slots, checker.busy = self.wake, self.slots, self.busy

    def add_new(self, pool) -> list[str]:
        """The assignments added to the course since the last look (``discover``), each with its probe started;
        their names. The set of checkers is replaced whole, never changed in place: the pages read it from the
        web server's thread while this one adds."""
        if self.discover is None or time.monotonic() - self.looked_at < DISCOVER_EVERY:
            return []
        self.looked_at = time.monotonic()
        try:
            found = self.discover(frozenset(self.checkers))
        except Exception:  # a course folder being edited stops no round: looked at again later
            log.exception("looking for assignments added to the course failed; looking again later")
            return []
        for name, checker in sorted(found.items()):
            self.join(checker)
            self.checkers = dict(sorted({**self.checkers, name: checker}.items()))
            checker.start_probe(pool)
            log.info("assignment %s added to the course: its Submits are checked from now on", name)
        return sorted(found)

    @classmethod
    def of(cls, checker) -> Checkers:
        """``checker`` itself when it is a Checkers, else the Checkers of that one assignment."""
        return checker if isinstance(checker, Checkers) else cls({checker.assignment: checker}, checker.slots)

    def __getitem__(self, name: str) -> Checker:
        return self.checkers[name]

    def __contains__(self, name: str) -> bool:
        return name in self.checkers

    def __iter__(self):
        return iter(self.checkers.values())

    @property
    def names(self) -> list[str]:
        return list(self.checkers)

    def busy(self) -> int:
        """Checks running on the pool now, every assignment's (one finished but not yet recorded by its checker holds
        no slot: the checker first in this round's turn may take it)."""
        return sum(1 for checker in self for future in checker.running.values() if not future.done())

    def warm(self, pool) -> list:
        """The service's start: each assignment's checks tried (its probe; skipped when ProbeMemory remembers it
        passing with the same digest), then a first round, so the Submits already waiting of an assignment not being
        probed go to the workers first, then the workers warmed on each assignment's blank notebook (Checker.warm),
        so a later Submit waits for none of it; the warm-ups' futures."""
        for checker in self:
            checker.start_probe(pool)
        try:
            self.step(pool)
        except Exception:  # a failing first round stops no start: the service's thread tries it again
            log.exception("the first round of instant checks failed; the service's thread tries again")
        return [future for checker in self for future in checker.warm(pool)]

    def step(self, pool, now=None) -> int:
        """One round of every checker (those of assignments added since the last look too, add_new), the first in
        rotation; returns the checks started."""
        self.add_new(pool)
        order = list(self.checkers.values())
        first = self.turn % len(order)
        self.turn += 1
        started, failed = 0, []
        for checker in order[first:] + order[:first]:
            try:
                started += checker.step(pool, now=now)
            except Exception as error:  # one assignment's round stops no other's
                trouble = f"{type(error).__name__}: {str(error)[:300]}"
                if trouble != checker.trouble:  # the traceback once, not every round
                    log.exception("a round of %s's instant checks failed; trying again", checker.assignment)
                checker.trouble = trouble
                failed.append(error)
            else:
                checker.trouble = ""
        if failed and len(failed) == len(order):
            raise failed[0]
        return started

    def refused_entries(self, most: int | None = None) -> tuple[int, list]:
        """(how many inbound entries no checker checks, the newest of them first): an entry that is no Submit at
        all is refused by every checker and counted once."""
        merged = {}
        for checker in self:
            merged.update(checker.refused)
        newest = sorted(merged.values(), key=lambda refused: refused.seen, reverse=True)
        return len(merged), newest if most is None else newest[:most]
