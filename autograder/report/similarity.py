"""Similar submissions: every pair of students' answer code compared by winnowing (copydetect's fingerprints).

    from autograder.report.similarity import fingerprint, similar_pairs
    prints = [fingerprint(student, {"softmax": code, ...}, starter={"softmax": release_code, ...}) for ...]
    pairs = similar_pairs(prints)            # [Pair(a, b, score, ...)] above THRESHOLD, highest first

What is compared: the code of the answer cells only (nbgrader's solution cells, one per graded function), with

- the release's starter text taken out (a line equal to a line of the release's cell: the ``def`` line, the
  stub), docstrings and comments removed, blank lines and spacing ignored;
- names normalised: every name the student binds (parameters, variables, loop targets, helper functions) is
  written ``v`` (a helper's name ``f``), so renaming a variable changes nothing; attributes, keyword-argument
  names, NumPy's and Python's own names stay as they are, so ``np.einsum`` and ``np.where`` remain different.

The normalised text is fingerprinted as copydetect does (every K characters hashed, here by a hash that is the
same in every process; then copydetect's winnowing keeps the smallest of each WINDOW hashes, so any match of at
least K + WINDOW - 1 characters is seen) and two students' shared fingerprints are turned back, by copydetect's
copied slices, into the lines they cover. A pair's score is the larger of the two shares: the
part of one student's code that also appears in the other's (a student who copied a few answers and wrote
nothing else scores high). Submissions with less than MINIMUM_CHARACTERS of their own code (blank, or nearly)
are left out: a few lines of a short answer are the same for everyone.

Each student's code is also compared, in the same way, with the answer keys (``key_matches``): the assignment's
reference, ``source/<assignment>/reference.py`` (``reference_code``: every function it defines, never released,
never in the student wheel), the source notebook's solution, and lib's own source (``lib_code``: every function
of the course library students install, private ones too, whose model computes attention and rotary positions
inside its forward pass: a student who copies them from lib's source is copying an answer); a match is listed on
its own, with the key it matches, not among the pairs of students.

A flag is a reason to look at the two notebooks, not a verdict: short answers that can only be written one way
match by construction. The threshold was set on near-copies and on independently written solutions
(tests/autograder/report/test_similarity.py).
"""

from __future__ import annotations

import ast
import io
import keyword
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

K = 20  # characters of normalised code in one fingerprint (copydetect's noise threshold)
WINDOW = 8  # fingerprints winnowed per window: every shared stretch of K + WINDOW - 1 characters is seen
THRESHOLD = 0.6  # pairs at or above this score are listed
MINIMUM_CHARACTERS = 200  # of normalised own code, for a submission to be compared at all
REFERENCE = "(the reference)"  # the assignment's reference.py, compared with every student's as if a student's
LIB = "(lib's source)"  # every function of the course library the students install, compared the same way


@dataclass
class Fingerprint:
    """One student's answer code, normalised and fingerprinted."""

    student: str
    text: str  # the normalised code, every function one after the other
    origin: list  # for each character of text: (function, line number in that function's cell)
    code: dict  # {function: the cell's code as the student wrote it}
    hashes: set = field(default_factory=set)
    positions: dict = field(default_factory=dict)  # {hash: [positions in text]}
    kept: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # every kept hash, in text order
    starts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # where each begins
    coverage: float = 0.0  # characters of text covered by the kept fingerprints


@dataclass
class Pair:
    a: str
    b: str
    score: float  # the larger of the two shares
    shares: tuple  # (share of a's code found in b's, share of b's found in a's)
    lines: dict  # {"a": {function: [line numbers]}, "b": {...}}: the matching lines of each side ({} if not asked)


# --- normalising ------------------------------------------------------------------------------------------


