"""The process that runs a student's answers for the hidden checks: ``python -I -S runner.py SITE``.

This file is the only code of the course inside that process. It imports the standard library and
NumPy (from SITE, a folder that holds NumPy and nothing else) and nothing of the course: no lib, no
recorded statistics, no checks, no grader. It runs the answer cells, then calls the student's
functions on the arrays the grader sends, and sends back what they returned. It holds no expected
value and computes no verdict (autograder.answers.grading does both, in the grader's process).

The grader talks to it over its stdin and stdout, which it moves to private descriptors before any
student code runs (the student's prints go to a tail kept for the feedback). Each message is a
4-byte length, a JSON header (an object), then the raw bytes of the arrays the header lists (``frame``,
``send``, ``receive``: the grader imports these from here, so the framing is written once). The grader
(autograder.answers.process) accepts each message only at its place below: anything else ends the grading.

    grader -> runner   {"op": "cells", "cells": [source], "skip": {index: why}, "names": [graded name],
                        "seconds": CPU seconds per cell, "files": [read-only .npy inputs, by path]}
    runner -> grader   {"op": "step", "cell": i} then {"op": "cell", "index": i, "error": str | null}, per cell;
                       {"op": "ready", "missing": [names not defined], "output": tail of prints}
    grader -> runner   {"op": "call", "function", "args", "kwargs", "stand_ins": [name], "callbacks": [name],
                        "items", "seconds"}
    runner -> grader   {"op": "stand_in", "name", "args", "kwargs"} and {"op": "callback", "index", "args",
                       "kwargs"} (zero or more, each answered by {"op": "value", "value"} or {"op": "refused",
                       "message"}), then
                       {"op": "result", "values": [array], "returned": [{"type", "dtype", "shape"}],
                        "changed": [argument position or keyword whose array the call changed in place]}
                       or {"op": "error", "message"}
    grader -> runner   {"op": "calls", "calls": [the fields of a "call"], "seconds": CPU seconds for them all or null,
                        "stop": true to end the batch at its first error} (the arrays of all its calls in one list)
    runner -> grader   for each call in turn, what it sends for a "call" (a batch with "stop" sends nothing after
                       its first error): many calls in one message and no wait between them

A stand-in is a graded function the student's function may call while it is graded (its softmax,
while attention is graded): the name is bound to a proxy that asks the grader, and the grader decides
whether that name is allowed for the call in progress. Nothing in this process can compute it.

A callback is a function the grader passes as an argument (``residual_block(x, f)``): the call's header carries
{"callback": k} in its place and the name of each in "callbacks"; the runner binds a proxy that asks the grader to
compute callback k of the call in progress. A proxy kept after its call returned refuses to run (and the grader
serves callback k only for the call in progress, whatever this process sends).

A batch ("calls") makes each call as a "call" makes it (its own arguments, stand-ins, callbacks and time), in order,
so one call's exception or stand-in changes no other's result; only the round trips between them are saved.

Time: a cell or call gets ``seconds`` of CPU time (ITIMER_PROF raises CallTimedOut inside the student's
code); the grader also watches this process's CPU time, and kills it when the student's code swallows the timeout
or waits without computing (a sleep, a lock: autograder.answers.budget's ``idle``).
"""

from __future__ import annotations

import builtins
import importlib
import io
import json
import os
import signal
import struct
import sys
import time
import traceback

try:  # the grader imports this module for the framing; the runner itself imports NumPy in main()
    import numpy as np
except ImportError:
    np = None

