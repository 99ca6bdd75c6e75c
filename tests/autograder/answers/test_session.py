"""The runners of one notebook's grading (autograder.answers.session): what a crash or a hang costs.

Usage alone: CPU seconds added (never less than zero), the first limit and the first failed call kept, notes said
once. With real runners (a fraction of a second each) on a small assignment of its own: a cell that ended its
runner is left out of the next one and said; a function whose call ended its runner has its later calls not
made while the others still run; after ATTEMPTS starts, or once the budget is spent or a message forged, every
later call is "not run" with the reason, and the note says grading stopped; ``perform`` makes plain calls with the
assignment's stand-ins, hands driven calls their seconds, and names the first failed call.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from autograder import sandbox
from autograder.answers.budget import ATTEMPTS, Budget, Limits
from autograder.answers.session import Session, Usage
from autograder.assignments import AssignmentChecks
from autograder.checks import Call, Check, Result, describe_call
from autograder.verdicts import ChecksEnd

needs_bubblewrap = pytest.mark.skipif(
    sandbox.bubblewrap() is None,
    reason=f"bubblewrap is not available ({sandbox.INSTALL}): the runner is started only inside the sandbox",
)
ANSWERS = (
    "def double(x):\n    return 2 * x\n\n\n"
    "def attention(x):\n    return softmax(x) + 1\n\n\n"
    "def leave(x):\n    import os\n    os._exit(4)\n"
)
EXIT = "import os\nos._exit(3)\n"
CHANNEL = 'import gc\n_ch = next(o for o in gc.get_objects() if type(o).__name__ == "Channel")\n'


def check(function: str) -> Check:
    return Check(f"check_{function}", function, 1.0, lambda rng: [], ())


def quarter(graded: str, name: str):
    """The assignment's stand-in: softmax as the grader computes it while ``graded`` is graded."""
    return lambda x: np.full_like(np.asarray(x, dtype=float), 0.25)


SMALL = AssignmentChecks(
    "small",
    Path("."),
    {f"check_{f}": check(f) for f in ("double", "attention", "leave")},
    isolate={"attention": ("softmax",)},
    stand_in=quarter,
)


@pytest.fixture
def session(tmp_path):
    """session(sources, budget=None): a Session on SMALL, closed at the end."""
    made = []

    def make(sources, budget=None):
        made.append(Session(SMALL, sources, budget or Budget(Limits(call=5.0, total=60.0)), tmp_path))
        return made[-1]

    yield make
    for one in made:
        one.close()


# --- Usage ----------------------------------------------------------------------------------------------


def test_usage_adds_seconds_and_keeps_the_first_limit_and_each_note_once():
    usage = Usage()
    usage.add(0.5)
    usage.add(-3.0, ChecksEnd("call", "softmax", limit=1.0), "stopped")  # a negative measure counts as nothing
    usage.add(0.25, ChecksEnd("notebook", limit=120.0), "stopped")
    usage.add(0.0, note="")
    assert (usage.cpu_seconds, usage.limit, usage.notes) == (0.75, "call", ["stopped"])
    assert usage.end == ChecksEnd("call", "softmax", limit=1.0)


def test_usage_absorbs_another_stretch_of_the_same_check():
    memory, call = ChecksEnd("memory", "softmax", signal="SIGKILL"), ChecksEnd("call", "attention", limit=1.0)
    first = Usage(1.0, "", None, ["a"])
    first.absorb(Usage(0.5, "softmax(array of shape (2,))", memory, ["a", "b"]))
    first.absorb(Usage(0.25, "attention(...)", call, ["b", "c"]))
    assert first == Usage(1.75, "softmax(array of shape (2,))", memory, ["a", "b", "c"])


# --- real runners ------------------------------------------------------------------------------------------


@needs_bubblewrap
def test_a_call_is_made_in_a_runner_started_on_demand(session):
    graded = session([ANSWERS, "print('hi')\n"])
    assert graded.runner is None and graded.attempts == 0
    result, used = graded.call("double", (np.arange(3.0),))
    assert result.error is None and result.values[0].tolist() == [0.0, 2.0, 4.0] and used >= 0.0
    assert graded.cells == {0: None, 1: None} and graded.output == "hi\n" and graded.missing == []
    graded.call("double", (np.ones(1),))
    assert graded.attempts == 1  # the same runner answered both


