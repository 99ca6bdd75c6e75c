"""The visible checks' facts, recorded from an assignment's own hidden checks: numbers and messages, never code.

    python -m autograder.visible --source source --assignment positions [--release release]

writes ``source/<assignment>/visible_checks.json`` (nbgrader's generate_assignment copies it into the release beside
the notebook, as it copies every file CourseDirectory.ignore does not name; ``--release DIR`` also writes it into
``DIR/<assignment>/`` at once). The student package's ``lib.check`` reads it in the notebook's visible check cells.

For each check of the assignment, its calls are drawn from the check's own ``calls`` with a fixed public seed (a
seed sequence no grading seed makes), and the small plain calls among them become its public inputs. On each the
reference (a compare(...) check's own, else the reference of reference.py the check compares with) is run in this
process, and what comes back is recorded as numbers. The named mistakes are found the way the hidden checks find
them: each public result in turn is made wrong, every judge of the check is run on it, and each known wrong
variant a judge hands to ``autograder.checks.diagnose`` for that result is evaluated and recorded (its message and
its numbers) when it differs from the reference's. So a compare(...) check's ``mistakes`` and a full check's own
variants are recorded alike, in the order the hidden checks try them. A property counts as decided on the public
inputs when a wrong public result makes its judge fail.

What the file holds: numbers (arrays as nested lists, their dtype by name), the call's arguments, how each call and
each mistake reads (the hidden checks' own sentences), where each graded function is written in the notebook, and
which graded functions it calls (ISOLATE). No line of the reference or of checks.py.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import nbformat
import numpy as np

from autograder import assignments, mutation
from autograder import checks as framework
from autograder.checks import ACCEPTED, ATOL, SINGLE, Call, Check, Compared, Mapped, Outputs, Result, describe_call

FILE = "visible_checks.json"
FORMAT = 1
PUBLIC_STREAM = 0x715B1E  # the public seed: [PUBLIC_STREAM, 0, crc32(check id)], three words, unlike any grading seed
MOST_NUMBERS = 600  # a public call's arguments and results hold at most this many numbers, but those naming a mistake
LARGEST = 1000  # the smallest call of a role may hold this many (a role drawn past the model's window)
PER_ROLE = 3  # public calls per role of a check's calls
PER_CHECK = 8
DRAWS = 3  # public draws of a check's calls to choose from: the smallest call that names a mistake is taken
CANDIDATE = 4000  # a call holding more numbers is never a public input (the file stays small)
ROUNDED = 12  # significant digits of the file's numbers: float64's 1e-6 comparisons never see the rounding


def public_generator(check_id: str, draw: int = 0) -> np.random.Generator:
    """The generator of a check's public draw ``draw``: fixed, and no grading draw's (those are [seed, crc])."""
    return np.random.default_rng([PUBLIC_STREAM, draw, zlib.crc32(check_id.encode())])


def public_draws(check: Check) -> list[list[Call]]:
    """The calls the public inputs are chosen from: DRAWS draws of the check's own calls with the public seeds."""
    return [check.calls(public_generator(check.check_id, draw)) for draw in range(DRAWS)]


# --- what may be recorded ---------------------------------------------------------------------------------------


def numbers_in(value) -> int | None:
    """How many numbers an argument holds; None when it cannot be recorded (a function, a Mapped file, an object)."""
    if isinstance(value, np.ndarray):
        return int(value.size) if value.dtype.kind in "biuf" else None
    if isinstance(value, (list, tuple)):
        parts = [numbers_in(part) for part in value]
        return None if None in parts else sum(parts)
    if value is None or isinstance(value, (bool, int, float, str, np.integer, np.floating, np.bool_)):
        return 1
    return None


def size_of(call: Call) -> int | None:
    """How many numbers a call's arguments hold; None when it cannot be made again from recorded numbers (a driver,
    a file, a callback)."""
    if call.drive is not None or call.files or any(isinstance(v, Mapped) for v in call.args):
        return None
    sizes = [numbers_in(value) for value in (*call.args, *call.kwargs.values())]
    return None if None in sizes else sum(sizes)


def encoded(value):
    """A value as JSON: an array as {"array": nested list, "dtype": name}, a list or tuple tagged, numbers as they are
    (json writes inf and nan as Infinity and NaN, which Python's json reads back)."""
    if isinstance(value, np.ndarray):
        return {"array": value.tolist(), "dtype": str(value.dtype)}
    if isinstance(value, list):
        return {"list": [encoded(part) for part in value]}
    if isinstance(value, tuple):
        return {"tuple": [encoded(part) for part in value]}
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


# --- the mistakes a judge names, caught on their way to diagnose --------------------------------------------------


@dataclass
class Caught:
    """The variants a judge handed to diagnose for one wrong result: [(message, float64 array)]."""

    target: np.ndarray
    found: list