HEADER_LIMIT = 2**20  # bytes of a JSON header
PREAMBLE = "import sys\nfrom pathlib import Path\n\nimport numpy as np\n"  # what the notebook's setup cell imports
TAIL = 4000  # characters of the student's prints kept for the feedback
REFUSED_EVENTS = ("os.system", "subprocess.Popen", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty")
WRITTEN_LIMIT = 2**20  # characters a %%writefile cell may write (a module of the student's, not data)
NO_MODULE = (
    "the hidden checks run your answer cells with Python and NumPy only: a module of your own is there only when a "
    "cell of the notebook writes it (%%writefile {name}.py); else put its code in the answer cell"
)
NO_LIB = (
    "lib is not available where your functions are graded: the hidden checks run your answer cells "
    "with Python and NumPy only. Write the computation with NumPy (call your own functions, such as softmax)"
)

# Taken before any student code runs: the student may patch json, os or builtins in this process.
_dumps, _loads, _write, _read = json.dumps, json.loads, os.write, os.read
_pack, _unpack = struct.pack, struct.unpack
_process_time = time.process_time
_isinstance, _len, _list, _tuple, _str, _type, _dict = isinstance, len, list, tuple, str, type, dict


class CallTimedOut(BaseException):
    """A cell or call used up its CPU time (BaseException: `except Exception` does not catch it)."""


class StandInRefused(Exception):
    """The grader refused a stand-in: the name is not one the function being graded may call."""


class CallbackRefused(Exception):
    """The grader did not compute a function it passed as an argument (past the call it was passed to, called
    too often, or on arguments it could not take)."""


# --- the framing, shared with the grader ---------------------------------------------------------


def frame(header: dict, arrays=()) -> bytes:
    """One message as bytes: length, JSON header (with each array's dtype and shape), the arrays' bytes."""
    header = _dict(header, arrays=[[array.dtype.str, _list(array.shape)] for array in arrays])
    text = _dumps(header).encode()
    return b"".join([_pack(">I", _len(text)), text, *(array.tobytes() for array in arrays)])


def send(fd: int, header: dict, arrays=()) -> None:
    """Write one message (``frame``) to ``fd``, whole."""
    data = memoryview(frame(header, arrays))
    while data:
        data = data[_write(fd, data) :]


def read_exactly(fd: int, size: int, read=None) -> bytes:
    """``size`` bytes from ``fd`` (``read(fd, n)`` may wait with a deadline); EOFError when the other side closed."""
    read = read or _read
    chunks, left = [], size
    while left:
        chunk = read(fd, min(left, 2**20))
        if not chunk:
            raise EOFError("the other side closed the pipe")
        chunks.append(chunk)
        left -= _len(chunk)
    return b"".join(chunks)


def receive(fd: int, numpy, read=None, limit: int = 2**30, admit=None):
    """(header, [array]) of one message; ValueError when it is malformed or larger than ``limit`` bytes.

    admit(header), when given, is called before any array's bytes are read, and may raise ValueError."""
    (size,) = _unpack(">I", read_exactly(fd, 4, read))
    if size > HEADER_LIMIT:
        raise ValueError(f"a message header of {size} bytes")
    try:
        header = _loads(read_exactly(fd, size, read))
    except RecursionError:
        raise ValueError("a message header nested too deeply") from None
    if not _isinstance(header, _dict) or not _isinstance(header.get("arrays", []), _list):
        raise ValueError(f"a message header that is not an object with a list of arrays ({_str(header)[:80]})")
    if admit is not None:
        admit(header)
    arrays = []
    for entry in header.get("arrays", []):
        if not _isinstance(entry, _list) or _len(entry) != 2 or not _isinstance(entry[1], _list):
            raise ValueError(f"an array declared as {_str(entry)[:80]}")
        dtype, shape = numpy.dtype(entry[0]), entry[1]
        if dtype.kind not in "biuf" or any(not _isinstance(n, int) or n < 0 for n in shape):
            raise ValueError(f"an array of dtype {dtype} and shape {shape}")
        count = 1
        for n in shape:
            count *= n
        limit -= count * dtype.itemsize
        if limit < 0:
            raise ValueError("a message larger than the limit")
        data = read_exactly(fd, count * dtype.itemsize, read)
        arrays.append(numpy.frombuffer(data, dtype=dtype).reshape(shape).copy())
    return header, arrays


INT_LIMIT = 2**63  # the largest int sent as a number (a longer one would not be read back)


def pack(value, arrays: list, callbacks: list | None = None):
    """A value for a JSON header: arrays go to ``arrays`` as {"array": k}; tuples as {"items": [...]}, lists as
    {"list": [...]} (a task that says "a list" gets one: ids.index works on it).

    callbacks: where the grader's side puts the functions it passes as arguments ({"callback": k}, the k-th of
    ``callbacks``); None (the runner's side) sends no function. TypeError for anything else."""
    if _isinstance(value, np.ndarray):
        if value.dtype.kind not in "biuf":
            raise TypeError(f"cannot send an array of dtype {value.dtype} to the grader: pass arrays of numbers")
        arrays.append(np.ascontiguousarray(value))
        return {"array": _len(arrays) - 1}
    if _isinstance(value, _list):
        return {"list": [pack(item, arrays, callbacks) for item in value]}
    if _isinstance(value, _tuple):
        return {"items": [pack(item, arrays, callbacks) for item in value]}
    if _isinstance(value, int) and not _isinstance(value, bool) and not -INT_LIMIT <= value < INT_LIMIT:
        raise TypeError("cannot send an int of more than 64 bits to the grader")
    if value is None or _isinstance(value, (bool, int, float, _str)):
        return value
    if callbacks is not None and callable(value):
        callbacks.append(value)
        return {"callback": _len(callbacks) - 1}
    if _isinstance(value, (np.bool_, np.integer, np.floating)):
        return value.item()
    array = np.asarray(value)  # anything else array-like: a matrix subclass, a memoryview, ...
    if array.dtype.kind not in "biuf":
        raise TypeError(
            f"cannot send a value of type {_type(value).__name__} to the grader: pass NumPy arrays or numbers"
        )
    return pack(np.array(array), arrays)


def unpack(value, arrays: list, callback=None):
    """The inverse of ``pack``: {"array": k} -> arrays[k] (a fresh writable array), {"items"} -> a tuple, {"list"}
    -> a list; {"mapped": [file, offset, count, shape]} -> a fresh float64 array read from one of the files the grader
    showed this process (``_files``: read-only inputs too large for the pipe, such as the model's patterns);
    {"callback": k} -> callback(k), the runner's proxy of the grader's k-th function (the grader's side passes no
    ``callback``: a function never comes back to it)."""
    if _isinstance(value, _dict):
        if "array" in value:
            return arrays[value["array"]]
        if "mapped" in value:
            file, offset, count, shape = value["mapped"]
            return np.array(_files[file][offset : offset + count], dtype=np.float64).reshape(shape)
        if "callback" in value and callback is not None:
            return callback(value["callback"])
        if "list" in value:
            return _list(unpack(item, arrays, callback) for item in value["list"])
        return _tuple(unpack(item, arrays, callback) for item in value["items"])
    return value


# --- the student's prints ---------------------------------------------------------------------------


class Tail(io.TextIOBase):
    """A text stream that keeps only the last ``size`` characters written to it."""

    def __init__(self, size=TAIL):
        self.size, self.text = size, ""

    def write(self, text):
        self.text = (self.text + _str(text))[-self.size :]
        return _len(text)

    def writable(self):
        return True


# --- running the cells --------------------------------------------------------------------------------


def strip_magics(source: str) -> str:
    """The cell's source with IPython-only lines removed (line numbers kept).

    A line starting with % or ! (after indentation) becomes `pass` at that indentation; a cell
    magic other than %%time / %%timeit / %%capture makes the whole cell non-Python, so it becomes empty.
    """
    lines = source.splitlines()
    if lines and lines[0].lstrip().startswith("%%"):
        magic = lines[0].lstrip()[2:].split()[0] if lines[0].strip() != "%%" else ""
        if magic not in ("time", "timeit", "capture"):
            return ""
        lines[0] = ""
    kept = []
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith(("%", "!")):
            line = line[: _len(line) - _len(stripped)] + "pass"
        kept.append(line)
    return "\n".join(kept) + "\n"


def cell_name(index: int) -> str:
    return f"<answer cell {index + 1}>"


def describe_error(error: BaseException) -> str:
    """'TypeError: ... (answer cell 3, line 7, in softmax)': the error and the deepest line of student code."""
    where = ""
    frames = traceback.StackSummary.extract(traceback.walk_tb(error.__traceback__), lookup_lines=False)
    for frame in reversed(frames):
        if frame.filename.startswith("<answer cell"):
            where = f" ({frame.filename[1:-1]}, line {frame.lineno}, in {frame.name})"
            break
    message = _str(error.args[0]) if _isinstance(error, CallTimedOut) else _str(error)
    if _isinstance(error, SyntaxError) and error.filename and error.filename.startswith("<answer cell"):
        where = f" ({error.filename[1:-1]}, line {error.lineno})"
        message = _str(error.msg)  # str(error) ends with "(<answer cell 3>, line 1)": the place is said once, here
    if _isinstance(error, ImportError) and getattr(error, "name", None) and error.name.split(".")[0] == "lib":
        message = NO_LIB
    elif _isinstance(error, ModuleNotFoundError) and getattr(error, "name", None):
        message = f"{message}: {NO_MODULE.format(name=error.name.split('.')[0])}"
    return f"{_type(error).__name__}: {message}{where}"


def with_cpu_limit(seconds: float, work):
    """work() with ``seconds`` of this process's CPU time; raises CallTimedOut past them."""

    def expired(signum, frame):
        raise CallTimedOut(f"used up its {seconds:g} s of CPU time: look for an infinite loop or a very slow step")

    signal.signal(signal.SIGPROF, expired)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        return work()
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)


