"""Hostile and broken submissions, built at test time from the bundled ones (examples/submissions).

Each case is a real notebook that a student could hand in: the full solution, or a bundled mistake, with one
hostile or broken change. ``Case.points`` are the points it must earn, written by hand: the points of the
notebook it starts from, less what the change costs (a check whose function is gone, wrong or refused).
Probes (reading, network, writing) make the student's own softmax wrong when they get through, so a leak in
the hidden checks' runner costs points, and they print what they saw, so a leak in the kernel shows in the
autograded notebook.

    cases = build(context)   # {student id: Case}, context: what the probes aim at (paths, a port)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell

REPOSITORY = Path(__file__).resolve().parent.parent
SUBMISSIONS = REPOSITORY / "examples" / "submissions"
EXPECTED = json.loads((REPOSITORY / "examples" / "expected.json").read_text())


@dataclass(frozen=True)
class Context:
    course: Path  # the course folder being graded (its gradebook and submissions are off limits)
    canary: Path  # a file the probes try to overwrite; its folder, where they try to add one
    port: int  # a TCP port on the grader's loopback where a listener counts connections


@dataclass
class Case:
    notebook: bytes
    points: dict  # {grade_id: points, or None for a written answer awaiting a grader}
    note: str = ""  # a phrase the class table's note must hold ("" for no note)
    feedback: tuple = ()  # phrases the student's feedback page must show
    output_has: tuple = ()  # phrases the autograded notebook must hold
    output_lacks: tuple = ()  # phrases it must not hold
    why: str = ""
    links: dict = field(default_factory=dict)  # symbolic links handed in beside the notebook: {name: target}


def points_of(student: str, **changes) -> dict:
    points = dict(EXPECTED["students"][student]["points"])
    for grade_id, value in changes.items():
        assert grade_id in points, grade_id
        points[grade_id] = value
    return points


def load(student: str):
    return nbformat.read(SUBMISSIONS / student / "attention" / "attention.ipynb", as_version=4)


def write(notebook) -> bytes:
    return nbformat.writes(notebook).encode("utf-8")


def index_of(notebook, grade_id: str) -> int:
    return next(
        i for i, cell in enumerate(notebook.cells) if cell.metadata.get("nbgrader", {}).get("grade_id") == grade_id
    )


def add_cell(notebook, after: str, source: str, cell_id: str):
    """A code cell of the student's own (no nbgrader metadata) after the cell ``after``."""
    cell = nbformat.v4.new_code_cell(source)
    cell.id = cell_id
    notebook.cells.insert(index_of(notebook, after) + 1, cell)
    return notebook


def append_to(notebook, grade_id: str, source: str):
    """Add ``source`` at the end of the cell ``grade_id`` (an answer cell: it runs in the kernel and in the runner)."""
    cell = notebook.cells[index_of(notebook, grade_id)]
    cell.source = cell.source.rstrip("\n") + "\n\n" + source
    return notebook


def quits_early(notebook):
    """A scratch cell after section 1's first check that ends the kernel (``os._exit``: IPython's ``exit()``
    only asks the front end, which nbclient ignores, so the kernel stops some cells later).

    For cases about the grade rather than the kernel's run, this keeps the suite short: the kernel stops
    after a few cells instead of running the model's sections for 15 s, and the hidden checks, which run
    outside it, grade every answer all the same. The class table then notes that the kernel died.
    """
    return add_cell(notebook, "check_softmax", "import os\nos._exit(0)   # done for today", "scratch-quit")


QUIT_EARLY = {
    "links_to_secrets",
    "sys_exit",
    "reflagged_cells",
    "memory_bomb",
    "huge_output",
    "deleted_cells",
    "duplicated_cells",
    "reordered_cells",
    "retyped_cells",
    "edited_locked_cells",
    "renamed_function",
    "syntax_error",
    "wrong_types",
    "nbformat_v3",
    "calls_reference",
    "reads_hidden_files",
    "opens_network",
    "writes_outside",
}


def leaky_softmax(probe: str) -> str:
    """A probe run when the cell runs, then softmax redefined to be wrong if the probe got anywhere."""
    return (
        f"{probe}\n\n_correct_softmax = softmax\n\n\n"
        "def softmax(scores):\n"
        "    weights = _correct_softmax(scores)\n"
        "    return weights * 0.5 if _LEAKS else weights\n"
    )


