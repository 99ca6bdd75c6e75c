"""The environment's own nbgrader configuration: the answer key stays out of a release whatever a course's file does.

nbgrader reads ``nbgrader_config.py`` from Jupyter's configuration folders ({sys.prefix}/etc/jupyter among them) and
then from the course folder. When a file raises, nbgrader logs the error and carries on without that file: a course
whose nbgrader_config.py has a failing line of the instructor's (a typo below the generated lines, a name not
defined) would be released with nbgrader's defaults, which copy checks.py and reference.py beside the notebook.
The course's files stop nbgrader when the project's own lines cannot load (autograder.course.config); a failing
line of the instructor's is caught by nothing there. This file, in the environment that runs nbgrader, is loaded
first and holds the project's ignore list, so with the course's file gone the release still leaves them out.

    python -m autograder.course.guard                  # writes {sys.prefix}/etc/jupyter/nbgrader_config.py
    python -m autograder.course.guard --prefix .hub/venv

``make`` writes it into .venv and autograder.hub.runtime into .hub/venv. A file of that name that this module did
not write is never replaced: it is left as it is and the command says which line to add.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autograder.files import write_atomic
from autograder.notebook.pipeline import IGNORED

MARK = "# Written by autograder.course.guard"

GUARD = f'''{MARK}: written again by make and the hub's runtime; edits here are lost.
"""Loaded by every nbgrader command and Formgrader run from this environment, before a course folder's own
nbgrader_config.py. Should that file fail to load, nbgrader logs the error and carries on without it: this line
keeps each assignment's hidden checks (checks.py) and reference (reference.py) out of the release all the same.
A course's file that loads sets the same list (autograder_config.py) and anything it adds."""

c = get_config()  # noqa: F821 (nbgrader provides it)
c.CourseDirectory.ignore = {list(IGNORED)!r}
'''


def guard_path(prefix: Path) -> Path:
    return Path(prefix) / "etc" / "jupyter" / "nbgrader_config.py"


def write_guard(prefix: Path) -> str:
    """The guard written into the environment at ``prefix`` (its etc/jupyter); returns what was done, in words.
    A file there that this module did not write is kept as it is, and the words say which line it needs."""
    path = guard_path(prefix)
    if path.exists():
        text = path.read_text(encoding="utf-8", errors="replace")
        if not text.startswith(MARK):
            return (
                f"WARNING: {path} is not autograder's and was left as it is: add the line "
                f"c.CourseDirectory.ignore = {list(IGNORED)!r} to it, so that a course whose nbgrader_config.py "
                "fails to load never releases checks.py or reference.py"
            )
        if text == GUARD:
            return f"{path}: in place"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, GUARD)
    return f"{path} written: nbgrader run from {Path(prefix)} never releases checks.py or reference.py"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.course.guard", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--prefix", type=Path, default=Path(sys.prefix), help="the environment that runs nbgrader (default: this one)"
    )
    said = write_guard(parser.parse_args(argv).prefix.absolute())
    print(said, file=sys.stderr if said.startswith("WARNING") else sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
