"""Grade a student's answers: draw inputs, run the student's functions in a separate process, judge.

    from autograder.grade import answer_sources, grade_answers
    verdicts = grade_answers(answer_sources("submitted/ada/attention/attention.ipynb"))
    verdicts["check_softmax"].points, verdicts["check_softmax"].feedback

Flow: each check (autograder.checks) draws its inputs from a generator seeded by ``seed`` (fresh
from os.urandom unless given, and printed in every feedback so a TA can reproduce the run); the
calls go to ``python -m autograder.runner`` in a fresh temporary folder, with a minimal
environment and resource limits; the results come back as float64 arrays; each check's
properties are judged here, with lib.

The runner is watched: a step (a cell or a call) that outlives its limit, or a runner that dies,
costs only that step. The runner is started again for the calls still to make, leaving out the
cell or function that hung or crashed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from autograder import model, sandbox
from autograder.checks import CHECKS, Broken, Call, Check, Outputs, Result, Unavailable
from autograder.operations import OVER_MODEL_PATTERNS

REPOSITORY = Path(__file__).resolve().parent.parent
TIMEOUT = 120.0  # seconds for the whole grading of one notebook
CALL_LIMIT = 10.0  # seconds for one cell or one call
GRACE = 2.0  # seconds past a step's own limit before the watchdog kills the runner
MEMORY = 4 * 2**30  # bytes of address space for the runner
OUTPUT_FILES = 256 * 2**20  # the largest file the runner may write
ATTEMPTS = 4  # runner starts per grading, at most (each one after a hang or crash)


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


def grade_answers(sources: list[str], seed: int | None = None, timeout: float = TIMEOUT,
                  call_limit: float = CALL_LIMIT, checks: list[str] | None = None) -> dict[str, Verdict]:
    """{check id: Verdict} for the student's answer cells ``sources``.

    seed: the inputs' seed (default: fresh from os.urandom); timeout: seconds for the whole run;
    call_limit: seconds for one cell or call; checks: ids to grade (default: all).
    """
    seed = fresh_seed() if seed is None else int(seed)
    chosen = [CHECKS[check_id] for check_id in (checks or CHECKS)]
    plans = {check.check_id: check.calls(check_generator(seed, check.check_id)) for check in chosen}
    run = run_student_code(list(sources), plans, timeout, call_limit)
    return {check.check_id: judge(check, plans[check.check_id], run, seed) for check in chosen}


def evaluate(check: Check, outputs: Outputs) -> list[Property]:
    """Every property of ``check`` on these outputs (a judge that crashes on odd output fails its property)."""
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
            properties.append(Property(name, False, f"the result could not be compared ({type(error).__name__}: {error})"))
    return properties


def refuse_all(check: Check, message: str) -> list[Property]:
    return [Property(name, False, message) for name, _ in check.properties]


def judge(check: Check, calls: list[Call], run: "Run", seed: int) -> Verdict:
    """The verdict of one check: its properties, points and feedback text."""
    results = [run.results[call_id(check.check_id, number)] for number in range(len(calls))]
    hits = [hit for hit in run.traps if hit["function"] == check.function]
    if hits:
        references = sorted({hit["reference"] for hit in hits})
        properties = refuse_all(check, f"{check.function} calls lib's reference {', '.join(references)}: "
                                       "it earns nothing for this check; write the computation yourself")
    elif check.function in run.missing:
        properties = refuse_all(check, missing_message(check.function, run))
    else:
        properties = evaluate(check, Outputs(calls, results))
    points = score(check.points, properties)
    return Verdict(check.check_id, points, float(check.points), tuple(properties), feedback(check, points, properties, seed, run))


def missing_message(function: str, run: "Run") -> str:
    failed = [f"answer cell {int(index) + 1} failed: {error}" for index, error in sorted(run.cells.items(), key=lambda c: int(c[0])) if error]
    context = f" ({'; '.join(failed)})" if failed else ""
    return f"no function named {function} in your answers: define it in its answer cell as def {function}(...):{context}"


def score(max_points: float, properties: list[Property]) -> float:
    """max_points shared equally between the available properties; those that hold earn their share."""
    counted = [p for p in properties if p.passed is not None]
    if not counted:
        return 0.0
    passed = sum(1 for p in counted if p.passed)
    return float(max_points) if passed == len(counted) else round(max_points * passed / len(counted), 2)


def feedback(check: Check, points: float, properties: list[Property], seed: int, run: "Run") -> str:
    lines = [f"{check.check_id} ({check.function}): {points:g} / {check.points:g} points"]
    said = set()
    for p in properties:
        mark = {True: "PASS", False: "FAIL", None: "n/a "}[p.passed]
        message = "the same failure as above" if p.message and p.message in said else p.message
        said.add(p.message)
        lines.append(f"  {mark} {p.name}" + (f": {message}" if message else ""))
    lines.append(f"Graded outside your notebook on inputs drawn at grading time (seed {seed}; "
                 f"autograder.grade.grade_answers(sources, seed={seed}) reproduces them).")
    return "\n".join(lines)


# --- running the student's code -----------------------------------------------------------------


@dataclass
class Run:
    """What the runner process(es) reported, merged over attempts."""

    results: dict = field(default_factory=dict)  # call id -> Result
    cells: dict = field(default_factory=dict)  # cell index (str) -> error message or None
    missing: list = field(default_factory=list)
    traps: list = field(default_factory=list)
    stdout: str = ""
    stderr: str = ""


def call_id(check_id: str, number: int) -> str:
    return f"{check_id}.{number}"


def encode(value, key: str, arrays: dict):
    """A call argument for calls.json: arrays go to inputs.npz under ``key``."""
    if isinstance(value, np.ndarray):
        arrays[key] = value
        return {"array": key}
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"cannot send {type(value).__name__} to the runner")


def encode_call(identifier: str, call: Call, call_limit: float, arrays: dict) -> dict:
    return {
        "id": identifier,
        "function": call.function,
        "args": [encode(value, f"{identifier}.a{j}", arrays) for j, value in enumerate(call.args)],
        "kwargs": {name: encode(value, f"{identifier}.k.{name}", arrays) for name, value in call.kwargs.items()},
        "isolate": list(call.isolated()),
        "items": call.items,
        "special": call.special,
        "seconds": call.slow * call_limit,
    }


def write_request(folder: Path, sources, calls: list[dict], arrays: dict, options: dict):
    folder.mkdir(parents=True)
    (folder / "cells.json").write_text(json.dumps(sources))
    (folder / "calls.json").write_text(json.dumps(calls))
    (folder / "options.json").write_text(json.dumps(options))
    np.savez(folder / "inputs.npz", **arrays)


def runner_environment(home: Path) -> dict:
    """A minimal environment: no credentials, one thread for BLAS, lib and autograder importable."""
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "TMPDIR": str(home),
        "LANG": "C.UTF-8",
        "PYTHONPATH": str(REPOSITORY),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "MPLBACKEND": "Agg",
        "MALLOC_MMAP_THRESHOLD_": str(2**28),  # reuse freed memory for large arrays: far fewer page faults
        "MALLOC_TRIM_THRESHOLD_": str(2**28),
    }


RUNNER_MODULES = ("__init__.py", "operations.py", "runner.py")  # all of autograder/ the runner sees


def runner_sandbox(folder: Path, work: Path, patterns: str | None) -> sandbox.Sandbox:
    """The runner's view: its request and work folders writable; lib, the model and its three modules readable.

    Not in view: the checks (autograder/checks.py), the rest of the grader, the course, other submissions.
    """
    readable = {str(REPOSITORY / "lib"): str(REPOSITORY / "lib"), str(model.MODEL_DIR): str(model.MODEL_DIR)}
    for name in RUNNER_MODULES:
        readable[str(REPOSITORY / "autograder" / name)] = str(REPOSITORY / "autograder" / name)
    if patterns:
        readable[patterns] = patterns
    return sandbox.Sandbox(writable=(folder, work), readable=readable, cwd=work)


def read_report(folder: Path) -> dict | None:
    try:
        return json.loads((folder / "report.json").read_text())
    except (OSError, ValueError):
        return None


def step_limit(step, limits: dict, call_limit: float) -> float | None:
    """The time limit of the step the runner is in (None at start-up: only the total limit applies)."""
    if not step:
        return None
    if step.get("call") is not None:
        return limits.get(step["call"], call_limit)
    if step.get("cell") is not None:
        return call_limit
    return None


def supervise(process, folder: Path, deadline: float, limits: dict, call_limit: float) -> str:
    """Wait for the runner; kill it when a step outlives its limit or the total time is up.

    Returns "finished", "hung" (a step ran past its limit), "timeout" (the total time is up) or
    "crashed" (it exited without finishing).
    """
    seen, started = None, time.monotonic()
    while True:
        try:
            process.wait(timeout=0.05)
            report = read_report(folder)
            return "finished" if report and report.get("finished") else "crashed"
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        report = read_report(folder)
        step = report.get("current") if report else None
        if step != seen:
            seen, started = step, now
        limit = step_limit(step, limits, call_limit)
        if now > deadline or (limit is not None and now - started > limit + GRACE):
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return "timeout" if now > deadline else "hung"


def how_it_ended(ending: str, process, limit: float | None, timeout: float) -> str:
    """A sentence for the student about a runner that did not finish."""
    if ending == "hung":
        return f"your code ran past {limit:g} s: look for an infinite loop (one that catches every exception never stops)"
    if ending == "timeout":
        return f"grading ran past its {timeout:g} s in all: look for an infinite loop or a very slow function"
    code = process.returncode
    if code is not None and code < 0:
        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
        cause = {"SIGKILL": "killed: memory?", "SIGXCPU": "CPU time limit", "SIGSEGV": "segmentation fault",
                 "SIGXFSZ": "wrote too large a file"}.get(name, "")
        return f"the Python process running your functions crashed (exit {code}, {name}{': ' + cause if cause else ''})"
    return f"the Python process running your functions exited early (exit {code}): does your code call exit()?"


def merge_report(run: Run, report: dict | None, folder: Path):
    """Add one attempt's finished cells and calls to ``run``."""
    if not report:
        return
    run.cells.update(report.get("cells", {}))
    run.missing = report.get("missing", run.missing)
    run.traps += report.get("traps", [])
    run.stdout, run.stderr = run.stdout + report.get("stdout", ""), run.stderr + report.get("stderr", "")
    for identifier, outcome in report.get("calls", {}).items():
        values = ()
        if outcome["file"]:
            with np.load(folder / outcome["file"], allow_pickle=False) as stored:
                values = tuple(np.asarray(stored[str(k)], dtype=np.float64) for k in range(len(stored.files)))
        run.results[identifier] = Result(outcome["error"], values, tuple(outcome["returned"]))


