"""The answers' runner (autograder.answers.runner), the one course file inside the student's process.

Its pure parts, imported here: the framing (``frame``/``receive``) and what it refuses before reading an array's
bytes, packing values for a header (arrays, tuples, callbacks; what cannot be sent and why), the student's prints
kept as a tail, IPython magics stripped with line numbers kept, errors described at the deepest line of student
code (``lib`` named as unavailable), the CPU limit, what a call returned turned into float64 arrays, and ``perform``
(stand-ins bound for the call only, arrays changed in place noted, a callback kept after its call refused) over an
in-memory channel. Then a few exchanges with a real runner, started as autograder.answers.process starts it:
cells run in order, a failing cell reported and the next run, prints kept off the pipe, processes refused.
"""

from __future__ import annotations

import io
import json
import os
import re
import select
import signal
import struct
import subprocess
import sys

import numpy as np
import pytest

from autograder import sandbox
from autograder.answers import runner as answer_runner
from autograder.answers.process import start_runner
from autograder.answers.runner import (
    HEADER_LIMIT,
    NO_LIB,
    CallbackRefused,
    CallTimedOut,
    StandInRefused,
)

needs_bubblewrap = pytest.mark.skipif(
    sandbox.bubblewrap() is None,
    reason=f"bubblewrap is not available ({sandbox.INSTALL}): the runner is started only inside the sandbox",
)


def reader(data: bytes, chunk: int = 3):
    """A ``read(fd, n)`` over ``data`` that gives at most ``chunk`` bytes at a time, as a pipe may."""
    stream = io.BytesIO(data)
    return lambda fd, n: stream.read(min(n, chunk))


def message(header: dict, payload: bytes = b"") -> bytes:
    """A hand-made message: length, JSON header as given (no arrays added), then ``payload``."""
    text = json.dumps(header).encode()
    return struct.pack(">I", len(text)) + text + payload


@pytest.fixture
def numpy_taken(monkeypatch):
    """What main() takes from NumPy before any student code runs (as_number_array and convert use them)."""
    monkeypatch.setattr(answer_runner, "_asarray", np.asarray)
    monkeypatch.setattr(answer_runner, "_array", np.array)
    monkeypatch.setattr(answer_runner, "_float64", np.float64)


# --- the framing ------------------------------------------------------------------------------------------


def test_a_message_comes_back_whole_with_its_arrays_in_order():
    weights = np.arange(6, dtype=np.float32).reshape(2, 3)
    mask = np.array([[True, False]])
    data = answer_runner.frame({"op": "call", "function": "softmax"}, [weights, mask])
    header, arrays = answer_runner.receive(0, np, read=reader(data))
    assert header["op"] == "call" and header["function"] == "softmax"
    assert header["arrays"] == [["<f4", [2, 3]], ["|b1", [1, 2]]]
    assert [a.dtype for a in arrays] == [np.float32, np.bool_]
    assert np.array_equal(arrays[0], weights) and np.array_equal(arrays[1], mask)
    assert arrays[0].flags.writeable  # a fresh copy, not a view of the received bytes


def test_read_exactly_gathers_short_reads_and_says_when_the_other_side_closed():
    assert answer_runner.read_exactly(0, 7, reader(b"abcdefgh", chunk=2)) == b"abcdefg"
    with pytest.raises(EOFError, match="closed the pipe"):
        answer_runner.read_exactly(0, 5, reader(b"abc"))


def test_a_message_over_a_real_pipe():
    reading, writing = os.pipe()
    try:
        answer_runner.send(writing, {"op": "ready", "missing": ["f"]}, [np.ones(3)])
        header, arrays = answer_runner.receive(reading, np)
    finally:
        os.close(reading)
        os.close(writing)
    assert header["missing"] == ["f"] and arrays[0].tolist() == [1.0, 1.0, 1.0]


def test_a_header_too_long_is_refused_before_it_is_read():
    data = struct.pack(">I", HEADER_LIMIT + 1)  # nothing follows: reading the header would raise EOFError
    with pytest.raises(ValueError, match=f"a message header of {HEADER_LIMIT + 1} bytes"):
        answer_runner.receive(0, np, read=reader(data))