def written_file(source: str):
    """(file name, text, append) of a ``%%writefile [-a] NAME`` cell, or None for any other cell; ValueError when
    NAME is not a plain file name of the notebook's folder (a path, a hidden file) or the text is too long."""
    first, _, text = source.lstrip("\n").partition("\n")
    words = first.split()
    if not words or words[0] != "%%writefile":
        return None
    append = _len(words) == 3 and words[1] in ("-a", "--append")
    name = words[-1] if _len(words) in (2, 3) else ""
    if (_len(words) == 3 and not append) or not name or name.startswith(".") or "/" in name or "\\" in name:
        raise ValueError(
            f"{first.strip()[:60]!r}: the grader keeps a file a cell writes only as a plain name in the notebook's "
            "folder (%%writefile helper.py)"
        )
    if _len(text) > WRITTEN_LIMIT:
        raise ValueError(f"{name}: more than {WRITTEN_LIMIT} characters; keep a module short, or put it in the answer")
    return name, text, append


def write_cell(written) -> None:
    """Write a %%writefile cell's file in this process's own folder (the sandbox's scratch folder, its cwd), which
    then holds the student's modules for import (last on sys.path: a module never shadows the standard library)."""
    name, text, append = written
    with open(name, "a" if append else "w", encoding="utf-8") as file:
        file.write(text)
    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())
    importlib.invalidate_caches()


