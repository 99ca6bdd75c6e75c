"""One runner process of the hidden checks, from the grader's side (autograder.answers.process).

Pure parts: a process's CPU time read from /proc, the signal that ended a runner read both ways it is reported,
and what the grader accepts of the runner's words (an index that is an int, a text quoted on one line, arrays
changed in place only where they name a real argument, result descriptions one per float64 array with a numeric
dtype). Then real runners, each a fraction of a second: cells and a call answered; a call reading its input from
a file; a stand-in computed here; and each way a runner ends the student's answers with a sentence, not a
traceback: a forged or malformed message (fatal), an exit, a kill by signal, a stand-in request past its bound,
a cell past its CPU time, the notebook's clock; each with how it ended as data (a verdicts.ChecksEnd: its kind, the
cell or function, a signal's name, an exit status). A cell or call that waits without computing (a sleep, a lock)
is stopped after the budget's idle seconds, one that computes is not; the runner's CPU is counted from its start.
"""

from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest

from autograder import sandbox
from autograder.answers import process
from autograder.answers.budget import GRACE, STAND_IN_ELEMENTS, Budget, Limits
from autograder.answers.process import (
    Runner,
    RunnerDied,
    changed_labels,
    is_index,
    killed_by,
    process_cpu,
    short_text,
    signal_name,
    valid_returned,
)
from autograder.checks import Mapped
from autograder.verdicts import ChecksEnd

needs_bubblewrap = pytest.mark.skipif(
    sandbox.bubblewrap() is None,
    reason=f"bubblewrap is not available ({sandbox.INSTALL}): the runner is started only inside the sandbox",
)
CHANNEL = 'import gc, os, struct\n_ch = next(o for o in gc.get_objects() if type(o).__name__ == "Channel")\n'
NAMES = ("double", "scale")
ANSWERS = "def double(x):\n    return 2 * x\n\n\ndef scale(x, factor=3.0):\n    x *= factor\n    return x, x.sum()\n"


# --- the pure parts -------------------------------------------------------------------------------------


def test_process_cpu_reads_this_process_and_is_zero_for_one_that_is_gone():
    end = time.process_time() + 0.05
    while time.process_time() < end:
        pass
    assert process_cpu(os.getpid()) >= 0.05
    assert process_cpu(2**30) == 0.0  # above any pid_max: no such process


def test_signal_name_names_known_signals_and_keeps_other_numbers():
    assert signal_name(11) == "SIGSEGV" and signal_name(9) == "SIGKILL" and signal_name(200) == "200"


def test_killed_by_reads_both_ways_a_signal_is_reported():
    assert killed_by(-11, wrapped=False) == 11 and killed_by(-11, wrapped=True) == 11
    assert killed_by(139, wrapped=True) == 11  # bubblewrap's exit status for SIGSEGV
    assert killed_by(139, wrapped=False) is None  # not wrapped: exit(139) was the process's own
    assert killed_by(3, wrapped=True) is None and killed_by(0, wrapped=True) is None and killed_by(None, True) is None
    assert killed_by(128, wrapped=True) is None and killed_by(128 + signal.NSIG + 1, wrapped=True) is None


def test_an_index_is_an_int_and_nothing_that_equals_one():
    assert is_index(1, 1) and is_index(0, 0)
    assert not any(is_index(value, 1) for value in (True, 1.0, "1", [1], None, 2))


def test_a_text_from_the_runner_is_quoted_on_one_line_with_its_numbers_rounded():
    assert short_text(None) is None
    text = "ValueError: x = 0.123456789\n" + "0.987654321 " * 100 + "(answer cell 3, line 7, in softmax)"
    assert short_text(text) == "ValueError: x = 0.123 … (answer cell 3, line 7, in softmax)"
    assert short_text(3) == "3"  # whatever the student's code sent, a string comes out


def test_changed_arguments_are_kept_only_where_they_name_a_real_argument():
    args, kwargs = (np.zeros(2), np.zeros(3)), {"mask": np.zeros(1)}
    claimed = [1, 0, 1, 5, -1, True, 1.0, "mask", "nope", ["mask"], None]
    assert changed_labels(claimed, args, kwargs) == (1, 0, "mask")
    assert changed_labels("mask", args, kwargs) == () and changed_labels({"0": 1}, args, kwargs) == ()


