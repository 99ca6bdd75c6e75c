"""The process that runs a student's answers: ``python -m autograder.runner REQUEST_DIR``.

The grader (autograder/grade.py) never imports this module; it starts it as a subprocess of its
own, so the student's code never runs in the grader's process. This process only runs the
student's answer cells and calls their functions on the inputs the grader drew; it computes no
verdict and holds no expected value.

It starts by waiting for "go" on stdin: the grader sends it once it has set this process's
resource limits (address space, CPU time, file size, processes).

REQUEST_DIR, written by the grader:
    cells.json    list of str: the answer cells' sources, in notebook order
    calls.json    list of calls: {"id", "function", "args", "kwargs", "isolate", "items", "special", "seconds"};
                  an argument is a JSON number/bool/null or {"array": KEY}, KEY an array of inputs.npz;
                  isolate: graded names replaced by lib's version (a trap that lets them through)
                  for this call only; special: "forward_with_attention" or "over_model_patterns"
    inputs.npz    the input arrays (read with allow_pickle=False)
    options.json  {"call_seconds": float, "skip_cells": [int], "course": the course folder (off limits),
                   "model": folder of the store's model,
                   "patterns": the flat .npy of the model's patterns (autograder.model.Patterns) or null}
REQUEST_DIR, written here (rewritten after every step, so a run that is killed still tells how far
it got and which step it was in):
    report.json   {"current", "finished", "cells", "missing", "calls", "traps", "refused", "stdout", "stderr"}
    out-N.npz     the arrays returned by call number N, keys "0", "1", ... (float64)

Before any student code runs:
- lib's reference of every graded operation becomes a trap (see Guard): while graded function F is
  being called, calling lib's reference of F's own operation records a trap hit and raises;
- an audit hook, which cannot be removed, refuses opening lib's reference sources (so no fresh,
  untrapped copy can be loaded), the course's other files (solutions, submissions, .git),
  starting processes, ctypes and the garbage collector's object walks.
"""

from __future__ import annotations

import builtins
import io
import json
import os
import signal
import sys
import time
import traceback
import types
from pathlib import Path

import numpy as np

from autograder.operations import (
    FORWARD_WITH_ATTENTION,
    GRADED,
    OVER_MODEL_PATTERNS,
    REFERENCE_MODULES,
    REFERENCES,
)

import lib  # noqa: E402  (the reference modules are imported before any student code)
import lib.attention  # noqa: E402
import lib.heads  # noqa: E402

try:  # the store's model is optional: without it the model's calls report an error
    import lib.transformer as _transformer
except Exception:  # pragma: no cover - only when lib.transformer itself is broken or missing
    _transformer = None

LIB_DIR = Path(lib.__file__).resolve().parent
TAIL = 4000  # characters of the student's stdout / stderr kept for the report
PREAMBLE = "import sys\nfrom pathlib import Path\n\nimport numpy as np\n"  # the imports the notebook's setup cell makes (matplotlib aside)

# Trusted references, taken before student code can patch numpy, json or builtins.
_asarray, _array, _savez, _float64 = np.asarray, np.array, np.savez, np.float64
_open = open
_isinstance, _len, _list, _tuple, _str, _type = isinstance, len, list, tuple, str, type
_dumps, _replace, _monotonic, _getframe = json.dumps, os.replace, time.monotonic, sys._getframe


class CallTimedOut(BaseException):
    """Raised by SIGALRM when a cell or call runs past its limit (BaseException: `except Exception` misses it)."""


class ReferenceRefused(Exception):
    """Raised by a trap: a graded function called lib's reference of its own operation."""


class Tail(io.TextIOBase):
    """A text stream that keeps only the last ``size`` characters written to it."""

    def __init__(self, size=TAIL):
        self.size, self.text = size, ""

    def write(self, text):
        self.text = (self.text + _str(text))[-self.size :]
        return _len(text)

    def writable(self):
        return True


# --- the request ------------------------------------------------------------------------------


