"""The runners of one notebook's grading: started again after a hang or crash, without what caused it.

A Session makes the planned calls of the checks in order (``perform_all``): each run of plain calls goes to the
runner many to a message (``calls``: a round trip per batch, not per call, each call made as a lone call would be),
and a driven call runs here, calling the student's function through ``call`` or, for calls that do not wait on
each other, ``many`` (``Student``). A cell that hung or crashed
is left out of the next runner ("not run again: ..."); a function whose call hung or crashed has its later
calls not made; a fatal end (the notebook's budget spent, a forged message, too many restarts) makes every
later call "not run", at once. What each check's calls used (CPU seconds, the first call that failed, the
first limit hit as a verdicts.ChecksEnd, notes for the student) is gathered in a Usage, taken by ``take_usage``
after each check.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from autograder.answers.budget import ATTEMPTS, Budget, BudgetSpent
from autograder.answers.process import Runner, RunnerDied
from autograder.assignments import AssignmentChecks
from autograder.checks import Call, Result, describe_call
from autograder.verdicts import RESTARTS, ChecksEnd


@dataclass
class Usage:
    """What one check's calls used: CPU seconds, the first call that failed (in words), the first limit hit
    (``end``; ``limit``: its kind), and notes for the student (why grading stopped)."""

    cpu_seconds: float = 0.0
    failed_call: str = ""
    end: ChecksEnd | None = None
    notes: list = field(default_factory=list)

    @property
    def limit(self) -> str:
        return self.end.kind if self.end else ""

    def absorb(self, other: Usage):
        """Add another stretch of the same check's calls (its calls come in turns, between other checks')."""
        self.cpu_seconds += other.cpu_seconds
        self.failed_call = self.failed_call or other.failed_call
        self.end = self.end or other.end
        self.notes.extend(note for note in other.notes if note not in self.notes)

    def add(self, used: float, end: ChecksEnd | None = None, note: str = ""):
        self.cpu_seconds += max(used, 0.0)
        self.end = self.end or end
        if note and note not in self.notes:
            self.notes.append(note)


class Student:
    """The student's function as a driven call's driver sees it: ``student(function, args, kwargs, stand_ins, items,
    seconds)`` makes one call, ``student.many(function, [(args, kwargs)], stand_ins, items, seconds)`` many that do not
    depend on each other, at once (Session.call, Session.many)."""

    def __init__(self, session: Session):
        self.session = session

    def __call__(self, function: str, args: tuple, kwargs=None, stand_ins=(), items=1, seconds=None):
        return self.session.call(function, args, kwargs, stand_ins, items, seconds)

    def many(self, function: str, arguments: list, stand_ins=(), items=1, seconds=None):
        return self.session.many(function, arguments, stand_ins, items, seconds)


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
        self.failed_ends: dict[str, ChecksEnd | None] = {}  # function -> how its call ended, as data
        self.runner: Runner | None = None
        self.attempts, self.fatal, self.fatal_end = 0, None, None
        self.usage = Usage()

    def end(self, reason: str, end: ChecksEnd | None):
        """No more runners for this notebook: every later call is "not run", and says why."""
        self.fatal, self.fatal_end = reason, end

    def ready(self) -> Runner | None:
        """The running runner, started (again) if needed; None when the grading has ended."""
        while self.runner is None and self.fatal is None:
            try:
                self.budget.check()
            except BudgetSpent as spent:
                self.end(spent.reason, spent.end)
                break
            if self.attempts >= ATTEMPTS:
                self.end(f"the runner was restarted too many times ({ATTEMPTS})", ChecksEnd(RESTARTS, limit=ATTEMPTS))
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
            self.end(died.reason, died.end)
            return
        self.cells[cell] = died.reason
        self.skip[cell] = f"not run again: in an earlier attempt, {died.reason}"

    def call(
        self, function: str, args: tuple, kwargs=None, stand_ins=(), items=1, seconds=None
    ) -> tuple[Result, float]:
        """One call of the student's function (Result, CPU seconds); a crash costs this call and the function's
        later ones, a fatal end every later call."""
        request = (function, args, kwargs or {}, tuple(stand_ins), items, seconds or self.budget.limits.call)
        [(result, used, usage)] = self.calls([request])
        self.usage.absorb(usage)
        return result, used

    def many(self, function: str, arguments: list, stand_ins=(), items=1, seconds=None) -> list[tuple[Result, float]]:
        """(Result, CPU seconds) of a call of ``function`` on each of ``arguments`` ([(args, kwargs)]), in order, all
        of them sent to the runner at once, with ``seconds`` of CPU time for them all: the calls after the first
        that fails are not made ("not run"). For a driver's calls that do not depend on each other."""
        seconds = seconds or self.budget.limits.call
        requests = [(function, args, kwargs, tuple(stand_ins), items, seconds) for args, kwargs in arguments]
        made = []
        for result, used, usage in self.calls(requests, seconds, stop=True):
            self.usage.absorb(usage)
            made.append((result, used))
        return made

    def calls(
        self, requests: list, seconds: float | None = None, stop: bool = False
    ) -> list[tuple[Result, float, Usage]]:
        """(Result, CPU seconds, Usage) of each request (function, args, kwargs, stand_ins, items, seconds), in order,
        each made as a lone call would be (its own arguments, stand-ins and CPU seconds), many to a message: a crash
        costs the call in progress and its function's later calls, and the calls after it go to the next runner; a
        fatal end costs every later call. seconds: CPU seconds for them all; stop: after the first call that fails,
        the others are not made."""
        made: list[tuple[Result, float, Usage]] = []
        while len(made) < len(requests):
            function = requests[len(made)][0]
            if stop and made and made[-1][0].error is not None:
                made.append((Result(f"not run: an earlier call of {function} failed"), 0.0, Usage()))
                continue
            active = None if function in self.failed else self.ready()
            if active is None:
                made.append(self.not_made(function))
                continue
            batch = requests[len(made) :]
            batch = batch[: next((k for k, r in enumerate(batch) if r[0] in self.failed), len(batch))]
            left = None if seconds is None else seconds - sum(used for _, used, _ in made)
            first = len(made)
            try:
                for result, used, end in active.calls(batch, self.assignment.stand_in, left, stop):
                    made.append((result, used, self.used(used, end)))
            except RunnerDied as died:
                function = batch[len(made) - first][0]
                self.budget.charge(active.last_cpu)
                self.runner = None
                if died.fatal:
                    self.end(died.reason, died.end)
                self.failed[function], self.failed_ends[function] = died.reason, died.end
                used = active.last_cpu - active.cpu_at
                made.append((Result(died.reason), used, self.used(used, died.end)))
        return made

    def not_made(self, function: str) -> tuple[Result, float, Usage]:
        """A call not made: its function failed before, or grading has ended."""
        if function in self.failed:
            usage = Usage()
            usage.add(0.0, self.failed_ends.get(function))
            return Result(f"not run: an earlier call of {function} failed: {self.failed[function]}"), 0.0, usage
        return Result(f"not run: {self.fatal}"), 0.0, self.used(0.0, self.fatal_end)

    def used(self, seconds: float, end: ChecksEnd | None) -> Usage:
        """One call's Usage: its CPU seconds, the limit it hit, and the note once grading has ended."""
        usage = Usage()
        usage.add(seconds, end, self.stopped())
        return usage

    def stopped(self) -> str:
        """The note for the student once grading has ended ("" while it goes on)."""
        return f"Grading of your answers stopped: {self.fatal}." if self.fatal else ""

    def perform_all(self, calls: list[Call]) -> list[tuple[Result, Usage]]:
        """(Result, Usage) of each planned call, in order, as ``perform`` would give them one after the other: each
        run of plain calls goes to the runner many to a message (``calls``), each driven call is run here."""
        made, plain = [], []
        for call in [*calls, None]:
            if call is not None and call.drive is None:
                plain.append(call)
                continue
            requests = [self.plain_request(each) for each in plain]
            for each, (result, _, usage) in zip(plain, self.calls(requests) if requests else []):
                if result.error is not None:
                    usage.failed_call = describe_call(each)
                made.append((result, usage))
            plain = []
            if call is not None:
                made.append((self.perform(call), self.take_usage()))
        return made

    def plain_request(self, call: Call) -> tuple:
        """A plain call as ``calls`` takes it: with the stand-ins its function may call, and its CPU seconds."""
        stand_ins = tuple(self.assignment.isolate.get(call.function, ()))
        return (call.function, call.args, call.kwargs, stand_ins, call.items, call.slow * self.budget.limits.call)

    def perform(self, call: Call) -> Result:
        """One planned call of a check: a plain call with its stand-ins, or a driven call run here."""
        seconds = call.slow * self.budget.limits.call
        if call.drive is not None:
            result = call.drive(Student(self), call.function, *call.args, seconds=seconds, **call.kwargs)
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