def _bound_names(tree: ast.AST) -> tuple[set, set]:
    """(names the code binds: parameters, assigned names, loop and comprehension targets; functions it defines)."""
    names, functions = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            arguments = node.args
            for argument in [
                *arguments.posonlyargs,
                *arguments.args,
                *arguments.kwonlyargs,
                *filter(None, [arguments.vararg, arguments.kwarg]),
            ]:
                names.add(argument.arg)
            if not isinstance(node, ast.Lambda):
                functions.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, ast.ClassDef):
            functions.add(node.name)
    return names, functions


def _docstring_lines(tree: ast.AST) -> set:
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                lines.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return lines


SKIPPED_TOKENS = (
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENDMARKER,
    tokenize.ENCODING,
)


def words(code: str, skip_lines: set) -> list[tuple[str, int]]:
    """[(word, line)] of code that does not parse: a syntax error still leaves something to compare."""
    return [
        (word, number)
        for number, line in enumerate(code.splitlines(), start=1)
        if number not in skip_lines and not line.lstrip().startswith("#")
        for word in line.split()
    ]


def significant_tokens(code: str, skip: set) -> list:
    """Python's tokens of ``code`` without comments, layout and the lines in ``skip``."""
    raw = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type not in SKIPPED_TOKENS and token.start[0] not in skip:
                raw.append(token)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return raw


def is_argument_name(raw: list, index: int, depth: int, header: bool) -> bool:
    """The token at ``index`` names a keyword argument of a call (``f(x=1)``), not a variable."""
    return (
        depth > 0
        and not header
        and index + 1 < len(raw)
        and raw[index + 1].string == "="
        and index > 0
        and raw[index - 1].string in ("(", ",")
    )


def normalised_tokens(code: str, keep: set = frozenset(), skip_lines: set = frozenset()) -> list[tuple[str, int]]:
    """[(token, line)] of ``code`` with comments, docstrings and layout gone and the names it binds replaced:
    ``v`` for a variable or parameter, ``f`` for a function it defines (except the names in ``keep``: the
    graded functions, whose names are fixed). Lines in ``skip_lines`` are left out. Code that does not parse
    is split into words (a syntax error still leaves something to compare)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return words(code, skip_lines)
    names, functions = _bound_names(tree)
    raw = significant_tokens(code, set(skip_lines) | _docstring_lines(tree))
    tokens = []
    depth, header = 0, False  # header: inside a def line's parameters, where `name=` is a parameter, not a keyword
    for index, token in enumerate(raw):
        text, line = token.string, token.start[0]
        if text == "def":
            header = True
        elif header and text == ":" and depth == 0:
            header = False
        if token.type == tokenize.NEWLINE:
            if tokens and tokens[-1][0] != ";":
                tokens.append((";", line))
            continue
        if token.type == tokenize.OP:
            depth += text in "([{"
            depth -= text in ")]}"
        elif token.type == tokenize.STRING or token.type == getattr(tokenize, "FSTRING_START", -1):
            text = '"s"'
        elif token.type == tokenize.NAME and not keyword.iskeyword(text) and text not in keep:
            after_dot = index > 0 and raw[index - 1].string == "."
            if not after_dot and not is_argument_name(raw, index, depth, header):
                text = "f" if text in functions else "v" if text in names else text
        tokens.append((text, line))
    return tokens


def starter_lines(code: str, starter: str) -> set:
    """Line numbers of ``code`` whose text (stripped) is a line of the release's ``starter`` cell."""
    given = {line.strip() for line in starter.splitlines() if line.strip()}
    return {number for number, line in enumerate(code.splitlines(), start=1) if line.strip() in given}


def fingerprint(student: str, code: dict, starter: dict | None = None, keep: set | None = None) -> Fingerprint:
    """``code``: {function: the student's answer cell}, in the notebook's order; ``starter``: {function: the
    release's cell}; ``keep``: names left as they are (default: the functions' own names)."""
    starter = starter or {}
    keep = set(code) if keep is None else set(keep)
    pieces, origin = [], []
    for function, cell in code.items():
        tokens = normalised_tokens(cell, keep, starter_lines(cell, starter.get(function, "")))
        for text, line in tokens:
            pieces.append(text)
            origin.extend([(function, line)] * len(text))
    text = "".join(pieces)
    result = Fingerprint(student, text, origin, dict(code))
    if len(text) >= K:
        result.hashes, result.positions, result.coverage = winnowed(text)
        pairs = sorted((position, value) for value, places in result.positions.items() for position in places)
        result.starts = np.array([position for position, _ in pairs], dtype=np.int64)
        result.kept = np.array([value for _, value in pairs], dtype=np.int64)
    return result