def catching(caught: Caught, original):
    """diagnose as the hidden checks call it, which also records each variant offered for ``caught.target``."""

    def diagnose(actual, variants, otherwise, tolerance=framework.EXACT):
        actual_array = np.asarray(actual, dtype=np.float64)
        if actual_array.shape == caught.target.shape and np.array_equal(actual_array, caught.target, equal_nan=True):
            for message, expected in variants:
                try:
                    with np.errstate(all="ignore"):
                        value = np.asarray(expected(), dtype=np.float64)
                except Exception:  # noqa: BLE001 - a variant that does not apply to these inputs names nothing
                    continue
                caught.found.append((str(message), value))
        return original(actual, variants, otherwise, tolerance)

    return diagnose


def judged(check: Check, out: Outputs, caught: Caught | None = None) -> list[str]:
    """The names of the check's properties whose judge fails on ``out``, with diagnose recording into ``caught``."""
    original = framework.diagnose
    caught = caught if caught is not None else Caught(np.empty(0), [])
    failing = []
    for name, judge in check.properties:
        module_globals = getattr(judge, "__globals__", {})
        patches = [mock.patch.object(framework, "diagnose", catching(caught, original))]
        if module_globals.get("diagnose") is original:
            patches.append(mock.patch.dict(module_globals, {"diagnose": catching(caught, original)}))
        try:
            for patch in patches:
                patch.start()
            if judge(out) is not None:
                failing.append(name)
        except (framework.Unavailable, framework.Broken):
            continue
        except Exception:  # noqa: BLE001 - a judge that cannot read a made-up wrong result decides nothing here
            continue
        finally:
            for patch in reversed(patches):
                patch.stop()
    return failing


def made_wrong(value: np.ndarray, dtype: str) -> np.ndarray:
    """A result made wrong, its shape kept: a boolean flipped, a number moved."""
    if np.dtype(dtype).kind == "b":
        return np.logical_not(value.astype(bool)).astype(np.float64)
    return value + 0.5 + 0.25 * np.abs(value)


def with_result(results: list[Result], number: int, result: Result) -> list[Result]:
    changed = list(results)
    changed[number] = result
    return changed


# --- one check ---------------------------------------------------------------------------------------------------


def reference_of(check: Check, folder: Path, references: dict):
    if isinstance(check, Compared) and check.reference is not None:
        return check.reference
    return getattr(assignments.reference(folder), mutation.reference_name(check, references))


def distinct(value: np.ndarray, expected: np.ndarray) -> bool:
    """Whether a mistake's numbers differ from the reference's by more than float64's 1e-6 (else it is not seen)."""
    return value.shape != expected.shape or not framework.close(value, expected)


def rounded(value):
    """A float argument written with ROUNDED significant digits, so that the file's numbers are the inputs exactly."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        flat = [float(f"{number:.{ROUNDED}g}") for number in value.ravel().tolist()]
        return np.array(flat, dtype=value.dtype).reshape(value.shape)
    if isinstance(value, float):
        return float(f"{value:.{ROUNDED}g}")
    if isinstance(value, (list, tuple)):
        return type(value)(rounded(part) for part in value)
    return value


def written(value: np.ndarray) -> list:
    """An array of results as the file holds it: nested lists of numbers, every digit kept (a result near 1e6 must
    still compare within 1e-6)."""
    return value.tolist()


@dataclass
class Facts:
    """What one call shows: the properties a wrong result there makes fail, and the distinct mistakes named there."""

    decided: list
    mistakes: list  # [(item, message, float64 array)]


def facts_of(check: Check, calls: list[Call], results: list[Result], number: int) -> Facts:
    """The poisoning of call ``number``'s results, item by item, with every judge of the check run on each."""
    result, decided, mistakes = results[number], [], []
    for item, (value, returned) in enumerate(zip(result.values, result.returned)):
        dtype = returned["dtype"]
        as_float = tuple({**r, "dtype": "float64"} if i == item else r for i, r in enumerate(result.returned))
        wrong = made_wrong(value, dtype)
        caught = Caught(wrong, [])
        moved = Result(None, tuple(wrong if i == item else v for i, v in enumerate(result.values)), as_float)
        decided += judged(check, Outputs(calls, with_result(results, number, moved)), caught)
        longer = tuple(np.append(v.ravel(), 0.0) if i == item else v for i, v in enumerate(result.values))
        decided += judged(check, Outputs(calls, with_result(results, number, Result(None, longer, result.returned))))
        if np.dtype(dtype).kind == "b":  # the same numbers, not boolean
            floats = Result(None, result.values, as_float)
            decided += judged(check, Outputs(calls, with_result(results, number, floats)))
        for message, mistaken in caught.found:
            if not distinct(mistaken, value) or any(
                item == i and message == m and mistaken.shape == v.shape and np.array_equal(mistaken, v, equal_nan=True)
                for i, m, v in mistakes
            ):
                continue
            mistakes.append((item, message, mistaken))
    return Facts(decided, mistakes)


