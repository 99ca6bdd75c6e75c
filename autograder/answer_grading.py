"""Grade a student's answers: draw inputs, have a sandboxed runner call the student's functions, judge here.

    from autograder import assignments
    from autograder.answer_grading import answer_sources, grade_answers
    attention = assignments.load("source/attention")
    verdicts = grade_answers(attention, answer_sources("submitted/ada/attention/attention.ipynb"))
    verdicts["check_softmax"].points, verdicts["check_softmax"].feedback

Flow: each check (the assignment's checks.py, autograder.assignments) draws its inputs from a generator
seeded by ``seed`` (fresh from os.urandom unless given, and printed in every feedback so a TA can reproduce
the run). A runner
process (autograder/answer_runner.py, run as a script by a bare Python with NumPy only) executes the answer
cells and calls the student's functions on those inputs; the arrays come back over a pipe, and each
check's properties are judged here, with lib.

Nothing of the course is inside the runner's process (docs/contracts.md, "Where student code runs"):
driven calls (the store's model driven by the student's attention, a statistic over every recorded
pattern) run here and call the student's function one plain call at a time; a graded function that a
student's function may call while it is graded (its softmax, while attention is graded) is computed
here, by the assignment's stand_in, when the runner asks, and only for the call in progress.

Limits are CPU time, so the grader's own parallelism and the machine's load decide no grade: a cell or
call gets ``call_limit`` CPU seconds (a statistic over the model's patterns several), a notebook
``timeout`` in all, with a wall-clock backstop several times longer. A step that outlives its limit,
or a runner that dies, costs only that step: the runner is started again for the calls still to
make, leaving out the cell or function that hung or crashed, and the feedback says which limit was
hit where, with the original cause.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from autograder import answer_runner, sandbox
from autograder.assignments import AssignmentChecks
from autograder.checks import (
    Broken,
    Call,
    Check,
    Mapped,
    Outputs,
    Result,
    Unavailable,
    call_order,
    changed_inputs,
    lazy,
)

TIMEOUT = 120.0  # CPU seconds for the whole grading of one notebook
CALL_LIMIT = 10.0  # CPU seconds for one cell or one call
GRACE = 2.0  # CPU seconds past a step's own limit before the grader kills the runner
WALL_FACTOR, WALL_SLACK = 4.0, 20.0  # the wall-clock backstop of a step: 4 x its CPU limit + 20 s
STARTUP = 60.0  # wall seconds for a runner to start (Python and NumPy, no student code)
RECEIVED = 2**30  # bytes of arrays one message from the runner may carry
ATTEMPTS = 4  # runner starts per grading, at most (each one after a hang or crash)
RUNNER = Path(answer_runner.__file__).resolve()
RUNNER_INSIDE = "/run/grader/runner.py"  # where the runner's one file appears in its sandbox
SITE_INSIDE = "/run/site"  # the folder that holds NumPy (and nothing else) in the sandbox
FILES_INSIDE = "/run/inputs"  # where the calls' read-only input files (Call.files) appear in the sandbox


# --- verdicts ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Property:
    name: str
    passed: bool | None  # None: not available here (does not count)
    message: str = ""


@dataclass(frozen=True)
class Verdict:
    check_id: str
    points: float
    max_points: float
    properties: tuple[Property, ...]
    feedback: str
    notes: tuple[str, ...] = ()  # sentences that are no property (an input array changed in place)


def answer_sources(notebook) -> list[str]:
    """The sources of the notebook's answer cells (code cells with nbgrader solution: true), in order.

    notebook: an nbformat NotebookNode (or its dict form), or the path of an .ipynb file.
    """
    if isinstance(notebook, (str, Path)):
        notebook = json.loads(Path(notebook).read_text())
    sources = []
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code" and cell.get("metadata", {}).get("nbgrader", {}).get("solution", False):
            source = cell["source"]
            sources.append(source if isinstance(source, str) else "".join(source))
    return sources


def fresh_seed() -> int:
    return int.from_bytes(os.urandom(4), "little")


def check_generator(seed: int, check_id: str) -> np.random.Generator:
    """Each check's own generator: its inputs do not depend on which other checks run."""
    return np.random.default_rng([seed, zlib.crc32(check_id.encode())])