GOOD = {"type": "numpy.ndarray", "dtype": "float32", "shape": [2]}


@pytest.mark.parametrize(
    "returned, received, valid",
    [
        ([GOOD], [np.zeros(2)], True),
        ([GOOD, {**GOOD, "dtype": "bool", "type": "list"}], [np.zeros(2), np.zeros(1)], True),
        ([], [], True),
        ([GOOD], [], False),
        ([GOOD], [np.zeros(2), np.zeros(2)], False),
        (GOOD, [np.zeros(2)], False),
        ([GOOD], [np.zeros(2, dtype=np.float32)], False),
        (["float64"], [np.zeros(2)], False),
        ([{**GOOD, "type": 3}], [np.zeros(2)], False),
        ([{**GOOD, "shape": "(2,)"}], [np.zeros(2)], False),
        ([{"type": "x", "shape": [2]}], [np.zeros(2)], False),
        ([{**GOOD, "dtype": "no such dtype"}], [np.zeros(2)], False),
        ([{**GOOD, "dtype": "<U3"}], [np.zeros(2)], False),
        ([{**GOOD, "dtype": "O"}], [np.zeros(2)], False),
        ([{**GOOD, "dtype": "f8,i4"}], [np.zeros(2)], False),
    ],
    ids=[
        "one",
        "two",
        "none",
        "missing-array",
        "extra-array",
        "not-a-list",
        "not-float64",
        "not-a-dict",
        "type-not-text",
        "shape-not-list",
        "no-dtype",
        "unknown-dtype",
        "text-dtype",
        "object-dtype",
        "structured-dtype",
    ],
)
def test_a_results_descriptions_are_checked_before_a_judge_reads_them(returned, received, valid):
    assert valid_returned(returned, received) is valid


# --- real runners ------------------------------------------------------------------------------------------


@pytest.fixture
def started(tmp_path):
    """Start a runner (closed at the end): started(budget=..., files=...)."""
    runners = []

    def start(budget=None, files=()):
        runner = Runner(tmp_path / f"work-{len(runners)}", budget or Budget(Limits(call=5.0, total=60.0)), files)
        runners.append(runner)
        return runner

    yield start
    for runner in runners:
        runner.close()


@needs_bubblewrap
def test_a_runner_reports_its_cells_and_answers_calls(started):
    runner = started()
    report = runner.start([ANSWERS, "print('x' * 5000)\n", "1 / 0\n"], {}, 5.0, ("double", "scale", "softmax"))
    assert report["cells"] == {
        0: None,
        1: None,
        2: "ZeroDivisionError: division by zero (answer cell 3, line 1, in <module>)",
    }
    assert report["missing"] == ["softmax"] and report["output"] == "x" * 3999 + "\n"
    result, used, limit = runner.call("scale", (np.ones(3),), {"factor": 2.0}, (), 2, 5.0)
    assert result.error is None and limit is None and used >= 0.0
    assert [v.tolist() for v in result.values] == [[2.0, 2.0, 2.0], 6.0]
    assert result.returned == ({"type": "numpy.ndarray", "dtype": "float64", "shape": [3]},
                               {"type": "numpy.float64", "dtype": "float64", "shape": []})  # fmt: skip
    assert result.changed == (0,)  # scale multiplied its argument in place
    missing, _, _ = runner.call("softmax", (np.ones(3),), {}, (), 1, 5.0)
    assert missing.error == "no function named softmax in your answers"
    assert runner.process.poll() is None  # a failed call leaves the runner running


