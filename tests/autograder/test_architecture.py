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
    """The modules flat in autograder/ are the ground floor's and the authoring checks' (LAYERS), no other; every
    package's __init__ says its job and what it hands on."""
    engine = REPOSITORY / "autograder"
    flat = {path.stem for path in engine.glob("*.py") if path.stem != "__init__"}
    allowed = GROUND | {unit for unit in AUTHORING if not unit.endswith("/")}
    assert flat - allowed == set(), f"flat modules of no floor: {sorted(flat - allowed)}; move each into its package"
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


# The order of layers, ground floor first: a module may import its own layer and the layers below it, never one
# above (imports inside functions included). A unit is a flat module of autograder (its name) or a package of it
# (its name and a slash); lib is below the engine. The README's "Layers" list says the same, floor by floor.
GROUND = {
    "verdicts", "settings", "policy", "assignments", "files", "students", "term", "attempts",
    "checks", "coverage", "sandbox", "model", "timeouts",
}  # fmt: skip
AUTHORING = {"validate/", "mutation", "visible/"}
LAYERS = (
    ("the course's library", {"lib"}),
    ("the ground floor", GROUND),
    ("the hidden checks' runner", {"answers/"}),
    ("one notebook's chain", {"notebook/"}),
    ("the class engine", {"grading/"}),
    ("an assignment checked before grading", AUTHORING),
    ("the stages the commands call", {"exchange/", "lms/", "report/"}),
    ("the course command", {"course/"}),
    ("the course on a hub or a cluster", {"hub/", "cluster/"}),
    ("instant checks", {"service/"}),
)
FLOOR = {unit: number for number, (_, units) in enumerate(LAYERS) for unit in units}
# Only these of autograder may an assignment's checks.py import: the check API, the input classes, the store's
# model as the checks measure it, and the assignment loader (for reference()).
CHECK_API = {"autograder.checks", "autograder.coverage", "autograder.model", "autograder.assignments"}


def unit_of(module: str, known: dict) -> str:
    parts = module.split(".")
    if parts[0] == "lib":
        return "lib"
    if len(parts) == 1:
        return "autograder"  # the package's own __init__: REPOSITORY, below every floor
    top = ".".join(parts[:2])
    return parts[1] + "/" if known[top].name == "__init__.py" else parts[1]


def climbing_imports() -> list[str]:
    """Each import of ours that reaches a higher floor than its own, as 'path:line importer -> imported'."""
    known = modules()
    found = []
    for module, path in known.items():
        source = unit_of(module, known)
        for name, statement, _ in imports(module, path, known):
            while name and name not in known:
                name = name.rpartition(".")[0]
            if not name or name == module:
                continue
            target = unit_of(name, known)
            if target == "autograder" or target == source:
                continue
            if FLOOR[target] > FLOOR[source]:
                found.append(f"{path.relative_to(REPOSITORY)}:{statement.lineno} {module} -> {name}")
    return sorted(set(found))


def test_every_unit_of_the_engine_has_a_floor():
    known = modules()
    units = {unit_of(module, known) for module in known} - {"autograder"}
    assert units - set(FLOOR) == set(), "put the new module or package on its floor in LAYERS (and the README)"
    assert set(FLOOR) - units == set(), "LAYERS names a module or package that is not there"


def test_no_import_climbs_to_a_higher_floor():
    assert climbing_imports() == [], "move what both floors need down to the lower one, or the importer up"


def test_the_floor_keeper_sees_a_climb_inside_a_function(tmp_path, monkeypatch):
    """A climb hidden in a function body counts: imports() reports it, marked as inside."""
    path = tmp_path / "low.py"
    path.write_text("def late():\n    from autograder.service import app  # optional\n")
    found = imports("autograder.verdicts", path, {"autograder.service.app": path, "autograder.verdicts": path})
    assert [(name, inside) for name, _, inside in found] == [("autograder.service.app", True)]
    assert FLOOR["service/"] > FLOOR["verdicts"]


