"""Every test that needs an optional extra (pyproject.toml's optional-dependencies: hub, browser, train) skips with
the reason where the extra is not installed, as after `make install` alone: read from the sources, without importing
them, so it holds on a machine with every extra too. A test module that imports, at its top, a module needing an
extra (directly, or through the repository's own modules, followed transitively) has a ``pytest.importorskip`` of
it first; a test or fixture that imports one in its body has one before the import. Helpers a test calls are the
calling test's business (conftest's playwright_or_skip)."""

from __future__ import annotations

import ast
import tomllib
from functools import cache
from pathlib import Path

from packaging.requirements import Requirement

REPOSITORY = Path(__file__).resolve().parents[2]
PACKAGES = ("lib", "autograder", "recordings")  # the repository's importable code; tests/ holds the tests' helpers


DEV = "dev"  # the developers' extra
IMPORTED_AS = {"jupyterhub_kubespawner": "kubespawner", "pyyaml": "yaml"}  # distributions imported by another name


def extras() -> dict[str, str]:
    """Each optional extra's top-level import name: the extra it comes with. Not the ``dev`` extra: the tests' own
    tools (pytest, ruff, the LTI platform), which ``make test`` installs before any test runs."""
    declared = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = {
        Requirement(line).name.replace("-", "_"): extra
        for extra, requirements in declared.items()
        if extra != DEV
        for line in requirements
    }
    return {IMPORTED_AS.get(name, name): extra for name, extra in names.items()}


def module_files() -> dict[str, Path]:
    """The repository's modules by dotted name, and the tests' helper modules (on pytest's pythonpath) by theirs."""
    found = {}
    for package in PACKAGES:
        for path in (REPOSITORY / package).rglob("*.py"):
            parts = path.relative_to(REPOSITORY).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    for path in (REPOSITORY / "tests").glob("*.py"):
        found[path.stem] = path
    return found


MODULES = module_files()
EXTRAS = extras()


def imported(node: ast.Import | ast.ImportFrom, *, module: str) -> list[str]:
    """The modules an import statement in ``module`` loads (a package's own modules and its parents included)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            package = module.split(".")
            package = package[: len(package) - node.level + (MODULES.get(module, Path()).stem == "__init__")]
            base = ".".join([*package, *([base] if base else [])])
        names = [base] + [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in MODULES]
    loaded = []
    for name in names:
        parts = name.split(".")
        loaded += [".".join(parts[: count + 1]) for count in range(len(parts))]
    return loaded


def top_level_imports(path: Path) -> list[ast.Import | ast.ImportFrom]:
    """The imports a module runs when it is imported: its body's own (not those under try, if or a function)."""
    body = ast.parse(path.read_text(), filename=str(path)).body
    return [node for node in body if isinstance(node, ast.Import | ast.ImportFrom)]


@cache
def imports_of(module: str) -> frozenset[str]:
    """The modules ``module``'s own top imports (none for a module outside the repository)."""
    if module not in MODULES:
        return frozenset()
    return frozenset(name for node in top_level_imports(MODULES[module]) for name in imported(node, module=module))


@cache
def needs(module: str) -> frozenset[str]:
    """The extras importing ``module`` needs: an extra's own package, or a repository module needing one, however
    far down (imports in a cycle, a package and its modules, are followed once)."""
    found, seen, waiting = set(), {module}, [module]
    while waiting:
        name = waiting.pop()
        if name.split(".")[0] in EXTRAS:
            found.add(EXTRAS[name.split(".")[0]])
        waiting += [further for further in imports_of(name) if further not in seen]
        seen.update(imports_of(name))
    return frozenset(found)


def importorskips(node: ast.AST) -> list[tuple[int, frozenset[str]]]:
    """Each ``pytest.importorskip(name, ...)`` call in ``node``: its line, and the extras it skips without."""
    return [
        (call.lineno, needs(call.args[0].value))
        for call in ast.walk(node)
        if isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "importorskip"
        and call.args
        and isinstance(call.args[0], ast.Constant)
    ]


