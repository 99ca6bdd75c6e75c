"""Grade a student's answers: draw inputs, have a sandboxed runner call the student's functions, judge here.

    from autograder import assignments
    from autograder.answers.grading import answer_sources, grade_answers
    attention = assignments.load("source/attention")
    verdicts = grade_answers(attention, answer_sources("submitted/ada/attention/attention.ipynb"))
    verdicts["check_softmax"].points, verdicts["check_softmax"].text()

Flow: each check (the assignment's checks.py, autograder.assignments) draws its inputs from a generator
seeded by ``seed`` (fresh from os.urandom unless given, and printed in every feedback so a TA can reproduce
the run). A runner process (autograder/answers/runner.py, run as a script by a bare Python with NumPy only, in
the sandbox of autograder.answers.sandbox) executes the answer cells and calls the student's functions on those
inputs (autograder.answers.session makes the calls, autograder.answers.process speaks to the runner and watches
it); the arrays come back over a pipe, and each check's properties are judged here, with lib. The result is
one autograder.verdicts.Verdict per check: its properties, points, the call that failed, the CPU seconds used,
the limit hit.

Nothing of the course is inside the runner's process (docs/contracts.md, "Where student code runs"):
driven calls (the store's model driven by the student's attention, a statistic over every recorded
pattern) run here and call the student's function through the runner (one plain call at a time, or many that do
not wait on each other in one message: autograder.answers.session); a graded function that a
student's function may call while it is graded (its softmax, while attention is graded) is computed
here, by the assignment's stand_in, when the runner asks, and only for the call in progress
(autograder.answers.stand_ins).

Limits (autograder.answers.budget, where the numbers are): CPU time per cell or call (``call_limit``, 10 s) and
for all of a notebook's hidden checks (``timeout``, 120 s), so the grader's own parallelism and the machine's load
decide no grade; a cell or call that waits without computing (a sleep, a lock) is stopped after ``idle`` seconds
(2 s) and its function's later calls are not made; a wall-clock budget per notebook (``wall``, 2.5 x timeout:
300 s), the machine's protection, that nothing the student writes extends.
A step that outlives its limit, or a runner that dies, costs only that step: the runner is started again for
the calls still to make, leaving out the cell or function that hung or crashed, and the feedback says which
limit was hit where. A spent budget or a message the runner may not send ends the grading of the answers:
every call still to make is "not run", and each verdict says why.
"""

from __future__ import annotations

import json
import os
import tempfile
import zlib
from pathlib import Path

import numpy as np

from autograder.answers.budget import CALL_LIMIT, IDLE_LIMIT, Budget, Limits
from autograder.answers.session import Session, Usage
from autograder.assignments import AssignmentChecks
from autograder.checks import Broken, Call, Check, Outputs, Unavailable, call_order, changed_inputs, lazy
from autograder.timeouts import CHECKS_BUDGET
from autograder.verdicts import ChecksEnd, Named, Property, Verdict, mistake_id, quoted

__all__ = ["CALL_LIMIT", "Limits", "answer_sources", "grade_answers", "grade_seeds", "unfinished"]


def answer_sources(notebook) -> list[str]:
    """The sources of the notebook's answer cells (code cells with nbgrader solution: true), in order, and of the
    cells that write a module with ``%%writefile`` (the runner writes its file, so that an answer importing the
    student's own helper module finds it, as in the student's kernel).

    notebook: an nbformat NotebookNode (or its dict form), or the path of an .ipynb file.
    """
    if isinstance(notebook, (str, Path)):
        notebook = json.loads(Path(notebook).read_text())
    sources = []
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        answer = cell.get("metadata", {}).get("nbgrader", {}).get("solution", False)
        if answer or source.lstrip().startswith("%%writefile"):
            sources.append(source)
    return sources


def fresh_seed() -> int:
    return int.from_bytes(os.urandom(4), "little")


def check_generator(seed: int, check_id: str) -> np.random.Generator:
    """Each check's own generator: its inputs do not depend on which other checks run."""
    return np.random.default_rng([seed, zlib.crc32(check_id.encode())])