@needs_bubblewrap
def test_a_cell_that_ended_its_runner_is_not_run_again(session):
    graded = session([EXIT, ANSWERS])
    result, _ = graded.call("double", (np.ones(2),))
    assert result.error is None and result.values[0].tolist() == [2.0, 2.0]
    reason = "the Python process running your functions exited early (exit 3) during answer cell 1: does your code call exit()?"  # noqa: E501
    assert graded.skip == {0: f"not run again: in an earlier attempt, {reason}"}
    assert graded.cells[0] == graded.skip[0]  # as the runner that skipped it reported it
    assert graded.attempts == 2 and graded.fatal is None


@needs_bubblewrap
def test_a_function_that_ended_its_runner_has_its_later_calls_not_made(session):
    graded = session([ANSWERS])
    crashed, _ = graded.call("leave", (np.ones(2),))
    assert crashed.error.startswith("the Python process running your functions exited early (exit 4) during leave")
    assert graded.runner is None and graded.usage.limit == "exit"
    assert graded.take_usage().end == ChecksEnd("exit", "leave", code=4)
    again, used = graded.call("leave", (np.ones(2),))
    assert again.error == f"not run: an earlier call of leave failed: {crashed.error}" and used == 0.0
    assert graded.take_usage().end == ChecksEnd("exit", "leave", code=4)  # a later check of leave says how, as data
    other, _ = graded.call("double", (np.ones(2),))
    assert other.error is None and graded.attempts == 2  # the others still run, in a fresh runner


@needs_bubblewrap
def test_a_crash_in_a_batch_costs_that_call_and_its_functions_later_ones_only(session):
    graded = session([ANSWERS])
    requests = [
        ("double", (np.ones(1),), {}, (), 1, 5.0),
        ("leave", (np.ones(1),), {}, (), 1, 5.0),
        ("double", (np.full(1, 2.0),), {}, (), 1, 5.0),
        ("leave", (np.ones(1),), {}, (), 1, 5.0),
        ("attention", (np.zeros(2),), {}, ("softmax",), 1, 5.0),
    ]
    made = graded.calls(requests)
    results = [result for result, _, _ in made]
    assert results[0].values[0].tolist() == [2.0]  # made before the crash, kept
    assert results[1].error.startswith("the Python process running your functions exited early (exit 4) during leave")
    assert made[1][2].end == ChecksEnd("exit", "leave", code=4)
    assert results[2].values[0].tolist() == [4.0]  # in the next runner
    assert results[3].error == f"not run: an earlier call of leave failed: {results[1].error}" and made[3][1] == 0.0
    assert results[4].values[0].tolist() == [1.25, 1.25]  # its stand-in, computed by the grader
    assert graded.attempts == 2 and graded.usage == Usage()  # each call's usage is handed back, none kept


@needs_bubblewrap
def test_many_makes_independent_calls_at_once_and_none_after_the_first_that_fails(session):
    graded = session([ANSWERS])
    arguments = [((np.ones(1),), {}), (("text",), {}), ((np.ones(1),), {})]
    made = graded.many("double", arguments, seconds=5.0)
    assert made[0][0].values[0].tolist() == [2.0] and made[1][0].error.startswith("ValueError: returned str")
    assert made[2] == (Result("not run: an earlier call of double failed"), 0.0)
    assert graded.attempts == 1 and graded.take_usage().cpu_seconds == sum(used for _, used in made)


@needs_bubblewrap
def test_perform_all_gives_what_perform_gives_one_call_after_the_other(session, tmp_path):
    def drive(student, function, x, seconds):
        [(once, _), (twice, _)] = student.many(function, [((x,), {}), ((2 * x,), {})], seconds=seconds)
        return Result(None, (once.values[0] + twice.values[0],))

    calls = [
        Call("double", (np.ones(2),)),
        Call("attention", (np.zeros(3),)),
        Call("double", (np.ones(2),), drive=drive),
        Call("double", ("text",)),
        Call("leave", (np.ones(1),)),
        Call("double", (np.arange(2.0),)),
    ]
    (tmp_path / "alone").mkdir()
    batched, alone = (
        session([ANSWERS]),
        Session(SMALL, [ANSWERS], Budget(Limits(call=5.0, total=60.0)), tmp_path / "alone"),
    )
    made = batched.perform_all(calls)
    try:
        one_by_one = [(alone.perform(call), alone.take_usage()) for call in calls]
    finally:
        alone.close()
    assert [result.values and result.values[0].tolist() for result, _ in made] == [[2.0, 2.0], [1.25] * 3,
        [6.0, 6.0], (), (), [0.0, 2.0]]  # fmt: skip
    assert [result.error for result, _ in made] == [result.error for result, _ in one_by_one]
    assert [usage.failed_call for _, usage in made] == [usage.failed_call for _, usage in one_by_one]
    assert [usage.end for _, usage in made] == [usage.end for _, usage in one_by_one]
    assert batched.attempts == alone.attempts == 2