def reading_probe(context: Context) -> str:
    secrets = [
        REPOSITORY / "autograder" / "checks.py",
        REPOSITORY / "source" / "attention" / "attention.ipynb",
        REPOSITORY / "examples" / "submissions" / "full_solution" / "attention" / "attention.ipynb",
        REPOSITORY / ".git" / "HEAD",
        context.course / "gradebook.db",
        context.course / "submitted" / "full_solution" / "attention" / "attention.ipynb",
        Path.home() / ".bash_history",
        Path("/etc/shadow"),
    ]
    return (
        f"_SECRETS = {[str(path) for path in secrets]!r}\n"
        "_LEAKS = []\n"
        "for _path in _SECRETS:\n"
        "    try:\n"
        "        with open(_path, 'rb') as _handle:\n"
        "            _handle.read(16)\n"
        "        _LEAKS.append(_path)\n"
        "        print('RE' + 'AD', _path)   # spelled so that only a leak prints the word\n"
        "    except Exception as _error:\n"
        "        print('BLOCKED', type(_error).__name__)\n"
    )


def network_probe(context: Context) -> str:
    return (
        "import socket\n"
        f"_TARGETS = [('127.0.0.1', {context.port}), ('151.101.0.223', 443), ('pypi.org', 443)]\n"
        "_LEAKS = []\n"
        "for _host, _port in _TARGETS:\n"
        "    try:\n"
        "        socket.create_connection((_host, _port), timeout=3).close()\n"
        "        _LEAKS.append(_host)\n"
        "        print('CONNEC' + 'TED', _host, _port)\n"
        "    except Exception as _error:\n"
        "        print('BLOCKED', type(_error).__name__)\n"
    )


def writing_probe(context: Context) -> str:
    targets = [
        context.canary,
        context.canary.parent / "dropped-by-a-student.txt",
        context.course / "gradebook.db",
        context.course / "grades.csv",
        REPOSITORY / "dropped-by-a-student.txt",
    ]
    return (
        f"_TARGETS = {[str(path) for path in targets]!r}\n"
        "_LEAKS = []\n"
        "open('scratch-output.bin', 'wb').write(bytes(1000))   # its own folder: allowed, not kept\n"
        "for _path in _TARGETS:\n"
        "    try:\n"
        "        with open(_path, 'a') as _handle:\n"
        "            _handle.write('written by a student')\n"
        "        _LEAKS.append(_path)\n"
        "        print('WRO' + 'TE', _path)\n"
        "    except Exception as _error:\n"
        "        print('BLOCKED', type(_error).__name__)\n"
    )


ALWAYS_EQUAL = '''
class _AlwaysEqual(float):
    """Equal to everything, so a naive check passes."""
    def __new__(cls):
        return super().__new__(cls, 0.0)
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    __hash__ = float.__hash__
    def __array__(self, *args, **kwargs):
        raise TypeError("no array here")


def even_previous_weight(positions):
    return _AlwaysEqual()


def average_largest_weight(queries, keys, scaled=True):
    return float("nan")


_correct_description_positions = description_positions


def description_positions(ids, sep, end_id):
    return [int(i) for i in _correct_description_positions(ids, sep, end_id)]   # a list, right values
'''

PATCHES = """
import builtins
import numpy as np
np.allclose = lambda *args, **kwargs: True
np.isclose = lambda a, b, *args, **kwargs: np.ones(np.broadcast(np.asarray(a), np.asarray(b)).shape, dtype=bool)
np.testing.assert_allclose = lambda *args, **kwargs: None
np.array_equal = lambda *args, **kwargs: True
builtins.AssertionError = type("AssertionError", (Exception,), {})
try:
    import autograder.checks as _checks
    for _check in _checks.CHECKS.values():
        object.__setattr__(_check, "properties", ())
except Exception as _error:
    print("no checks to patch:", type(_error).__name__)
"""


# In the hidden checks' runner: a forged "step" on the grader's pipe each second, for ever (before the budget, each
# restarted the cell's clock); in the kernel there is no such pipe and nothing happens
FORGES_STEPS = """
import gc as _gc, time as _time
_pipe = next((o for o in _gc.get_objects() if type(o).__name__ == "Channel"), None)
while _pipe is not None:
    _pipe.send({"op": "step", "cell": 0})
    _time.sleep(1)
"""


# --- active content in outputs and markdown (tests/end_to_end/test_inert_pages.py opens the pages) --------------------