@pytest.mark.parametrize(
    "header, refusal",
    [
        ([1, 2], "not an object with a list of arrays"),
        ({"arrays": "many"}, "not an object with a list of arrays"),
        ({"arrays": [["<f8"]]}, "an array declared as"),
        ({"arrays": [["<f8", 3]]}, "an array declared as"),
        ({"arrays": [["|O", [1]]]}, "an array of dtype object"),
        ({"arrays": [["<c16", [1]]]}, "an array of dtype complex128"),
        ({"arrays": [["<f8", [2, -1]]]}, r"shape \[2, -1\]"),
        ({"arrays": [["<f8", [2.0]]]}, r"shape \[2.0\]"),
    ],
    ids=["list", "arrays-not-list", "no-shape", "shape-not-list", "object", "complex", "negative", "float-size"],
)
def test_a_malformed_header_is_refused_with_what_was_wrong(header, refusal):
    with pytest.raises(ValueError, match=refusal):
        answer_runner.receive(0, np, read=reader(message(header)))


def test_a_header_nested_too_deeply_is_a_value_error_not_a_crash():
    text = b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(ValueError, match="nested too deeply"):
        answer_runner.receive(0, np, read=reader(struct.pack(">I", len(text)) + text, chunk=2**20))


def test_arrays_past_the_limit_are_refused_before_their_bytes_are_read():
    header = {"arrays": [["<f8", [4]], ["<f8", [4]]]}
    payload = np.zeros(4).tobytes()  # only the first array's bytes: the second must not be read
    with pytest.raises(ValueError, match="larger than the limit"):
        answer_runner.receive(0, np, read=reader(message(header, payload)), limit=40)
    assert answer_runner.receive(0, np, read=reader(message(header, payload * 2)), limit=64)[1][1].shape == (4,)


def test_admit_sees_the_header_before_any_array_is_read():
    seen = []

    def admit(header):
        seen.append(header["op"])
        raise ValueError("too big a request")

    data = message({"op": "stand_in", "arrays": [["<f8", [10**9]]]})  # no bytes follow
    with pytest.raises(ValueError, match="too big a request"):
        answer_runner.receive(0, np, read=reader(data), admit=admit)
    assert seen == ["stand_in"]


# --- packing values ---------------------------------------------------------------------------------------


def test_pack_puts_arrays_aside_and_nests_tuples_and_lists():
    arrays = []
    strided = np.arange(12.0).reshape(3, 4)[:, ::2]
    packed = answer_runner.pack((strided, [1, 2.5, None], "mask", True, np.int64(7), np.float32(0.5)), arrays)
    assert packed == {
        "items": [{"array": 0}, {"list": [1, 2.5, None]}, "mask", True, 7, 0.5],
    }
    assert arrays[0].flags.c_contiguous and np.array_equal(arrays[0], strided)
    assert type(packed["items"][4]) is int  # a NumPy scalar goes as a plain number
    back = answer_runner.unpack(packed, arrays)
    assert type(back) is tuple and back[1] == [1, 2.5, None]  # a list arrives as a list (ids.index works), a tuple so


def test_unpack_is_the_inverse_of_pack():
    arrays = []
    value = (np.eye(2), (3, [np.zeros(1)]), None)
    back = answer_runner.unpack(answer_runner.pack(value, arrays), arrays)
    assert isinstance(back, tuple) and np.array_equal(back[0], np.eye(2))
    assert back[1][0] == 3 and np.array_equal(back[1][1][0], np.zeros(1)) and back[2] is None


@pytest.mark.filterwarnings("ignore:the matrix subclass")
def test_array_likes_are_sent_as_arrays():
    arrays = []
    assert answer_runner.pack(np.matrix([[1.0, 2.0]]), arrays) == {"array": 0}
    assert answer_runner.pack(memoryview(np.array([4, 5], dtype=np.int32)), arrays) == {"array": 1}
    assert type(arrays[0]) is np.ndarray and arrays[1].tolist() == [4, 5]