def grade_answers(
    assignment: AssignmentChecks,
    sources: list[str],
    seed: int | None = None,
    timeout: float = CHECKS_BUDGET,
    call_limit: float = CALL_LIMIT,
    checks: list[str] | None = None,
    wall: float | None = None,
    idle: float = IDLE_LIMIT,
) -> dict[str, Verdict]:
    """{check id: Verdict} for the student's answer cells ``sources``, by ``assignment``'s checks.

    seed: the inputs' seed (default: fresh from os.urandom); timeout: CPU seconds for the whole run;
    call_limit: CPU seconds for one cell or call; checks: ids to grade (default: all); wall: seconds by the
    clock for the whole run (default: answer_budget.WALL_TOTAL_FACTOR x timeout); idle: seconds a cell or call may
    wait without computing.
    Raises sandbox.SandboxUnavailable where bubblewrap is missing and unsandboxed grading was not allowed.
    """
    seed = fresh_seed() if seed is None else int(seed)
    budget = Budget(Limits(call_limit, timeout, wall, idle))
    chosen = [assignment.checks[check_id] for check_id in checks or assignment.checks]
    plans = {check.check_id: check.calls(check_generator(seed, check.check_id)) for check in chosen}
    with tempfile.TemporaryDirectory(prefix="autograde-") as scratch:
        files = tuple(sorted({str(path) for calls in plans.values() for call in calls for path in call.files}))
        session = Session(assignment, list(sources), budget, Path(scratch), files)
        results = {check_id: [None] * len(calls) for check_id, calls in plans.items()}
        usage = {check_id: Usage() for check_id in plans}
        try:
            order = call_order(plans, seed)  # all checks' calls, shuffled, in one runner
            made = session.perform_all([plans[check_id][number] for check_id, number in order])
            for (check_id, number), (result, used) in zip(order, made):
                results[check_id][number] = result
                usage[check_id].absorb(used)
        finally:
            session.close()
        outputs = {check_id: Outputs(plans[check_id], results[check_id]) for check_id in plans}
    return {
        check.check_id: judge(check, outputs[check.check_id], session, seed, usage[check.check_id]) for check in chosen
    }


def grade_seeds(
    assignment: AssignmentChecks,
    sources: list[str],
    seeds,
    checks: list[str] | None = None,
    driven: bool = True,
    timeout: float = CHECKS_BUDGET,
    call_limit: float = CALL_LIMIT,
    keep: dict | None = None,
) -> dict[int, dict[str, Verdict]]:
    """{seed: {check id: Verdict}}: what grade_answers gives under each of ``seeds``, the calls of every seed made
    in one runner (started again only after a hang or a crash), so that an assignment's draws are tried under many
    seeds in about the time of their calls. A check whose points differ between seeds has draws that do not decide
    every property it reports.

    driven=False leaves out the driven calls (the store's model): their properties are then not available; timeout:
    CPU seconds per seed; keep: a dict filled with {seed: {check id: checks.Outputs}} (the calls and their results,
    for a caller that judges them again: autograder.validate finds where a check's own code raises). Trusted answers
    only (the mutants of a test, an instructor's reference): the runner keeps what one seed's calls leave behind for
    the next seed's.
    """
    seeds = [int(seed) for seed in seeds]
    chosen = [assignment.checks[check_id] for check_id in checks or assignment.checks]
    plans = {
        seed: {
            check.check_id: [
                call for call in check.calls(check_generator(seed, check.check_id)) if driven or call.drive is None
            ]
            for check in chosen
        }
        for seed in seeds
    }
    files = tuple(
        sorted({path for plan in plans.values() for calls in plan.values() for call in calls for path in call.files})
    )
    graded, driven_calls = {}, []  # a driven call the same in every seed (over the recorded texts) is made once
    with tempfile.TemporaryDirectory(prefix="autograde-") as scratch:
        session = Session(
            assignment, list(sources), Budget(Limits(call_limit, timeout * len(seeds))), Path(scratch), files
        )
        try:
            for seed, plan in plans.items():
                results = {check_id: [None] * len(calls) for check_id, calls in plan.items()}
                usage = {check_id: Usage() for check_id in plan}
                order = call_order(plan, seed)
                calls = [plan[check_id][number] for check_id, number in order]
                known = [next((r for other, r in driven_calls if same_call(call, other)), None) for call in calls]
                made = iter(session.perform_all([call for call, done in zip(calls, known) if done is None]))
                for (check_id, number), call, done in zip(order, calls, known):
                    result, used = (done, Usage()) if done is not None else next(made)
                    results[check_id][number] = result
                    usage[check_id].absorb(used)
                    if call.drive is not None and done is None:
                        driven_calls.append((call, result))
                outputs = {check_id: Outputs(plan[check_id], results[check_id]) for check_id in plan}
                if keep is not None:
                    keep[seed] = outputs
                graded[seed] = {
                    check.check_id: judge(check, outputs[check.check_id], session, seed, usage[check.check_id])
                    for check in chosen
                }
        finally:
            session.close()
    return graded