ATTACKER = "mallory"
PLANTED = "pwned.txt"  # what the contents API payload tries to write at the server's root (the course folder)
TITLE_PAYLOAD = "document.title = 'pwned'"

WRITE_THROUGH_API = (
    """
fetch('/api/contents/%s', {method: 'PUT', credentials: 'include',
  headers: {'Content-Type': 'application/json',
            'X-XSRFToken': (document.cookie.match(/_xsrf=([^;]+)/) || [])[1] || ''},
  body: JSON.stringify({type: 'file', format: 'text', content: 'written by a student'})})
"""
    % PLANTED
)

PAYLOADS = [  # (what is displayed, its argument)
    ("HTML", f"<script>window.pwned = 'script'; {TITLE_PAYLOAD}</script><b>bold output</b>"),
    ("HTML", f"<img src=x onerror=\"window.pwned = 'onerror'; {TITLE_PAYLOAD}\">"),
    ("Javascript", f"window.pwned = 'javascript'; {TITLE_PAYLOAD}"),
    ("HTML", f"<script>{WRITE_THROUGH_API}</script>"),
    ("SVG", '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40"><circle cx="20" cy="20" r="15"/></svg>'),
]
PAYLOAD_CELL = "from IPython.display import HTML, SVG, Javascript, display\n" + "".join(
    f"display({kind}({argument!r}))\n" for kind, argument in PAYLOADS
)
PLOT_CELL = """
import matplotlib.pyplot as plt
plt.plot([0, 1, 2], [2, 0, 1])
plt.title("a plot that must still show")
plt.show()
"""
PAYLOAD_MARKDOWN = f"""My answer, with **bold** kept.

<script>window.pwned = 'markdown'; {TITLE_PAYLOAD}</script>

<iframe src="javascript:parent.pwned = 'iframe'"></iframe>

<a id="jslink" href="javascript:window.pwned = 'link'">a link</a> and <img src=x onerror="window.pwned = 'md-img'">
"""


def is_read_only(cell) -> bool:
    flags = cell.metadata.get("nbgrader", {})
    return bool(flags.get("locked")) and not flags.get("grade") and not flags.get("solution")


def inert_attack() -> bytes:
    """The blank release with cells that plant active content (tests/end_to_end/test_inert_pages.py opens its pages)."""
    notebook = load("blank_release")
    read_only = [cell for cell in notebook.cells if cell.cell_type == "code" and is_read_only(cell)]
    for demo in read_only[1:]:  # the model's demonstrations (the setup cell kept): seconds of a kernel, no payload
        notebook.cells.remove(demo)
    cells = [new_code_cell(PAYLOAD_CELL), new_code_cell(PLOT_CELL), new_markdown_cell(PAYLOAD_MARKDOWN)]
    for number, cell in enumerate(cells):
        cell.id = f"attacker-{number}"
    notebook.cells[1:1] = cells  # near the top: the pages show them first
    return nbformat.writes(notebook).encode()