NOT_FINITE = {"-inf": np.isneginf, "inf": np.isposinf, "nan": np.isnan}


def classes(call: Call) -> set:
    """The input classes a call falls in: those of its declared sizes (autograder.coverage's: a size 1, odd or even;
    two sizes equal, the first smaller or larger; the kind of values) and, for any call, each float argument holding
    -inf, inf or NaN (a masked score)."""
    sizes = {k: v for k, v in call.drawn.items() if k not in ("cover", "kind") and isinstance(v, (int, np.integer))}
    found = {(name, "one" if size == 1 else "odd" if size % 2 else "even") for name, size in sizes.items()}
    names = sorted(sizes)
    found |= {(a, b, int(np.sign(sizes[a] - sizes[b]))) for i, a in enumerate(names) for b in names[i + 1 :]}
    if "kind" in call.drawn:
        found.add(("kind", str(call.drawn["kind"])))
    for position, value in enumerate((*call.args, *call.kwargs.values())):  # masked scores: -inf, inf, NaN
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            found |= {(position, word) for word, hit in NOT_FINITE.items() if hit(value).any()}
    return found


def chosen_calls(calls: list[Call], sizes: list, facts: dict) -> list[int]:
    """The public inputs among the candidates (``facts``' keys): of each role its smallest call (up to LARGEST
    numbers), then for each mistake the candidates name that those do not, the smallest candidate naming it, then
    small calls (MOST_NUMBERS numbers at most) that add input classes (``classes``) while one does, then more small
    calls of each role (up to PER_ROLE) while fewer than PER_CHECK."""
    candidates = sorted(facts, key=lambda n: (sizes[n], n))
    chosen = []
    for role in dict.fromkeys(calls[n].role for n in candidates):
        smallest = next(n for n in candidates if calls[n].role == role)
        if sizes[smallest] <= LARGEST:
            chosen.append(smallest)
    named = lambda numbers: {message for n in numbers for _, message, _ in facts[n].mistakes}  # noqa: E731
    for message in [m for n in candidates for _, m, _ in facts[n].mistakes]:
        if message not in named(chosen):
            chosen.append(next(n for n in candidates if message in named([n])))
    covered = set().union(*(classes(calls[n]) for n in chosen))
    while True:  # the size classes the check's cover designs (each size 1, odd, even; each pair equal, smaller, larger)
        new = [(len(classes(calls[n]) - covered), -sizes[n], n) for n in candidates if sizes[n] <= MOST_NUMBERS]
        gain, _, best = max(new, default=(0, 0, None))
        if gain == 0:
            break
        chosen.append(best)
        covered |= classes(calls[best])
    for n in candidates:
        if len(chosen) >= PER_CHECK:
            break
        same_role = sum(calls[c].role == calls[n].role for c in chosen)
        if n not in chosen and sizes[n] <= MOST_NUMBERS and same_role < PER_ROLE:
            chosen.append(n)
    return sorted(chosen)


def record_check(
    check: Check, folder: Path, references: dict, draws: list[list[Call]] | None = None, candidate: int | None = None
) -> dict:
    """One check's public facts: its public calls with the reference's results and each named mistake's, and the
    properties those calls decide. ``draws``: the draws of the check's calls to choose from (default: the public
    draws).

    The judges read every call of a call's draw, the chosen ones and the others alike (a judge may read a call by
    its role), the others with the reference's results. ``candidate``: the most numbers a call chosen from may hold
    (default: CANDIDATE for the public draws, no limit for draws given)."""
    limit = candidate if candidate is not None else CANDIDATE if draws is None else float("inf")
    draws = public_draws(check) if draws is None else draws
    drawn = [call for calls in draws for call in calls]
    starts = np.cumsum([0, *map(len, draws)])
    draw_of = [(int(starts[d]), int(starts[d + 1])) for d, calls in enumerate(draws) for _ in calls]
    sizes = [size_of(call) for call in drawn]
    calls = [
        dataclasses.replace(call, args=rounded(call.args), kwargs={k: rounded(v) for k, v in call.kwargs.items()})
        if size is not None and size <= limit
        else call
        for call, size in zip(drawn, sizes)
    ]
    reference = reference_of(check, folder, references)
    results = [
        mutation.called(reference, call) if call.drive is None else Result("not recorded: a driven call")
        for call in calls
    ]
    sizes = [  # the numbers a public call would put in the file: its arguments and its results
        None if size is None or result.error is not None else size + sum(int(v.size) for v in result.values)
        for size, result in zip(sizes, results)
    ]
    facts = {
        number: facts_of(
            check, calls[slice(*draw_of[number])], results[slice(*draw_of[number])], number - draw_of[number][0]
        )
        for number, size in enumerate(sizes)
        if size is not None and size <= limit
    }
    chosen = chosen_calls(calls, sizes, facts)
    home = {}  # {message: the smallest chosen call naming it}: its numbers are recorded there and on small calls
    for number in sorted(chosen, key=lambda n: (sizes[n], n)):
        for _, message, _ in facts[number].mistakes:
            home.setdefault(message, number)
    recorded = []
    for number in chosen:
        call, result = calls[number], results[number]
        recorded.append(
            {
                "about": describe_call(call),
                "role": call.role,
                "args": [encoded(arg) for arg in call.args],
                "kwargs": {key: encoded(value) for key, value in call.kwargs.items()},
                "expected": [
                    {"array": written(value), "dtype": returned["dtype"]}
                    for value, returned in zip(result.values, result.returned)
                ],
                "mistakes": [
                    {"item": item, "message": message, "array": written(value)}
                    for item, message, value in facts[number].mistakes
                    if home[message] == number or sizes[number] <= MOST_NUMBERS
                ],
            }
        )
    decided = {name for number in chosen for name in facts[number].decided}
    return {
        "function": check.function,
        "items": max([call.items for call in calls] or [1]),
        "calls": recorded,
        "properties": [name for name, _ in check.properties if name in decided],
        "named": sorted({message for fact in facts.values() for _, message, _ in fact.mistakes}),
    }


