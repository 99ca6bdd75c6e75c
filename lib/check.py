"""The notebook's visible checks: a graded function run on the release's public inputs, its values compared with the
recorded ones.

    from lib.check import check
    check("rotate", rotate)      # ✓ rotate: 2 properties hold on the public inputs (...)
    callees_first("rotated_score", rotated_score)   # first in a cell of hand-written asserts: a wrong callee named

The numbers come from ``visible_checks.json``, released beside the notebook: the public inputs of each hidden check,
the values the answer key gives on them and the values each mistake the hidden checks name gives (made by
the grader's release command from the assignment's own checks). This module holds no answer: it only reads those
numbers and compares. A passing check prints one line; a failing one raises ``CheckFailed`` (an AssertionError) whose
message is one sentence, shown alone: the mistake's own words when the values are that mistake's, else which public
input differs and by how much; a function whose cell still holds its stub says which cell to fill in; a function that
calls another graded function whose own check fails sends the student to that one first.

Values are compared as the hidden checks compare them: float64 within 1e-6; float32 within float32's rounding (the
same rule and numbers, read from the file); anything less precise refused with the hidden checks' sentence.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np

FILE = "visible_checks.json"


class CheckFailed(AssertionError):
    """A visible check that fails; its message is the whole sentence, which notebooks show without a traceback."""

    def __init__(self, sentence: str):
        super().__init__(sentence)
        self.sentence = sentence

    def __str__(self) -> str:
        return self.sentence

    def _render_traceback_(self) -> list[str]:  # IPython shows these lines in place of the traceback
        return [f"\x1b[0;31m✗ {self.sentence}\x1b[0m"]


class NotWrittenYet(CheckFailed):
    """The graded function still holds its stub (it raises NotImplementedError), or is not defined yet."""


_loaded: dict = {}  # {path: (mtime, facts)}


def facts(path: Path | str | None = None) -> dict:
    """The recorded numbers: ``path``, else visible_checks.json in the current folder (the notebook's, in Jupyter)."""
    path = Path(path) if path is not None else Path.cwd() / FILE
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        raise CheckFailed(
            f"the visible checks' numbers are missing: {FILE}, released beside this notebook, is not in {path.parent}; "
            "put it back beside the notebook (fetch the assignment again) and run this cell again"
        ) from None
    if _loaded.get(str(path), (None,))[0] != stamp:
        _loaded[str(path)] = (stamp, json.loads(path.read_text(encoding="utf-8")))
    return _loaded[str(path)][1]


def decoded(value):
    """An argument or value as the file writes it, back as Python and NumPy values."""
    if isinstance(value, dict):
        if "array" in value:
            return np.array(value["array"], dtype=value.get("dtype", "float64"))
        if "list" in value:
            return [decoded(part) for part in value["list"]]
        if "tuple" in value:
            return tuple(decoded(part) for part in value["tuple"])
    return value


def tolerance(recorded: dict, call: dict, dtypes: list) -> tuple[float, float]:
    """(atol, rtol) for a call's results in these dtypes: float64's, or float32's rounding of the inputs and result
    (the hidden checks' own rule, with its numbers from the file)."""
    rule = recorded["tolerance"]
    if not any(np.dtype(dtype).kind == "f" and np.dtype(dtype).itemsize < 8 for dtype in dtypes):
        return rule["atol"], 0.0
    inputs = [decoded(arg) for arg in (*call["args"], *call["kwargs"].values())]
    finite = [
        float(np.abs(value[np.isfinite(value)]).max(initial=0.0))
        for value in inputs
        if isinstance(value, np.ndarray) and value.dtype.kind == "f"
    ]
    return rule["atol"] + rule["single"] * max([1.0, *finite]), rule["single"]


def close(actual: np.ndarray, expected: np.ndarray, atol: float, rtol: float) -> bool:
    """Same shape and equal within atol + rtol x the expected array's largest finite number (NaN never equal)."""
    if actual.shape != expected.shape:
        return False
    scale = float(np.abs(expected[np.isfinite(expected)]).max(initial=0.0))
    return bool(np.allclose(actual, expected, rtol=0.0, atol=atol + rtol * scale))


def difference(actual: np.ndarray, expected: np.ndarray) -> str:
    """Where and by how much two arrays of the same shape differ most."""
    with np.errstate(invalid="ignore"):
        gaps = np.abs(actual - expected)
    gaps = np.where(np.isnan(gaps) & ~(np.isnan(actual) & np.isnan(expected)), np.inf, np.nan_to_num(gaps, nan=0.0))
    where = np.unravel_index(int(np.argmax(gaps)), gaps.shape) if gaps.ndim else ()
    at = f" at [{', '.join(map(str, where))}]" if where else ""
    return f"{at} it gives {float(actual[where]):.6g} where {float(expected[where]):.6g} is expected"


class Verdict:
    """What one function's checks made of it: ``failure`` None when they pass; ``blank`` when its stub is still in;
    ``culprit``: the graded function whose own check fails (this one, or one it calls)."""

    def __init__(self, failure=None, blank=False, properties=(), culprit="", reason="", unwritten=False):
        self.failure, self.blank, self.properties, self.culprit = failure, blank, properties, culprit
        self.reason = reason or failure  # the culprit's own sentence
        self.unwritten = unwritten or blank  # the culprit still holds its stub


def run_call(name: str, function, call: dict, items: int, cell_of) -> tuple[list | None, Verdict | None]:
    """The function's values on one public call, or the verdict that stops the check there."""
    args = [decoded(arg) for arg in call["args"]]
    kwargs = {key: decoded(value) for key, value in call["kwargs"].items()}
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            result = function(*args, **kwargs)
    except NotImplementedError:
        return None, Verdict(f"{name} is not written yet: fill in the cell under '{cell_of(name)}'", blank=True)
    except NameError as error:
        missing = getattr(error, "name", None) or str(error)
        return None, Verdict(
            f"{call['about']} raised NameError: {error}; run the cell that defines {missing} first"
            + (f" (under '{cell_of(missing)}')" if cell_of(missing, None) else "")
        )
    except Exception as error:  # noqa: BLE001 - the student's function may fail any way: said in one line
        return None, Verdict(f"{call['about']} raised {type(error).__name__}: {error}")
    values = list(result) if items > 1 and isinstance(result, (tuple, list)) else [result]
    if len(values) != items:
        return None, Verdict(f"{call['about']} returned {type(result).__name__}; expected a tuple of {items} items")
    arrays = []
    for value in values:
        array = np.asarray(value) if value is not None else np.asarray(None)
        if value is None or array.dtype.kind not in "biuf":
            return None, Verdict(f"{call['about']} returned {type(value).__name__}: return an array of numbers")
        arrays.append(array)
    return arrays, None


def named_mistake(recorded: dict, entry: dict, computed: list) -> str | None:
    """The first named mistake (in the hidden checks' order) whose recorded values the function's equal on every
    public call they are recorded on, said with the first of those calls; None when none does."""
    shown: dict = {}  # {message: {call number: [(item, values)]}}
    for number, call in enumerate(entry["calls"]):
        for mistake in call["mistakes"]:
            shown.setdefault(mistake["message"], {}).setdefault(number, []).append((mistake["item"], mistake["array"]))
    for message, where in shown.items():
        agrees = True
        for number, options in where.items():
            call, arrays = entry["calls"][number], computed[number]
            atol, rtol = tolerance(recorded, call, [a.dtype for a in arrays])
            if not any(
                close(arrays[item].astype(np.float64), np.asarray(values, dtype=np.float64), atol, rtol)
                for item, values in options
            ):
                agrees = False
                break
        if agrees:
            return f"{entry['calls'][min(where)]['about']}: {message}"
    return None


def judged(recorded: dict, name: str, function, entries: list[dict], cell_of) -> Verdict:
    """The function against the recorded calls of its checks (``entries``)."""
    accepted = recorded["tolerance"]["accepted"]
    for entry in entries:
        differs = None
        computed = []
        for number, call in enumerate(entry["calls"]):
            arrays, stop = run_call(name, function, call, entry["items"], cell_of)
            if stop is not None:
                return stop
            computed.append(arrays)
            for item, (array, expected) in enumerate(zip(arrays, call["expected"])):
                what = call["about"] + (f"'s item {item}" if entry["items"] > 1 else "")
                if array.dtype.kind == "f" and array.dtype.itemsize < 4:
                    digits = np.finfo(array.dtype).precision
                    return Verdict(
                        f"{call['about']} returned {array.dtype} numbers, which keep about {digits} significant "
                        f"digits: {accepted}; compute in float64 (np.asarray(x, dtype=float))"
                    )
                if np.dtype(expected["dtype"]).kind == "b" and array.dtype.kind != "b":
                    return Verdict(f"{what} has dtype {array.dtype}: return booleans (dtype=bool), True or False")
                wanted = np.asarray(expected["array"], dtype=np.float64)
                atol, rtol = tolerance(recorded, call, [a.dtype for a in arrays])
                actual = array.astype(np.float64)
                if differs is None and not close(actual, wanted, atol, rtol):
                    if actual.shape != wanted.shape:
                        said = f"{what} has shape {actual.shape}, expected {wanted.shape}"
                    else:
                        said = f"{what} is wrong:{difference(actual, wanted)}"
                    differs = f"{said} (public input {number + 1} of {len(entry['calls'])})"
        if differs is None:
            continue
        named = named_mistake(recorded, entry, computed)
        return Verdict(named or differs)
    properties = tuple(dict.fromkeys(p for entry in entries for p in entry["properties"]))
    return Verdict(properties=properties)


ALL = "*"  # every check of a function: how a callee's own checks are run


def verdict(recorded: dict, name: str, function, check_id: str | None, namespace: dict, seen=()) -> Verdict:
    """The function's verdict, a failure blamed on a graded function it calls when that one's own checks fail.
    check_id: one of its checks; None: check_<name> (else all of them); ALL: all of them."""
    checks = recorded["checks"]
    functions = recorded["functions"]
    if name not in functions:
        known = ", ".join(sorted(functions))
        raise CheckFailed(f"{FILE} records no check of {name!r}: the checks of this notebook are of {known}")
    mine = [key for key, entry in checks.items() if entry["function"] == name]
    if check_id not in (None, ALL):
        if check_id not in checks:
            raise CheckFailed(f"{FILE} records no check {check_id!r}")
        ids = [check_id]
    else:
        own = f"check_{name}"
        ids = [own] if own in checks and check_id is None else mine

    def cell_of(graded: str, default: str | None = "this notebook"):
        return functions.get(graded, {}).get("cell", default)

    found = judged(recorded, name, function, [checks[k] for k in ids], cell_of)
    if found.failure is None:
        return found
    return blamed(recorded, name, namespace, seen, "calls") or found


def blamed(recorded: dict, name: str, namespace: dict, seen=(), how: str = "calls", names=None) -> Verdict | None:
    """The verdict sending the student to the first graded function ``name`` may call (ISOLATE; ``names``: these)
    that is defined here and fails its own checks (the one deepest down when its failure comes from its own callee);
    None when none does. how: "calls" ("rotate calls your rotation_angles, ...") or "uses" (a cell comparing with
    it)."""
    functions = recorded["functions"]
    for called in functions[name].get("calls", []) if names is None else names:
        theirs = namespace.get(called)
        if called in seen or not callable(theirs):
            continue
        own = verdict(recorded, called, theirs, ALL, namespace, (*seen, name))
        if own.failure is None:
            continue
        culprit = own.culprit or called
        cell = functions.get(culprit, {}).get("cell", "this notebook")
        if own.unwritten:
            said = f"{culprit} is not written yet: fill in the cell under '{cell}' first"
        else:
            said = f"{culprit} fails its own check: fix {culprit} first (the cell under '{cell}'): {own.reason}"
        through = f" (through {called})" if culprit != called else ""
        opening = (
            f"{name} calls your {culprit}{through}" if how == "calls" else f"this check of {name} uses your {culprit}"
        )
        return Verdict(
            f"{opening}, and {said}; then run this cell again",
            culprit=culprit,
            reason=own.reason,
            unwritten=own.unwritten,
        )
    return None


def not_defined(name: str, path: Path | str | None = None) -> str:
    """What to do about a name a cell needs that no cell has made yet, in one line: a graded function's own cell
    (under its task's heading, as the notebook names it), or the cells above this one for any other name."""
    try:
        cell = facts(path)["functions"].get(name, {}).get("cell")
    except (CheckFailed, ValueError, KeyError, TypeError, AttributeError):
        cell = None
    if cell:
        return f"{name} is not defined yet: run the cell under '{cell}' first, then this cell again"
    return (
        f"{name} is not defined yet: an earlier cell makes it; run the cells above this one first "
        "(Run > Run All Above Selected Cell), then this cell again"
    )


def check(name: str, function=None, check_id: str | None = None, *, path: Path | str | None = None) -> None:
    """Check graded function ``name`` (``function``, else the one of that name where check is called) on the public
    inputs: one line when it holds, else CheckFailed with one sentence. ``check_id``: which of the function's checks
    (default: check_<name>, else all of them)."""
    __tracebackhide__ = True  # pytest and IPython leave this frame out of a traceback
    namespace = sys._getframe(1).f_globals
    recorded = facts(path)
    if function is None:
        function = namespace.get(name)
        if function is None:
            cell = recorded["functions"].get(name, {}).get("cell", "this notebook")
            raise NotWrittenYet(f"{name} is not defined yet: run the cell under '{cell}' first")
    found = verdict(recorded, name, function, check_id, namespace)
    if found.failure is not None:
        raise (NotWrittenYet if found.blank else CheckFailed)(found.failure) from None
    count = len(found.properties)
    what = f"{count} propert{'y holds' if count == 1 else 'ies hold'}" if count else "its values match"
    listed = f" ({'; '.join(found.properties)})" if found.properties else ""
    print(f"✓ {name}: {what} on the public inputs{listed}")


def callees_first(
    name: str, function=None, check_id: str | None = None, *, uses: tuple = (), path: Path | str | None = None
) -> None:
    """Before a check cell's own asserts: when graded function ``name`` fails its recorded check because a graded
    function it may call (ISOLATE) fails its own, or when one of ``uses`` (the graded functions the cell's own asserts
    compare with) fails its own, CheckFailed sending the student to that one (its cell, its sentence); otherwise
    nothing, not even a line (the cell's last line, ``check``, says how it went)."""
    __tracebackhide__ = True
    namespace = sys._getframe(1).f_globals
    recorded = facts(path)
    function = function if function is not None else namespace.get(name)
    if function is None:
        return
    found = verdict(recorded, name, function, check_id, namespace)
    if found.failure is None and uses:  # its own values hold: the cell's asserts still need right ones of these
        found = blamed(recorded, name, namespace, how="uses", names=tuple(uses)) or found
    if found.failure is not None and found.culprit and found.culprit != name:
        raise (NotWrittenYet if found.unwritten else CheckFailed)(found.failure) from None