def build(context: Context) -> dict[str, Case]:
    """Every hostile or broken case, by student id."""
    cases: dict[str, Case] = {}
    full = points_of("full_solution")

    # --- the kernel: loops, memory, processes, exits, crashes, output ---------------------------------
    cases["memory_bomb"] = Case(
        write(
            add_cell(
                load("full_solution"),
                "setup",
                "import numpy as np\nhog = []\ntry:\n    while True:\n        hog.append(np.ones(2**27))   # 1 GiB more"
                " each time\nexcept MemoryError:\n    print('stopped by the memory limit after', len(hog),"
                " 'GiB')\ndel hog",
                "scratch-memory",
            )
        ),
        full,
        output_has=("stopped by the memory limit",),
        why="allocates until the kernel's memory limit stops it",
    )
    cases["fork_bomb"] = Case(
        write(
            add_cell(
                load("full_solution"),
                "setup",
                "import os, time\nwhile True:\n    os.fork()\n    time.sleep(0.05)",
                "scratch-fork",
            )
        ),
        full,
        note="too many processes",
        why="forks without end (doubling every 50 ms): the watchdog stops the kernel",
    )
    cases["sys_exit"] = Case(
        write(add_cell(load("full_solution"), "setup", "import sys\nsys.exit('giving up')", "scratch-sys-exit")),
        full,
        output_has=("SystemExit",),
        why="sys.exit: IPython catches it and the notebook goes on",
    )
    cases["segfault"] = Case(
        write(add_cell(load("full_solution"), "setup", "import ctypes\nctypes.string_at(0)", "scratch-segfault")),
        full,
        note="kernel died",
        why="reads address 0: the kernel segfaults",
    )
    cases["huge_output"] = Case(
        write(
            add_cell(
                load("full_solution"), "setup", "for _ in range(100):\n    print('x' * 1_000_000)", "scratch-output"
            )
        ),
        full,
        output_has=("[output cut",),
        why="prints 100 MB: the grader keeps 2 MB of it",
    )

    # --- the notebook's structure ---------------------------------------------------------------------
    notebook = load("full_solution")
    del notebook.cells[index_of(notebook, "check_causal_mask")]
    del notebook.cells[index_of(notebook, "s2_intro")]
    cases["deleted_cells"] = Case(
        write(notebook),
        full,
        output_has=("was missing from the submission",),
        why="deletes a test cell and a markdown cell: nbgrader puts the test cell back",
    )
    notebook = load("full_solution")
    at = index_of(notebook, "attention")
    notebook.cells.insert(at + 1, nbformat.from_dict(json.loads(json.dumps(notebook.cells[at]))))
    notebook.cells[at + 1].id = "attention-again"
    cases["duplicated_cells"] = Case(write(notebook), full, why="the attention answer cell twice, same grade id")
    notebook = load("full_solution")
    join = notebook.cells.pop(index_of(notebook, "join_heads"))
    notebook.cells.insert(index_of(notebook, "split_heads"), join)
    cases["reordered_cells"] = Case(write(notebook), full, why="join_heads's answer moved above split_heads's")
    notebook = load("full_solution")
    cell = notebook.cells[index_of(notebook, "check_join_heads")]
    notebook.cells[index_of(notebook, "check_join_heads")] = nbformat.v4.new_markdown_cell(
        cell.source, metadata=cell.metadata, id=cell.id
    )
    cases["retyped_cells"] = Case(write(notebook), full, why="a test cell turned into markdown: nbgrader turns it back")
    notebook = load("full_solution")
    notebook.cells[index_of(notebook, "check_softmax")].metadata.nbgrader["grade"] = False
    notebook.cells[index_of(notebook, "check_attention")].metadata.nbgrader["solution"] = True
    notebook.cells[index_of(notebook, "check_causal_mask")].metadata.nbgrader["points"] = 100
    notebook.cells[index_of(notebook, "softmax")].metadata.nbgrader["solution"] = False
    notebook.cells[index_of(notebook, "check_join_heads")].metadata.nbgrader["locked"] = False
    cases["reflagged_cells"] = Case(
        write(notebook),
        full,
        feedback=("it was restored from the assignment",),
        why=(
            "test cells re-flagged (grade off, solution on, 100 points, unlocked) and an answer "
            "cell no longer a solution: each restored from the source, the rest graded"
        ),
    )
    notebook = load("full_solution")
    notebook.cells[index_of(notebook, "check_softmax")].source = "print('all checks passed')"
    notebook.cells[index_of(notebook, "s1_tokens")].source += "\nqueries = queries * 0"
    cases["edited_locked_cells"] = Case(
        write(notebook),
        full,
        output_lacks=("all checks passed",),
        why="rewrites a test cell and a locked cell: nbgrader restores both",
    )
    cases["renamed_function"] = Case(
        write(
            append_to(
                load("full_solution"),
                "even_marker_weight",
                "even_markers_weight = even_marker_weight\ndel even_marker_weight",
            )
        ),
        points_of("full_solution", check_even_marker_weight=0),
        feedback=("no function named even_marker_weight",),
        why="even_marker_weight renamed even_markers_weight",
    )
    cases["syntax_error"] = Case(
        write(append_to(load("full_solution"), "safe_softmax", "def broken(:\n    pass")),
        points_of("full_solution", check_safe_softmax=0),
        feedback=("SyntaxError",),
        why="a syntax error in safe_softmax's cell",
    )
    cases["wrong_types"] = Case(
        write(append_to(load("full_solution"), "even_marker_weight", ALWAYS_EQUAL)),
        points_of("full_solution", check_even_previous_weight=0, check_average_largest_weight=0),
        why="an always-equal object, NaN, and a list of the right values (which is fine)",
    )
    cases["warnings_on_stderr"] = Case(
        write(
            append_to(
                load("full_solution"),
                "softmax",
                "import sys, warnings\n_quiet_softmax = softmax\n\n\ndef softmax(scores):\n"
                "    warnings.warn('large scores', RuntimeWarning)\n    print('debug: softmax', file=sys.stderr)\n"
                "    return _quiet_softmax(scores)\n",
            )
        ),
        full,
        why="warnings and prints on stderr in every call",
    )

    # --- files that are not the notebook -------------------------------------------------------------
    blank = points_of("blank_release")
    cases[ATTACKER] = Case(
        inert_attack(),
        blank,
        why="the blank release with scripts, event handlers, Javascript and raw HTML in outputs and markdown",
    )
    cases["not_json"] = Case(
        b"I could not get Jupyter to work, so here is my code:\ndef softmax(x): ...\n",
        blank,
        note="graded as blank",
        feedback=("could not be graded", "not a notebook"),
        why="not JSON",
    )
    cases["empty_file"] = Case(b"", blank, note="graded as blank", feedback=("the file is empty",), why="an empty file")
    cases["nbformat_v3"] = Case(
        nbformat.writes(nbformat.convert(quits_early(load("full_solution")), 3)).encode(),
        full,
        why="the full solution saved as an nbformat 3 notebook",
    )

    # --- the grade itself: patches and lib's reference ----------------------------------------------
    wrong = points_of("previous_token_off_by_one")
    notebook = append_to(load("previous_token_off_by_one"), "previous_token_weight", PATCHES)
    notebook.cells[index_of(notebook, "check_previous_token_weight")].source = "pass"
    cases["patches_numpy_assert_checks"] = Case(
        write(notebook),
        wrong,
        why=(
            "a wrong previous_token_weight that patches NumPy's comparisons, AssertionError and the checks, and empties"
            " its test cell"
        ),
    )
    cases["calls_reference"] = Case(
        write(
            append_to(
                load("full_solution"),
                "softmax",
                "def softmax(scores):\n    from lib.attention import softmax as reference\n    return"
                " reference(scores)\n",
            )
        ),
        # lib is absent where softmax is graded, so it fails; the store's model runs attention with the student's
        # own softmax, so check_masked_attention loses that one property of its five
        points_of("full_solution", check_softmax=0, check_masked_attention=3.2),
        feedback=("lib is not available where your functions are graded",),
        why="softmax returns lib's softmax",
    )

    cases["forges_runner_messages"] = Case(
        write(append_to(load("full_solution"), "softmax", FORGES_STEPS)),
        points_of("full_solution", **{grade_id: 0 for grade_id in full if grade_id.startswith("check_")}),
        feedback=("sent the grader a message it did not expect", "Grading of your answers stopped"),
        why="writes a forged step message to the hidden checks' pipe every second, without end",
    )

    # --- the sandbox: reading, the network, writing ---------------------------------------------------
    cases["reads_hidden_files"] = Case(
        write(append_to(load("full_solution"), "softmax", leaky_softmax(reading_probe(context)))),
        full,
        output_has=("BLOCKED",),
        output_lacks=("READ /",),
        why="reads the hidden checks, the solutions, other submissions, the gradebook, the home folder",
    )
    cases["opens_network"] = Case(
        write(append_to(load("full_solution"), "softmax", leaky_softmax(network_probe(context)))),
        full,
        output_has=("BLOCKED",),
        output_lacks=("CONNECTED",),
        why="connects to the grader's loopback and to the internet",
    )
    cases["writes_outside"] = Case(
        write(append_to(load("full_solution"), "softmax", leaky_softmax(writing_probe(context)))),
        full,
        output_has=("BLOCKED",),
        output_lacks=("WROTE /",),
        why="writes over a file outside its folder, into the course and into the repository",
    )
    cases["links_to_secrets"] = Case(
        write(load("full_solution")),
        full,
        links={"notes.txt": str(context.canary), "checks.py": str(REPOSITORY / "autograder" / "checks.py")},
        why="hands in symbolic links to the instructor's files beside the notebook: they are not followed",
    )

    for name in QUIT_EARLY - {"nbformat_v3"}:
        cases[name].notebook = write(quits_early(nbformat.reads(cases[name].notebook.decode(), as_version=4)))
    for name in QUIT_EARLY:
        cases[name].note = cases[name].note or "kernel died"
    return cases