@pytest.mark.parametrize(
    "value, refusal",
    [
        (np.array(["a", "b"]), "an array of dtype <U1"),
        (np.array([1 + 2j]), "an array of dtype complex128"),
        (2**64, "an int of more than 64 bits"),
        (-(2**63) - 1, "an int of more than 64 bits"),
        ({"a": 1}, "a value of type dict"),
        (print, "a value of type builtin_function_or_method"),
        (lambda x: x, "a value of type function"),
    ],
    ids=["strings", "complex", "big-int", "big-negative", "dict", "builtin", "function"],
)
def test_what_cannot_be_sent_is_a_type_error_naming_it(value, refusal):
    with pytest.raises(TypeError, match=refusal):
        answer_runner.pack(value, [])  # the runner's side: no callbacks list, so no function goes


def test_the_largest_ints_that_fit_are_sent_as_numbers():
    assert answer_runner.pack([2**63 - 1, -(2**63)], []) == {"list": [2**63 - 1, -(2**63)]}


def test_the_graders_side_sends_functions_as_numbered_callbacks_and_gets_none_back():
    def layer(x):
        return x

    arrays, callbacks = [], []
    packed = answer_runner.pack((np.ones(2), layer, [layer]), arrays, callbacks)
    assert packed == {"items": [{"array": 0}, {"callback": 0}, {"list": [{"callback": 1}]}]}
    assert callbacks == [layer, layer]
    bound = answer_runner.unpack(packed, arrays, callback=lambda k: f"proxy {k}")
    assert bound[1] == "proxy 0" and bound[2] == ["proxy 1"]
    with pytest.raises(KeyError):  # the grader's side (no callback): a function never comes back to it
        answer_runner.unpack({"callback": 0}, arrays)


def test_a_mapped_argument_is_a_fresh_float64_copy_of_its_slice(monkeypatch):
    patterns = np.arange(10, dtype=np.float32)
    monkeypatch.setattr(answer_runner, "_files", [np.zeros(1), patterns])
    value = answer_runner.unpack({"mapped": [1, 2, 6, [2, 3]]}, [])
    assert value.dtype == np.float64 and value.tolist() == [[2, 3, 4], [5, 6, 7]]
    value[0, 0] = -1
    assert patterns[2] == 2  # the file's memory is not changed through it


# --- prints, magics, errors, the CPU limit ------------------------------------------------------------------


def test_the_tail_keeps_only_the_last_characters():
    tail = answer_runner.Tail(size=5)
    assert tail.write("hello ") == 6 and tail.write("world") == 5
    print("!", file=tail)
    assert tail.text == "orld!\n"[-5:] and tail.writable()


def test_line_magics_become_pass_at_their_indentation():
    source = "%matplotlib inline\nif True:\n    !ls -l\n    x = 1\n"
    stripped = answer_runner.strip_magics(source)
    assert stripped == "pass\nif True:\n    pass\n    x = 1\n"
    assert stripped.count("\n") == source.count("\n")  # line numbers kept for the feedback


@pytest.mark.parametrize(
    "source, expected",
    [
        ("%%time\nx = 1\n", "\nx = 1\n"),
        ("%%capture out\nx = 1\n", "\nx = 1\n"),
        ("%%bash\nrm -rf /\n", ""),
        ("%%\nx = 1\n", ""),
        ("  %%writefile a.py\nx = 1\n", ""),
    ],
    ids=["time", "capture", "bash", "bare", "writefile"],
)
def test_a_cell_magic_keeps_python_cells_and_drops_the_others(source, expected):
    assert answer_runner.strip_magics(source) == expected


def run_as_cell(source: str, index: int = 2):
    """The error ``source`` raises when run as answer cell ``index + 1``, described."""
    try:
        exec(compile(source, answer_runner.cell_name(index), "exec"), {})
    except BaseException as error:  # noqa: BLE001 - the test looks at whatever it raised
        return answer_runner.describe_error(error)
    raise AssertionError("the cell raised nothing")


