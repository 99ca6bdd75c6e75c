"""An assignment is a folder, found by name: its source notebook(s) and its hidden checks, ``checks.py``.

    checks = assignments.load(course / "source" / "attention")
    checks.checks["check_softmax"], checks.graded, checks.isolate, checks.stand_in("attention", "softmax")

``checks.py`` defines CHECKS ({grade id: autograder.checks.Check}), and optionally ISOLATE ({graded function:
the graded functions it may call while it is graded}), stand_in(graded, name) (what such a call computes,
in the grader's process) and forward_texts() (the texts, as token ids, that its notebook runs the store's model
on: the grader records their forward passes once per class, autograder.grading.forward) and WRONG_VERSIONS
({name: {"answers": {function: source}, "loses": {check id: points}}}: named wrong answers that
``python -m autograder.validate`` grades, each of which must lose the points it says).
It is the instructor's: nbgrader's CourseDirectory.ignore keeps it out of the release, and the student's process
never sees it. The engine holds no assignment's name.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

CHECKS_FILE = "checks.py"


@dataclass(frozen=True)
class AssignmentChecks:
    """One assignment's hidden checks, as its checks.py defines them."""

    name: str
    folder: Path
    checks: dict
    isolate: dict = field(default_factory=dict)
    stand_in: Callable | None = None
    forward_texts: Callable | None = None  # the texts its notebook runs the store's model on (the forward cache)
    wrong_versions: dict = field(default_factory=dict)  # WRONG_VERSIONS: named wrong answers (autograder.validate)

    @property
    def graded(self) -> tuple[str, ...]:
        """The graded functions, in the order of their first check."""
        return tuple(dict.fromkeys(check.function for check in self.checks.values()))


class NoChecks(FileNotFoundError):
    """The assignment's folder has no checks.py (or it defines no CHECKS)."""


_loaded: dict[tuple, AssignmentChecks] = {}


def load(folder: Path | str) -> AssignmentChecks:
    """The checks of the assignment in ``folder`` (loaded once per version of its checks.py)."""
    folder = Path(folder).resolve()
    path = folder / CHECKS_FILE
    if not path.is_file():
        raise NoChecks(
            f"{path} does not exist: an assignment's hidden checks live beside its source notebook, in "
            f"source/<assignment>/{CHECKS_FILE}"
        )
    data = path.read_bytes()
    key = (str(path), hashlib.sha256(data).hexdigest())
    if key not in _loaded:
        module_name = f"autograder_assignment_{folder.name}_{key[1][:12]}"
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module  # dataclasses and pickling look a module up by name
        spec.loader.exec_module(module)
        if not isinstance(getattr(module, "CHECKS", None), dict) or not module.CHECKS:
            raise NoChecks(f"{path} defines no CHECKS (a dict of grade id -> autograder.checks.Check)")
        _loaded[key] = AssignmentChecks(
            folder.name,
            folder,
            module.CHECKS,
            getattr(module, "ISOLATE", {}),
            getattr(module, "stand_in", None),
            getattr(module, "forward_texts", None),
            getattr(module, "WRONG_VERSIONS", {}),
        )
    return _loaded[key]


def names(source: Path) -> list[str]:
    """The assignments in a source folder: its subfolders holding a notebook and a checks.py."""
    if not source.is_dir():
        return []
    return sorted(
        folder.name
        for folder in source.iterdir()
        if folder.is_dir() and (folder / CHECKS_FILE).is_file() and any(folder.glob("*.ipynb"))
    )


def notebooks(folder: Path) -> list[str]:
    """The assignment's notebook names (without .ipynb), as nbgrader names them."""
    return sorted(path.stem for path in Path(folder).glob("*.ipynb"))


@dataclass(frozen=True)
class Layout:
    """An assignment's names as nbgrader lays it out: source/<name>/<notebook>.ipynb, and the same names under
    release/, submitted/<student>/, autograded/<student>/ and feedback/<student>/."""

    name: str
    notebook: str


class NoAssignment(LookupError):
    """The assignment asked for is not there (or several are, and none was named); the message says which are."""


def find(source: Path, name: str | None = None) -> Layout:
    """The assignment ``name`` in the folder ``source`` (None: the only one there), with its one notebook."""
    found = names(source)
    if name is None:
        if len(found) != 1:
            raise NoAssignment(
                f"{source} holds {len(found)} assignments ({', '.join(found) or 'none'}): name one with --assignment"
            )
        name = found[0]
    if name not in found:
        raise NoAssignment(
            f"no assignment {name!r} in {source} (a folder {name}/ with its notebook and its "
            f"{CHECKS_FILE}); there: {', '.join(found) or 'none'}"
        )
    notebook_names = notebooks(source / name)
    if len(notebook_names) != 1:
        raise NoAssignment(
            f"{source / name} holds {len(notebook_names)} notebooks ({', '.join(notebook_names)}): "
            "a class is graded one notebook per assignment"
        )
    return Layout(name, notebook_names[0])
