"""The time budget of one notebook's hidden checks: what the student's answers may use, counted by the grader.

Every number here is measured from the grader's side (the runner's process tree in /proc, the grader's own
clock and thread CPU time), never taken from what the runner says, so nothing the student writes (code,
prints, messages forged on the runner's pipe) extends it. Work is counted in CPU seconds, which the machine's
load does not change, so a busy machine decides no grade:

- ``call`` (CALL_LIMIT, 10 s) CPU seconds per answer cell or per call of a student's function (a statistic over
  the model's texts a few times that: Call.slow);
- ``idle`` (IDLE_LIMIT, 2 s) seconds a cell or call may wait without computing: while no process or thread of the
  runner's tree is runnable (each one sleeping, blocked or stopped: time.sleep, input, a lock, a pipe it opened,
  SIGSTOP; /proc/<pid>/task/<tid>/stat), its CPU seconds do not grow, and it has not spoken on its pipe, the wait
  counts; past ``idle`` in one cell or call the runner is killed and that function is stuck: its later calls are
  not made (a cell: not run again). A machine's load makes a busy runner wait its turn *runnable*, which never
  counts, so only code that chose to wait pays;
- ``total`` (timeouts.CHECKS_BUDGET, 120 s) CPU seconds for all of the notebook's hidden checks: every runner started
  for it (at most ATTEMPTS, 4), and the stand-ins the grader computes for it; a course sets it with
  ``c.ExternalVerdicts.timeout`` (autograder.settings.CourseSettings.checks_budget);
- ``wall`` (WALL_TOTAL_FACTOR x total, 300 s by default) seconds by the clock for the whole notebook, from the
  moment grading starts: the machine's protection only (a machine loaded past 2.5 runnable processes per core
  for the whole run, or a process stuck in the kernel), never reached by code that computes or waits on a quiet
  or busy machine; past it the runner is killed and every call still to make is "not run". grade_answers returns
  within ``wall`` plus the judging of what came back (seconds, on arrays bounded by RECEIVED).

So a graded function that sleeps costs about IDLE_LIMIT seconds (and a runner's start, about half a second)
instead of holding the worker, and one that computes without end costs its ``call`` CPU seconds, whatever else
the machine runs.

Stand-ins (a graded function the student's function may call, computed here): one request carries at most
STAND_IN_ELEMENTS numbers (about 4 million, 32 MiB of float64; the largest legitimate one, a head's scores
over the model's window, is about a thousand times smaller), names no array dimension and no number past
SIZE_FACTOR times the largest size among the call's own arguments (SMALLEST_SCALE at least; the function's own
defaults stay allowed), both refused before any work, and their CPU time counts against ``total``. So the memory
the grading process holds for one check is that of the check's own inputs, scaled by at most SIZE_FACTOR in each
dimension: a (120 million, 8) table or an (8000, 8000) attention is never computed for a check drawn at 200.
A function the grader passes as an argument (a callback, autograder.answers.stand_ins) is bounded the same way,
and computed at most CALLBACK_CALLS times per call of the student's function.

With the student's kernel: nbgrader's Execute (autograder.notebook.kernel.SurvivingExecute) runs the notebook
under its own per-cell timeout and per-notebook wall-clock budget ``notebook_timeout`` (timeouts.NOTEBOOK_BUDGET,
45 s, or the course's), at the same time as the hidden checks (notebook_grading.StartVerdicts starts them before
the kernel).
So one notebook's grading ends within max(notebook_timeout, wall) plus the kernel's start and the judging:
ExternalVerdicts waits for the early verdicts at most what is left of ``wall`` (+ JUDGING_SLACK), and
says so in the feedback when they did not come.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from autograder.timeouts import CHECKS_BUDGET
from autograder.verdicts import CHECKS_CLOCK, CHECKS_CPU, ChecksEnd

CALL_LIMIT = 10.0  # CPU seconds for one cell or one call
WALL_TOTAL_FACTOR = 2.5  # the notebook's wall-clock budget: 2.5 x its CPU seconds (300 s for 120 s)
GRACE = 2.0  # CPU seconds past a step's own limit before the grader kills the runner
IDLE_LIMIT = 2.0  # seconds a cell or call may wait without computing (sleeping, blocked) before it is stopped
STARTUP = 60.0  # wall seconds for a runner to start (Python and NumPy, no student code)
RECEIVED = 2**30  # bytes of arrays one message from the runner may carry
STAND_IN_ELEMENTS = 2**22  # numbers one stand-in or callback request (or its reply) may carry
SIZE_FACTOR = 2  # a stand-in or callback request names no size past this many times the call's own largest
SMALLEST_SCALE = 64  # ... and at least this many (a call on scalars may still ask for a 64-element table)
CALLBACK_CALLS = 1000  # calls of the functions the grader passed as arguments, per call of a student's function
ATTEMPTS = 4  # runner starts per grading, at most (each one after a hang or crash)
JUDGING_SLACK = 60.0  # wall seconds a reader of the early verdicts allows past ``wall`` for judging


@dataclass(frozen=True)
class Limits:
    """CPU seconds for one cell or call and for a whole notebook, the notebook's wall-clock seconds, and the seconds a
    cell or call may wait without computing.

    wall: None for WALL_TOTAL_FACTOR x total."""

    call: float = CALL_LIMIT
    total: float = CHECKS_BUDGET
    wall: float | None = None
    idle: float = IDLE_LIMIT

    @property
    def wall_seconds(self) -> float:
        return WALL_TOTAL_FACTOR * self.total if self.wall is None else float(self.wall)


class BudgetSpent(Exception):
    """The notebook's budget is used up; ``reason`` says which part, as a sentence for the student, ``end`` as data."""

    def __init__(self, reason: str, end: ChecksEnd):
        super().__init__(reason)
        self.reason, self.end = reason, end

    @property
    def limit(self) -> str:
        return self.end.kind


@dataclass
class Budget:
    """One notebook's budget as it is spent: the clock from when grading started, CPU seconds of finished
    runners and of stand-ins computed for it."""

    limits: Limits
    started: float = field(default_factory=time.monotonic)
    cpu_spent: float = 0.0  # CPU seconds of runners already gone and of stand-ins

    @property
    def deadline(self) -> float:
        return self.started + self.limits.wall_seconds

    def charge(self, cpu_seconds: float) -> None:
        self.cpu_spent += max(0.0, cpu_seconds)

    def check(self, running_cpu: float = 0.0, where: str = "") -> None:
        """Raise BudgetSpent when the clock or the CPU seconds (``running_cpu``: the live runner's) are past."""
        during = f", during {where}" if where else ""
        if time.monotonic() > self.deadline:
            raise BudgetSpent(
                f"grading your answers ran past its {self.limits.wall_seconds:g} s by the clock{during}, the grader's "
                "limit for a machine too busy to finish them (or code stuck where the grader cannot see it)",
                ChecksEnd(CHECKS_CLOCK, where, limit=self.limits.wall_seconds),
            )
        if self.cpu_spent + running_cpu > self.limits.total + GRACE:
            raise BudgetSpent(
                f"grading used up its {self.limits.total:g} s of CPU time in all{during}: "
                "look for a very slow function or an infinite loop",
                ChecksEnd(CHECKS_CPU, where, limit=self.limits.total),
            )