@needs_bubblewrap
def test_a_batch_of_calls_is_one_message_and_each_call_is_judged_as_a_lone_call(started, monkeypatch):
    runner = started()
    runner.start([ANSWERS, "def attention(x):\n    return softmax(x) + 1\n"], {}, 5.0, NAMES + ("attention",))
    sent = []
    send = runner.send
    monkeypatch.setattr(runner, "send", lambda header, arrays=(): (sent.append(header["op"]), send(header, arrays)))
    requests = [
        ("scale", (np.ones(3),), {"factor": 2.0}, (), 2, 5.0),
        ("attention", (np.zeros(2),), {}, ("softmax",), 1, 5.0),
        ("softmax", (np.ones(3),), {}, (), 1, 5.0),
        ("attention", (np.zeros(2),), {}, (), 1, 5.0),  # softmax not allowed in this call: not bound
        ("double", (np.arange(3.0),), {}, (), 1, 5.0),
    ]
    made = list(runner.calls(requests, lambda function, name: lambda x: np.full_like(x, 0.25)))
    assert sent == ["calls", "value"]  # one message for the five calls, and the stand-in's value
    results = [result for result, _, _ in made]
    assert [v.tolist() for v in results[0].values] == [[2.0, 2.0, 2.0], 6.0] and results[0].changed == (0,)
    assert results[1].values[0].tolist() == [1.25, 1.25]
    assert results[2].error == "no function named softmax in your answers"
    assert results[3].error.startswith("NameError: name 'softmax' is not defined")
    assert results[4].values[0].tolist() == [0.0, 2.0, 4.0] and results[4].changed == ()
    assert all(used >= 0.0 for _, used, _ in made) and [end for _, _, end in made] == [None] * 5


@needs_bubblewrap
def test_a_batch_with_stop_yields_up_to_its_first_failed_call(started):
    runner = started()
    runner.start([ANSWERS], {}, 5.0, NAMES)
    requests = [("double", (np.ones(1),), {}, (), 1, 5.0), ("double", ("text",), {}, (), 1, 5.0)] * 2
    made = list(runner.calls(requests, seconds=5.0, stop=True))
    assert len(made) == 2 and made[0][0].error is None and made[1][0].error.startswith("ValueError: returned str")
    result, _, _ = runner.call("double", (np.ones(1),), {}, (), 1, 5.0)  # the runner waits for the next message
    assert result.values[0].tolist() == [2.0]


@needs_bubblewrap
def test_a_runner_that_dies_in_a_batch_has_yielded_the_calls_before(started):
    runner = started()
    runner.start([ANSWERS, "def leave(x):\n    import os\n    os._exit(4)\n"], {}, 5.0, NAMES + ("leave",))
    requests = [("double", (np.ones(1),), {}, (), 1, 5.0), ("leave", (np.ones(1),), {}, (), 1, 5.0)]
    requests.append(("double", (np.ones(1),), {}, (), 1, 5.0))
    made = []
    with pytest.raises(RunnerDied, match="exited early") as died:
        made.extend(runner.calls(requests))
    assert len(made) == 1 and made[0][0].values[0].tolist() == [2.0]
    assert died.value.step == {"function": "leave"}


@needs_bubblewrap
def test_a_mapped_argument_is_read_from_its_file_by_the_runner(started, tmp_path):
    inputs = tmp_path / "inputs.npy"
    np.save(inputs, np.arange(10, dtype=np.float32))
    runner = started(files=(inputs,))
    runner.start([ANSWERS], {}, 5.0, NAMES)
    argument = Mapped(str(inputs), 2, 6, (2, 3))
    assert runner.mapped(argument) == {"mapped": [0, 2, 6, [2, 3]]}
    result, _, _ = runner.call("double", (argument,), {}, (), 1, 5.0)
    assert result.error is None and result.values[0].tolist() == [[4, 6, 8], [10, 12, 14]]
    assert result.changed == ()  # read from the file: not compared for changes


@needs_bubblewrap
def test_a_stand_in_is_computed_here_only_for_the_names_allowed(started):
    runner = started()
    runner.start(["def attention(x):\n    return softmax(x) + 1\n"], {}, 5.0, ("attention",))
    asked = []

    def compute(function, name):
        asked.append((function, name))
        return lambda x: np.full_like(x, 0.25)

    result, _, _ = runner.call("attention", (np.zeros(4),), {}, ("softmax",), 1, 5.0, compute)
    assert result.error is None and result.values[0].tolist() == [1.25] * 4 and asked == [("attention", "softmax")]
    refused, _, _ = runner.call("attention", (np.zeros(4),), {}, (), 1, 5.0, compute)
    assert refused.error.startswith("NameError: name 'softmax' is not defined")  # not bound: not allowed


def died(runner, sources, names=NAMES, seconds=5.0) -> RunnerDied:
    with pytest.raises(RunnerDied) as ended:
        runner.start(sources, {}, seconds, names)
    assert runner.process.poll() is not None  # the runner is gone
    return ended.value


