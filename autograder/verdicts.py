"""A verdict is data: what the hidden checks decided about one graded function, produced once, read everywhere.

The hidden checks (autograder.answers.grading) make one ``Verdict`` per check. It is stored as JSON in the
metadata of the check's cell in the autograded notebook (``cell.metadata[KEY]``), and every reader takes it
from there or from ``Verdict.from_dict``: the feedback page, the instructor's report, checks.csv, the grading
service. Nobody parses the sentences that ``text`` writes.

    verdict = Verdict(check="check_softmax", function="softmax", points=1.0, max_points=2.0,
                      properties=(Property("shape", True), Property("values", False, "row 0 sums to 2.0")),
                      seed=7)
    cell.metadata[KEY] = verdict.to_dict()
    read_verdicts(notebook)["check_softmax"].failed[0].message   # 'row 0 sums to 2.0'

A notebook autograded before verdicts were stored (``FORMAT`` absent or older) has no such metadata:
``read_verdicts`` raises ``StaleVerdicts`` whose message says to grade the class again (``--regrade``).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

KEY = "autograder_verdict"  # a check cell's metadata key, in the autograded notebook
FORMAT = 1  # the version of the stored form; a reader refuses another one with StaleVerdicts
SAME = "the same failure as above"  # what text() writes for a message already said in the same verdict
QUOTED = 300  # characters a verdict quotes of a text the student's code wrote (an exception's message)
DIGITS = 3  # significant digits a quoted number keeps
NUMBER = re.compile(r"(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
PLACE = re.compile(r"\(answer cell \d+, line \d+(?:, in [\w<>.]+)?\)\s*$")  # answer_runner.describe_error's


def rounded_number(match: re.Match) -> str:
    token = match.group(0)
    if not any(mark in token for mark in ".eE") and len(token) <= 2 * DIGITS:
        return token  # a count, a shape, a line number
    try:
        value = f"{float(token):.{DIGITS}g}"
    except (ValueError, OverflowError):
        return token
    return value[1:] if token.startswith(".") and value.startswith("0.") else value


def quoted(text, most: int = QUOTED) -> str:
    """What a verdict may quote of a text the student's code wrote (an exception's message): its first line,
    at most ``most`` characters, every number with a fraction or an exponent (and every integer of more than six
    digits) rounded to DIGITS significant digits, so an input drawn at grading time is never shown whole; the
    place in the answers at its end ("(answer cell 3, line 7, in softmax)") is kept."""
    text = str(text)
    place = PLACE.search(text)
    body = text[: place.start()] if place else text
    lines = body.splitlines() or [""]
    line = NUMBER.sub(rounded_number, lines[0])
    if len(line) > most:
        line = line[: most - 1] + "…"
    if len(lines) > 1:
        line = line.rstrip() + " … "
    return line + place.group(0).rstrip() if place else line.rstrip()


class StaleVerdicts(ValueError):
    """The notebook was graded before verdicts were stored as data (or in another format)."""


@dataclass(frozen=True)
class Property:
    """One property a check judges: passed is True, False, or None (not available here: it does not count)."""

    name: str
    passed: bool | None
    message: str = ""

    @property
    def mark(self) -> str:
        return {True: "PASS", False: "FAIL", None: "n/a"}[self.passed]


@dataclass(frozen=True)
class Verdict:
    """The hidden checks' decision about one graded function.

    points, max_points: on the check's own scale (checks.py); the gradebook's cell may scale them (scaled()).
    failed_call: the call of the student's function that failed or hit a limit, as words ("" if none);
    cpu_seconds: CPU seconds the student's code used for this check's calls;
    limit: the first limit hit, or "" when none was: "call" (a cell's or call's CPU seconds), "clock" (its
      wall-clock backstop), "notebook" (the notebook's CPU seconds), "notebook time" (its wall-clock budget),
      "start", "memory", "output", "crash", "exit", "restarts", "message" (a malformed or forged message on
      the runner's pipe), "stand-in" (a stand-in request past its bound); autograder.answers.budget has the numbers;
    seed: the seed the inputs were drawn from (grading again with it reproduces them);
    notes: sentences for the student that are not properties (a cell restored, an input array changed).
    """

    check: str
    function: str
    points: float
    max_points: float
    properties: tuple[Property, ...]
    seed: int | None = None
    failed_call: str = ""
    cpu_seconds: float = 0.0
    limit: str = ""
    notes: tuple[str, ...] = field(default=())

    @property
    def failed(self) -> list[Property]:
        return [p for p in self.properties if p.passed is False]

    @property
    def passed(self) -> bool:
        return self.points >= self.max_points

    def scaled(self, cell_points: float) -> float:
        """The points on the gradebook cell's scale."""
        if self.max_points == cell_points or not self.max_points:
            return self.points
        return round(cell_points * self.points / self.max_points, 2)

    def to_dict(self) -> dict:
        value = asdict(self)
        value["format"] = FORMAT
        value["properties"] = [asdict(p) for p in self.properties]
        value["notes"] = list(self.notes)
        return value

    @classmethod
    def from_dict(cls, value: dict) -> Verdict:
        if not isinstance(value, dict) or value.get("format") != FORMAT:
            raise StaleVerdicts(
                "this notebook's verdicts were stored by another version of the autograder: grade the class again "
                "(python -m autograder.course --regrade)"
            )
        fields = {key: value[key] for key in cls.__dataclass_fields__ if key in value}
        fields["properties"] = tuple(Property(**p) for p in value.get("properties", []))
        fields["notes"] = tuple(value.get("notes", ()))
        return cls(**fields)

    def text(self) -> str:
        """The verdict in words, as the student reads it: a header line, then one line per property."""
        lines = [f"{self.check} ({self.function}): {self.points:g} / {self.max_points:g} points"]
        said = set()
        for p in self.properties:
            message = SAME if p.message and p.message in said else p.message
            said.add(p.message)
            lines.append(f"  {p.mark:<4} {p.name}" + (f": {message}" if message else ""))
        lines.extend(self.notes)
        if self.seed is not None:
            lines.append(
                f"Graded outside your notebook on inputs drawn at grading time (seed {self.seed}; grading again "
                f"with seed={self.seed}, autograder.answers.grading.grade_answers(checks, sources, seed={self.seed}), "
                "reproduces them)."
            )
        return "\n".join(lines)


def cell_verdict(cell) -> Verdict | None:
    """The verdict stored in one cell's metadata, or None when the cell holds none."""
    stored = cell.get("metadata", {}).get(KEY)
    return None if stored is None else Verdict.from_dict(stored)


def read_verdicts(notebook) -> dict[str, Verdict]:
    """{check: Verdict} of an autograded notebook (an nbformat node or its dict form).

    Only graded code cells are read (the cells nbgrader restores and the grader writes): a verdict a student
    planted in another cell's metadata is not one. Raises StaleVerdicts when the notebook has graded code
    cells but none holds a stored verdict: it was graded before verdicts were data, and the class must be
    graded again.
    """
    verdicts, graded = {}, False
    for cell in notebook.get("cells", []):
        flags = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") != "code" or not isinstance(flags, dict) or not flags.get("grade"):
            continue
        graded = True
        verdict = cell_verdict(cell)
        if verdict is not None:
            verdicts[verdict.check] = verdict
    if graded and not verdicts:
        raise StaleVerdicts(
            "this notebook was autograded before verdicts were stored as data: grade the class again "
            "(python -m autograder.course --regrade)"
        )
    return verdicts