def run_cells(channel, namespace: dict, request: dict) -> None:
    """Exec each answer cell in ``namespace`` (a %%writefile cell writes its file instead, write_cell); a failing
    cell is reported and the next one still runs."""
    skip = {int(index): why for index, why in request.get("skip", {}).items()}
    for index, source in enumerate(request["cells"]):
        if index in skip:
            channel.send({"op": "cell", "index": index, "error": skip[index]})
            continue
        channel.send({"op": "step", "cell": index})
        try:
            written = written_file(source)
            if written is not None:
                write_cell(written)
                channel.send({"op": "cell", "index": index, "error": None})
                continue
            code = compile(strip_magics(source), cell_name(index), "exec")
            with_cpu_limit(request["seconds"], lambda: exec(code, namespace))
            error = None
        except BaseException as failure:  # noqa: BLE001 - every failure of a cell is the student's, and is reported
            error = describe_error(failure)
        channel.send({"op": "cell", "index": index, "error": error})


# --- the calls --------------------------------------------------------------------------------------


def type_name(value) -> str:
    kind = _type(value)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"


def as_number_array(value, position: str):
    """(float64 array, description of what came back); ValueError says what was wrong."""
    if value is None:
        raise ValueError(f"returned None{position}: is a `return` missing?")
    try:
        array = _asarray(value)
    except Exception as error:  # noqa: BLE001 - ragged lists, objects whose __array__ fails, ...
        raise ValueError(f"returned {type_name(value)}{position}, which is not an array of numbers ({error})") from None
    if array.dtype.kind not in "biuf":
        raise ValueError(
            f"returned {type_name(value)}{position} with NumPy dtype {array.dtype}, not an array of "
            "numbers: return a NumPy array (or a float) of numbers"
        )
    returned = {"type": type_name(value), "dtype": _str(array.dtype), "shape": _list(array.shape)}
    return _array(array, dtype=_float64), returned