def is_test_or_fixture(function: ast.FunctionDef) -> bool:
    fixture = any("fixture" in ast.unparse(decorator) for decorator in function.decorator_list)
    return function.name.startswith("test_") or fixture


def unguarded_imports(path: Path, *, where: str) -> list[str]:
    """Each import in the test module ``path`` (named ``where``) that needs an extra no importorskip before it
    skips without."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found, skipped = [], set()
    for node in tree.body:  # the module's top, in order
        if isinstance(node, ast.Import | ast.ImportFrom):
            for name in imported(node, module=path.stem):
                if missing := needs(name) - skipped:
                    found.append(f"{where}:{node.lineno}: {name} needs {sorted(missing)}, not skipped before it")
        elif not isinstance(node, ast.FunctionDef | ast.ClassDef):
            skipped = skipped.union(*(extras for _, extras in importorskips(node)))
    for function in ast.walk(tree):
        if not (isinstance(function, ast.FunctionDef) and is_test_or_fixture(function)):
            continue
        skips = importorskips(function)
        for node in ast.walk(function):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            before = skipped.union(*(extras for line, extras in skips if line < node.lineno))
            for name in imported(node, module=path.stem):
                if missing := needs(name) - before:
                    found.append(
                        f"{where}:{node.lineno}: {function.name} imports {name}, which needs {sorted(missing)}, "
                        "with no importorskip before it"
                    )
    return found


def test_the_developers_tools_are_an_extra_not_what_a_grader_installs():
    project = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())["project"]
    runtime = {Requirement(line).name for line in project["dependencies"]}
    tools = {Requirement(line).name for line in project["optional-dependencies"][DEV]}
    assert tools == {"pytest", "pytest-xdist", "ruff", "lti1p3platform"}
    assert runtime & tools == set()
    makefile = (REPOSITORY / "Makefile").read_text()
    assert "-e '.[dev]'" in makefile and "test: $(VENV)/.installed-dev" in makefile


def test_the_extras_are_read_from_pyproject():
    assert EXTRAS == {
        "torch": "train",
        "playwright": "browser",
        "jupyterhub": "hub",
        "kubernetes": "cluster",
        "kubespawner": "cluster",
        "yaml": "cluster",
        "dask_gateway": "cluster",
        "ngshare": "exchange",
    }


def test_the_modules_that_need_an_extra_are_found_through_the_repositorys_own_imports():
    assert needs("autograder.service.app") == {"hub"}  # it imports jupyterhub at its top
    assert needs("autograder.lms.lti.hub_login") == {"hub"}
    assert needs("recordings.transformer") == {"train"}
    assert needs("playwright.sync_api") == {"browser"}
    assert needs("autograder.verdicts") == set() and needs("lib") == set()  # the ground floor needs none


def test_an_unguarded_import_is_found(tmp_path):
    """The check itself: a module and a test that import the hub's side without skipping are both named."""
    probe = tmp_path / "test_probe.py"
    probe.write_text(
        "import pytest\n"
        "from autograder.lms.lti.hub_login import enable_if_configured\n\n"
        "def test_late():\n"
        "    from autograder.service.app import main\n\n"
        "def test_guarded():\n"
        "    pytest.importorskip('jupyterhub', reason='the hub')\n"
        "    from autograder.service.app import main\n"
    )
    found = unguarded_imports(probe, where="probe")
    assert [line.split(": ", 1)[0] for line in found] == ["probe:2", "probe:5"]
    assert "autograder.lms.lti.hub_login needs ['hub']" in found[0] and "test_late imports" in found[1]


def test_every_test_that_needs_an_extra_skips_without_it():
    tests = sorted((REPOSITORY / "tests").rglob("test_*.py"))
    found = [line for path in tests for line in unguarded_imports(path, where=str(path.relative_to(REPOSITORY)))]
    assert found == []