def test_an_error_is_placed_at_the_deepest_line_of_student_code():
    source = "def softmax(x):\n    return x / 0\n\n\nsoftmax(1)\n"
    assert run_as_cell(source) == "ZeroDivisionError: division by zero (answer cell 3, line 2, in softmax)"


def test_a_syntax_error_names_its_cell_and_line():
    assert run_as_cell("x = 1\ny = (\n", index=0).startswith("SyntaxError: ")
    assert "(answer cell 1, line 2)" in run_as_cell("x = 1\ny = (\n", index=0)


@pytest.mark.parametrize("module", ["lib", "lib.attention"])
def test_importing_lib_says_lib_is_not_there_and_what_to_do(module):
    """In the grader's process lib is importable, so the runner's failure is raised by hand (a real one: below)."""
    source = f'raise ModuleNotFoundError("No module named {module!r}", name={module!r})'
    assert run_as_cell(source) == f"ModuleNotFoundError: {NO_LIB} (answer cell 3, line 1, in <module>)"


def test_other_import_errors_keep_their_own_message():
    assert run_as_cell("raise ImportError('no library', name='library')") == (
        "ImportError: no library (answer cell 3, line 1, in <module>)"
    )  # a name that only starts with "lib"
    assert run_as_cell("import library_that_is_not_there") == (
        "ModuleNotFoundError: No module named 'library_that_is_not_there': the hidden checks run your answer cells "
        "with Python and NumPy only: a module of your own is there only when a cell of the notebook writes it "
        "(%%writefile library_that_is_not_there.py); else put its code in the answer cell (answer cell 3, line 1, in "
        "<module>)"
    )  # what to do, in the one line


def test_an_error_outside_student_code_names_no_cell():
    assert answer_runner.describe_error(KeyError("x")) == "KeyError: 'x'"


def test_the_cpu_limit_raises_a_timeout_that_except_exception_does_not_catch():
    assert not issubclass(CallTimedOut, Exception)
    assert answer_runner.with_cpu_limit(5.0, lambda: 41 + 1) == 42
    assert signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)  # the timer is off once the work returned

    def spin():
        while True:
            try:
                sum(range(1000))
            except Exception:  # noqa: BLE001 - what a student writes: it must not swallow the timeout
                pass

    with pytest.raises(CallTimedOut, match="used up its 0.05 s of CPU time") as timed_out:
        answer_runner.with_cpu_limit(0.05, spin)
    assert signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)
    assert answer_runner.describe_error(timed_out.value).startswith("CallTimedOut: used up its 0.05 s")


def test_starting_a_process_is_refused_by_the_audit_hook():
    for event in ("os.system", "subprocess.Popen", "os.fork", "os.posix_spawn"):
        with pytest.raises(PermissionError, match=rf"not allowed while your functions are graded \({event}\)"):
            answer_runner.refuse_processes(event, ())
    assert answer_runner.refuse_processes("open", ("f", "r")) is None


# --- what a call returned -----------------------------------------------------------------------------------


def test_type_name_says_where_a_type_comes_from():
    assert answer_runner.type_name([1]) == "list" and answer_runner.type_name(np.ones(1)) == "numpy.ndarray"


def test_a_returned_value_becomes_float64_and_says_what_it_was(numpy_taken):
    array, described = answer_runner.as_number_array([[1, 2, 3]], "")
    assert array.dtype == np.float64 and array.tolist() == [[1.0, 2.0, 3.0]]
    assert described == {"type": "list", "dtype": "int64", "shape": [1, 3]}


@pytest.mark.parametrize(
    "value, refusal",
    [
        (None, "returned None as item 2 of 2: is a `return` missing?"),
        ("0.5", "returned str as item 2 of 2 with NumPy dtype <U3, not an array of numbers"),
        ([[1, 2], [3]], "returned list as item 2 of 2, which is not an array of numbers"),
        ({"a": 1}, "returned dict as item 2 of 2 with NumPy dtype object"),
    ],
    ids=["none", "string", "ragged", "dict"],
)
def test_a_returned_value_that_is_not_numbers_is_refused_with_where_it_was(numpy_taken, value, refusal):
    with pytest.raises(ValueError, match=re.escape(refusal)):
        answer_runner.as_number_array(value, " as item 2 of 2")