@needs_bubblewrap
def test_after_too_many_restarts_every_call_is_not_run_and_says_why(session):
    graded = session([EXIT] * ATTEMPTS + [ANSWERS])
    result, used = graded.call("double", (np.ones(2),))
    assert result.error == f"not run: the runner was restarted too many times ({ATTEMPTS})" and used == 0.0
    assert graded.attempts == ATTEMPTS and sorted(graded.skip) == list(range(ATTEMPTS))
    usage = graded.take_usage()
    assert usage.limit == "restarts" and usage.end == ChecksEnd("restarts", limit=ATTEMPTS)
    assert usage.notes == [f"Grading of your answers stopped: the runner was restarted too many times ({ATTEMPTS})."]
    assert graded.take_usage() == Usage()  # taken: the next check starts from nothing


def test_a_spent_budget_starts_no_runner(session, tmp_path):
    budget = Budget(Limits(call=5.0, total=10.0))
    budget.charge(20.0)
    graded = session([ANSWERS], budget)
    result, _ = graded.call("double", (np.ones(2),))
    assert result.error == (
        "not run: grading used up its 10 s of CPU time in all: look for a very slow function or an infinite loop"
    )
    assert graded.attempts == 0 and list(tmp_path.iterdir()) == [] and graded.usage.limit == "notebook"


@needs_bubblewrap
def test_a_forged_message_makes_every_later_call_not_run(session):
    forge = (
        "def forge(x):\n    " + CHANNEL.replace("\n", "\n    ") + '_ch.send({"op": "step", "cell": 0})\n    return x\n'
    )
    graded = session([ANSWERS, forge])
    forged, _ = graded.call("forge", (np.ones(2),))
    assert "sent the grader a message it did not expect ('step') during a call of forge" in forged.error
    after, _ = graded.call("double", (np.ones(2),))
    assert after.error == f"not run: {forged.error}" and graded.attempts == 1
    assert graded.take_usage().notes == [f"Grading of your answers stopped: {forged.error}."]


@needs_bubblewrap
def test_perform_makes_plain_calls_with_the_assignments_stand_ins_and_names_the_first_failure(session):
    graded = session([ANSWERS])
    result = graded.perform(Call("attention", (np.zeros(3),)))
    assert result.error is None and result.values[0].tolist() == [1.25] * 3  # softmax computed by the grader
    first, second = Call("double", ("text",)), Call("double", (None,))
    assert graded.perform(first).error.startswith("ValueError: returned str")
    assert graded.perform(second).error.startswith("TypeError: ")
    assert graded.take_usage().failed_call == describe_call(first)  # the first failed call, not the last


@needs_bubblewrap
def test_perform_hands_a_driven_call_its_seconds_and_the_student(session):
    graded = session([ANSWERS])
    seen = {}

    def drive(student, function, x, seconds, scale):
        seen.update(function=function, seconds=seconds)
        once, _ = student(function, (x,), seconds=seconds)
        twice, _ = student(function, (once.values[0] * scale,), seconds=seconds)
        return Result(None, twice.values)

    call = Call("double", (np.ones(2),), {"scale": 10.0}, slow=3.0, drive=drive)
    assert graded.perform(call).values[0].tolist() == [40.0, 40.0]
    assert seen == {"function": "double", "seconds": 15.0}  # slow x the call limit


@needs_bubblewrap
def test_close_charges_the_runners_cpu_and_ends_it(session):
    budget = Budget(Limits(call=5.0, total=60.0))
    spin = "import time\nend = time.process_time() + 1.0\nwhile time.process_time() < end:\n    pass\n"
    graded = session([spin, ANSWERS], budget)
    graded.call("double", (np.ones(1),))
    process = graded.runner.process
    graded.close()
    assert graded.runner is None and process.poll() is not None
    assert budget.cpu_spent >= 1.0  # the cell's second of CPU time, measured from /proc