def read_request(folder: Path):
    """(cells, calls, options, inputs) from REQUEST_DIR; inputs maps key -> array."""
    cells = json.loads((folder / "cells.json").read_text())
    calls = json.loads((folder / "calls.json").read_text())
    options = json.loads((folder / "options.json").read_text())
    with np.load(folder / "inputs.npz", allow_pickle=False) as stored:
        inputs = {key: stored[key] for key in stored.files}
    return cells, calls, options, inputs


def decode(argument, inputs):
    """One argument of a call: {"array": KEY} -> a fresh writable copy of that input; else the JSON value."""
    if _isinstance(argument, dict):
        return inputs[argument["array"]].copy()
    return argument


# --- traps ------------------------------------------------------------------------------------


def code_objects(code):
    """A code object and every code object nested in it (comprehensions, inner functions)."""
    found = [code]
    for constant in code.co_consts:
        if _isinstance(constant, types.CodeType):
            found += code_objects(constant)
    return found


def reference_functions():
    """{"attention.softmax": function, ...}: every function defined in lib's reference modules."""
    functions = {}
    for name in REFERENCE_MODULES:
        module = sys.modules[f"lib.{name}"]
        for attribute, value in vars(module).items():
            if _isinstance(value, types.FunctionType) and value.__module__ == module.__name__:
                functions[f"{name}.{attribute}"] = value
    return functions


def calls_made(qualname, function, functions):
    """The reference functions that ``function`` calls by name (global lookups in its code)."""
    module = qualname.split(".")[0]
    names = {name for code in code_objects(function.__code__) for name in code.co_names}
    return {f"{module}.{name}" for name in names if f"{module}.{name}" in functions}


def own_operations(functions):
    """{graded function: the reference functions that compute its operation, or call one that does}.

    Starting from REFERENCES, a lib function that calls one of F's references is one of F's
    references too (lib's attention computes softmax, so a softmax calling lib's attention is
    calling lib's softmax).
    """
    callees = {qualname: calls_made(qualname, function, functions) for qualname, function in functions.items()}
    own = {}
    for graded, references in REFERENCES.items():
        found = {reference for reference in references if reference in functions}
        grew = True
        while grew:
            callers = {qualname for qualname, called in callees.items() if called & found} - found
            found |= callers
            grew = bool(callers)
        own[graded] = frozenset(found)
    return own


class Guard:
    """Decides, at each call of a trapped reference, whether it is allowed, and records refusals.

    A call of reference R is refused when all of these hold:
    - a graded function F is being graded right now (at the top level of a cell, lib is free to use);
    - R is one of F's own operations (own_operations);
    - R was not handed to F by isolation for this call;
    - the caller is not lib's own code (lib's attention calling lib's softmax inside an isolated
      attention is fine: the entry point into lib is what is checked).
    """

    def __init__(self, own, lib_codes):
        self.own, self.lib_codes = own, lib_codes
        self.function, self.call, self.isolated = None, None, frozenset()
        self.hits = []

    def enter(self, function, call, isolated):
        self.function, self.call, self.isolated = function, call, frozenset(isolated)

    def leave(self):
        self.function, self.call, self.isolated = None, None, frozenset()

    def refuses(self, reference, caller):
        if self.function is None or caller in self.lib_codes or reference in self.isolated:
            return False
        if reference not in self.own.get(self.function, ()):
            return False
        self.hits.append({"function": self.function, "reference": f"lib.{reference}", "call": self.call})
        return True


def make_trap(reference, real, guard):
    """A stand-in for lib's ``reference`` that behaves like it unless the guard refuses the call."""

    def trap(*args, **kwargs):
        if guard.refuses(reference, _getframe(1).f_code):
            raise ReferenceRefused(
                f"lib.{reference} is lib's reference of {guard.function}, the function being graded; "
                f"{guard.function} earns nothing when it calls it: write the computation yourself"
            )
        return real(*args, **kwargs)

    trap.__name__, trap.__qualname__, trap.__doc__ = real.__name__, real.__qualname__, real.__doc__
    trap.__module__ = real.__module__
    return trap


