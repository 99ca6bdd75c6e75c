"""Start a new assignment: ``python -m autograder.course.scaffold --source DIR --assignment NAME --functions f,g``.

    python -m autograder.course.scaffold --source source --assignment norms \\
        --functions "layer_norm(x, gain, bias, eps=1e-5), rms_norm(x, gain, eps=1e-5)"

makes ``DIR/NAME/`` with the three files an assignment is (autograder.assignments):

- ``NAME.ipynb``, the source notebook, each cell carrying nbgrader's metadata as the Create Assignment toolbar
  writes it (its cell id is its grade id): an introduction, a setup cell (``import numpy as np``), and per function
  a task (markdown), an answer cell (``### BEGIN SOLUTION`` / ``### END SOLUTION``) and a graded test cell
  ``check_<function>`` worth 1 point with room for visible asserts and an empty hidden-tests block;
- ``reference.py``, the answer key: each graded function written once, under its graded name;
- ``checks.py``, the hidden checks in the simple tier (autograder.checks.compare): how each function's inputs are
  drawn, and one compare(...) per function naming its test cell and its reference (``ref.<function>``, read with
  ``assignments.reference``). nbgrader's CourseDirectory.ignore keeps both files out of every release, the student
  wheel never holds them, and the process that runs a student's functions cannot reach them.

Every place to fill in holds the words TO FILL IN; ``python -m autograder.validate`` lists each one with its place
(``to-fill-in``) and grades nothing until none is left. A function given without parameters gets ``(x)``.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from autograder import assignments

FILL_IN = assignments.FILL_IN  # the marker of each place left to the instructor (autograder.validate reads it)
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")  # an assignment's name: a folder, a notebook, nbgrader's id
SPEC = re.compile(r"\s*([A-Za-z_]\w*)\s*(?:\((.*)\))?\s*", re.S)


class ScaffoldError(ValueError):
    """The scaffold cannot be made as asked; the message says what to change."""


@dataclass(frozen=True)
class Function:
    """A graded function to scaffold: its name and its parameters as written in a def."""

    name: str
    parameters: str

    @property
    def signature(self) -> str:
        return f"{self.name}({self.parameters})"

    @property
    def check_id(self) -> str:
        return f"check_{self.name}"


def split_top_level(text: str) -> list[str]:
    """``text`` cut at the commas outside parentheses: "f(x, y), g" -> ["f(x, y)", " g"]."""
    parts, depth, start = [], 0, 0
    for index, character in enumerate(text):
        depth += {"(": 1, ")": -1}.get(character, 0)
        if character == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return [part for part in parts if part.strip()]


def parse_functions(text: str) -> list[Function]:
    """The functions of ``--functions``: names, each optionally with its parameters ("f(x, eps=1e-5), g")."""
    functions = []
    for part in split_top_level(text):
        found = SPEC.fullmatch(part)
        if not found:
            raise ScaffoldError(f"{part.strip()!r} is not a function: write a name, or a name and its parameters, f(x)")
        name, parameters = found.group(1), (found.group(2) or "x").strip()
        try:
            ast.parse(f"def {name}({parameters}):\n    pass\n")
        except SyntaxError as error:
            raise ScaffoldError(f"{name}({parameters}) is not a valid def line: {error.msg}") from None
        functions.append(Function(name, parameters))
    if not functions:
        raise ScaffoldError("name at least one function to grade: --functions f,g")
    names = [function.name for function in functions]
    if len(set(names)) != len(names):
        raise ScaffoldError(f"a function is named twice in {', '.join(names)}: each graded function once")
    return functions


def flags(grade_id: str, *, solution=False, grade=False, locked=True, points=None) -> dict:
    """nbgrader's cell metadata, as its Create Assignment toolbar writes it (schema 3)."""
    nbgrader = {
        "grade": grade,
        "grade_id": grade_id,
        "locked": locked,
        "schema_version": 3,
        "solution": solution,
        "task": False,
    }
    if points is not None:
        nbgrader["points"] = points
    return {"nbgrader": nbgrader}


def markdown(grade_id: str, text: str):
    return new_markdown_cell(text, id=grade_id, metadata=flags(grade_id))


def code(grade_id: str, text: str, **options):
    return new_code_cell(text, id=grade_id, metadata=flags(grade_id, **options))


def answer_text(function: Function) -> str:
    return (
        f"def {function.signature}:\n"
        "    ### BEGIN SOLUTION\n"
        f'    raise NotImplementedError("{FILL_IN}: the solution of {function.name}")\n'
        "    ### END SOLUTION"
    )


def test_text(function: Function) -> str:
    return (
        f"# Asserts a student can run on a small example of {function.name} go here (optional: they help the student;\n"
        f"# the grade comes from checks.py, {function.check_id}, on inputs drawn at grading time).\n"
        "\n"
        "### BEGIN HIDDEN TESTS\n"
        f"# graded outside this kernel: checks.py, {function.check_id}\n"
        "### END HIDDEN TESTS"
    )