def test_a_tuple_is_split_and_a_list_only_when_several_items_are_due(numpy_taken):
    arrays, returned = answer_runner.convert((np.ones(2), 3.0), items=1)
    assert len(arrays) == 2 and returned[1] == {"type": "float", "dtype": "float64", "shape": []}
    arrays, _ = answer_runner.convert([np.ones(2), np.zeros(2)], items=1)
    assert len(arrays) == 1 and arrays[0].shape == (2, 2)  # one list of rows: one array
    arrays, _ = answer_runner.convert([np.ones(2), np.zeros(3)], items=2)
    assert [a.shape for a in arrays] == [(2,), (3,)]
    with pytest.raises(ValueError, match="returned None as item 1 of 2"):
        answer_runner.convert((None, 1.0), items=2)


# --- one call, over an in-memory channel -------------------------------------------------------------------


class Channel:
    """The grader's side in memory: records what the runner sends, answers each request with the next reply."""

    def __init__(self, replies=()):
        self.sent, self.replies = [], list(replies)

    def send(self, header, arrays=()):
        self.sent.append((header, [np.array(a) for a in arrays]))

    def receive(self):
        return self.replies.pop(0)


def call_request(function: str, args: list, **extra) -> tuple[dict, list]:
    arrays = []
    packed = [answer_runner.pack(a, arrays) for a in args]
    return {"op": "call", "function": function, "args": packed, "seconds": 5.0, **extra}, arrays


def test_a_call_sends_its_values_and_the_arrays_it_changed_in_place(numpy_taken):
    namespace = {}
    exec("def scale(x, y):\n    x *= 2\n    return x + y, y\n", namespace)
    channel = Channel()
    request, inputs = call_request("scale", [np.ones(2), np.full(2, 3.0)])
    answer_runner.perform(channel, namespace, request, inputs)
    (header, arrays), *_ = channel.sent
    assert header["op"] == "result" and header["changed"] == [0]
    assert [a.tolist() for a in arrays] == [[5.0, 5.0], [3.0, 3.0]]
    assert header["returned"][0] == {"type": "numpy.ndarray", "dtype": "float64", "shape": [2]}


def test_a_call_of_a_name_that_is_not_a_function_is_an_error(numpy_taken):
    channel = Channel()
    answer_runner.perform(channel, {"softmax": 3}, call_request("softmax", [])[0], [])
    assert channel.sent == [({"op": "error", "message": "no function named softmax in your answers"}, [])]


@pytest.mark.parametrize(
    "body, expected",
    [
        ("raise ValueError('bad shape')", "ValueError: bad shape (answer cell 1, line 2, in f)"),
        ("raise SystemExit(3)", "SystemExit: 3 (answer cell 1, line 2, in f)"),
        ("return 'text'", "ValueError: returned str with NumPy dtype <U4, not an array of numbers"),
    ],
    ids=["raises", "exits", "text"],
)
def test_a_failing_call_sends_the_error_and_the_runner_goes_on(numpy_taken, body, expected):
    namespace = {}
    exec(compile(f"def f():\n    {body}\n", answer_runner.cell_name(0), "exec"), namespace)
    channel = Channel()
    answer_runner.perform(channel, namespace, call_request("f", [])[0], [])
    header = channel.sent[0][0]
    assert header["op"] == "error" and header["message"].startswith(expected) and header["timed_out"] is False


def test_a_call_past_its_cpu_time_says_it_timed_out(numpy_taken):
    namespace = {}
    exec("def f():\n    while True:\n        pass\n", namespace)
    channel = Channel()
    answer_runner.perform(channel, namespace, call_request("f", [], seconds=0.05)[0], [])
    header = channel.sent[0][0]
    assert header["timed_out"] is True and "used up its 0.05 s of CPU time" in header["message"]