@dataclass(frozen=True)
class Limits:
    """CPU seconds for one cell or call and for a whole notebook (autograder.answer_grading's defaults)."""

    call: float = CALL_LIMIT
    total: float = TIMEOUT


def grade_answers(
    assignment: AssignmentChecks,
    sources: list[str],
    seed: int | None = None,
    timeout: float = TIMEOUT,
    call_limit: float = CALL_LIMIT,
    checks: list[str] | None = None,
) -> dict[str, Verdict]:
    """{check id: Verdict} for the student's answer cells ``sources``, by ``assignment``'s checks.

    seed: the inputs' seed (default: fresh from os.urandom); timeout: CPU seconds for the whole run;
    call_limit: CPU seconds for one cell or call; checks: ids to grade (default: all).
    Raises sandbox.SandboxUnavailable where bubblewrap is missing and unsandboxed grading was not allowed.
    """
    seed = fresh_seed() if seed is None else int(seed)
    chosen = [assignment.checks[check_id] for check_id in checks or assignment.checks]
    plans = {check.check_id: check.calls(check_generator(seed, check.check_id)) for check in chosen}
    with tempfile.TemporaryDirectory(prefix="autograde-") as scratch:
        files = tuple(sorted({str(path) for calls in plans.values() for call in calls for path in call.files}))
        session = Session(assignment, list(sources), Limits(call_limit, timeout), Path(scratch), files)
        results = {check_id: [None] * len(calls) for check_id, calls in plans.items()}
        try:
            for check_id, number in call_order(plans, seed):  # all checks' calls, shuffled, in one runner
                results[check_id][number] = session.perform(plans[check_id][number])
        finally:
            session.close()
    return {
        check.check_id: judge(check, plans[check.check_id], results[check.check_id], session, seed) for check in chosen
    }


def evaluate(check: Check, outputs: Outputs) -> list[Property]:
    """Every property of ``check`` on these outputs (a judge that crashes on odd output fails its property).

    Outputs that carry no computation (checks.lazy: zeros, a constant, the input, the same result for
    different inputs) earn nothing: every property fails, with that as its reason.
    """
    reason = lazy(outputs)
    if reason:
        return refuse_all(check, reason)
    properties = []
    for name, judge_property in check.properties:
        try:
            message = judge_property(outputs)
            properties.append(Property(name, message is None, message or ""))
        except Unavailable as reason:
            properties.append(Property(name, None, str(reason)))
        except Broken as reason:
            properties.append(Property(name, False, str(reason)))
        except Exception as error:  # noqa: BLE001 - malformed output reached a comparison
            properties.append(
                Property(name, False, f"the result could not be compared ({type(error).__name__}: {error})")
            )
    return properties


def refuse_all(check: Check, message: str) -> list[Property]:
    return [Property(name, False, message) for name, _ in check.properties]


def judge(check: Check, calls: list[Call], results: list[Result], session: "Session", seed: int) -> Verdict:
    """The verdict of one check: its properties, points and feedback text."""
    if check.function in session.missing:
        properties = refuse_all(check, missing_message(check.function, session))
    else:
        properties = evaluate(check, Outputs(calls, results))
    points = score(check.points, properties)
    notes = tuple(filter(None, [changed_inputs(calls, results)]))
    text = feedback(check, points, properties, seed, notes)
    return Verdict(check.check_id, points, float(check.points), tuple(properties), text, notes)


def missing_message(function: str, session: "Session") -> str:
    failed = [f"answer cell {index + 1} failed: {error}" for index, error in sorted(session.cells.items()) if error]
    context = f" ({'; '.join(failed)})" if failed else ""
    return (
        f"no function named {function} in your answers: define it in its answer cell as def {function}(...):{context}"
    )


def score(max_points: float, properties: list[Property]) -> float:
    """max_points shared equally between the available properties; those that hold earn their share."""
    counted = [p for p in properties if p.passed is not None]
    if not counted:
        return 0.0
    passed = sum(1 for p in counted if p.passed)
    return float(max_points) if passed == len(counted) else round(max_points * passed / len(counted), 2)


