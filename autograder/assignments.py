"""An assignment is a folder, found by name: its source notebook(s) and its hidden checks, ``checks.py`` or a
package ``checks/`` (its ``__init__.py`` defines what checks.py would, its modules import each other relatively:
``from .softmax import SOFTMAX``).

    checks = assignments.load(course / "source" / "attention")
    checks.checks["check_softmax"], checks.graded, checks.isolate, checks.stand_in("attention", "softmax")

``checks.py`` defines CHECKS ({grade id: autograder.checks.Check}), and optionally ISOLATE ({graded function:
the graded functions it may call while it is graded}), stand_in(graded, name) (what such a call computes,
in the grader's process) and forward_texts() (the texts, as token ids, that its notebook runs the store's model
on: the grader records their forward passes once per class, autograder.grading.forward), forward_probabilities()
(the (cases, heads zeroed) queries of lib.experiments.next_token_probability it runs, recorded the same way) and
WRONG_VERSIONS
({name: {"answers": {function: source}, "loses": {check id: points}}}: named wrong answers that
``python -m autograder.validate`` grades, each of which must lose the points it says), EQUIVALENT_MUTANTS ({a mutant's
key: why no input of the task tells it from the reference}: autograder.mutation), TASK_SIZES (the task's constants,
put in for computed sizes by those mutants) and REFERENCES ({graded function: the name of its reference, when not
its own}).
Beside it, ``reference.py`` holds the reference of each graded function, under the graded name (the answer key;
``reference(folder)`` loads it, and checks.py reads it that way). Both are the instructor's: nbgrader's
CourseDirectory.ignore keeps them out of the release, the student wheel holds neither, and the student's process
never sees them. The engine holds no assignment's name.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Callable

CHECKS_FILE = "checks.py"
CHECKS_PACKAGE = "checks"  # or a package of that name: checks/__init__.py and its modules, loaded the same way
REFERENCE_FILE = "reference.py"  # the graded functions' references, beside checks.py, never released
FILL_IN = "TO FILL IN"  # the marker of each place left to the instructor: the scaffold writes it, validate finds it


@dataclass(frozen=True)
class AssignmentChecks:
    """One assignment's hidden checks, as its checks.py defines them."""

    name: str
    folder: Path
    checks: dict
    isolate: dict = field(default_factory=dict)
    stand_in: Callable | None = None
    forward_texts: Callable | None = None  # the texts its notebook runs the store's model on (the forward cache)
    forward_probabilities: Callable | None = None  # the ablation queries its notebook runs (the forward cache too)
    wrong_versions: dict = field(default_factory=dict)  # WRONG_VERSIONS: named wrong answers (autograder.validate)
    equivalent_mutants: dict = field(default_factory=dict)  # EQUIVALENT_MUTANTS: {mutant's key: why} (validate)
    task_sizes: tuple = ()  # TASK_SIZES: the task's constants, which validate's mutants put in for computed sizes
    references: dict = field(default_factory=dict)  # REFERENCES: {graded function: its reference's name, if other}

    @property
    def graded(self) -> tuple[str, ...]:
        """The graded functions, in the order of their first check."""
        return tuple(dict.fromkeys(check.function for check in self.checks.values()))


class NoChecks(FileNotFoundError):
    """The assignment's folder has no checks.py (or it defines no CHECKS)."""


class NoReference(FileNotFoundError):
    """The assignment's folder has no reference.py."""


class ChecksMistake(ValueError):
    """checks.py imports but holds a mistake of its author's (``lineno``: its line, or None)."""

    def __init__(self, message: str, lineno: int | None = None):
        super().__init__(message)
        self.lineno = lineno


def line_of(path: Path, name: str) -> int | None:
    """The line of ``path`` that assigns ``name`` at its top level (None when none does)."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.startswith(f"{name} =") or line.startswith(f"{name}:"):
            return number
    return None


_loaded: dict[tuple, AssignmentChecks] = {}
_modules: dict[tuple, ModuleType] = {}


def checks_path(folder: Path | str) -> Path:
    """Where the assignment's checks are: ``checks.py``, else the package ``checks/`` when it has an __init__.py
    (``checks.py`` when neither is there, the name an error message gives)."""
    folder = Path(folder)
    package = folder / CHECKS_PACKAGE
    if not (folder / CHECKS_FILE).is_file() and (package / "__init__.py").is_file():
        return package
    return folder / CHECKS_FILE


def has_checks(folder: Path | str) -> bool:
    path = checks_path(folder)
    return path.is_dir() or path.is_file()


def checks_files(folder: Path | str) -> list[Path]:
    """The Python files of the assignment's checks: checks.py alone, or the package's __init__.py then its other
    modules in path order ([] when there are none)."""
    path = checks_path(folder)
    if path.is_dir():
        init = path / "__init__.py"
        return [init, *sorted(p for p in path.rglob("*.py") if p != init and "__pycache__" not in p.parts)]
    return [path] if path.is_file() else []


def checks_changed(folder: Path | str) -> int:
    """The latest modification time (ns) of the checks' files: a cache key that changes when any of them does."""
    return max((path.stat().st_mtime_ns for path in checks_files(folder)), default=0)