@needs_bubblewrap
def test_a_forged_message_ends_the_answers_for_good(started):
    ended = died(started(), [ANSWERS, CHANNEL + '_ch.send({"op": "ready", "missing": [], "output": ""})\n'])
    assert ended.fatal and ended.limit == "message" and ended.step == {"cell": 1}
    assert ended.reason == (
        "the process running your functions sent the grader a message it did not expect ('ready') while running "
        "the answer cells; your answers were not graded further: does your code write to file descriptors it did "
        "not open?"
    )


@pytest.mark.parametrize(
    "forgery",
    [
        '_ch.send({"op": "cell", "index": 0, "error": None})',  # a cell already reported
        '_ch.send({"op": "cell", "index": 1, "error": 7})',  # an error that is not a text
        '_ch.send({"op": "step", "cell": True})',  # True is not cell 1
        '_ch.send({"op": "ready", "missing": ["os"], "output": ""})',  # ready out of place
    ],
    ids=["cell-again", "error-not-text", "step-true", "ready-early"],
)
@needs_bubblewrap
def test_each_message_out_of_place_is_refused(started, forgery):
    ended = died(started(), [ANSWERS, CHANNEL + forgery + "\n"])
    assert ended.fatal and ended.limit == "message" and "did not expect" in ended.reason


@needs_bubblewrap
def test_a_malformed_message_ends_the_answers_with_what_was_wrong(started):
    garbage = CHANNEL + 'os.write(_ch.writing, struct.pack(">I", 3) + b"[1]")\n'
    ended = died(started(), [garbage])
    assert ended.fatal and ended.limit == "message"
    assert ended.reason.startswith("the process running your functions sent the grader something malformed (")
    assert "not an object with a list of arrays" in ended.reason and "during answer cell 1" in ended.reason


@needs_bubblewrap
def test_a_forged_result_during_a_call_is_refused(started):
    forging = (
        "def double(x):\n    " + CHANNEL.replace("\n", "\n    ")
        + '_ch.send({"op": "result", "returned": [{"type": "x", "dtype": "no such dtype", "shape": []}]}, '
        "[np.zeros(3)])\n    return x\n"
    )  # fmt: skip
    runner = started()
    runner.start([forging], {}, 5.0, NAMES)
    with pytest.raises(RunnerDied) as ended:
        runner.call("double", (np.ones(2),), {}, (), 1, 5.0)
    assert ended.value.fatal and ended.value.limit == "message" and "during a call of double" in ended.value.reason


@needs_bubblewrap
def test_an_exit_is_said_as_an_exit_and_costs_only_that_cell(started):
    ended = died(started(), [ANSWERS, "import os\nos._exit(3)\n"])
    assert not ended.fatal and ended.limit == "exit" and ended.step == {"cell": 1}
    assert ended.end == ChecksEnd("exit", "answer cell 2", code=3)
    assert ended.reason == (
        "the Python process running your functions exited early (exit 3) during answer cell 2: "
        "does your code call exit()?"
    )


@needs_bubblewrap
def test_a_kill_by_signal_is_said_as_a_crash_with_its_likely_cause(started):
    ended = died(started(), ["import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"])
    assert not ended.fatal and ended.limit == "memory"
    assert ended.end == ChecksEnd("memory", "answer cell 1", signal="SIGKILL")
    assert ended.reason == (
        "the Python process running your functions crashed (SIGKILL: killed: out of memory?) during answer cell 1"
    )


@needs_bubblewrap
def test_a_stand_in_request_past_its_bound_is_refused_before_it_is_read(started):
    runner = started()
    runner.start(
        [f"def attention(x):\n    return softmax(np.zeros({STAND_IN_ELEMENTS + 1}))\n"], {}, 5.0, ("attention",)
    )
    with pytest.raises(RunnerDied) as ended:
        runner.call("attention", (np.zeros(2),), {}, ("softmax",), 1, 5.0, lambda f, n: np.exp)
    assert not ended.value.fatal and ended.value.limit == "stand-in"
    assert ended.value.reason == (
        f"softmax(...) was asked for on {STAND_IN_ELEMENTS + 1:,} numbers; the grader computes it for you on at most "
        f"{STAND_IN_ELEMENTS:,}: attention was stopped"
    )


