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

Every other outcome of grading a notebook is data too, defined here once:

- a named mistake: each failed property carries ``mistake``, a stable id: the known mistake's name when the judge
  named one (``Named``; checks.diagnose names each known wrong variant it matches), else ``<check>.<property>``;
  the report groups mistakes by it. A verdict stored before ids were (no ``mistake`` key) reads as
  ``<check>.<property>`` (``Verdict.mistakes``);
- how the student's kernel ended, when it did not simply finish (``KernelEnd``: a cell cut at its time limit, the
  notebook's wall-clock budget spent, the kernel exited, crashed on a signal, killed for memory or for starting too
  many processes), stored as a list in the autograded notebook's metadata (``notebook.metadata[KERNEL]``,
  ``read_kernel_ends``), written by autograder.notebook.kernel.SurvivingExecute;
- how the hidden checks' calls were cut short (``ChecksEnd``: a call that waited without computing, a cell's or
  call's CPU seconds, the hidden checks' CPU budget for the notebook, a crash with its signal, an exit with its
  status, ...), stored with each verdict it cost (``Verdict.end``) and listed by ``checks_ends``;
- how long the hidden checks took for the notebook, seconds by the clock from their start to their verdicts, stored in
  the autograded notebook's metadata (``notebook.metadata[CHECKS_SECONDS]``, ``read_checks_seconds``), written by
  autograder.notebook.autograde.ExternalVerdicts (the report's timing.csv reads it);
- why a notebook was graded as the blank release (``Blank``: the file is empty, not text, not a notebook, of an
  unknown format, or nbgrader could not grade it), carried by the worker's Outcome and stored in the ledger entry
  (``blank``; autograder.grading.ledger), never in the notebook, whose metadata is the student's.

Readers (the feedback page, the class's table, the report) read these values, never the sentences ``text()``
writes from them. A notebook autograded before kernel ends were stored has no ``KERNEL`` key:
``read_kernel_ends`` returns None for it (its kernel's ends are unknown; the next class run grades it again, since
the grader's files changed).
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


class Named(str):
    """A judge's message that names a known mistake: the text the student reads, and ``mistake``, its name (a few
    words joined by '-', stable while the mistake is the same, whatever numbers the text quotes).

        return Named("the output is weights @ keys: it is weights @ values", "output-uses-keys")
    """

    mistake: str

    def __new__(cls, text: str, mistake: str):
        if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", mistake or ""):
            raise ValueError(f"a mistake's name is lowercase words joined by '-', not {mistake!r}")
        named = super().__new__(cls, text)
        named.mistake = mistake
        return named

    def __reduce__(self):
        return Named, (str(self), self.mistake)


def named_after(message: str) -> str:
    """A name for a known mistake made from its message, once, where the message is written (checks.diagnose):
    the words before its first colon (the mistake; after it comes the fix), lowercase letters only, at most eight,
    joined by '-': "the weights match unscaled scores: divide by sqrt(d)" -> "the-weights-match-unscaled-scores".
    The numbers a message quotes are left out, so the name stays the same whatever the draw."""
    words = re.findall(r"[a-z]+", str(message).split(":", 1)[0].lower())
    return "-".join(words[:8]) or "unnamed"


def mistake_id(check: str, prop: str, message: str = "") -> str:
    """The stable id of a failed property: the name of the known mistake when ``message`` is Named (the same
    mistake in several checks is one), else ``<check>.<property>`` (this property failed, no mistake named)."""
    return getattr(message, "mistake", "") or f"{check}.{prop}"


@dataclass(frozen=True)
class Property:
    """One property a check judges: passed is True, False, or None (not available here: it does not count).

    mistake: the failure's stable id (mistake_id), "" when it did not fail or was stored before ids were."""

    name: str
    passed: bool | None
    message: str = ""
    mistake: str = ""

    def __post_init__(self):
        object.__setattr__(self, "message", str(self.message))  # the words alone: a Named's id is in ``mistake``

    @property
    def mark(self) -> str:
        return {True: "PASS", False: "FAIL", None: "n/a"}[self.passed]


@dataclass(frozen=True)
class Verdict:
    """The hidden checks' decision about one graded function.

    points, max_points: on the check's own scale (checks.py); the gradebook's cell may scale them (scaled()).
    failed_call: the call of the student's function that failed or hit a limit, as words ("" if none);
    cpu_seconds: CPU seconds the student's code used for this check's calls;
    limit: the kind of the first limit hit (``end.kind``), or "" when none was (a verdict stored before ``end``
      was may also hold "clock", the per-call wall-clock backstop of that time);
    seed: the seed the inputs were drawn from (grading again with it reproduces them);
    notes: sentences for the student that are not properties (a cell restored, an input array changed);
    end: how this check's calls were cut short (ChecksEnd, the first one), None when they were not: readers read
      this, never ``notes``' words.
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
    end: ChecksEnd | None = None

    @property
    def failed(self) -> list[Property]:
        return [p for p in self.properties if p.passed is False]

    @property
    def passed(self) -> bool:
        return self.points >= self.max_points

    def mistakes(self) -> list[tuple[str, Property]]:
        """(stable id, property) of each failed property, in order; a property stored without an id (a notebook
        graded before ids were stored) gets ``<check>.<property>``."""
        return [(p.mistake or mistake_id(self.check, p.name), p) for p in self.failed]

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
        value["end"] = None if self.end is None else self.end.to_dict()
        return value

    @classmethod
    def from_dict(cls, value: dict) -> Verdict:
        if not isinstance(value, dict) or value.get("format") != FORMAT:
            raise StaleVerdicts(
                "this notebook's verdicts were stored by another version of the autograder: grade the class again "
                "(python -m autograder.course --regrade)"
            )
        fields = {key: value[key] for key in cls.__dataclass_fields__ if key in value}
        fields["properties"] = tuple(Property(**p) for p in value.get("properties", []))  # "mistake" may be absent
        fields["notes"] = tuple(value.get("notes", ()))
        fields["end"] = ChecksEnd.from_dict(value.get("end"))  # absent in a verdict stored before ends were
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
            lines.append(self.reproduce())
        return "\n".join(lines)

    def reproduce(self) -> str:
        """How a student reproduces this verdict with what they have (the seed, and each failing call's inputs as
        the lines above describe them: their shapes and numbers), never with the grader's code, which they lack."""
        said = f"Graded outside your notebook on inputs drawn at grading time (seed {self.seed})."
        if self.failed:
            said += (
                f" To see a failure yourself, call {self.function} in your notebook on inputs like the ones named "
                "above: arrays of those shapes (np.random.default_rng(0).normal(size=shape) makes one) and the numbers"
                " shown."
            )
        return said + " The seed draws these very inputs again: quote it to your instructor, who can grade with it."


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


# --- how the hidden checks' calls were cut short ---------------------------------------------------------------

# ChecksEnd.kind, each once (autograder.answers.budget has the numbers):
IDLE = "idle"  # a cell or call waited ``limit`` s without computing (sleeping, blocked): its function is stuck
CALL = "call"  # a cell or call used more than its ``limit`` CPU seconds
CHECKS_CPU = "notebook"  # the hidden checks' CPU budget for the whole notebook (``limit`` s) was spent
CHECKS_CLOCK = "notebook time"  # the hidden checks' wall-clock backstop (``limit`` s) ran out (an overloaded machine)
CRASH = "crash"  # the runner crashed on a signal (``signal``: its name)
MEMORY_KILL = "memory"  # the runner was killed by SIGKILL from the system, most likely for its memory
OUTPUT = "output"  # the runner wrote too large a file (SIGXFSZ)
EXIT = "exit"  # the runner exited (``code``: its status): exit(), os._exit
START = "start"  # the runner did not start within ``limit`` s
RESTARTS = "restarts"  # the runner was started ``limit`` times, the most for one notebook
MESSAGE = "message"  # a forged or malformed message on the runner's pipe
STAND_IN = "stand-in"  # a stand-in or callback request past its bound
CALLBACKS = "callbacks"  # the functions passed as arguments were called more than ``limit`` times in one call
CHECKS_ENDS = (IDLE, CALL, CHECKS_CPU, CHECKS_CLOCK, CRASH, MEMORY_KILL, OUTPUT, EXIT, START, RESTARTS, MESSAGE,
               STAND_IN, CALLBACKS)  # fmt: skip
WHOLE = (CHECKS_CPU, CHECKS_CLOCK, RESTARTS, MESSAGE)  # the kinds that end every later call, not one function's
CRASH_CAUSES = {"SIGSEGV": "a segmentation fault", "SIGKILL": "killed: out of memory?", "SIGXCPU": "the CPU time limit",
                "SIGXFSZ": "it wrote too large a file"}  # fmt: skip


@dataclass(frozen=True)
class ChecksEnd:
    """How the hidden checks' calls were cut short: ``kind`` (one of CHECKS_ENDS), ``where`` (the function whose call
    was cut, or "answer cell N"; "" when nothing was running), with what it needs: ``limit`` (the seconds or count of
    the limit; for IDLE the seconds it waited), ``signal`` (its name), ``code`` (an exit status)."""

    kind: str
    where: str = ""
    limit: float | None = None
    signal: str = ""
    code: int | None = None

    def __post_init__(self):
        if self.kind not in CHECKS_ENDS:
            raise ValueError(f"a hidden checks' end is one of {', '.join(CHECKS_ENDS)}, not {self.kind!r}")

    @property
    def whole(self) -> bool:
        """Whether it ended the hidden checks of the whole notebook (every later call not made)."""
        return self.kind in WHOLE

    def what(self) -> str:
        """A few words for the class's table and the report: "stopped: attention waited 2 s without computing (...)"."""
        limit = f"{self.limit:g}" if self.limit is not None else "?"
        where = self.where or "the runner"
        cause = CRASH_CAUSES.get(self.signal, "")
        return {
            IDLE: f"stopped: {where} waited {limit} s without computing (sleep, input or a lock?)",
            CALL: f"stopped: {where} used more than its {limit} s of CPU time",
            CHECKS_CPU: f"stopped: the hidden checks used up their {limit} s of CPU time",
            CHECKS_CLOCK: f"stopped: the hidden checks ran past {limit} s by the clock",
            CRASH: f"{where} crashed ({self.signal}{': ' + cause if cause else ''})",
            MEMORY_KILL: f"{where} was killed ({self.signal or 'SIGKILL'}), most likely for its memory",
            OUTPUT: f"{where} wrote too large a file ({self.signal or 'SIGXFSZ'})",
            EXIT: f"{where} exited (exit {self.code})",
            START: f"the runner did not start within {limit} s",
            RESTARTS: f"stopped: the runner was restarted too many times ({limit})",
            MESSAGE: "stopped: a forged or malformed message on the runner's pipe",
            STAND_IN: f"stopped: {where} asked the grader for a value past its bound",
            CALLBACKS: f"stopped: {where} called the functions passed to it more than {limit} times",
        }[self.kind]

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, value) -> ChecksEnd | None:
        """The ChecksEnd a verdict stored; None for None. ValueError for anything else."""
        if value is None:
            return None
        if not isinstance(value, dict):
            raise ValueError(f"a hidden checks' end is stored as a mapping, not {type(value).__name__}")
        return cls(**{key: value[key] for key in cls.__dataclass_fields__ if key in value})


def checks_ends(verdicts) -> list[tuple[list[str], ChecksEnd]]:
    """([check, ...], end) of each distinct way the hidden checks were cut short, in the order of ``verdicts`` (a
    {check: Verdict} or a list of them): a crash of attention costs check_attention and check_masked_attention, one
    end with both checks."""
    listed: dict[ChecksEnd, list[str]] = {}
    for verdict in verdicts.values() if isinstance(verdicts, dict) else verdicts:
        if verdict.end is not None:
            listed.setdefault(verdict.end, []).append(verdict.check)
    return [(checks, end) for end, checks in listed.items()]


CHECKS_SECONDS = "autograder_checks_seconds"  # the autograded notebook's metadata key: the hidden checks' seconds


def read_checks_seconds(notebook) -> float | None:
    """The seconds by the clock the hidden checks took for an autograded notebook (an nbformat node or its dict
    form); None when they were not stored (graded before they were, or no check cell) or are no number of seconds."""
    stored = notebook.get("metadata", {}).get(CHECKS_SECONDS)
    if isinstance(stored, bool) or not isinstance(stored, (int, float)) or not 0 <= stored < float("inf"):
        return None
    return float(stored)


# --- the kernel's end and the blank notebook ------------------------------------------------------------------

KERNEL = "autograder_kernel"  # the autograded notebook's metadata key: [KernelEnd.to_dict(), ...]

# How a kernel's run ended early, each kind once (KernelEnd.kind):
CELL_TIME = "cell time"  # a cell ran past its wall-clock limit (limit: seconds): interrupted, the later cells ran
BUDGET = "notebook budget"  # the notebook's wall-clock budget (limit: seconds) was spent: this cell and later not run
EXITED = "exited"  # the kernel's process exited (code: its exit status): os._exit, sys.exit in a loop
SIGNAL = "signal"  # the kernel crashed on a signal (signal: its name, "SIGSEGV")
MEMORY = "memory"  # the kernel was killed for its memory (signal: "SIGKILL", from the system, not the grader)
PROCESSES = "processes"  # the grader stopped it: it ran more than ``limit`` processes (a fork bomb)
STUCK = "stuck"  # a cell cut at its limit (limit: seconds) went on running, ignoring the interrupt: no cell ran after
WAITED = "waited"  # the grader stopped it: a cell waited ``limit`` seconds without computing or printing (a sleep)
DIED = "died"  # the kernel stopped answering and how is not known
KERNEL_ENDS = (CELL_TIME, BUDGET, EXITED, SIGNAL, MEMORY, PROCESSES, STUCK, WAITED, DIED)
DEATHS = (EXITED, SIGNAL, MEMORY, PROCESSES, STUCK, WAITED, DIED)  # the kinds after which no cell ran


@dataclass(frozen=True)
class KernelEnd:
    """How the student's kernel ended one cell early: ``kind`` (one of KERNEL_ENDS), in the notebook's cell
    number ``cell`` (from 1), with what it needs: ``limit`` (the seconds of a time limit, the processes allowed),
    ``signal`` (its name), ``code`` (an exit status)."""

    kind: str
    cell: int
    limit: float | None = None
    signal: str = ""
    code: int | None = None

    def __post_init__(self):
        if self.kind not in KERNEL_ENDS:
            raise ValueError(f"a kernel's end is one of {', '.join(KERNEL_ENDS)}, not {self.kind!r}")

    @property
    def died(self) -> bool:
        return self.kind in DEATHS

    def text(self) -> str:
        """The sentence the student reads in the cell (and on the feedback page)."""
        limit = f"{self.limit:g}" if self.limit is not None else "?"
        return {
            CELL_TIME: f"this cell ran past its limit of {limit} s (wall clock) and was interrupted; the cells after "
            "it still ran",
            BUDGET: f"stopped after {limit} s, the notebook's budget (wall clock, for the whole notebook): this cell "
            "and the ones after it were not run",
            EXITED: f"the kernel exited (exit {self.code}) while running this cell: look in it for os._exit, exit() "
            "or sys.exit; the cells after it were not run",
            SIGNAL: f"the kernel crashed ({self.signal}) while running this cell; the cells after it were not run",
            MEMORY: f"the kernel was killed ({self.signal or 'SIGKILL'}), most likely for the memory it used, while "
            "running this cell: look in it for an allocation that exhausts memory; the cells after it were not run",
            PROCESSES: f"your code started more than {limit} processes (os.fork or subprocess in a loop?), so the "
            "kernel was stopped; the cells after it were not run",
            STUCK: f"this cell ran past its limit of {limit} s (wall clock) and went on after it was interrupted "
            "(does it catch KeyboardInterrupt, or a bare except, in a loop?); the cells after it were not run",
            WAITED: f"this cell waited {limit} s without computing or printing anything (time.sleep, input or a "
            "lock?), so the kernel was stopped; the cells after it were not run",
            DIED: "the kernel died while running this cell; the cells after it were not run",
        }[self.kind]

    def short(self) -> str:
        """A few words for the class's table: "cell 7: stopped after 45 s, the notebook's budget; later cells ..."."""
        return f"cell {self.cell}: {self.what()}"

    def what(self) -> str:
        """What happened, in a few words, without the cell (the report says the cell apart)."""
        limit = f"{self.limit:g}" if self.limit is not None else "?"
        return {
            CELL_TIME: f"timed out after {limit} s, the cell's limit, and was interrupted",
            BUDGET: f"stopped after {limit} s, the notebook's budget; later cells not run",
            EXITED: f"the kernel died (it exited, exit {self.code}); later cells not run",
            SIGNAL: f"the kernel died (crashed, {self.signal}); later cells not run",
            MEMORY: f"the kernel died (killed for memory, {self.signal or 'SIGKILL'}); later cells not run",
            PROCESSES: f"too many processes (more than {limit}): the kernel was stopped; later cells not run",
            STUCK: f"went on past its limit of {limit} s, ignoring the interrupt; later cells not run",
            WAITED: f"waited {limit} s without computing (sleep, input or a lock?): the kernel was stopped; later "
            "cells not run",
            DIED: "the kernel died; later cells not run",
        }[self.kind]

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, value: dict) -> KernelEnd:
        return cls(**value)  # a key it does not know is a TypeError: not a kernel end


def read_kernel_ends(notebook) -> list[KernelEnd] | None:
    """The kernel's ends stored in an autograded notebook (an nbformat node or its dict form), in order; [] when it
    ran to its end, None when the notebook was autograded before they were stored (or is not autograded).
    ValueError when what is stored is not a list of kernel ends."""
    stored = notebook.get("metadata", {}).get(KERNEL)
    if stored is None:
        return None
    if not isinstance(stored, list):
        raise ValueError(f"the notebook's {KERNEL} metadata is not a list of kernel ends")
    try:
        return [KernelEnd.from_dict(item) for item in stored]
    except (TypeError, AttributeError) as error:
        raise ValueError(f"a stored kernel end cannot be read ({error})") from None


# Why a notebook was graded as the blank release (Blank.kind):
EMPTY = "empty"  # the file is empty
NOT_TEXT = "not text"  # not UTF-8 (detail: the decoder's error)
NOT_NOTEBOOK = "not a notebook"  # not a notebook nbformat reads (detail: its error)
FORMAT_VERSION = "format"  # a notebook of a format version that cannot be converted to 4 (detail: the version)
UNGRADABLE = "nbgrader"  # nbgrader could not grade it (detail: its first error)
BLANK_KINDS = (EMPTY, NOT_TEXT, NOT_NOTEBOOK, FORMAT_VERSION, UNGRADABLE)


@dataclass(frozen=True)
class Blank:
    """Why a submission was graded as the blank release: ``kind`` (one of BLANK_KINDS) and ``detail`` (the error
    that says it, quoted; "" for an empty file)."""

    kind: str
    detail: str = ""

    def __post_init__(self):
        if self.kind not in BLANK_KINDS:
            raise ValueError(f"a blank notebook's reason is one of {', '.join(BLANK_KINDS)}, not {self.kind!r}")

    def text(self) -> str:
        """The reason in words: "the file is not a notebook: NotJSONError: ..."."""
        return {
            EMPTY: "the file is empty",
            NOT_TEXT: f"the file is not text (UTF-8): {self.detail}",
            NOT_NOTEBOOK: f"the file is not a notebook: {self.detail}",
            FORMAT_VERSION: f"it is a notebook of format version {self.detail}, which cannot be converted to version 4",
            UNGRADABLE: f"nbgrader could not grade it ({self.detail})",
        }[self.kind]

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, value) -> Blank | None:
        """The Blank stored in a ledger entry; None for None."""
        if value is None:
            return None
        if not isinstance(value, dict):
            raise ValueError(f"a blank notebook's reason is stored as a mapping, not {type(value).__name__}")
        return cls(**{key: value[key] for key in cls.__dataclass_fields__ if key in value})