def test_the_readme_draws_the_same_floors():
    readme = (REPOSITORY / "README.md").read_text()
    drawn = readme[readme.index("The floors, ground first") : readme.index("## The store")]
    floors = [line for line in drawn.splitlines() if re.match(r"\d+\. ", line)]
    assert len(floors) == len(LAYERS), "one numbered line per floor of LAYERS in the README"
    for line, (_, units) in zip(floors, LAYERS, strict=True):
        named = set(re.findall(r"`([a-z_]+/?)`", line))
        assert named == units, f"README floor {line[:40]!r}: names {sorted(named)}, LAYERS {sorted(units)}"


def test_assignments_checks_import_only_the_check_api():
    """The course's assignments (source/) and the tests' (tests/assignments/, whose positions reads the course's own
    reference as its yardstick, by the repository's path: autograder.REPOSITORY, the one name more it may import)."""
    known = modules()
    allowed = {REPOSITORY / "source": CHECK_API, REPOSITORY / "tests" / "assignments": CHECK_API | {"autograder"}}
    beyond, seen = [], 0
    for folder, api in allowed.items():
        for path in sorted([*folder.glob("*/checks.py"), *folder.glob("*/checks/*.py")]):  # checks.py, or checks/
            seen += 1
            for name, statement, _ in imports("checks", path, known):
                while name and name not in known:
                    name = name.rpartition(".")[0]
                if name.startswith("autograder") and name not in api:
                    beyond.append(f"{path.relative_to(REPOSITORY)}:{statement.lineno} {name}")
    assert seen >= 4
    assert beyond == [], "an assignment's checks.py imports only " + ", ".join(sorted(CHECK_API))


# The course's settings are read by the commands (the course command and above, and a lower package's command
# line: its `command` or `__main__` module), once per run or service start, into one autograder.settings.Course
# handed to every stage; settings.py itself reads them for that value (and a LiveSettings again on change).
READS = {"read": {"CourseSettings", "Course"}, "course_db": None, "course_settings": None, "database_url": None}
# Stages below the commands that still read the settings themselves (issue 34): this list only shrinks; a new
# reader below the commands fails the test.
STILL_READING = {
    "autograder.grading.dispatch", "autograder.grading.gradebook",
    "autograder.lms.files", "autograder.lms.lti.passback", "autograder.lms.lti.tool", "autograder.report.course",
}  # fmt: skip


def settings_reads(path: Path) -> list[int]:
    """The lines of ``path`` that read the course's settings (a call named in READS)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if not isinstance(node, ast.Call):
            continue
        call = node.func
        if isinstance(call, ast.Attribute) and isinstance(call.value, ast.Name) and call.attr in READS:
            if READS[call.attr] is not None and call.value.id in READS[call.attr]:
                found.append(node.lineno)
        elif isinstance(call, ast.Name) and call.id in READS and READS[call.id] is None:
            found.append(node.lineno)
    return sorted(found)


def readers_below_the_commands() -> set[str]:
    known, below = modules(), set()
    for module, path in known.items():
        unit = unit_of(module, known)
        if unit in ("autograder", "lib", "settings") or FLOOR[unit] >= FLOOR["course/"]:
            continue
        if module.rpartition(".")[2] in ("command", "__main__"):
            continue
        if settings_reads(path):
            below.add(module)
    return below


def test_no_stage_below_the_commands_reads_the_courses_settings():
    below = readers_below_the_commands()
    assert below - STILL_READING == set(), "take the Course the command made (autograder.settings.Course) instead"
    assert STILL_READING - below == set(), "no longer reads the settings: take it off STILL_READING"


def test_the_reader_finder_sees_each_way_of_reading(tmp_path):
    path = tmp_path / "stage.py"
    path.write_text(
        "def a(course):\n    return CourseSettings.read(course).db\n"
        "def b(course):\n    return Course.read(course)\n"
        "def c(course):\n    return course_db(course)\n"
        "def d(course):\n    return other.read(course), Path.read_text(course)\n"
    )
    assert settings_reads(path) == [2, 4, 6]