def plan_calls(plans: dict[str, list[Call]], call_limit: float):
    """(calls as the runner reads them, {call id: its input arrays})."""
    calls, arrays = [], {}
    for check_id, planned in plans.items():
        for number, call in enumerate(planned):
            identifier = call_id(check_id, number)
            arrays[identifier] = {}
            calls.append(encode_call(identifier, call, call_limit, arrays[identifier]))
    return calls, arrays


def start_runner(folder: Path, work: Path, timeout: float, patterns: str | None = None):
    """The runner process for REQUEST_DIR ``folder``, in ``work``, in a session of its own, in its sandbox
    (autograder.sandbox) and under limits: address space, CPU time, file size, processes, no core dump.

    The limits are set before the runner starts (sandbox.limited); the runner still waits for "go" on
    its stdin, so that nothing of the student's runs before the grader watches it.
    """
    inner = sandbox.limited([sys.executable, "-m", "autograder.runner", str(folder)], MEMORY, OUTPUT_FILES,
                            sandbox.PROCESS_CAP, cpu_seconds=int(timeout) + 5)
    process = subprocess.Popen(
        sandbox.command(inner, runner_sandbox(folder, work, patterns)),
        cwd=work, env=runner_environment(work), stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    process.stdin.write(b"go\n")
    process.stdin.close()
    return process


def blame(run: Run, pending: list[dict], step: dict, reason: str, skip_cells: set) -> bool:
    """Record what a runner that hung or crashed was doing; True when another runner should go on.

    A call: it fails with ``reason`` and the function's later calls are not made. A cell: it is
    skipped next time. Start-up, or the total time used up: every pending call fails.
    """
    if step.get("call") is not None:
        culprit = next(call["function"] for call in pending if call["id"] == step["call"])
        for call in pending:
            if call["function"] == culprit:
                first = call["id"] == step["call"]
                run.results[call["id"]] = Result(reason if first else f"not run: an earlier call of {culprit} failed: {reason}")
        return True
    if step.get("cell") is not None:
        skip_cells.add(step["cell"])
        run.cells[str(step["cell"])] = reason
        return True
    for call in pending:
        run.results[call["id"]] = Result(f"not run: {reason}")
    return False


def run_student_code(sources: list[str], plans: dict[str, list[Call]], timeout: float, call_limit: float) -> Run:
    """Run the answer cells and every planned call in runner processes; restart after a hang or crash."""
    calls, arrays = plan_calls(plans, call_limit)
    limits = {call["id"]: call["seconds"] for call in calls}
    options = {"call_seconds": call_limit, "course": str(REPOSITORY), "model": str(model.MODEL_DIR),
               "patterns": str(model.cache().file) if any(c["special"] == OVER_MODEL_PATTERNS for c in calls) else None}
    run, skip_cells, pending = Run(), set(), calls
    deadline = time.monotonic() + timeout
    with tempfile.TemporaryDirectory(prefix="autograde-") as scratch:
        for attempt in range(ATTEMPTS):
            folder, work = Path(scratch) / f"request-{attempt}", Path(scratch) / f"work-{attempt}"
            work.mkdir()
            inputs = {key: array for call in pending for key, array in arrays[call["id"]].items()}
            write_request(folder, sources, pending, inputs, {**options, "skip_cells": sorted(skip_cells)})
            process = start_runner(folder, work, timeout, options["patterns"])
            ending = supervise(process, folder, deadline, limits, call_limit)
            report = read_report(folder)
            merge_report(run, report, folder)
            pending = [call for call in pending if call["id"] not in run.results]
            if ending == "finished" or not pending:
                break
            step = (report or {}).get("current") or {}
            reason = how_it_ended(ending, process, step_limit(step, limits, call_limit), timeout)
            if ending == "timeout":
                step = {}  # nothing is left to blame: every pending call fails
            if not blame(run, pending, step, reason, skip_cells):
                break
            pending = [call for call in pending if call["id"] not in run.results]
        for call in pending:
            run.results.setdefault(call["id"], Result("not run: the runner was restarted too many times"))
    return run
