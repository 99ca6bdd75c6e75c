"""One runner process of the hidden checks: started in its sandbox, spoken to over its pipe, watched.

The grader and the runner (autograder/answers/runner.py, whose docstring gives the messages) speak in turn. Every
message from the runner is checked against the one step it may be at: the answer cells in order, each at
most once ("step" i, then "cell" i), "ready" after the last; during a call, stand-in and callback requests
(bounded in size before they are read: autograder.answers.stand_ins) and then one "result" or "error" whose fields
have the expected types. A message out of place, malformed or forged by the student's code ends that student's
answers at once (RunnerDied, fatal, limit "message"), with a sentence for the feedback, never a traceback.

The watch (``watch``) runs at least every WATCH_EVERY seconds while the grader waits to read or to write,
whatever arrives: the notebook's budget (autograder.answers.budget: CPU of every runner and stand-in, and the
clock since grading began), then the step's own CPU limit and the time it waited without computing (``idle``:
no process or thread of the runner's tree runnable, its CPU seconds unchanged, nothing said on its pipe and
nothing it said left unread). Nothing the runner says moves the budget; a step's own count starts only where the
grader expects that step. How a runner ended is data (a verdicts.ChecksEnd on RunnerDied: the kind, the step's
function or cell, the limit, a signal's name, an exit status), with a sentence for the feedback.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import time
from pathlib import Path

import numpy as np

from autograder import sandbox, verdicts
from autograder.answers import runner as answer_runner
from autograder.answers import stand_ins
from autograder.answers.budget import GRACE, RECEIVED, STARTUP, Budget, BudgetSpent
from autograder.answers.sandbox import files_inside, runner_command, runner_environment
from autograder.checks import Mapped, Result
from autograder.verdicts import ChecksEnd, quoted

WATCH_EVERY = 0.1  # seconds between two looks at the runner's CPU time and the clock
WALK_EVERY = 0.5  # seconds between two walks over /proc for the processes below the runner
CHUNK = 2**16  # bytes written to the runner's pipe at a time
READ_AHEAD = 2**16  # bytes read from the runner's pipe at a time (at most: what is there)
MEASURE_EVERY = 0.02  # seconds by the clock between two measures of the CPU seconds of the calls of a batch
MALFORMED = (ValueError, TypeError, KeyError, IndexError, OverflowError, MemoryError)
CRASHES = {"SIGKILL": verdicts.MEMORY_KILL, "SIGXCPU": verdicts.CALL, "SIGXFSZ": verdicts.OUTPUT}  # signal -> kind
# (any other signal: verdicts.CRASH); what each likely means: verdicts.CRASH_CAUSES
WAITING = frozenset(b"STtZXxIP")  # /proc states of a thread that is not computing: sleeping, stopped, traced, dead


def start_runner(work: Path, files: tuple = ()) -> subprocess.Popen:
    """A runner process in its sandbox, working in ``work``, its pipe on stdin and stdout (stderr discarded), in a
    session of its own."""
    return subprocess.Popen(
        runner_command(work, files),
        cwd=work,
        env=runner_environment(work),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


class RunnerDied(Exception):
    """The runner was killed (a limit) or exited; ``reason`` says why in a sentence, ``step`` where it was,
    ``fatal`` that no runner may start again for this notebook, ``end`` how, as data (``limit``: its kind)."""

    def __init__(self, reason: str, step: dict | None = None, fatal: bool = False, end: ChecksEnd | None = None):
        super().__init__(reason)
        self.reason, self.step, self.fatal, self.end = reason, step or {}, fatal, end

    @property
    def limit(self) -> str:
        return self.end.kind if self.end else ""


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system, and of waited-for children) of one process; 0 when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(value) for value in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def computing(pids: list[int]) -> bool:
    """Whether any thread of these processes is runnable or in the kernel (/proc state R or D): computing, or
    waiting for a core or a page. False when every thread sleeps, is blocked, stopped, or is gone."""
    for pid in pids:
        try:
            threads = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for thread in threads:
            try:
                with open(f"/proc/{pid}/task/{thread}/stat", "rb") as handle:
                    state = handle.read().rsplit(b")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if state[0] not in WAITING:
                return True
    return False


def signal_name(code: int) -> str:
    try:
        return signal.Signals(code).name
    except ValueError:
        return str(code)


def killed_by(code: int | None, wrapped: bool) -> int | None:
    """The signal that ended a process that exited with ``code``, or None when it exited on its own. Killed
    directly, Python reports minus the signal; run inside bubblewrap (``wrapped``), the sandbox's own process
    exits with 128 + the signal instead, as a shell would."""
    if code is None:
        return None
    if code < 0:
        return -code
    if wrapped and 128 < code <= 128 + signal.NSIG:
        return code - 128
    return None


def is_index(value, expected: int) -> bool:
    """``value`` is the int ``expected`` (not True for 1, not 1.0)."""
    return type(value) is int and value == expected


def short_text(value) -> str | None:
    """A text the runner sends (an error, a cell's failure) as a verdict may quote it: the student's code may have
    written it, so one line with its numbers rounded (verdicts.quoted), whatever reads the verdict."""
    return None if value is None else quoted(value)


def changed_labels(claimed, args: tuple, kwargs: dict) -> tuple:
    """The arguments the runner says the call changed in place, kept only where they name a real argument."""
    if not isinstance(claimed, list):
        return ()
    positions = [x for x in claimed if type(x) is int and 0 <= x < len(args)]
    names = [x for x in claimed if isinstance(x, str) and x in kwargs]
    return tuple(dict.fromkeys(positions + names))


def valid_returned(returned, received: list) -> bool:
    """The descriptions of a result's values: one {"type", "dtype", "shape"} per float64 array received."""
    if not isinstance(returned, list) or len(returned) != len(received):
        return False
    for description, array in zip(returned, received):
        if array.dtype != np.float64 or not isinstance(description, dict):
            return False
        kind, dtype, shape = description.get("type"), description.get("dtype"), description.get("shape")
        if not isinstance(kind, str) or not isinstance(dtype, str) or not isinstance(shape, list):
            return False
        try:
            if np.dtype(dtype).kind not in "biuf":
                return False
        except TypeError:
            return False
    return True


class Runner:
    """One runner process, its pipe, and the watch over its CPU time and the clock."""

    def __init__(self, work: Path, budget: Budget, files: tuple = ()):
        work.mkdir()
        self.budget = budget
        self.files = tuple(str(path) for path in files)  # the calls' input files, numbered as the runner sees them
        self.process = start_runner(work, self.files)
        self.writing, self.reading = self.process.stdin.fileno(), self.process.stdout.fileno()
        os.set_blocking(self.writing, False)  # a runner that stops reading cannot block the grader
        self.step, self.seconds, self.cpu_at, self.clock_at = {"start": True}, None, 0.0, time.monotonic()
        self.last_cpu = 0.0  # the runner's CPU seconds when last measured (after it is killed, what it used)
        self.tree: list[int] = []  # the runner's process and the processes below it, as last looked up
        self.watched = self.walked = 0.0  # when the watch last ran, when it last walked over /proc
        self.heard = None  # when the runner's first message arrived (its Python runs by then), None before
        self.idle = 0.0  # seconds the step in progress waited without computing
        self.progress_cpu, self.spoke = 0.0, False  # CPU seconds at the last look; a message moved since then
        self.ahead, self.ahead_at = memoryview(b""), 0  # bytes read from the runner, and how many were handed out
        self.measured = 0.0  # when a call's CPU seconds were last measured (answer)

    # the watch ---------------------------------------------------------------------------------

    def cpu(self, look_again: bool = False) -> float:
        """CPU seconds used by the runner and every process below it. The processes below it are looked up
        again (a walk over /proc) at each measure until one walk was made after the runner's first message (until
        then bubblewrap may not have started its Python), then only when ``look_again`` (the watch), at most every
        WALK_EVERY seconds."""
        settled = self.heard is not None and self.walked > self.heard
        if not settled or (look_again and time.monotonic() - self.walked >= WALK_EVERY):
            self.tree, self.walked = [self.process.pid, *sandbox.descendants(self.process.pid)], time.monotonic()
        used = sum(process_cpu(pid) for pid in self.tree)
        self.last_cpu = max(self.last_cpu, used)
        return self.last_cpu

    def begin(self, step: dict, seconds: float | None, cpu: float | None = None):
        """The step in progress from now: its CPU seconds count from ``cpu`` (default: measured now)."""
        cpu = self.cpu() if cpu is None else cpu
        self.step, self.seconds, self.cpu_at, self.clock_at = step, seconds, cpu, time.monotonic()
        self.idle, self.progress_cpu, self.spoke = 0.0, self.cpu_at, False

    def where(self) -> str:
        """The function whose call is in progress, or "answer cell N"; "" at the runner's start."""
        return "" if self.step.get("start") else self.what()

    def what(self) -> str:
        if self.step.get("cell") is not None:
            return f"answer cell {self.step['cell'] + 1}"
        if self.step.get("function"):
            return f"{self.step['function']}"
        return "the runner's start"

    def watch(self):
        """Kill the runner when the notebook's budget is spent or the step in progress is past its limits."""
        now, since = time.monotonic(), time.monotonic() - self.watched
        self.watched = now
        used, clock = self.cpu(look_again=True), now - self.clock_at
        try:
            self.budget.check(used, self.where())
        except BudgetSpent as spent:
            self.kill(spent.reason, fatal=True, end=spent.end)
        if self.seconds is None:
            if clock > STARTUP:
                self.kill(
                    f"the runner did not start within {STARTUP:g} s (is the machine overloaded?)",
                    end=ChecksEnd(verdicts.START, limit=STARTUP),
                )
            return
        if used - self.cpu_at > self.seconds + GRACE:
            self.kill(
                f"{self.what()} used more than its {self.seconds:g} s of CPU time and was stopped: look for an "
                "infinite loop (a loop that catches every exception never stops)",
                end=ChecksEnd(verdicts.CALL, self.what(), limit=self.seconds),
            )
        self.count_idle(used, min(since, clock))

    def count_idle(self, used: float, since: float):
        """Add ``since`` (the seconds since the last look) to the step's idle seconds when the runner did not
        compute in them: its CPU seconds did not grow, no message moved on the pipe, none waits unread, and no
        thread of its tree is runnable now. Past the budget's ``idle`` the step is stopped."""
        waiting = not (used > self.progress_cpu or self.spoke or self.unread() or computing(self.tree))
        self.progress_cpu, self.spoke = used, False
        self.idle = self.idle + since if waiting else 0.0
        limit = self.budget.limits.idle
        if self.idle > limit:
            self.kill(
                f"stopped: {self.what()} waited {limit:g} s without computing (sleep, input or a lock?)",
                end=ChecksEnd(verdicts.IDLE, self.what(), limit=limit),
            )

    def unread(self) -> bool:
        """Whether the runner has written to its pipe what the grader has not read yet (it waits for the grader)."""
        return bool(select.select([self.reading], [], [], 0)[0])

    def kill(self, reason: str, fatal: bool = False, end: ChecksEnd | None = None):
        self.close()
        raise RunnerDied(reason, self.step, fatal, end)

    def forged(self, message: dict, during: str):
        """End the student's answers: the runner sent a message it may not send now (the student's code wrote
        to the grader's pipe, or broke the runner)."""
        op = quoted(message.get("op"), 40)
        self.kill(
            f"the process running your functions sent the grader a message it did not expect ({op!r}) {during}; "
            "your answers were not graded further: does your code write to file descriptors it did not open?",
            fatal=True,
            end=ChecksEnd(verdicts.MESSAGE, self.where()),
        )

    # the pipe ----------------------------------------------------------------------------------

    def wait_until(self, fd: int, writing: bool = False):
        """Wait until ``fd`` can be read (or written), watching at least every WATCH_EVERY seconds."""
        while True:
            if time.monotonic() - self.watched >= WATCH_EVERY:
                self.watch()
            ready = select.select([] if writing else [fd], [fd] if writing else [], [], WATCH_EVERY)
            if ready[0] or ready[1]:
                return

    def read(self, fd: int, size: int) -> bytes:
        """At most ``size`` bytes, read with the watch (answer_runner.receive reads through it): up to READ_AHEAD
        bytes come in one os.read, so the results a batch streams out are read many at a time."""
        if self.ahead_at >= len(self.ahead):
            self.wait_until(fd)
            try:
                data = os.read(fd, max(size, READ_AHEAD))
            except OSError:
                return b""
            self.spoke = self.spoke or bool(data)
            self.ahead, self.ahead_at = memoryview(data), 0
            if not data:
                return b""
        data = bytes(self.ahead[self.ahead_at : self.ahead_at + size])
        self.ahead_at += len(data)
        return data

    def send(self, header: dict, arrays=()):
        """Write one message, in chunks, with the watch: a runner that stops reading blocks nothing."""
        data = memoryview(answer_runner.frame(header, arrays))
        while data:
            self.wait_until(self.writing, writing=True)
            try:
                data = data[os.write(self.writing, data[:CHUNK]) :]
                self.spoke = True
            except BlockingIOError:
                continue
            except OSError:
                self.died()

    def receive(self, admit=None):
        try:
            received = answer_runner.receive(self.reading, np, read=self.read, limit=RECEIVED, admit=admit)
            self.heard = self.heard or time.monotonic()
            return received
        except EOFError:
            self.died()
        except MALFORMED as error:
            self.kill(
                f"the process running your functions sent the grader something malformed ({quoted(error, 120)}) "
                f"during {self.what()}; your answers were not graded further",
                fatal=True,
                end=ChecksEnd(verdicts.MESSAGE, self.where()),
            )

    def died(self):
        """The runner exited: say how, as a sentence for the student."""
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        self.close()
        killed = killed_by(code, wrapped=sandbox.bubblewrap() is not None)
        if killed is not None:
            name = signal_name(killed)
            cause = verdicts.CRASH_CAUSES.get(name, "")
            end = ChecksEnd(CRASHES.get(name, verdicts.CRASH), self.where(), signal=name)
            reason = (
                f"the Python process running your functions crashed ({name}{': ' + cause if cause else ''}) "
                f"during {self.what()}"
            )
        else:
            end = ChecksEnd(verdicts.EXIT, self.where(), code=code)
            reason = (
                f"the Python process running your functions exited early (exit {code}) during {self.what()}: "
                "does your code call exit()?"
            )
        raise RunnerDied(reason, self.step, end=end)

    def close(self):
        if self.process.poll() is None:
            self.walked = 0.0  # a last walk and measure, so the CPU of the runner's last moments is counted
            self.cpu(look_again=True)
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except OSError:
                pass
        self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            try:
                pipe.close()
            except OSError:
                pass

    # the protocol ------------------------------------------------------------------------------

    def start(self, sources: list[str], skip: dict, seconds: float, names: tuple) -> dict:
        """Run the answer cells; {"cells": {index: error}, "missing": [names not defined], "output": str}.
        Each cell in order, at most once: "step" i then "cell" i ("cell" alone for a skipped one)."""
        self.send(
            {
                "op": "cells",
                "cells": sources,
                "skip": {str(k): v for k, v in skip.items()},
                "names": list(names),
                "seconds": seconds,
                "files": files_inside(self.files),
            }
        )
        cells, expected, running = {}, 0, False
        while True:
            message, _ = self.receive()
            op, error = message.get("op"), message.get("error")
            if op == "step" and not running and expected not in skip and is_index(message.get("cell"), expected):
                running = True
                self.begin({"cell": expected}, seconds)
            elif op == "cell" and (running or expected in skip) and is_index(message.get("index"), expected):
                if error is not None and not isinstance(error, str):
                    self.forged(message, "while running the answer cells")
                cells[expected], expected, running = short_text(error), expected + 1, False
            elif op == "ready" and not running and expected == len(sources):
                return self.ready_report(message, cells, names)
            else:
                self.forged(message, "while running the answer cells")

    def ready_report(self, message: dict, cells: dict, names: tuple) -> dict:
        missing, output = message.get("missing", []), message.get("output", "")
        if not isinstance(missing, list) or any(name not in names for name in missing) or not isinstance(output, str):
            self.forged(message, "after the answer cells")
        return {"cells": cells, "missing": [str(name) for name in missing], "output": output[: answer_runner.TAIL]}

    def call(
        self, function: str, args: tuple, kwargs: dict, allowed: tuple, items: int, seconds: float, compute=None
    ) -> tuple[Result, float, ChecksEnd | None]:
        """(Result, CPU seconds used, the limit hit or None) of one call of the student's ``function``; stand-in
        requests for the names in ``allowed`` are computed here by ``compute(function, name)``, and the functions
        among the arguments (callbacks) are computed here when the student's function calls them."""
        return next(self.calls([(function, args, kwargs, allowed, items, seconds)], compute))

    def calls(self, requests: list, compute=None, seconds: float | None = None, stop: bool = False):
        """(Result, CPU seconds used, the limit hit or None) of each request (function, args, kwargs, allowed, items,
        seconds), yielded in order as each call ends: a batch of calls, many to a message ("calls", runner.py), each
        made and judged as ``call`` makes one (the watch's step is the call in progress, its own CPU seconds).
        seconds: CPU seconds for them all (each call gets at most what is left); stop: the batch ends at its first
        failed call (nothing more is yielded). The generator must be run to its end (the runner answers each call)."""
        spent, done = 0.0, 0
        while done < len(requests):
            arrays, headers, size = [], [], 0
            for request in requests[done:]:
                kept = len(arrays)
                header, callbacks = self.call_header(request, arrays)
                size += len(json.dumps(header))
                if headers and size > answer_runner.HEADER_LIMIT // 4:  # the rest in the next message
                    del arrays[kept:]
                    break
                headers.append((header, callbacks))
            left = None if seconds is None else seconds - spent
            message = {"op": "calls", "calls": [header for header, _ in headers], "seconds": left, "stop": stop}
            for number, (_, callbacks) in enumerate(headers):
                function, args, kwargs, allowed, _, limit = requests[done]
                limit = limit if left is None else max(min(limit, left), 0.0)
                if number == 0:
                    self.begin({"function": function}, limit)
                    self.send(message, arrays)
                else:
                    self.begin({"function": function}, limit, self.last_cpu)
                last = number == len(headers) - 1
                result, used, end = self.answer(function, args, kwargs, allowed, limit, callbacks, compute, last)
                spent, done = spent + used, done + 1
                if left is not None:
                    left -= used
                yield result, used, end
                if stop and result.error is not None:
                    return

    def call_header(self, request: tuple, arrays: list) -> tuple[dict, stand_ins.Callbacks]:
        """One call's part of a message (its arrays appended to ``arrays``), and the callbacks it passes."""
        function, args, kwargs, allowed, items, seconds = request
        functions = []
        header = {
            "function": function,
            "args": [
                self.mapped(a) if isinstance(a, Mapped) else answer_runner.pack(a, arrays, functions) for a in args
            ],
            "kwargs": {key: answer_runner.pack(value, arrays, functions) for key, value in kwargs.items()},
            "stand_ins": list(allowed),
            "items": items,
            "seconds": seconds,
        }
        scale = stand_ins.Scale.of_call(args, kwargs)  # what a stand-in or callback request may name in this call
        callbacks = stand_ins.Callbacks(function, functions, self.budget, scale=scale)
        header["callbacks"] = list(callbacks.names)
        return header, callbacks

    def answer(
        self, function, args, kwargs, allowed, seconds, callbacks, compute, measure=True
    ) -> tuple[Result, float, ChecksEnd]:
        """What the runner sends for the call in progress: stand-in and callback requests, served, then its result
        (Result, CPU seconds, the limit hit or None). The CPU seconds are measured when ``measure`` (the last call of
        a message), a call fails, or MEASURE_EVERY has passed since the last measure; otherwise this call's count is
        0 and what it used is counted with the next call measured (the sum is the same, and /proc is not read for
        each of hundreds of quick calls)."""

        def used() -> float:
            now = time.monotonic()
            if measure or now - self.measured >= MEASURE_EVERY:
                self.measured = now
                return self.cpu() - self.cpu_at
            return self.last_cpu - self.cpu_at

        while True:
            message, received = self.receive(admit=lambda request: self.admit(request, callbacks.names))
            op = message.get("op")
            if op == "stand_in":
                reply = stand_ins.serve(
                    message,
                    received,
                    function=function,
                    allowed=allowed,
                    compute=compute,
                    budget=self.budget,
                    scale=callbacks.scale,
                )
                self.served()
                self.send(*reply)
            elif op == "callback":
                reply = callbacks.serve(message, received)
                self.served()
                self.send(*reply)
            elif callbacks.over and op in ("error", "result"):  # called too often: the call fails, whatever it gave
                end = ChecksEnd(verdicts.CALLBACKS, function, limit=callbacks.limit)
                return Result(short_text(callbacks.over)), self.cpu() - self.cpu_at, end
            elif op == "error" and isinstance(message.get("message"), str):
                timed_out = message.get("timed_out") is True
                end = ChecksEnd(verdicts.CALL, function, limit=seconds) if timed_out else None
                return Result(short_text(message["message"])), self.cpu() - self.cpu_at, end
            elif op == "result" and valid_returned(message.get("returned"), received):
                changed = changed_labels(message.get("changed"), args, kwargs)
                result = Result(None, tuple(received), tuple(message["returned"]), changed)
                return result, used(), None
            else:
                self.forged(message, f"during a call of {function}")

    def served(self):
        """After the grader computed a request: the runner waited for the grader, not by choice, so that time is
        not idle time (its CPU seconds were charged to the budget); the budget is checked before the reply goes."""
        self.watched = time.monotonic()
        self.idle, self.spoke = 0.0, True
        try:
            self.budget.check(self.cpu(), self.where())
        except BudgetSpent as spent:
            self.kill(spent.reason, fatal=True, end=spent.end)

    def admit(self, header: dict, callbacks: tuple = ()):
        """Before a message's arrays are read: a stand-in or callback request past the bound ends this call."""
        reason = stand_ins.oversized(header, callbacks)
        if reason:
            self.kill(f"{reason}: {self.what()} was stopped", end=ChecksEnd(verdicts.STAND_IN, self.where()))

    def mapped(self, argument: Mapped) -> dict:
        """A Mapped argument as the runner reads it: which of its files, where, and the shape."""
        return {"mapped": [self.files.index(str(argument.file)), argument.offset, argument.count, list(argument.shape)]}
