"""Every assignment of a course checked by one service: a checker per assignment, on one pool of workers.

    checkers = Checkers({"attention": Checker(...), "positions": Checker(...)}, slots=2)
    checkers.warm(pool)      # each assignment's checks tried (authoring_trouble), then the workers warmed on each
    checkers.step(pool)      # one round of every checker, the pool's slots shared: what CheckerThread runs

Each assignment keeps its own checker (autograder.service.instant.Checker): its checks, reference and notebook, its
policy and due date (autograder.settings.LiveSettings), its attempts (autograder.service.attempts, scoped to it), so
a Submit is routed by the assignment its inbound name states and judged by that assignment's checks only; the queue
(one check per student at a time, the newest Submit checked, older ones superseded) and the policy's window hold
per student per assignment. The pool's slots are shared: the checkers take their turn first in rotation, so a rush
on one assignment does not keep the other's Submits waiting behind all of it.

An assignment whose own checks fail (checks.py that cannot be imported, a check that raises on the solution, the
notebook and checks.py that disagree: the class run's check before grading, autograder.validate) stops none of the
others: its Submits are recorded and wait, queued, and its students read "cannot be checked now: the instructor's
checks for <name> fail: ...", while the instructor's page says what to fix; once its files change the checks are
tried again, and the waiting Submits are checked when they pass.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from autograder.service.instant import Broken, Checker
from autograder.validate import KINDS, AuthoringError, check_before_grading

log = logging.getLogger("autograder.service.checkers")


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


class Checkers:
    """The checkers of a course's assignments (by name), run as one: CheckerThread(checkers, pool) steps them all.

    A round steps each checker in turn (the first one rotates from round to round), all of them within the
    pool's ``slots`` together; one checker's failing round (its trouble shown on the instructor's page) stops no
    other's, and the round fails (tried again, less often) only when every checker's did."""

    def __init__(self, checkers: dict[str, Checker], slots: int = 2):
        if not checkers:
            raise ValueError("no assignment to check: a service checks at least one")
        self.checkers = dict(sorted(checkers.items()))
        self.slots = slots
        self.wake = threading.Event()  # set when any check finishes: the service's thread records it at once
        self.trouble = ""  # why the last round failed for every checker ("" when it did not)
        self.turn = 0
        for checker in self.checkers.values():
            checker.wake, checker.slots, checker.busy = self.wake, slots, self.busy

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
        """Each assignment's checks tried first (its probe), then the workers warmed on each assignment's blank
        notebook (Checker.warm), so the first Submit of each waits for neither; the warm-ups' futures."""
        for checker in self:
            checker.start_probe(pool)
        return [future for checker in self for future in checker.warm(pool)]

    def step(self, pool, now=None) -> int:
        """One round of every checker, the first in rotation; returns the checks started."""
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