def in_checks(filename: str | Path, folder: Path | str) -> bool:
    """Whether a file (a traceback frame's) is one of the assignment's checks' files."""
    resolved = Path(filename).resolve()
    return any(resolved == path.resolve() for path in checks_files(folder))


def checks_line(folder: Path | str, *needles: str) -> tuple[Path, int] | None:
    """(file, line) of the first line of the checks' files holding the first needle found (in the order given)."""
    files = [(path, path.read_text(encoding="utf-8").splitlines()) for path in checks_files(folder)]
    for needle in needles:
        for path, lines in files:
            for number, line in enumerate(lines, start=1):
                if needle in line:
                    return path, number
    return None


def checks_text(folder: Path | str) -> str:
    """The checks' source, every file of it one after the other."""
    return "\n".join(path.read_text(encoding="utf-8") for path in checks_files(folder))


def _digest(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _module(path: Path, role: str) -> ModuleType:
    """The file ``path`` (or the package of which it is the __init__.py) as a module named after its folder, its
    role and its content, loaded once per version (a package's version: all of its files)."""
    package = path.name == "__init__.py"
    files = checks_files(path.parent.parent) if package else [path]
    key = (str(path), _digest(files))
    if key in _modules:
        return _modules[key]
    folder = path.parent.parent if package else path.parent
    module_name = f"autograder_assignment_{folder.name}_{role}{key[1][:12]}"
    locations = [str(path.parent)] if package else None
    spec = importlib.util.spec_from_file_location(module_name, path, submodule_search_locations=locations)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses and pickling look a module up by name; a package's modules too
    try:
        spec.loader.exec_module(module)
    except BaseException:
        for name in [name for name in sys.modules if name == module_name or name.startswith(module_name + ".")]:
            del sys.modules[name]
        raise
    _modules[key] = module
    return module


def reference(folder: Path | str) -> ModuleType:
    """The reference of the assignment in ``folder``: its ``reference.py``, loaded once per version.

    Where an assignment's answer key lives: beside checks.py, never released, never in the student wheel. Its
    checks.py reads it with ``assignments.reference(Path(__file__).parent)``."""
    path = Path(folder).resolve() / REFERENCE_FILE
    if not path.is_file():
        raise NoReference(
            f"{path} does not exist: an assignment's reference (each graded function written once, the answer "
            f"key) lives beside its checks, in source/<assignment>/{REFERENCE_FILE}"
        )
    return _module(path, "reference_")


def load(folder: Path | str) -> AssignmentChecks:
    """The checks of the assignment in ``folder`` (loaded once per version of its checks.py or checks/)."""
    folder = Path(folder).resolve()
    path = checks_path(folder)
    if not has_checks(folder):
        raise NoChecks(
            f"{path} does not exist: an assignment's hidden checks live beside its source notebook, in "
            f"source/<assignment>/{CHECKS_FILE} (or a package source/<assignment>/{CHECKS_PACKAGE}/)"
        )
    entry = path / "__init__.py" if path.is_dir() else path
    key = (str(path), _digest(checks_files(folder)))
    if key not in _loaded:
        module = _module(entry, "")
        if not isinstance(getattr(module, "CHECKS", None), dict) or not module.CHECKS:
            raise NoChecks(f"{path} defines no CHECKS (a dict of grade id -> autograder.checks.Check)")
        if getattr(module, "ISOLATE", None) and not callable(getattr(module, "stand_in", None)):
            raise ChecksMistake(  # else every isolated call fails, as if the student's: "not computed for you"
                f"{path} names ISOLATE but defines no function stand_in(graded, name): define it, returning what "
                "runs in place of the student's own function while another is graded (the reference's: "
                "return getattr(ref, name)), or remove ISOLATE",
                line_of(entry, "ISOLATE"),
            )
        _loaded[key] = AssignmentChecks(
            name=folder.name,
            folder=folder,
            checks=module.CHECKS,
            isolate=getattr(module, "ISOLATE", {}),
            stand_in=getattr(module, "stand_in", None),
            forward_texts=getattr(module, "forward_texts", None),
            forward_probabilities=getattr(module, "forward_probabilities", None),
            wrong_versions=getattr(module, "WRONG_VERSIONS", {}),
            equivalent_mutants=getattr(module, "EQUIVALENT_MUTANTS", {}),
            task_sizes=tuple(getattr(module, "TASK_SIZES", ())),
            references=getattr(module, "REFERENCES", {}),
        )
    return _loaded[key]


def names(source: Path) -> list[str]:
    """The assignments in a source folder: its subfolders holding a notebook and a checks.py (or checks/)."""
    if not source.is_dir():
        return []
    return sorted(
        folder.name
        for folder in source.iterdir()
        if folder.is_dir() and has_checks(folder) and any(folder.glob("*.ipynb"))
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
