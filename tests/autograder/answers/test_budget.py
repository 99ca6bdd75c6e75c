"""The hidden checks' time budget and pipe (autograder.answers.budget, answer_process, stand_ins): nothing a student's
code writes extends the budget, a forged or malformed message ends that student's answers with a plain verdict,
and a stand-in request is bounded in size and charged in CPU time."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from autograder import assignments, sandbox
from autograder.answers import runner as answer_runner
from autograder.answers.budget import STAND_IN_ELEMENTS, Budget, BudgetSpent, Limits
from autograder.answers.grading import answer_sources, grade_answers
from autograder.answers.stand_ins import oversized, serve

REPOSITORY = Path(__file__).resolve().parents[3]
NOTEBOOK = REPOSITORY / "source" / "attention" / "attention.ipynb"
SEED = 20260101
CHANNEL = 'import gc, os, struct, time\n_ch = next(o for o in gc.get_objects() if type(o).__name__ == "Channel")\n'

pytestmark = pytest.mark.skipif(not NOTEBOOK.exists(), reason="the source notebook is missing")
needs_bubblewrap = pytest.mark.skipif(
    sandbox.bubblewrap() is None,
    reason=f"bubblewrap is not available ({sandbox.INSTALL}): hostile answers are graded only inside the sandbox",
)


@pytest.fixture(scope="module")
def attention():
    return assignments.load(NOTEBOOK.parent)


@pytest.fixture(scope="module")
def solution() -> list[str]:
    return answer_sources(NOTEBOOK)


def timed(attention, sources, **options):
    started = time.monotonic()
    verdicts = grade_answers(attention, sources, seed=SEED, **options)
    return verdicts, time.monotonic() - started


# --- the budget alone -----------------------------------------------------------------------------------


def test_the_budget_counts_the_clock_and_every_cpu_second_whatever_is_said():
    budget = Budget(Limits(call=1.0, total=10.0, wall=0.2))
    assert budget.limits.wall_seconds == 0.2
    budget.check(running_cpu=5.0)  # within both
    budget.charge(7.0)
    with pytest.raises(BudgetSpent, match="10 s of CPU time in all") as spent:
        budget.check(running_cpu=6.0, where="answer cell 1")
    assert spent.value.limit == "notebook" and "during answer cell 1" in spent.value.reason
    time.sleep(0.25)
    with pytest.raises(BudgetSpent, match=r"ran past its 0.2 s by the clock") as late:
        budget.check()
    assert late.value.limit == "notebook time"
    assert Limits(total=120.0).wall_seconds == 300.0  # the documented default: 2.5 x the CPU budget


def test_a_stand_in_request_is_bounded_before_it_is_read_and_its_cpu_is_charged():
    inside = {"op": "stand_in", "name": "softmax", "arrays": [["<f8", [STAND_IN_ELEMENTS]]]}
    over = {"op": "stand_in", "name": "softmax", "arrays": [["<f8", [2, STAND_IN_ELEMENTS // 2 + 1]]]}
    assert oversized(inside) == "" and oversized({"op": "result", "arrays": over["arrays"]}) == ""
    assert f"on {STAND_IN_ELEMENTS + 2:,} numbers" in oversized(over)
    with pytest.raises(ValueError, match="shape"):
        oversized({"op": "stand_in", "arrays": [["<f8", [True, -1]]]})

    def slow(graded, name):
        def compute(scores):
            end = time.thread_time() + 0.05
            while time.thread_time() < end:
                pass
            return scores * 2

        return compute

    budget = Budget(Limits())
    arrays = []
    request = {"op": "stand_in", "name": "softmax", "args": [answer_runner.pack(np.ones(3), arrays)], "kwargs": {}}
    reply, values = serve(request, arrays, function="attention", allowed=("softmax",), compute=slow, budget=budget)
    assert reply["op"] == "value" and values[0].tolist() == [2.0, 2.0, 2.0]
    assert budget.cpu_spent >= 0.04
    refused, _ = serve(request, arrays, function="split_heads", allowed=(), compute=slow, budget=budget)
    assert refused == {"op": "refused", "message": "softmax is not computed for you while split_heads is graded "
                       "(what it may call instead: none)"}  # fmt: skip


# --- the runner's pipe, attacked from the student's code ------------------------------------------------


FORGE_FOREVER = CHANNEL + 'while True:\n    _ch.send({"op": "step", "cell": 0})\n    time.sleep(1)\n'


@needs_bubblewrap
def test_a_runner_forging_steps_without_end_is_stopped_at_once(attention, solution):
    """Before: every forged "step" restarted the cell's clock, and a notebook sending one each 2 s held grading as
    long as it liked (40 s for 20 of them, under a 24 s backstop). Now the first step out of place ends it."""
    verdicts, seconds = timed(attention, [FORGE_FOREVER + solution[0], *solution[1:]], call_limit=1.0, wall=30.0)
    assert seconds < 15, seconds
    for verdict in verdicts.values():
        assert verdict.points == 0 and verdict.limit == "message", verdict.text()
        assert "sent the grader a message it did not expect ('step')" in verdict.text()
        assert verdict.notes and verdict.notes[0].startswith("Grading of your answers stopped:")
        assert "Traceback" not in verdict.text()


MALFORMED = {
    "not an object": CHANNEL + 'os.write(_ch.writing, struct.pack(">I", 3) + b"[1]")\n',
    "nested too deeply": CHANNEL + 'os.write(_ch.writing, struct.pack(">I", 200000) + b"[" * 200000)\n',
    "not JSON": CHANNEL + 'os.write(_ch.writing, struct.pack(">I", 4) + b"\\xff\\xfe{x")\n',
    "a step without a cell": CHANNEL + '_ch.send({"op": "step"})\n',
    "a cell out of order": CHANNEL + '_ch.send({"op": "step", "cell": 0})\n_ch.send({"op": "cell", "index": 5})\n',
    "arrays of another kind": CHANNEL
    + '_h = b\'{"op": "cell", "index": 1, "error": null, "arrays": [["O", [1]]]}\'\n'
    + 'os.write(_ch.writing, struct.pack(">I", len(_h)) + _h)\n',
}


@needs_bubblewrap
@pytest.mark.parametrize("kind", sorted(MALFORMED))
def test_a_malformed_message_ends_the_answers_with_a_plain_verdict(attention, solution, kind):
    sources = [solution[0], MALFORMED[kind] + solution[1], *solution[2:]]
    verdicts, seconds = timed(attention, sources, checks=["check_softmax", "check_attention"])
    assert seconds < 30, seconds
    for verdict in verdicts.values():
        assert verdict.points == 0 and verdict.limit == "message", verdict.text()
        assert "your answers were not graded further" in verdict.text()
        assert "Traceback" not in verdict.text() and "Error:" not in verdict.notes[0]


@needs_bubblewrap
def test_a_forged_result_is_refused(attention, solution):
    """A result whose description names a dtype NumPy does not know: refused, not handed to a judge."""
    forged = (
        "def softmax(scores):\n    "
        + CHANNEL.replace("\n", "\n    ")
        + '_ch.send({"op": "result", "returned": [{"type": "x", "dtype": "no such dtype", "shape": []}]},'
        + " [np.zeros(3)])\n    time.sleep(60)\n"
    )
    sources = [forged, *solution[1:]]
    verdicts = grade_answers(attention, sources, seed=SEED, checks=["check_softmax"])
    assert verdicts["check_softmax"].points == 0 and verdicts["check_softmax"].limit == "message"


@needs_bubblewrap
def test_an_oversized_stand_in_request_is_refused_and_costs_only_its_function(attention, solution):
    index = next(i for i, source in enumerate(solution) if "def attention(" in source)
    greedy = solution[index].replace("def attention(", "def _attention(") + (
        "\n\ndef attention(*args, **kwargs):\n"
        f"    softmax(np.zeros({STAND_IN_ELEMENTS + 1}))\n"
        "    return _attention(*args, **kwargs)\n"
    )
    sources = [*solution[:index], greedy, *solution[index + 1 :]]
    verdicts = grade_answers(attention, sources, seed=SEED, checks=["check_softmax", "check_attention"])
    assert verdicts["check_softmax"].points == verdicts["check_softmax"].max_points
    refused = verdicts["check_attention"]
    assert refused.points == 0 and refused.limit == "stand-in", refused.text()
    assert f"softmax(...) was asked for on {STAND_IN_ELEMENTS + 1:,} numbers" in refused.text()
    assert refused.failed_call.startswith("attention(")


@needs_bubblewrap
def test_nothing_said_extends_the_notebooks_clock(attention, solution):
    """Cells that each sleep for less than the idle seconds, in order, as an honest runner reports them: the
    notebook's wall-clock budget still ends the grading, and every verdict says so."""
    sleepy = ["import time\ntime.sleep(1)\n" + source for source in solution]
    verdicts, seconds = timed(attention, sleepy, call_limit=1.0, wall=5.0)
    assert 5.0 <= seconds < 12, seconds
    for verdict in verdicts.values():
        assert verdict.points == 0 and verdict.limit == "notebook time", verdict.text()
        assert "ran past its 5 s by the clock" in verdict.text()