def feedback(check: Check, points: float, properties: list[Property], seed: int, notes: tuple = ()) -> str:
    lines = [f"{check.check_id} ({check.function}): {points:g} / {check.points:g} points"]
    said = set()
    for p in properties:
        mark = {True: "PASS", False: "FAIL", None: "n/a "}[p.passed]
        message = "the same failure as above" if p.message and p.message in said else p.message
        said.add(p.message)
        lines.append(f"  {mark} {p.name}" + (f": {message}" if message else ""))
    lines.extend(notes)
    lines.append(
        f"Graded outside your notebook on inputs drawn at grading time (seed {seed}; grading again "
        f"with seed={seed}, autograder.answer_grading.grade_answers(checks, sources, seed={seed}), reproduces them)."
    )
    return "\n".join(lines)


# --- the runner's process ---------------------------------------------------------------------------


class RunnerDied(Exception):
    """The runner was killed (a limit) or exited; ``reason`` says why in a sentence, ``step`` where it was."""

    def __init__(self, reason: str, step: dict | None = None, fatal: bool = False):
        super().__init__(reason)
        self.reason, self.step, self.fatal = reason, step or {}, fatal


def numpy_folders() -> dict[str, str]:
    """{name: folder} of NumPy's package and its bundled libraries, the only packages the runner sees."""
    package = Path(np.__file__).resolve().parent
    folders = {"numpy": str(package)}
    libs = package.parent / "numpy.libs"
    if libs.is_dir():
        folders["numpy.libs"] = str(libs)
    return folders


def base_python() -> Path:
    """The interpreter itself, not a virtual environment's link to it (the runner needs no environment)."""
    return Path(getattr(sys, "_base_executable", sys.executable)).resolve()


def files_inside(files: tuple) -> list[str]:
    """Where the calls' input files appear to the runner: under FILES_INSIDE in the sandbox, else where they are."""
    if sandbox.bubblewrap() is None:
        return [str(path) for path in files]
    return [f"{FILES_INSIDE}/{number}.npy" for number in range(len(files))]


def runner_sandbox(work: Path, files: tuple = ()) -> sandbox.Sandbox:
    """The runner's view: its work folder writable; Python's standard library, NumPy, the runner's file and the
    calls' input files (Call.files: the model's attention patterns, inputs, not answers) readable.

    Not in view: site-packages (of any Python), lib, data (the model and its recorded statistics), the
    rest of autograder (the checks, the grader), the course, other submissions, the instructor's home.
    """
    python = base_python()
    prefix = Path(sys.base_prefix).resolve()
    readable = {str(prefix): str(prefix), str(python): str(python), RUNNER_INSIDE: str(RUNNER)}
    readable.update({f"{SITE_INSIDE}/{name}": folder for name, folder in numpy_folders().items()})
    readable.update({inside: str(path) for inside, path in zip(files_inside(files), files)})
    hidden = sandbox.site_folders() + sandbox.course_folders()
    return sandbox.Sandbox(writable=(work,), readable=readable, cwd=work, environment=False, hidden=tuple(hidden))


def runner_command(work: Path, files: tuple = ()) -> list[str]:
    """The runner's command line: limits, then the sandbox (or, unsandboxed, NumPy linked into a folder of its own)."""
    if sandbox.bubblewrap() is not None:
        inner = [str(base_python()), "-I", "-S", RUNNER_INSIDE, SITE_INSIDE]
    else:
        site = work.parent / (work.name + "-site")
        site.mkdir()
        for name, folder in numpy_folders().items():
            (site / name).symlink_to(folder)
        inner = [str(base_python()), "-I", "-S", str(RUNNER), str(site)]
    wrapped = sandbox.command(inner, runner_sandbox(work, files))  # raises SandboxUnavailable where it must
    return sandbox.limited(wrapped, sandbox.STUDENT_MEMORY, sandbox.STUDENT_FILES, sandbox.PROCESS_CAP)


