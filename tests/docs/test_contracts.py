"""docs/contracts.md, the page to read before touching code, names only modules, names and files that exist: a dotted
name of the engine or the library (``autograder.x.y``, ``lib.x``, or a module's own name then one of its names, such
as ``uploads.survey``) and a repository path in backticks."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
PAGE = REPOSITORY / "docs" / "contracts.md"
PACKAGES = ("autograder", "lib")
FILE_ENDINGS = {"py", "db", "json", "csv", "html", "ipynb", "txt", "md", "npz", "npy", "gz", "toml", "yaml", "sh"}
WRITTEN_LATER = {"data/wands/product.csv": "the real catalogue, written by python -m lib.store download"}


@functools.cache
def our_modules() -> dict[str, Path]:
    """{dotted module name: its file} for every module and package of autograder and lib."""
    found = {}
    for package in PACKAGES:
        for path in sorted((REPOSITORY / package).rglob("*.py")):
            parts = path.relative_to(REPOSITORY).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


@functools.cache
def top_level_names(path: Path) -> frozenset[str]:
    """What a module defines or imports at its top level (or inside a top-level if/try)."""
    names = set()

    def visit(body):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names.update(n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name))
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
            elif isinstance(node, (ast.If, ast.Try)):
                visit(node.body)
                visit(getattr(node, "orelse", []))
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    return frozenset(names)


@functools.cache
def class_member_names(path: Path) -> frozenset[str]:
    """The names the module's classes define (``settings.policy()`` may be a method called on a settings object)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return frozenset(
        member.name
        if not isinstance(member, (ast.Assign, ast.AnnAssign))
        else getattr(member.target, "id", "")
        if isinstance(member, ast.AnnAssign)
        else getattr(member.targets[0], "id", "")
        for node in tree.body
        if isinstance(node, ast.ClassDef)
        for member in node.body
        if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Assign, ast.AnnAssign))
    )


def defines(module: str, name: str) -> bool:
    """Whether ``module.name`` is a submodule of ours or a name the module defines."""
    return f"{module}.{name}" in our_modules() or name in top_level_names(our_modules()[module])


def full_name_problem(dotted: str) -> str | None:
    """None when ``autograder.x.y`` (or ``lib.x``) is a module of ours, or a module then one of its names."""
    parts = dotted.split(".")
    for length in range(len(parts), 0, -1):
        module = ".".join(parts[:length])
        if module in our_modules():
            if length == len(parts) or defines(module, parts[length]):
                return None
            return f"{dotted}: {module} has no {parts[length]}"
    return f"{dotted}: no such module"


def short_name_problem(dotted: str) -> str | None:
    """``uploads.survey``: when the first word is the last part of a module of ours, one such module defines the
    second (else the module was renamed or the name moved); other dotted words (``c.InstantChecks``) are not ours."""
    first, second = dotted.split(".")[:2]
    holders = [module for module in our_modules() if module.rpartition(".")[2] == first]
    if not holders or first in PACKAGES or second in FILE_ENDINGS:
        return None
    if any(defines(module, second) or second in class_member_names(our_modules()[module]) for module in holders):
        return None
    return f"{dotted}: no module named {first} ({', '.join(holders)}) has {second}"


def named_problems(text: str) -> list[str]:
    problems = []
    for match in re.finditer(r"(?<![\w./-])((?:autograder|lib)(?:\.[A-Za-z_]\w*)+)", text):
        problems.append(full_name_problem(match.group(1)))
    for span in re.findall(r"`([^`]+)`", text):
        for match in re.finditer(r"(?<![\w./-])([a-z_]\w*(?:\.[A-Za-z_]\w*)+)", span):
            if not match.group(1).startswith(PACKAGES):
                problems.append(short_name_problem(match.group(1)))
    return sorted({problem for problem in problems if problem})


def path_problems(text: str) -> list[str]:
    """Each path in backticks that starts in a folder of the repository and is not there (placeholders such as
    ``<assignment>`` or ``*`` are patterns, not paths)."""
    tops = {path.name for path in REPOSITORY.iterdir() if path.is_dir() and not path.name.startswith(".")}
    missing = []
    for span in re.findall(r"`([^`\s]+)`", text):
        path = span.split("::")[0].rstrip(",.:;")
        if "/" not in path or re.search(r"[<>*{}$]", path) or path.split("/")[0] not in tops:
            continue
        if not (REPOSITORY / path).exists() and path not in WRITTEN_LATER:
            missing.append(path)
    return sorted(set(missing))


def test_contracts_name_only_modules_and_names_that_exist():
    assert named_problems(PAGE.read_text(encoding="utf-8")) == []


def test_contracts_name_only_files_that_exist():
    assert path_problems(PAGE.read_text(encoding="utf-8")) == []


def test_the_name_checker_finds_a_stale_name():
    """A module that moved, a name that moved and a path that is gone are each found; the living ones are not."""
    stale = (
        "`autograder.course.assignments`, `run.no_such_step`, `course.prepare_course`, `autograder/course/students.py`"
    )
    assert named_problems(stale) == [
        "autograder.course.assignments: autograder.course has no assignments",
        "course.prepare_course: no module named course (autograder.course, autograder.report.course) has "
        "prepare_course",
        "run.no_such_step: no module named run (autograder.course.run) has no_such_step",
    ]
    assert path_problems(stale) == ["autograder/course/students.py"]
    living = (
        "`autograder.assignments.reference`, `uploads.survey`, `c.InstantChecks.due`, `checks.py`, `source/attention/`"
    )
    assert named_problems(living) == [] and path_problems(living) == []