def notebook_for(assignment: str, functions: list[Function]):
    """The source notebook: an introduction, the setup cell, and a task, an answer and a test cell per function."""
    cells = [
        markdown("intro", f"# {assignment}\n\n{FILL_IN}: what this assignment teaches, and what students write."),
        code("setup", "import numpy as np"),
    ]
    for function in functions:
        cells += [
            markdown(
                f"{function.name}_task",
                f"### Write `{function.signature}`\n\n{FILL_IN}: what {function.name} receives and returns (shapes, "
                "types) and the rule it follows.",
            ),
            code(function.name, answer_text(function), solution=True, locked=False),
            code(function.check_id, test_text(function), grade=True, points=1),
        ]
    notebook = new_notebook(cells=cells)
    notebook.metadata.update(
        {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        }
    )
    return notebook


CHECKS_HEAD = '''"""The hidden checks of {assignment}: one compare(...) per graded function, against reference.py.

Made by python -m autograder.course.scaffold, in the simple tier of autograder.checks. Fill in each marked place;
this lists those left, then grades the assignment:
    python -m autograder.validate --source {source} --assignment {assignment}
docs/authoring.md says how; docs/checks-api.md lists what compare takes. This file is never released.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from autograder import assignments
from autograder.checks import Args, checks_by_id, compare

ref = assignments.reference(Path(__file__).parent)  # reference.py: the answer key, never released
'''

REFERENCE_HEAD = '''"""The reference of {assignment}, the answer key: each graded function written once, under its name.

Read by checks.py (``ref``), in the grader's process only; never released, never in the student wheel.
"""

from __future__ import annotations

import numpy as np
'''

REFERENCE = '''

def {signature}:
    """{fill_in}: a correct {name}, as the notebook's solution computes it."""
    raise NotImplementedError("{name}'s reference is not written yet")
'''

INPUTS = '''

def {name}_inputs(rng: np.random.Generator):
    """{fill_in}: how {name}'s arguments are drawn from rng (sizes, values), as a tuple or Args."""
    return Args(rng.normal(size=(int(rng.integers(2, 6)), int(rng.integers(2, 9)))))
'''

COMPARE = """    compare(
        "{check_id}",
        ref.{name},
        points=1,
        inputs={{"values": {name}_inputs}},  # {{property: how its inputs are drawn}}: one property each
        mistakes={{}},  # {{"what the student did wrong, and what to do": a function computing that mistake}}
    ),
"""


def reference_for(assignment: str, functions: list[Function]) -> str:
    """reference.py: a function to write per graded function, under its graded name."""
    text = REFERENCE_HEAD.format(assignment=assignment)
    for function in functions:
        text += REFERENCE.format(signature=function.signature, name=function.name, fill_in=FILL_IN)
    return text


def checks_for(assignment: str, functions: list[Function], source: Path) -> str:
    """checks.py in the simple tier: how the inputs are drawn, and CHECKS against reference.py."""
    text = CHECKS_HEAD.format(assignment=assignment, source=source)
    text += "\n\n# --- how each function's inputs are drawn at grading time " + "-" * 53 + "\n"
    for function in functions:
        text += INPUTS.format(name=function.name, fill_in=FILL_IN)
    text += "\n\nCHECKS = checks_by_id(\n"
    text += "".join(COMPARE.format(check_id=f.check_id, name=f.name) for f in functions)
    return text + ")\n"


def scaffold(source: Path, assignment: str, functions: list[Function]) -> Path:
    """Make ``source/assignment/`` (its notebook and checks.py); the folder made. ScaffoldError when the name is not
    one nbgrader accepts or the folder is there already (a scaffold never writes over an instructor's work)."""
    if not NAME.fullmatch(assignment):
        raise ScaffoldError(
            f"{assignment!r} cannot name an assignment: letters, digits, '_' and '-', starting with a letter"
        )
    folder = Path(source) / assignment
    if folder.exists():
        raise ScaffoldError(f"{folder} exists already: choose another name, or move it away first")
    folder.mkdir(parents=True)
    nbformat.write(notebook_for(assignment, functions), folder / f"{assignment}.ipynb")
    (folder / assignments.REFERENCE_FILE).write_text(reference_for(assignment, functions), encoding="utf-8")
    (folder / assignments.CHECKS_FILE).write_text(checks_for(assignment, functions, Path(source)), encoding="utf-8")
    return folder


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m autograder.course.scaffold",
        description="Make a new assignment's folder: its source notebook (nbgrader's cells and metadata) and its "
        "hidden checks (checks.py, the simple tier), with each place to fill in marked TO FILL IN.",
    )
    parser.add_argument("--source", type=Path, default=Path("source"), help="the folder of assignments (source/)")
    parser.add_argument("--assignment", required=True, help="the new assignment's name (its folder and notebook)")
    parser.add_argument(
        "--functions", required=True, help='the graded functions: "f,g" or with parameters "f(x, eps=1e-5), g(x)"'
    )
    options = parser.parse_args(argv)
    try:
        folder = scaffold(options.source, options.assignment, parse_functions(options.functions))
    except ScaffoldError as error:
        print(f"scaffold: {error}", file=sys.stderr)
        return 1
    print(
        f"made {folder}/{options.assignment}.ipynb, reference.py and checks.py. Fill in each place marked {FILL_IN}; "
        f"this lists them, then grades the assignment:\n"
        f"    python -m autograder.validate --source {options.source} --assignment {options.assignment}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