# --- where each graded function is written ---------------------------------------------------------------------

HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$", re.M)
DEFINES = re.compile(r"^def\s+([A-Za-z_]\w*)", re.M)


def cells_of(notebook) -> dict[str, str]:
    """{graded function: the heading its answer cell is written under ("Write rotate(x, base=10000.0)")}."""
    places, heading = {}, "the top of the notebook"
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            found = HEADING.findall(cell.source)
            if found:
                heading = found[-1].replace("`", "").strip()
            continue
        if cell.metadata.get("nbgrader", {}).get("solution"):
            for name in DEFINES.findall(cell.source):
                places.setdefault(name, heading)
    return places


# --- the assignment ------------------------------------------------------------------------------------------------


def record(folder: Path | str) -> dict:
    """The visible checks' facts of the assignment in ``folder`` (source/<assignment>/), as the file holds them."""
    folder = Path(folder)
    loaded = assignments.load(folder)
    layout = assignments.find(folder.parent, folder.name)
    notebook = nbformat.read(folder / f"{layout.notebook}.ipynb", as_version=4)
    places = cells_of(notebook)
    recorded = {}
    for check_id, check in loaded.checks.items():
        try:
            recorded[check_id] = record_check(check, folder, loaded.references)
        except (assignments.NoReference, AttributeError):  # no reference to record: the check stays hidden only
            continue
    functions = sorted({entry["function"] for entry in recorded.values()})
    return {
        "format": FORMAT,
        "assignment": layout.name,
        "tolerance": {"atol": ATOL, "single": SINGLE, "accepted": ACCEPTED},
        "functions": {
            name: {
                "cell": places.get(name, "this notebook"),
                "calls": [graded for graded in loaded.isolate.get(name, ()) if graded in functions],
            }
            for name in functions
        },
        "checks": recorded,
    }


def text_of(facts: dict) -> str:
    """The file's text: sorted keys, one line per call, so that a change of a check reads as a small diff."""
    return json.dumps(facts, sort_keys=True, separators=(",", ":")) + "\n"


def write(source: Path, assignment: str, release: Path | None = None) -> list[Path]:
    """Record the assignment's visible checks into source/<assignment>/visible_checks.json (and the release's)."""
    layout = assignments.find(Path(source), assignment)
    text = text_of(record(Path(source) / layout.name))
    written = [Path(source) / layout.name / FILE]
    if release is not None:
        written.append(Path(release) / layout.name / FILE)
    for path in written:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.visible", description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=Path("source"), help="the folder of assignments (source/)")
    parser.add_argument("--assignment", help="the assignment's name (default: the only one in --source)")
    parser.add_argument("--release", type=Path, help="also write the file into RELEASE/<assignment>/")
    options = parser.parse_args(argv)
    try:
        written = write(options.source, options.assignment, options.release)
    except (assignments.NoAssignment, assignments.NoChecks) as error:
        print(f"python -m autograder.visible: {error}", file=sys.stderr)
        return 2
    facts = json.loads(written[0].read_text(encoding="utf-8"))
    for check_id, entry in facts["checks"].items():
        mistakes = len({m["message"] for call in entry["calls"] for m in call["mistakes"]})
        print(
            f"{check_id}: {len(entry['calls'])} public inputs, {len(entry['properties'])} properties decided, "
            f"{mistakes} named mistakes recorded"
        )
    print("written: " + ", ".join(map(str, written)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