def same_call(call: Call, other: Call) -> bool:
    """Whether two planned calls are the same call: function, driver and arguments (arrays by their values)."""

    def same(a, b) -> bool:
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.array_equal(a, b)
        return type(a) is type(b) and a == b

    return (
        (call.function, call.drive, call.items, len(call.args))
        == (other.function, other.drive, other.items, len(other.args))
        and call.kwargs.keys() == other.kwargs.keys()
        and all(same(a, b) for a, b in zip(call.args, other.args))
        and all(same(call.kwargs[key], other.kwargs[key]) for key in call.kwargs)
    )


def evaluate(check: Check, outputs: Outputs) -> list[Property]:
    """Every property of ``check`` on these outputs (a judge that crashes on odd output fails its property).

    Outputs that carry no computation (checks.lazy: zeros, a constant, the input, the same result for
    different inputs) earn nothing: every property fails, with that as its reason.
    """
    reason = lazy(outputs)
    if reason:
        return refuse_all(check, Named(reason, "no-computation"))
    properties = []
    for name, judge_property in check.properties:
        try:
            message = judge_property(outputs)
            properties.append(Property(name, message is None, message or "", mistake_id(check.check_id, name, message)))
        except Unavailable as reason:
            properties.append(Property(name, None, str(reason)))
        except Broken as reason:
            properties.append(Property(name, False, str(reason), mistake_id(check.check_id, name)))
        except Exception as error:  # noqa: BLE001 - malformed output reached a comparison
            properties.append(
                Property(
                    name,
                    False,
                    f"the result could not be compared ({type(error).__name__}: {quoted(error)})",
                    mistake_id(check.check_id, name),
                )
            )
    return properties


def refuse_all(check: Check, message: str) -> list[Property]:
    return [Property(name, False, message, mistake_id(check.check_id, name, message)) for name, _ in check.properties]


def judge(check: Check, outputs: Outputs, session: Session, seed: int, usage: Usage) -> Verdict:
    """The verdict of one check: its properties, points, the call that failed, the CPU time and the limit hit."""
    if check.function in session.missing:
        properties = refuse_all(check, Named(missing_message(check.function, session.cells), "missing-function"))
    else:
        properties = evaluate(check, outputs)
    return Verdict(
        check=check.check_id,
        function=check.function,
        points=score(check.points, properties),
        max_points=float(check.points),
        properties=tuple(properties),
        seed=seed,
        failed_call=usage.failed_call,
        cpu_seconds=round(usage.cpu_seconds, 3),
        limit=usage.limit,
        notes=tuple(filter(None, [*usage.notes, changed_inputs(outputs.calls, outputs.results)])),
        end=usage.end,
    )


def unfinished(assignment: AssignmentChecks, checks: list[str], reason: str, end: ChecksEnd) -> dict[str, Verdict]:
    """{check id: Verdict} of 0 points for checks whose grading did not finish: every property fails, saying why
    (``end``: how, as data)."""
    verdicts = {}
    for check_id in checks:
        check = assignment.checks[check_id]
        verdicts[check_id] = Verdict(
            check=check_id,
            function=check.function,
            points=0.0,
            max_points=float(check.points),
            properties=tuple(refuse_all(check, Named(f"not judged: {reason}", "not-judged"))),
            limit=end.kind,
            notes=(f"Grading of your answers stopped: {reason}.",),
            end=end,
        )
    return verdicts


def missing_message(function: str, cells: dict) -> str:
    failed = [f"answer cell {index + 1} failed: {error}" for index, error in sorted(cells.items()) if error]
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