def convert(result, items: int):
    """(float64 arrays, descriptions) of one call's result: a tuple is split, a list too when several items are due."""
    if _isinstance(result, _tuple) or (items > 1 and _isinstance(result, _list) and _len(result) == items):
        values = _list(result)
    else:
        values = [result]
    arrays, returned = [], []
    for k, value in enumerate(values):
        position = f" as item {k + 1} of {_len(values)}" if _len(values) > 1 else ""
        array, description = as_number_array(value, position)
        arrays.append(array)
        returned.append(description)
    return arrays, returned


class Channel:
    """The pipe to the grader, on descriptors the student's code does not use by accident."""

    def __init__(self, reading: int, writing: int):
        self.reading, self.writing = reading, writing

    def send(self, header: dict, arrays=()) -> None:
        send(self.writing, header, arrays)

    def receive(self):
        return receive(self.reading, np)


def make_stand_in(name: str, channel: Channel):
    """The proxy bound to graded name ``name`` during a call: the grader computes it, or refuses."""

    def stand_in(*args, **kwargs):
        reply, returned = ask(channel, {"op": "stand_in", "name": name}, args, kwargs, f"{name}(...)")
        if reply.get("op") != "value":
            raise StandInRefused(reply.get("message", f"the grader did not compute {name}"))
        return unpack(reply["value"], returned)

    stand_in.__name__ = stand_in.__qualname__ = name
    return stand_in


def ask(channel: Channel, header: dict, args: tuple, kwargs: dict, what: str):
    """Send one request (a stand-in's or a callback's) with its arguments; the grader's reply (header, arrays).
    An argument the grader cannot take (an object, a function, a string array) is a TypeError here, naming it."""
    arrays = []
    try:
        header = _dict(
            header,
            args=[pack(a, arrays) for a in args],
            kwargs={_str(key): pack(value, arrays) for key, value in kwargs.items()},
        )
    except TypeError as error:
        raise TypeError(f"{what} is computed by the grader, on NumPy arrays and numbers only: {error}") from None
    size = _len(_dumps(header))
    if size > HEADER_LIMIT // 2:  # the grader would refuse the message whole, and end the grading
        raise ValueError(
            f"{what} was called with {size:,} bytes of numbers and lists outside arrays: pass NumPy arrays instead"
        )
    channel.send(header, arrays)
    return channel.receive()


def make_callback(index: int, name: str, function: str, channel: Channel, call: int):
    """The proxy of the grader's function passed as an argument to call number ``call`` (of ``function``): the
    grader computes it, for this call only."""

    def callback(*args, **kwargs):
        if _current[0] != call:
            raise CallbackRefused(
                f"{name} was passed to {function} for one call, which has returned: call it only while that call runs"
            )
        reply, returned = ask(channel, {"op": "callback", "index": index}, args, kwargs, f"{name}(...)")
        if reply.get("op") != "value":
            raise CallbackRefused(reply.get("message", f"the grader did not compute {name}"))
        return unpack(reply["value"], returned)

    callback.__name__ = callback.__qualname__ = name
    return callback


def perform_batch(channel: Channel, namespace: dict, request: dict, inputs: list) -> None:
    """Make a batch's calls in order, each as ``perform`` makes one, sending each one's result or error as it ends.
    Each call gets its own CPU seconds, or what is left of the batch's ("seconds"), whichever is less; with
    "stop", the batch ends at its first error (what is left of it is not made)."""
    total, began = request.get("seconds"), _process_time()
    for call in request["calls"]:
        if total is not None:
            left = total - (_process_time() - began)
            if left <= 0:  # setitimer(0) would mean no limit at all
                message = f"CallTimedOut: used up the {total:g} s of CPU time of these calls"
                channel.send({"op": "error", "message": message, "timed_out": True})
                ok = False
            else:
                left = float(f"{left:.3g}")  # as the student reads it: "used up its 0.05 s", not 0.0499984
                ok = perform(channel, namespace, _dict(call, seconds=min(call["seconds"], left)), inputs)
        else:
            ok = perform(channel, namespace, call, inputs)
        if not ok and request.get("stop"):
            return