def kgram_hashes(text: str) -> np.ndarray:
    """A hash of every K characters of ``text`` (a polynomial over the characters' code points, below 2**52).

    copydetect hashes k-grams with Python's hash(), which changes from one process to the next (hash
    randomisation), so the same class would get other scores on every run; these are the same everywhere."""
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    windows = np.lib.stride_tricks.sliding_window_view(codes, K)
    powers = np.array([pow(1_000_003, K - 1 - i, 1 << 64) for i in range(K)], dtype=np.uint64)
    with np.errstate(over="ignore"):
        mixed = (windows * powers).sum(axis=1, dtype=np.uint64)  # wraps modulo 2**64
    return (mixed >> np.uint64(12)).astype(np.int64)


def winnowed(text: str) -> tuple[set, dict, float]:
    """(fingerprints kept by copydetect's winnowing, {fingerprint: [positions]}, characters they cover)."""
    from copydetect.utils import get_token_coverage, winnow

    hashes, where = winnow(kgram_hashes(text), WINDOW, remove_duplicates=False)
    positions: dict = {}
    for value, position in zip(hashes.tolist(), where.tolist()):
        positions.setdefault(value, []).append(position)
    return set(positions), positions, float(get_token_coverage(positions, K, len(text)))


# --- comparing --------------------------------------------------------------------------------------------


def _slices(side: Fingerprint, shared: set) -> np.ndarray:
    """copydetect's copied slices of ``side``: [[starts], [ends]] of the stretches the shared fingerprints cover."""
    from copydetect.utils import get_copied_slices

    if not shared:
        return np.zeros((2, 0), dtype=int)
    starts = side.starts[np.isin(side.kept, np.fromiter(shared, dtype=np.int64, count=len(shared)))]
    return get_copied_slices(starts, K)


def _lines(side: Fingerprint, slices: np.ndarray) -> dict:
    """{function: sorted line numbers} that the slices touch."""
    lines: dict = {}
    for start, end in zip(slices[0], slices[1]):
        for position in range(int(start), min(int(end), len(side.origin))):
            function, line = side.origin[position]
            lines.setdefault(function, set()).add(line)
    return {function: sorted(numbers) for function, numbers in lines.items()}


def compare(a: Fingerprint, b: Fingerprint, lines: bool = True) -> Pair:
    """The pair's score and shares; the matching lines of both sides too unless ``lines`` is False."""
    if not lines and a.text == b.text and a.coverage:  # the same normalised code: all of it matches
        return Pair(a.student, b.student, 1.0, (1.0, 1.0), {})
    shared = a.hashes & b.hashes
    slices_a, slices_b = _slices(a, shared), _slices(b, shared)
    covered_a, covered_b = int(np.sum(slices_a[1] - slices_a[0])), int(np.sum(slices_b[1] - slices_b[0]))
    shares = (
        min(1.0, covered_a / a.coverage) if a.coverage else 0.0,
        min(1.0, covered_b / b.coverage) if b.coverage else 0.0,
    )
    found = {"a": _lines(a, slices_a), "b": _lines(b, slices_b)} if lines else {}
    return Pair(a.student, b.student, max(shares), shares, found)


def comparable(prints: list[Fingerprint]) -> list[Fingerprint]:
    return [p for p in prints if len(p.text) >= MINIMUM_CHARACTERS]