@needs_bubblewrap
def test_a_cell_that_swallows_its_timeout_is_killed_past_its_cpu_time(started):
    swallow = "while True:\n    try:\n        while True:\n            pass\n    except BaseException:\n        pass\n"
    runner = started()
    ended = died(runner, [swallow], seconds=0.2)
    assert not ended.fatal and ended.limit == "call" and ended.step == {"cell": 0}
    assert ended.reason.startswith("answer cell 1 used more than its 0.2 s of CPU time and was stopped")
    assert runner.last_cpu >= 0.2 + GRACE  # what it used, measured by the grader


@needs_bubblewrap
def test_the_notebooks_clock_ends_a_sleeping_cell_for_good(started):
    started_at = time.monotonic()
    ended = died(started(Budget(Limits(call=5.0, total=60.0, wall=1.0))), ["import time\ntime.sleep(60)\n"])
    assert time.monotonic() - started_at < 10
    assert ended.fatal and ended.limit == "notebook time"
    assert ended.reason.startswith("grading your answers ran past its 1 s by the clock, during answer cell 1")


@needs_bubblewrap
def test_a_crash_is_data_with_its_signals_name(started):
    ended = died(started(), [ANSWERS, "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n"])
    assert not ended.fatal and ended.end == ChecksEnd("crash", "answer cell 2", signal="SIGSEGV")
    assert ended.end.what() == "answer cell 2 crashed (SIGSEGV: a segmentation fault)"
    assert ended.reason == (
        "the Python process running your functions crashed (SIGSEGV: a segmentation fault) during answer cell 2"
    )


@needs_bubblewrap
def test_a_sleeping_cell_is_stopped_after_the_idle_seconds(started):
    started_at = time.monotonic()
    ended = died(started(Budget(Limits(call=5.0, total=60.0, idle=0.5))), ["import time\ntime.sleep(60)\n"])
    assert 0.5 <= time.monotonic() - started_at < 5
    assert not ended.fatal and ended.end == ChecksEnd("idle", "answer cell 1", limit=0.5)
    assert ended.reason == "stopped: answer cell 1 waited 0.5 s without computing (sleep, input or a lock?)"


@needs_bubblewrap
def test_a_call_blocked_on_a_lock_is_stopped_and_one_that_computes_is_not(started):
    """A lock taken twice never returns and uses no CPU: stopped after the idle seconds. A call that computes for
    longer than those seconds, in short steps between which it returns nothing, is left alone."""
    runner = started(Budget(Limits(call=5.0, total=60.0, idle=0.3)))
    runner.start(
        [
            "import threading\n\ndef double(x):\n    lock = threading.Lock()\n    lock.acquire()\n    lock.acquire()\n",
            "import time\n\ndef scale(x, factor=3.0):\n    t = time.process_time()\n"
            "    while time.process_time() - t < 1.0:\n        pass\n    return x * factor, x.sum()\n",
        ],
        {},
        5.0,
        NAMES,
    )
    result, used, end = runner.call("scale", (np.ones(3),), {}, (), 2, 5.0)
    assert result.error is None and end is None and used >= 0.9  # /proc counts in 10 ms ticks
    with pytest.raises(RunnerDied) as ended:
        runner.call("double", (np.ones(2),), {}, (), 1, 5.0)
    assert ended.value.end == ChecksEnd("idle", "double", limit=0.3)


@needs_bubblewrap
def test_the_runners_cpu_is_counted_from_its_start(started, monkeypatch):
    """The first walk over /proc may come before bubblewrap starts the runner's Python: the processes are looked up
    again until a walk after the runner's first message, so a cell's CPU counts even with no later walk."""
    monkeypatch.setattr(process, "WALK_EVERY", 3600.0)  # no walk by the clock during this test
    runner = started()
    burn = "import time\n_t = time.process_time()\nwhile time.process_time() - _t < 0.4:\n    pass\n"
    runner.start([burn], {}, 5.0, ())
    assert len(runner.tree) >= 2 and runner.process.pid in runner.tree  # bubblewrap's processes and Python's
    assert runner.cpu() >= 0.4