def perform(channel: Channel, namespace: dict, request: dict, inputs: list) -> bool:
    """Make one call of a student's function, with its stand-ins bound, and send the result or the error;
    whether it gave a result."""
    name = request["function"]
    function = namespace.get(name)
    if not callable(function):
        channel.send({"op": "error", "message": f"no function named {name} in your answers"})
        return False
    _current[0] += 1
    names = request.get("callbacks", [])

    def callback(k: int):
        label = names[k] if _isinstance(k, int) and 0 <= k < _len(names) else "callback"
        return make_callback(k, label, name, channel, _current[0])

    args = [unpack(value, inputs, callback) for value in request.get("args", [])]
    kwargs = {key: unpack(value, inputs, callback) for key, value in request.get("kwargs", {}).items()}
    before = snapshot(args, kwargs, request)
    saved = {other: namespace.get(other) for other in request.get("stand_ins", [])}
    namespace.update({other: make_stand_in(other, channel) for other in saved})
    try:
        arrays, returned = with_cpu_limit(
            request["seconds"], lambda: convert(function(*args, **kwargs), request.get("items", 1))
        )
    except BaseException as failure:  # noqa: BLE001 - SystemExit and KeyboardInterrupt from student code too
        timed_out = _isinstance(failure, CallTimedOut)
        channel.send({"op": "error", "message": describe_error(failure), "timed_out": timed_out})
        return False
    finally:
        _current[0] += 1  # the call's callbacks refuse from now on
        for other, value in saved.items():
            if value is None:
                namespace.pop(other, None)
            else:
                namespace[other] = value
    changed = [label for label, data in before if data != labelled(args, kwargs)[label].tobytes()]
    channel.send({"op": "result", "returned": returned, "changed": changed}, arrays)
    return True


def labelled(args: list, kwargs: dict) -> dict:
    """{position or keyword: value} of a call's arguments."""
    return {**dict(enumerate(args)), **kwargs}


def snapshot(args: list, kwargs: dict, request: dict) -> list:
    """(label, bytes) of each array argument sent over the pipe, before the call: the grader notes the ones the
    call changed. Arrays read from the grader's files (the model's patterns, in driven calls) are left out: a
    statistic over 300 texts would copy each pattern twice for a note the plain calls already give."""
    sent = labelled(request.get("args", []), request.get("kwargs", {}))
    return [
        (label, value.tobytes())
        for label, value in labelled(args, kwargs).items()
        if _isinstance(value, np.ndarray) and not (_isinstance(sent[label], _dict) and "mapped" in sent[label])
    ]


# --- main -------------------------------------------------------------------------------------------


def refuse_processes(event, args):
    """An audit hook: this process has no use for other processes."""
    if event in REFUSED_EVENTS:
        raise PermissionError(f"starting processes is not allowed while your functions are graded ({event})")


def private_channel() -> Channel:
    """The pipe to the grader moved off stdin/stdout, which now lead nowhere."""
    channel = Channel(os.dup(0), os.dup(1))
    nowhere = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(nowhere, fd)
    os.close(nowhere)
    return channel


def main(argv=None) -> int:
    global np, _asarray, _array, _float64
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -I -S runner.py SITE (SITE: a folder that holds NumPy and nothing else)", file=sys.stderr)
        return 2
    sys.path.insert(0, argv[0])
    import numpy

    np, _asarray, _array, _float64 = numpy, numpy.asarray, numpy.array, numpy.float64  # before any student code
    channel = private_channel()
    request, _ = channel.receive()
    _files.extend(np.load(path, mmap_mode="r") for path in request.get("files", []))
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    exec(PREAMBLE, namespace)
    prints = Tail()
    sys.stdout = sys.stderr = prints
    sys.addaudithook(refuse_processes)
    run_cells(channel, namespace, request)
    missing = [name for name in request.get("names", []) if not callable(namespace.get(name))]
    channel.send({"op": "ready", "missing": missing, "output": prints.text})
    while True:
        try:
            call, inputs = channel.receive()
        except EOFError:
            return 0
        if call.get("op") == "call":
            perform(channel, namespace, call, inputs)
        elif call.get("op") == "calls":
            perform_batch(channel, namespace, call, inputs)
        else:
            return 0


_asarray = _array = _float64 = None  # NumPy's, taken by main() before any student code runs
_files = []  # the grader's read-only input files, memory-mapped (see unpack)
_current = [0]  # the number of the call in progress: a callback proxy runs only during its own call

if __name__ == "__main__":
    sys.exit(main())
