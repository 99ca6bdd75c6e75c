"""The runners of one notebook's grading: started again after a hang or crash, without what caused it.

A Session makes the planned calls of the checks one at a time (``perform``: a plain call with its stand-ins,
or a driven call run here that calls the student's function through ``call``). A cell that hung or crashed
is left out of the next runner ("not run again: ..."); a function whose call hung or crashed has its later
calls not made; a fatal end (the notebook's budget spent, a forged message, too many restarts) makes every
later call "not run", at once. What each check's calls used (CPU seconds, the first call that failed, the
first limit hit, notes for the student) is gathered in a Usage, taken by ``take_usage`` after each check.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from autograder.answers.budget import ATTEMPTS, Budget, BudgetSpent
from autograder.answers.process import Runner, RunnerDied
from autograder.checks import Call, Result, describe_call
from autograder.course.assignments import AssignmentChecks


@dataclass
class Usage:
    """What one check's calls used: CPU seconds, the first call that failed (in words), the first limit hit,
    and notes for the student (why grading stopped)."""

    cpu_seconds: float = 0.0
    failed_call: str = ""
    limit: str = ""
    notes: list = field(default_factory=list)

    def absorb(self, other: Usage):
        """Add another stretch of the same check's calls (its calls come in turns, between other checks')."""
        self.cpu_seconds += other.cpu_seconds
        self.failed_call = self.failed_call or other.failed_call
        self.limit = self.limit or other.limit
        self.notes.extend(note for note in other.notes if note not in self.notes)

    def add(self, used: float, limit: str = "", note: str = ""):
        self.cpu_seconds += max(used, 0.0)
        self.limit = self.limit or limit
        if note and note not in self.notes:
            self.notes.append(note)


class Session:
    """The runner processes of one grading, under one notebook's Budget."""

    def __init__(self, assignment: AssignmentChecks, sources: list[str], budget: Budget, scratch: Path, files=()):
        self.assignment, self.sources, self.budget, self.scratch = assignment, sources, budget, scratch
        self.files = files  # the planned calls' input files (Call.files), shown to every runner
        self.cells: dict[int, str | None] = {}
        self.missing: list[str] = []
        self.output = ""
        self.skip: dict[int, str] = {}
        self.failed: dict[str, str] = {}  # function -> why its later calls are not made
        self.runner: Runner | None = None
        self.attempts, self.fatal, self.fatal_limit = 0, None, ""
        self.usage = Usage()

    def end(self, reason: str, limit: str):
        """No more runners for this notebook: every later call is "not run", and says why."""
        self.fatal, self.fatal_limit = reason, limit

    def ready(self) -> Runner | None:
        """The running runner, started (again) if needed; None when the grading has ended."""
        while self.runner is None and self.fatal is None:
            try:
                self.budget.check()
            except BudgetSpent as spent:
                self.end(spent.reason, spent.limit)
                break
            if self.attempts >= ATTEMPTS:
                self.end(f"the runner was restarted too many times ({ATTEMPTS})", "restarts")
                break
            self.attempts += 1
            started = Runner(self.scratch / f"work-{self.attempts}", self.budget, self.files)
            try:
                report = started.start(self.sources, self.skip, self.budget.limits.call, self.assignment.graded)
            except RunnerDied as died:
                self.budget.charge(started.last_cpu)
                self.blame_cell(died)
                continue
            self.cells.update(report["cells"])
            self.missing, self.output, self.runner = report["missing"], report["output"], started
        return self.runner

    def blame_cell(self, died: RunnerDied):
        cell = died.step.get("cell")
        if died.fatal or cell is None:
            self.end(died.reason, died.limit)
            return
        self.cells[cell] = died.reason
        self.skip[cell] = f"not run again: in an earlier attempt, {died.reason}"

    def call(
        self, function: str, args: tuple, kwargs=None, stand_ins=(), items=1, seconds=None
    ) -> tuple[Result, float]:
        """One call of the student's function (Result, CPU seconds); a crash costs this call and the function's
        later ones, a fatal end every later call."""
        if function in self.failed:
            return Result(f"not run: an earlier call of {function} failed: {self.failed[function]}"), 0.0
        active = self.ready()
        if active is None:
            self.usage.add(0.0, self.fatal_limit, self.stopped())
            return Result(f"not run: {self.fatal}"), 0.0
        seconds = seconds or self.budget.limits.call
        try:
            result, used, limit = active.call(
                function, args, kwargs or {}, tuple(stand_ins), items, seconds, self.assignment.stand_in
            )
        except RunnerDied as died:
            self.budget.charge(active.last_cpu)
            self.runner = None
            if died.fatal:
                self.end(died.reason, died.limit)
            self.failed[function] = died.reason
            result, used, limit = Result(died.reason), active.last_cpu - active.cpu_at, died.limit
        self.usage.add(used, limit, self.stopped())
        return result, used

    def stopped(self) -> str:
        """The note for the student once grading has ended ("" while it goes on)."""
        return f"Grading of your answers stopped: {self.fatal}." if self.fatal else ""

    def perform(self, call: Call) -> Result:
        """One planned call of a check: a plain call with its stand-ins, or a driven call run here."""
        seconds = call.slow * self.budget.limits.call
        if call.drive is not None:
            result = call.drive(self.call, call.function, *call.args, seconds=seconds, **call.kwargs)
        else:
            stand_ins = tuple(self.assignment.isolate.get(call.function, ()))
            result, _ = self.call(call.function, call.args, call.kwargs, stand_ins, call.items, seconds)
        if result.error is not None and not self.usage.failed_call:
            self.usage.failed_call = describe_call(call)
        return result

    def take_usage(self) -> Usage:
        """What the calls since the last take used."""
        usage, self.usage = self.usage, Usage()
        return usage

    def close(self):
        if self.runner is not None:
            self.budget.charge(self.runner.cpu())
            self.runner.close()
            self.runner = None
