"""The shape of the code: no import cycles between the modules of autograder and lib, and no import inside a function
that hides one. An import inside a function is only for an optional extra or a heavy module some commands never
need, and says so in a comment on its line."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
PACKAGES = ("autograder", "lib")


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((REPOSITORY / package).rglob("*.py")):
            parts = path.relative_to(REPOSITORY).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(module: str, path: Path, known: dict) -> list[tuple[str, ast.stmt, bool]]:
    """(imported module of ours, the statement, whether it sits inside a function) for each import in ``path``."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []

    def visit(node, inside: bool):
        for child in ast.iter_child_nodes(node):
            nested = inside or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.Import):
                found.extend((alias.name, child, inside) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join(parts + ([child.module] if child.module else []))
                for alias in child.names:
                    found.append((f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base, child, inside))
            visit(child, nested)

    visit(ast.parse(path.read_text(), filename=str(path)), False)
    return [(name, statement, inside) for name, statement, inside in found if name.split(".")[0] in PACKAGES]


def graph() -> dict[str, set[str]]:
    known = modules()
    edges = {}
    for module, path in known.items():
        targets = set()
        for name, _, _ in imports(module, path, known):
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name and name != module and not module.startswith(name + "."):  # a package's own __init__ runs first
                targets.add(name)
        edges[module] = targets
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def connect(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            connect(node)
    return found


def test_no_import_cycles():
    assert cycles(graph()) == []


def test_the_cycle_finder_finds_a_cycle_hidden_inside_a_function():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_every_import_inside_a_function_says_why():
    known = modules()
    silent = []
    for module, path in known.items():
        lines = path.read_text().splitlines()
        for _, statement, inside in imports(module, path, known):
            said = any("#" in line for line in lines[statement.lineno - 1 : statement.end_lineno])
            if inside and not said:
                silent.append(f"{path.relative_to(REPOSITORY)}:{statement.lineno}")
    assert silent == [], "an import of ours inside a function without a comment saying why (or move it up)"


def test_the_readme_names_every_module_of_the_engine_in_its_package():
    """One hop from the README's layout to any module: the engine's table has a row per package, naming each of its
    modules, and a row for the few flat ones."""
    readme = (REPOSITORY / "README.md").read_text()
    table = readme[readme.index("The engine, stage by stage") : readme.index("## The store")]
    rows = {}
    for line in table.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if line.startswith("| `") or line.startswith("| (flat)"):
            rows[cells[0].strip("`/")] = set(re.findall(r"`([a-z_]+)/?`", cells[2]))
    engine = REPOSITORY / "autograder"
    unnamed = []
    for path in sorted(engine.rglob("*.py")):
        if path.stem in ("__init__", "__main__"):
            continue
        parts = path.relative_to(engine).parts
        row = "(flat)" if len(parts) == 1 else parts[0]
        if path.stem not in rows.get(row, set()):
            unnamed.append(str(path.relative_to(REPOSITORY)))
    assert unnamed == [], "add the module to its package's row of the README's engine table"


def test_the_engine_is_packages_by_stage_each_saying_its_job():
    """At most eight modules sit flat in autograder/; every package's __init__ says its job and what it hands on."""
    engine = REPOSITORY / "autograder"
    flat = sorted(path.stem for path in engine.glob("*.py") if path.stem != "__init__")
    assert len(flat) <= 8, f"{len(flat)} flat modules: {flat}; move the new one into its stage's package"
    for init in sorted(engine.rglob("__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        assert len(doc.split()) >= 12, f"{init.relative_to(REPOSITORY)}: say the package's job in its docstring"
        if init.parent.parent == engine:
            assert "hand" in doc.lower() or "read" in doc.lower(), f"{init}: say what the package hands on"


def test_tests_mirror_the_packages():
    """tests/autograder/<package>/test_<module>.py: no engine test sits outside its package's folder."""
    engine, tests = REPOSITORY / "autograder", REPOSITORY / "tests" / "autograder"
    flat = {f"test_{path.stem}.py" for path in engine.glob("*.py")} | {"test_architecture.py"}
    astray = sorted(path.name for path in tests.glob("test_*.py") if path.name not in flat)
    assert astray == [], "move these into tests/autograder/<package>/"
    packages = {path.name for path in engine.iterdir() if (path / "__init__.py").exists()}
    folders = {path.name for path in tests.iterdir() if path.is_dir() and path.name != "__pycache__"}
    assert folders <= packages, f"test folders without a package: {sorted(folders - packages)}"