def runner_environment(home: Path) -> dict:
    """A minimal environment: no credentials, one BLAS thread."""
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "TMPDIR": str(home),
        "LANG": "C.UTF-8",
        **sandbox.SINGLE_THREAD,
        "MALLOC_MMAP_THRESHOLD_": str(2**28),
        "MALLOC_TRIM_THRESHOLD_": str(2**28),
    }


def changed_labels(claimed, args: tuple, kwargs: dict) -> tuple:
    """The arguments the runner says the call changed in place, kept only where they name a real argument."""
    if not isinstance(claimed, list):
        return ()
    positions = [x for x in claimed if type(x) is int and 0 <= x < len(args)]
    names = [x for x in claimed if isinstance(x, str) and x in kwargs]
    return tuple(dict.fromkeys(positions + names))


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system, and of waited-for children) of one process; 0 when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(value) for value in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def signal_name(code: int) -> str:
    return signal.Signals(code).name if code in signal.Signals._value2member_map_ else str(code)


class Runner:
    """One runner process, its pipe, and the watch over its CPU time and the clock."""

    def __init__(self, work: Path, limits: Limits, spent: float, files: tuple = ()):
        work.mkdir()
        self.limits, self.spent = limits, spent  # spent: CPU seconds of earlier attempts
        self.files = tuple(str(path) for path in files)  # the calls' input files, numbered as the runner sees them
        self.process = subprocess.Popen(
            runner_command(work, self.files),
            cwd=work,
            env=runner_environment(work),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.writing, self.reading = self.process.stdin.fileno(), self.process.stdout.fileno()
        self.step, self.seconds, self.cpu_at, self.clock_at = {"start": True}, None, 0.0, time.monotonic()
        self.last_cpu = 0.0  # the runner's CPU seconds when last measured (after it is killed, what it used)
        self.tree: list[int] = []  # the runner's process and the processes below it, as last looked up

    # the watch ---------------------------------------------------------------------------------

    def cpu(self, look_again: bool = False) -> float:
        """CPU seconds used by the runner and every process below it. The processes below it are looked up
        again (a walk over /proc) only when ``look_again``: the watch does, between a call's start and end."""
        if look_again or not self.tree:
            self.tree = [self.process.pid, *sandbox.descendants(self.process.pid)]
        used = sum(process_cpu(pid) for pid in self.tree)
        self.last_cpu = max(self.last_cpu, used)
        return self.last_cpu

    def begin(self, step: dict, seconds: float | None):
        self.step, self.seconds, self.cpu_at, self.clock_at = step, seconds, self.cpu(), time.monotonic()

    def what(self) -> str:
        if self.step.get("cell") is not None:
            return f"answer cell {self.step['cell'] + 1}"
        if self.step.get("function"):
            return f"{self.step['function']}"
        return "the runner's start"

    def watch(self):
        """Kill the runner when the step in progress is past a limit (raises RunnerDied)."""
        used, clock = self.cpu(look_again=True), time.monotonic() - self.clock_at
        step_used = used - self.cpu_at
        if self.seconds is None:
            if clock > STARTUP:
                self.kill(f"the runner did not start within {STARTUP:g} s (is the machine overloaded?)")
            return
        if self.spent + used > self.limits.total + GRACE:
            self.kill(
                f"grading used up its {self.limits.total:g} s of CPU time in all, during {self.what()}: "
                "look for a very slow function or an infinite loop",
                fatal=True,
            )
        if step_used > self.seconds + GRACE:
            self.kill(
                f"{self.what()} used more than its {self.seconds:g} s of CPU time and was stopped: look for an "
                "infinite loop (a loop that catches every exception never stops)"
            )
        backstop = WALL_FACTOR * self.seconds + WALL_SLACK
        if clock > backstop:
            self.kill(
                f"{self.what()} ran {backstop:g} s by the clock using {step_used:.1f} s of CPU time: "
                "does it sleep, or wait for input?"
            )

    def kill(self, reason: str, fatal: bool = False):
        self.close()
        raise RunnerDied(reason, self.step, fatal)

    def read(self, fd: int, size: int) -> bytes:
        """os.read with the watch: wait for data in short slices, checking the limits between them."""
        while True:
            ready, _, _ = select.select([fd], [], [], 0.1)
            if ready:
                try:
                    return os.read(fd, size)
                except OSError:
                    return b""
            self.watch()

    def send(self, header: dict, arrays=()):
        try:
            answer_runner.send(self.writing, header, arrays)
        except OSError:
            self.died()

    def receive(self):
        try:
            return answer_runner.receive(self.reading, np, read=self.read, limit=RECEIVED)
        except EOFError:
            self.died()
        except (ValueError, KeyError, TypeError, json.JSONDecodeError) as error:
            self.kill(f"the runner sent something it should not have ({error}) during {self.what()}")

    def died(self):
        """The runner exited: say how, as a sentence for the student."""
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        self.close()
        if code is not None and code < 0:
            name = signal_name(-code)
            cause = {
                "SIGKILL": "killed: out of memory?",
                "SIGXCPU": "the CPU time limit",
                "SIGSEGV": "a segmentation fault",
                "SIGXFSZ": "it wrote too large a file",
            }.get(name, "")
            reason = (
                f"the Python process running your functions crashed ({name}{': ' + cause if cause else ''}) "
                f"during {self.what()}"
            )
        else:
            reason = (
                f"the Python process running your functions exited early (exit {code}) during {self.what()}: "
                "does your code call exit()?"
            )
        raise RunnerDied(reason, self.step)

    def close(self):
        if self.process.poll() is None:
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

    def start(self, sources: list[str], skip: dict, limits: Limits, names: tuple) -> dict:
        """Run the answer cells; {"cells": {index: error}, "missing": [names not defined], "output": str}."""
        self.send(
            {
                "op": "cells",
                "cells": sources,
                "skip": {str(k): v for k, v in skip.items()},
                "names": list(names),
                "seconds": limits.call,
                "files": files_inside(self.files),
            }
        )
        cells = {}
        while True:
            message, _ = self.receive()
            op = message.get("op")
            if op == "step":
                self.begin({"cell": int(message["cell"])}, limits.call)
            elif op == "cell":
                cells[int(message["index"])] = message.get("error")
            elif op == "ready":
                return {
                    "cells": cells,
                    "missing": list(message.get("missing", [])),
                    "output": str(message.get("output", "")),
                }
            else:
                self.kill(f"the runner sent {op!r} while running the answer cells")

    def call(
        self, function: str, args: tuple, kwargs: dict, stand_ins: tuple, items: int, seconds: float, stand_in=None
    ) -> tuple[Result, float]:
        """(Result, CPU seconds used) of one call of the student's ``function``; stand-in requests served here,
        by ``stand_in(function, name)``."""
        arrays = []
        header = {
            "op": "call",
            "function": function,
            "args": [self.mapped(a) if isinstance(a, Mapped) else answer_runner.pack(a, arrays) for a in args],
            "kwargs": {key: answer_runner.pack(value, arrays) for key, value in kwargs.items()},
            "stand_ins": list(stand_ins),
            "items": items,
            "seconds": seconds,
        }
        self.begin({"function": function}, seconds)
        self.send(header, arrays)
        while True:
            message, received = self.receive()
            op = message.get("op")
            if op == "stand_in":
                self.serve(function, message, received, stand_ins, stand_in)
            elif op == "error":
                return Result(str(message.get("message"))), self.cpu() - self.cpu_at
            elif op == "result":
                returned = message.get("returned")
                if (
                    not isinstance(returned, list)
                    or len(returned) != len(received)
                    or any(array.dtype != np.float64 for array in received)
                ):
                    self.kill(f"the runner sent a malformed result for {function}")
                changed = changed_labels(message.get("changed"), args, kwargs)
                return Result(None, tuple(received), tuple(returned), changed), self.cpu() - self.cpu_at
            else:
                self.kill(f"the runner sent {op!r} during a call of {function}")

    def mapped(self, argument: Mapped) -> dict:
        """A Mapped argument as the runner reads it: which of its files, where, and the shape."""
        return {"mapped": [self.files.index(str(argument.file)), argument.offset, argument.count, list(argument.shape)]}

    def serve(self, function: str, message: dict, received: list, stand_ins: tuple, stand_in):
        """Answer a stand-in request: computed by the assignment when the name is one ``function`` may call now."""
        name = message.get("name")
        if name not in stand_ins or stand_in is None:
            allowed = ", ".join(stand_ins) or "none"
            self.send(
                {
                    "op": "refused",
                    "message": (
                        f"{name} is not computed for you while {function} is graded "
                        f"(what it may call instead: {allowed})"
                    ),
                }
            )
            return
        try:
            args = [answer_runner.unpack(value, received) for value in message.get("args", [])]
            kwargs = {
                str(key): answer_runner.unpack(value, received) for key, value in message.get("kwargs", {}).items()
            }
            value = stand_in(function, name)(*args, **kwargs)
            arrays = []
            packed = answer_runner.pack(value, arrays)
        except Exception as error:  # noqa: BLE001 - the student's call of the stand-in was malformed
            self.send(
                {
                    "op": "refused",
                    "message": f"{name}(...) could not be computed for you: {type(error).__name__}: {error}",
                }
            )
            return
        self.send({"op": "value", "value": packed}, arrays)


class Session:
    """The runner processes of one grading: a new one after a hang or crash, without what caused it."""

    def __init__(
        self, assignment: AssignmentChecks, sources: list[str], limits: Limits, scratch: Path, files: tuple = ()
    ):
        self.assignment, self.sources, self.limits, self.scratch = assignment, sources, limits, scratch
        self.files = files  # the planned calls' input files (Call.files), shown to every runner
        self.cells: dict[int, str | None] = {}
        self.missing: list[str] = []
        self.output = ""
        self.skip: dict[int, str] = {}
        self.failed: dict[str, str] = {}  # function -> why its later calls are not made
        self.runner: Runner | None = None
        self.attempts, self.spent, self.fatal = 0, 0.0, None

    def ready(self) -> Runner | None:
        """The running runner, started (again) if needed; None when no more attempts are left."""
        while self.runner is None and self.fatal is None:
            if self.attempts >= ATTEMPTS:
                self.fatal = "the runner was restarted too many times"
                break
            self.attempts += 1
            started = Runner(self.scratch / f"work-{self.attempts}", self.limits, self.spent, self.files)
            try:
                report = started.start(self.sources, self.skip, self.limits, self.assignment.graded)
            except RunnerDied as died:
                self.spent += started.last_cpu
                self.blame_cell(died)
                continue
            self.cells.update(report["cells"])
            self.missing, self.output, self.runner = report["missing"], report["output"], started
        return self.runner

    def blame_cell(self, died: RunnerDied):
        cell = died.step.get("cell")
        if died.fatal or cell is None:
            self.fatal = died.reason
            return
        self.cells[cell] = died.reason
        self.skip[cell] = f"not run again: in an earlier attempt, {died.reason}"

    def call(
        self,
        function: str,
        args: tuple,
        kwargs: dict = None,
        stand_ins: tuple = (),
        items: int = 1,
        seconds: float | None = None,
    ) -> tuple[Result, float]:
        """One call of the student's function (Result, CPU seconds); a crash costs this call and the function's
        later ones."""
        if function in self.failed:
            return Result(f"not run: an earlier call of {function} failed: {self.failed[function]}"), 0.0
        active = self.ready()
        if active is None:
            return Result(f"not run: {self.fatal}"), 0.0
        try:
            return active.call(
                function, args, kwargs or {}, stand_ins, items, seconds or self.limits.call, self.assignment.stand_in
            )
        except RunnerDied as died:
            self.spent += active.last_cpu
            self.runner = None
            if died.fatal:
                self.fatal = died.reason
            self.failed[function] = died.reason
            return Result(died.reason), 0.0

    def perform(self, call: Call) -> Result:
        """One planned call of a check: a plain call with its stand-ins, or a driven call run here."""
        seconds = call.slow * self.limits.call
        if call.drive is not None:
            return call.drive(self.call, call.function, *call.args, seconds=seconds, **call.kwargs)
        stand_ins = tuple(self.assignment.isolate.get(call.function, ()))
        result, _ = self.call(call.function, call.args, call.kwargs, stand_ins, call.items, seconds)
        return result

    def close(self):
        if self.runner is not None:
            self.runner.close()
            self.runner = None