def all_pairs(prints: list[Fingerprint], floor: float = 0.0) -> list[Pair]:
    """Every pair of comparable students whose score is at least ``floor``, highest first (without their lines:
    ``compare`` the ones to show).

    A pair is measured in full only when the share of fingerprints they have in common could reach ``floor``
    (the shared fingerprints over the smaller side's): most pairs of a class cost one set intersection."""
    prints = comparable(prints)
    pairs = []
    for i, a in enumerate(prints):
        for b in prints[i + 1 :]:
            smaller = min(len(a.hashes), len(b.hashes)) or 1
            if floor > 0 and len(a.hashes & b.hashes) / smaller < floor * 0.5:
                continue
            pair = compare(a, b, lines=False)
            if pair.score >= floor:
                pairs.append(pair)
    pairs.sort(key=lambda pair: (-pair.score, pair.a, pair.b))
    return pairs


def similar_pairs(prints: list[Fingerprint], threshold: float = THRESHOLD) -> list[Pair]:
    """The pairs at or above ``threshold``, highest first."""
    return all_pairs(prints, floor=threshold)


# --- the answer keys --------------------------------------------------------------------------------------


def reference_code(path: Path) -> dict:
    """{function: its code} of every top-level function of an assignment's reference (``reference.py``, the answer
    key beside its checks), in the file's order; {} when there is no such file or it does not parse."""
    try:
        text = Path(path).read_text(encoding="utf-8")
        tree = ast.parse(text)
    except (OSError, SyntaxError, ValueError):
        return {}
    lines = text.splitlines(keepends=True)
    return {
        node.name: "".join(lines[node.lineno - 1 : node.end_lineno])
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }


def reference_key(path: Path, starter: dict) -> Fingerprint:
    """The fingerprint of an assignment's reference, made like a student's (``starter``: the release's answer
    cells, whose names are kept): its functions as one cell, so that a helper is written ``f`` where it is
    defined and where it is called, as in a student's cell that holds the helpers it calls."""
    code = reference_code(path)
    return fingerprint(REFERENCE, {REFERENCE: "\n\n".join(code.values())} if code else {}, starter, set(starter))


def key_matches(prints: dict, keys: list[Fingerprint], threshold: float = THRESHOLD) -> list[Pair]:
    """For each comparable student of ``prints`` ({student: Fingerprint}), the answer key of ``keys`` (fingerprints
    of a reference or a solution, made like a student's) that the student's code matches best, when its score is at
    or above ``threshold``: Pair(student, key's name), highest first."""
    found = []
    for student in sorted(prints):
        if not comparable([prints[student]]):
            continue
        scored = [compare(prints[student], key, lines=False) for key in keys if key.hashes]
        best = max(scored, key=lambda pair: pair.score, default=None)
        if best is not None and best.score >= threshold:
            found.append(best)
    return sorted(found, key=lambda pair: (-pair.score, pair.a))


def lib_code(folder: Path) -> dict:
    """{module.function: its code} of every function in the ``*.py`` files of ``folder`` (the course library),
    top-level functions and the methods of classes, in file order; a file that does not parse is left out."""
    found = {}
    for path in sorted(Path(folder).glob("*.py")):
        try:
            text = path.read_text(encoding="utf-8")
            tree = ast.parse(text)
        except (OSError, SyntaxError, ValueError):
            continue
        lines = text.splitlines(keepends=True)
        nodes = [(getattr(node, "name", ""), node) for node in tree.body]
        nodes += [
            (f"{node.name}.{member.name}", member)
            for node in tree.body
            if isinstance(node, ast.ClassDef)
            for member in node.body
            if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef))
        ]
        for name, node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found[f"{path.stem}.{name}"] = "".join(lines[node.lineno - 1 : node.end_lineno])
    return found


def lib_key(folder: Path, starter: dict) -> Fingerprint:
    """The fingerprint of the course library's source (``lib_code``), made as ``reference_key`` makes the
    reference's: every function in one cell."""
    code = lib_code(folder)
    return fingerprint(LIB, {LIB: "\n\n".join(code.values())} if code else {}, starter, set(starter))