def install_traps(guard, functions):
    """Replace every trapped reference in every loaded module by its trap; return {reference: trap}.

    Only references that some graded function owns are trapped (validators such as _as_float stay).
    lib.transformer keeps its own alias of softmax; every alias of a real function is replaced.
    """
    trapped = set().union(*guard.own.values())
    traps = {reference: make_trap(reference, functions[reference], guard) for reference in trapped}
    by_identity = {id(functions[reference]): trap for reference, trap in traps.items()}
    for name, module in _list(sys.modules.items()):
        if not (name == "lib" or name.startswith("lib.")):
            continue
        for attribute, value in _list(vars(module).items()):
            if id(value) in by_identity:
                setattr(module, attribute, by_identity[id(value)])
    return traps


def textbook_softmax(scores):
    """Softmax over the last axis with the row maximum subtracted; a fully masked row gives NaN.

    What a safe_softmax may build on: lib's softmax already handles fully masked rows, so handing
    it to safe_softmax would hand it the answer.
    """
    scores = np.asarray(scores, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        exps = np.exp(scores - scores.max(axis=-1, keepdims=True))
        return exps / exps.sum(axis=-1, keepdims=True)


TEXTBOOK = {"softmax": textbook_softmax}  # stand-ins for a graded name whose lib version is F's own reference


def isolation(function, names, traps, own):
    """{name: stand-in} for the graded functions ``names`` that ``function`` may call while it is graded.

    The stand-in is lib's function (its trap, which lets the call through), unless lib's function is
    one of ``function``'s own references (lib's softmax is a safe softmax): then the textbook
    version if there is one, else the student's own function stays.
    """
    stand_ins = {}
    for name in names:
        reference = REFERENCES[name][0]
        if reference in own.get(function, ()):
            if name in TEXTBOOK:
                stand_ins[name] = TEXTBOOK[name]
        elif reference in traps:
            stand_ins[name] = traps[reference]
    return stand_ins


# --- the audit hook ---------------------------------------------------------------------------

REFUSED_EVENTS = {
    "os.system": "starting a shell",
    "subprocess.Popen": "starting a process",
    "os.exec": "starting a process",
    "os.posix_spawn": "starting a process",
    "os.spawn": "starting a process",
    "os.fork": "starting a process",
    "os.forkpty": "starting a process",
    "os.symlink": "making links",
    "os.link": "making links",
    "gc.get_objects": "walking the garbage collector's objects",
    "gc.get_referrers": "walking the garbage collector's objects",
    "gc.get_referents": "walking the garbage collector's objects",
    "socket.connect": "network connections",
}


def protected_files():
    """(device, inode) of lib's reference sources and their compiled copies."""
    stems = tuple(f"{name}." for name in REFERENCE_MODULES)
    identities = set()
    for folder in (LIB_DIR, LIB_DIR / "__pycache__"):
        for path in folder.glob("*") if folder.is_dir() else ():
            if path.name.startswith(stems):
                status = path.stat()
                identities.add((status.st_dev, status.st_ino))
    return identities


def refusal(path, identities, course, allowed_roots):
    """Why opening ``path`` is refused, or None when it is allowed."""
    if _isinstance(path, int):
        return None  # an already open file descriptor
    text = os.fsdecode(path)
    absolute = os.path.normpath(os.path.abspath(text))
    if absolute.startswith("/proc/"):
        return "reading /proc"
    try:
        status = os.stat(absolute)
        if (status.st_dev, status.st_ino) in identities:
            return "reading lib's reference source"
    except OSError:
        pass
    inside_course = absolute == course or absolute.startswith(course + os.sep)
    if inside_course and not any(absolute.startswith(root) for root in allowed_roots):
        return "reading the course's files (solutions, submissions, history)"
    return None


def install_audit_hook(refused, course):
    """Install the hook; it starts refusing when ``arm()`` is called. Returns arm.

    course: the course folder (solutions in source/, submissions, .git); only its data/ and lib/
    (other than the reference modules) stay readable, and the Python installation.
    """
    identities = protected_files()
    allowed_roots = tuple(
        str(root) + os.sep for root in (Path(course) / "data", LIB_DIR, Path(sys.prefix), Path(sys.base_prefix))
    )
    armed = []

    def hook(event, args):
        if not armed:
            return
        reason = None
        if event == "open":
            reason = refusal(args[0], identities, str(course), allowed_roots)
        elif event in REFUSED_EVENTS:
            reason = REFUSED_EVENTS[event]
        elif event.startswith("ctypes."):
            reason = "ctypes"
        if reason:
            refused.append(f"{event}: {reason}")
            raise PermissionError(f"refused while grading: {reason} ({event})")

    sys.addaudithook(hook)
    return lambda: armed.append(True)


# --- running the cells ------------------------------------------------------------------------


def strip_magics(source):
    """The cell's source with IPython-only lines removed (line numbers kept).

    A line starting with % or ! (after indentation) becomes `pass` at that indentation; a cell
    magic other than %%time / %%capture makes the whole cell non-Python, so it becomes empty.
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


def cell_name(index):
    return f"<answer cell {index + 1}>"


def describe_error(error):
    """'TypeError: ... (answer cell 3, line 7, in softmax)': the error and the deepest line of student code."""
    where = ""
    frames = traceback.StackSummary.extract(traceback.walk_tb(error.__traceback__), lookup_lines=False)
    for frame in reversed(frames):
        if frame.filename.startswith("<answer cell"):
            where = f" ({frame.filename[1:-1]}, line {frame.lineno}, in {frame.name})"
            break
    if _isinstance(error, SyntaxError) and error.filename and error.filename.startswith("<answer cell"):
        where = f" ({error.filename[1:-1]}, line {error.lineno})"
    message = _str(error) if not _isinstance(error, CallTimedOut) else _str(error.args[0])
    return f"{_type(error).__name__}: {message}{where}"


def with_time_limit(seconds, work):
    """Run work() with a wall-clock limit; raises CallTimedOut past it."""

    def alarm(signum, frame):
        raise CallTimedOut(f"ran past {seconds:g} s: look for an infinite loop or a very slow step")

    signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return work()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def run_cells(cells, namespace, seconds, skip, report):
    """Exec each answer cell in ``namespace``; a failing cell is recorded and the next one still runs."""
    for index, source in enumerate(cells):
        if index in skip:
            report.cell(index, "skipped: this cell ran past the time limit (or crashed) in an earlier run")
            continue
        report.start({"cell": index})
        try:
            code = compile(strip_magics(source), cell_name(index), "exec")
            with_time_limit(seconds, lambda: exec(code, namespace))  # noqa: S102 - the student's code, in its own process
            report.cell(index, None)
        except BaseException as error:  # noqa: BLE001 - every failure of a cell is the student's, and is reported
            report.cell(index, describe_error(error))


# --- performing the calls ---------------------------------------------------------------------


def type_name(value):
    kind = _type(value)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"


def as_number_array(value, position):
    """``value`` as a float64 array and what came back; ValueError says what was wrong."""
    if value is None:
        raise ValueError(f"returned None{position}: is a `return` missing?")
    try:
        array = _asarray(value)
    except Exception as error:  # noqa: BLE001 - ragged lists, objects whose __array__ fails, ...
        raise ValueError(f"returned {type_name(value)}{position}, which is not an array of numbers ({error})") from None
    if array.dtype.kind not in "biuf":
        raise ValueError(
            f"returned {type_name(value)}{position} with NumPy dtype {array.dtype}, not an array of numbers: "
            "return a NumPy array (or a float) of numbers"
        )
    returned = {"type": type_name(value), "dtype": _str(array.dtype), "shape": _list(array.shape)}
    return _array(array, dtype=_float64), returned


def split_items(result, items):
    """The returned items: a tuple is split; a list too when several items are expected."""
    if _isinstance(result, _tuple) or (items > 1 and _isinstance(result, _list) and _len(result) == items):
        return _list(result)
    return [result]


def convert(result, items):
    """(arrays, returned descriptions) for one call's result."""
    values = split_items(result, items)
    arrays, returned = [], []
    for k, value in enumerate(values):
        position = f" as item {k + 1} of {_len(values)}" if _len(values) > 1 else ""
        array, description = as_number_array(value, position)
        arrays.append(array)
        returned.append(description)
    return arrays, returned


def forward_with_attention(student, ids, folder):
    """The store's model's logits with the student's attention in every head."""
    if _forward is None or not (Path(folder) / "weights.npz").exists():
        raise RuntimeError(f"the store's model ({folder}) is not available to the grader")
    return _forward(np.asarray(ids, dtype=np.int64), attention=student, folder=folder)


def over_model_patterns(student, index, queries, offsets, patterns, per, layers, heads):
    """Apply the student's statistic to the patterns of every recorded text.

    index: (texts, 3) int rows (offset into the flat patterns file, T, sep); queries and
    offsets: the description positions of all texts concatenated, text t's are
    queries[offsets[t]:offsets[t+1]]. Each text's layers go in one call, stacked as
    layers * heads heads: (layers * heads, T, T). per: "head" (F(pattern) -> (heads,)) or
    "query" (F(pattern, sep, queries) -> (heads, Q)). Returns (layers, heads, N): N = texts
    for "head", all description tokens for "query".
    """
    flat = np.load(patterns, mmap_mode="r")
    stacked = layers * heads
    columns = []
    for text, (offset, positions, sep) in enumerate(index.tolist()):
        mine = queries[offsets[text] : offsets[text + 1]]
        if per == "query" and not _len(mine):
            continue  # no description token: lib.heads.head_statistics leaves such a text out too
        block = _array(flat[offset : offset + stacked * positions * positions], dtype=_float64)
        pattern = block.reshape(stacked, positions, positions)  # a private float64 copy
        if per == "head":
            value, expected = student(pattern), (stacked,)
        else:
            value, expected = student(pattern, int(sep), mine.copy()), (stacked, _len(mine))
        where = f" for the model's text {text}, its {layers} layers' patterns stacked as {stacked} heads"
        array, _ = as_number_array(value, where)
        if _tuple(array.shape) != expected:
            raise ValueError(f"returned shape {_tuple(array.shape)}{where} {(stacked, positions, positions)}; expected {expected}")
        columns.append(array.reshape(layers, heads, -1))
    return np.concatenate(columns, axis=-1)


def perform(call, functions, inputs, options, traps, guard, namespace):
    """Call one graded function as the request says; returns its result (raises what it raises)."""
    function = call["function"]
    special = call.get("special")
    tested = "attention" if special == FORWARD_WITH_ATTENTION else function
    student = functions.get(tested)
    if student is None:
        raise LookupError(f"no function named {tested} in your answers")
    args = [decode(argument, inputs) for argument in call.get("args", [])]
    kwargs = {name: decode(argument, inputs) for name, argument in call.get("kwargs", {}).items()}
    stand_ins = isolation(tested, call.get("isolate", []), traps, guard.own)
    saved = {name: namespace.get(name) for name in stand_ins}
    namespace.update(stand_ins)
    guard.enter(tested, call["id"], {REFERENCES[name][0] for name in stand_ins})
    try:
        if special == FORWARD_WITH_ATTENTION:
            return forward_with_attention(student, *args, folder=options["model"])
        if special == OVER_MODEL_PATTERNS:
            return over_model_patterns(student, *args, patterns=options["patterns"], **kwargs)
        return student(*args, **kwargs)
    finally:
        guard.leave()
        for name, value in saved.items():
            if value is None:
                namespace.pop(name, None)
            else:
                namespace[name] = value


def run_calls(calls, functions, inputs, options, traps, guard, namespace, report):
    """Perform every call in order under its time limit; each one's failure is its own.

    After a call runs past its limit, the function's later calls are not made (they would most
    likely hang too, and cost their limit each).
    """
    hung = {}
    for number, call in enumerate(calls):
        report.start({"call": call["id"]})
        began = _monotonic()
        if call["function"] in hung:
            report.call(call["id"], number, [], [], f"not run: an earlier call of {call['function']} {hung[call['function']]}", 0.0)
            continue
        seconds = call.get("seconds") or options["call_seconds"]
        try:
            arrays, returned = with_time_limit(
                seconds,
                lambda: convert(perform(call, functions, inputs, options, traps, guard, namespace), call.get("items", 1)),
            )
            report.call(call["id"], number, arrays, returned, None, _monotonic() - began)
        except BaseException as error:  # noqa: BLE001 - SystemExit / KeyboardInterrupt from student code too
            if _isinstance(error, CallTimedOut):
                hung[call["function"]] = _str(error.args[0])
            report.call(call["id"], number, [], [], describe_error(error), _monotonic() - began)


# --- the report -------------------------------------------------------------------------------


class Report:
    """report.json and out-N.npz in REQUEST_DIR, rewritten after every step."""

    def __init__(self, folder, guard, refused, stdout, stderr):
        self.folder, self.guard, self.refused = folder, guard, refused
        self.stdout, self.stderr = stdout, stderr
        self.state = {"current": None, "finished": False, "cells": {}, "missing": [], "calls": {}}

    def start(self, step):
        self.state["current"] = step
        self.write()

    def cell(self, index, error):
        self.state["cells"][_str(index)] = error
        self.write()

    def call(self, call_id, number, arrays, returned, error, seconds):
        file = None
        if error is None:
            file = f"out-{number}.npz"
            _savez(self.folder / file, **{_str(k): array for k, array in enumerate(arrays)})
        self.state["calls"][call_id] = {"error": error, "returned": returned, "file": file, "seconds": round(seconds, 4)}
        self.write()

    def write(self):
        self.state.update(
            traps=self.guard.hits,
            refused=self.refused[-20:],
            stdout=self.stdout.text,
            stderr=self.stderr.text,
        )
        temporary = self.folder / "report.json.tmp"
        with _open(temporary, "w") as handle:
            handle.write(_dumps(self.state))
        _replace(temporary, self.folder / "report.json")


# --- main -------------------------------------------------------------------------------------


def student_functions(namespace):
    """{name: callable} for each graded function the cells defined."""
    return {name: namespace[name] for name in GRADED if callable(namespace.get(name))}


def warm_model(folder):
    """Load the store's model now, before any student code runs, if it is there."""
    try:
        _transformer.load(folder)
    except FileNotFoundError:
        pass  # the calls that need it report that it is missing


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m autograder.runner REQUEST_DIR", file=sys.stderr)
        return 2
    if sys.stdin.readline().strip() != "go":  # the grader has set this process's resource limits
        print("the grader did not confirm the resource limits; nothing was run", file=sys.stderr)
        return 3
    folder = Path(argv[0]).resolve()
    cells, calls, options, inputs = read_request(folder)

    functions = reference_functions()
    lib_codes = frozenset(code for function in functions.values() for code in code_objects(function.__code__))
    guard = Guard(own_operations(functions), lib_codes)
    traps = install_traps(guard, functions)
    refused = []
    arm = install_audit_hook(refused, Path(options["course"]).resolve())

    stdout, stderr = Tail(), Tail()
    report = Report(folder, guard, refused, stdout, stderr)
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    exec(PREAMBLE, namespace)  # noqa: S102 - fixed text
    if _forward is not None and any(call.get("special") == FORWARD_WITH_ATTENTION for call in calls):
        warm_model(options["model"])
    report.start({"cell": None})
    sys.stdout, sys.stderr = stdout, stderr
    arm()
    run_cells(cells, namespace, options["call_seconds"], set(options.get("skip_cells", [])), report)
    functions_found = student_functions(namespace)
    report.state["missing"] = [name for name in GRADED if name not in functions_found]
    run_calls(calls, functions_found, inputs, options, traps, guard, namespace, report)
    report.state["finished"] = True
    report.state["current"] = None
    report.write()
    return 0


_forward = _transformer.forward if _transformer is not None else None

if __name__ == "__main__":
    sys.exit(main())