def test_stand_ins_are_bound_for_the_call_only_and_ask_the_grader(numpy_taken):
    namespace = {"softmax": "the student's own"}
    exec("def attention(x):\n    return softmax(x) + 1\n", namespace)
    channel = Channel([({"op": "value", "value": {"array": 0}}, [np.full(2, 0.5)])])
    request, inputs = call_request("attention", [np.zeros(2)], stand_ins=["softmax", "mask"])
    answer_runner.perform(channel, namespace, request, inputs)
    (asked, asked_arrays), (result, values) = channel.sent
    assert asked["op"] == "stand_in" and asked["name"] == "softmax" and asked["args"] == [{"array": 0}]
    assert asked_arrays[0].tolist() == [0.0, 0.0]
    assert result["op"] == "result" and values[0].tolist() == [1.5, 1.5]
    assert namespace["softmax"] == "the student's own" and "mask" not in namespace  # put back as they were


def test_a_refused_stand_in_raises_the_graders_reason(numpy_taken):
    channel = Channel([({"op": "refused", "message": "softmax is not computed for you while f is graded"}, [])])
    stand_in = answer_runner.make_stand_in("softmax", channel)
    assert stand_in.__name__ == "softmax"
    with pytest.raises(StandInRefused, match="not computed for you while f is graded"):
        stand_in(np.ones(2))


def test_a_stand_in_asked_with_what_the_grader_cannot_take_is_refused_here(numpy_taken):
    channel = Channel()
    stand_in = answer_runner.make_stand_in("softmax", channel)
    with pytest.raises(TypeError, match=r"softmax\(...\) is computed by the grader, on NumPy arrays and numbers only"):
        stand_in(object())
    with pytest.raises(ValueError, match="bytes of numbers and lists outside arrays: pass NumPy arrays instead"):
        stand_in([0.5] * (HEADER_LIMIT // 8))
    assert channel.sent == []  # neither was sent: the grader would have ended the grading


def test_a_callback_kept_after_its_call_refuses_to_run(numpy_taken):
    namespace = {}
    exec("kept = []\ndef block(x, f):\n    kept.append(f)\n    return x + f(x)\n", namespace)
    channel = Channel([({"op": "value", "value": {"array": 0}}, [np.full(2, 10.0)])])
    request, inputs = call_request("block", [np.ones(2)], callbacks=["layer"])
    request["args"].append({"callback": 0})
    answer_runner.perform(channel, namespace, request, inputs)
    (asked, _), (result, values) = channel.sent
    assert asked["op"] == "callback" and asked["index"] == 0 and values[0].tolist() == [11.0, 11.0]
    kept = namespace["kept"][0]
    assert kept.__name__ == "layer"
    with pytest.raises(CallbackRefused, match="layer was passed to block for one call, which has returned"):
        kept(np.ones(2))
    assert len(channel.sent) == 2  # the grader was not asked


# --- a batch of calls, over an in-memory channel -----------------------------------------------------------


def batch_request(calls: list, **extra) -> tuple[dict, list]:
    """A "calls" message: each (function, args, extra fields) packed into one list of arrays."""
    arrays, headers = [], []
    for function, args, fields in calls:
        packed = [answer_runner.pack(a, arrays) for a in args]
        headers.append({"function": function, "args": packed, "seconds": 5.0, **fields})
    return {"op": "calls", "calls": headers, **extra}, arrays


def test_a_batch_answers_each_call_in_order_as_a_lone_call_would(numpy_taken):
    namespace = {}
    source = "def f(x):\n    if x[0] < 0:\n        raise ValueError('negative')\n    x *= 2\n    return x\n"
    exec(compile(source, answer_runner.cell_name(0), "exec"), namespace)
    channel = Channel()
    calls = [("f", [np.ones(2)], {}), ("f", [-np.ones(2)], {}), ("g", [], {}), ("f", [np.full(2, 3.0)], {})]
    answer_runner.perform_batch(channel, namespace, *batch_request(calls))
    ops = [header["op"] for header, _ in channel.sent]
    assert ops == ["result", "error", "error", "result"]  # one message per call, the failures cost their own only
    assert channel.sent[0][1][0].tolist() == [2.0, 2.0] and channel.sent[3][1][0].tolist() == [6.0, 6.0]
    assert channel.sent[0][0]["changed"] == [0] and channel.sent[3][0]["changed"] == [0]  # its own argument
    assert channel.sent[1][0]["message"].startswith("ValueError: negative (answer cell 1, line 3, in f)")
    assert channel.sent[2][0]["message"] == "no function named g in your answers"


def test_a_batch_binds_each_calls_stand_ins_for_that_call_only(numpy_taken):
    namespace = {"softmax": "the student's own"}
    exec("def attention(x):\n    return softmax(x) + 1\n", namespace)
    channel = Channel([({"op": "value", "value": {"array": 0}}, [np.full(2, 0.5)])])
    calls = [("attention", [np.zeros(2)], {"stand_ins": ["softmax"]}), ("attention", [np.zeros(2)], {})]
    answer_runner.perform_batch(channel, namespace, *batch_request(calls))
    (asked, _), (first, values), (second, _) = channel.sent
    assert asked["op"] == "stand_in" and first["op"] == "result" and values[0].tolist() == [1.5, 1.5]
    assert second["op"] == "error" and "str" in second["message"]  # the student's own softmax, a string, in call 2
    assert namespace["softmax"] == "the student's own"


def test_a_batch_with_stop_ends_at_its_first_error(numpy_taken):
    namespace = {}
    exec("def f(x):\n    return 1 / x[0] if x[0] else None\n", namespace)
    channel = Channel()
    calls = [("f", [np.ones(1)], {}), ("f", [np.zeros(1)], {}), ("f", [np.ones(1)], {})]
    answer_runner.perform_batch(channel, namespace, *batch_request(calls, stop=True))
    assert [header["op"] for header, _ in channel.sent] == ["result", "error"]  # the third is not made


def test_a_batch_shares_its_cpu_seconds_and_a_call_after_they_are_spent_is_not_made(numpy_taken):
    namespace = {"made": []}
    spin = (  # times out at the batch's 0.05 s, swallows it, and returns after 0.1 s of CPU
        "import time\ndef f(x):\n    made.append(1)\n    end = time.process_time() + 0.1\n    try:\n"
        "        while True:\n            pass\n    except BaseException:\n"
        "        while time.process_time() < end:\n            pass\n    return x\n"
    )
    exec(spin, namespace)
    channel = Channel()
    calls = [("f", [np.ones(1)], {}), ("f", [np.ones(1)], {})]
    answer_runner.perform_batch(channel, namespace, *batch_request(calls, seconds=0.05))
    first, second = (header for header, _ in channel.sent)
    assert first["op"] == "result"
    assert second["timed_out"] is True and "used up the 0.05 s of CPU time of these calls" in second["message"]
    assert namespace["made"] == [1]  # the second call never ran


# --- a real runner ------------------------------------------------------------------------------------------


class Process:
    """A runner started as autograder.answers.process starts it, spoken to with the runner's own framing."""

    def __init__(self, tmp_path):
        work = tmp_path / "work"
        work.mkdir()
        self.process = start_runner(work)

    def send(self, header, arrays=()):
        answer_runner.send(self.process.stdin.fileno(), header, arrays)

    def receive(self):
        def read(fd, n):
            if not select.select([fd], [], [], 60)[0]:
                raise TimeoutError("the runner said nothing for 60 s")
            return os.read(fd, n)

        return answer_runner.receive(self.process.stdout.fileno(), np, read=read)

    def until_ready(self) -> list[dict]:
        messages = [self.receive()[0]]
        while messages[-1]["op"] != "ready":
            messages.append(self.receive()[0])
        return messages

    def close(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self.process.stdin.close()
        self.process.stdout.close()


@pytest.fixture
def runner(tmp_path):
    started = Process(tmp_path)
    yield started
    started.close()


def cells(sources, names=(), skip=None):
    return {"op": "cells", "cells": sources, "skip": skip or {}, "names": list(names), "seconds": 5.0, "files": []}


@needs_bubblewrap
def test_the_runner_runs_each_cell_in_order_and_reports_each(runner):
    sources = [
        "print('hello')\nimport os\nos.write(1, b'junk on stdout')\n",  # stdout leads nowhere: the pipe is private
        "def double(x):\n    return 2 * x\n",
        "1 / 0\n",
        "never run\n",
        "%time y = double(np.ones(2))\nimport lib\n",
    ]
    runner.send(cells(sources, names=["double", "softmax"], skip={"3": "not run again: it hung"}))
    messages = runner.until_ready()
    assert messages == [
        {"op": "step", "cell": 0, "arrays": []},
        {"op": "cell", "index": 0, "error": None, "arrays": []},
        {"op": "step", "cell": 1, "arrays": []},
        {"op": "cell", "index": 1, "error": None, "arrays": []},
        {"op": "step", "cell": 2, "arrays": []},
        {"op": "cell", "index": 2, "error": "ZeroDivisionError: division by zero (answer cell 3, line 1, in <module>)",
         "arrays": []},
        {"op": "cell", "index": 3, "error": "not run again: it hung", "arrays": []},
        {"op": "step", "cell": 4, "arrays": []},
        {"op": "cell", "index": 4, "error": f"ModuleNotFoundError: {NO_LIB} (answer cell 5, line 2, in <module>)",
         "arrays": []},
        {"op": "ready", "missing": ["softmax"], "output": "hello\n", "arrays": []},
    ]  # fmt: skip
    runner.send({"op": "call", "function": "double", "args": [{"array": 0}], "seconds": 5.0}, [np.arange(3.0)])
    header, values = runner.receive()
    assert header["op"] == "result" and values[0].tolist() == [0.0, 2.0, 4.0]
    runner.send({"op": "done"})  # anything but a call ends the runner, quietly
    assert runner.process.wait(timeout=30) == 0


@needs_bubblewrap
def test_the_runner_refuses_to_start_processes(runner):
    sources = ["import os\nos.system('true')\n", "import subprocess\nsubprocess.run(['true'])\n"]
    runner.send(cells(sources))
    errors = [m["error"] for m in runner.until_ready() if m["op"] == "cell"]
    assert errors[0] == (
        "PermissionError: starting processes is not allowed while your functions are graded (os.system) "
        "(answer cell 1, line 2, in <module>)"
    )
    assert (
        errors[1].startswith("PermissionError: starting processes is not allowed") and "subprocess.Popen" in errors[1]
    )
    runner.process.stdin.close()  # the grader went away: the runner ends quietly
    assert runner.process.wait(timeout=30) == 0


def test_the_runner_without_its_site_says_how_to_run_it():
    ran = subprocess.run(
        [sys.executable, "-I", "-S", answer_runner.__file__], capture_output=True, text=True, timeout=60
    )
    assert ran.returncode == 2 and "usage: python -I -S runner.py SITE" in ran.stderr


@pytest.mark.parametrize(
    "first, kept",
    [
        ("%%writefile helper.py", ("helper.py", "x = 1\n", False)),
        ("%%writefile -a helper.py", ("helper.py", "x = 1\n", True)),
        ("%%writefile data.csv", ("data.csv", "x = 1\n", False)),
    ],
)
def test_a_writefile_cell_writes_a_plain_file_name_of_its_folder(first, kept):
    assert answer_runner.written_file(f"{first}\nx = 1\n") == kept
    assert answer_runner.written_file("x = 1\n") is None


@pytest.mark.parametrize("name", ["../helper.py", "/tmp/helper.py", ".hidden.py", "a b c"])
def test_a_writefile_cell_outside_its_folder_is_refused_saying_what_is_kept(name):
    with pytest.raises(ValueError, match="only as a plain name in the notebook's folder"):
        answer_runner.written_file(f"%%writefile {name}\nx = 1\n")


def test_a_writefile_cell_too_long_is_refused():
    with pytest.raises(ValueError, match="more than"):
        answer_runner.written_file("%%writefile big.py\n" + "#" * (answer_runner.WRITTEN_LIMIT + 1))
