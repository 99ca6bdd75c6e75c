"""Mutants of an assignment's reference, made with the standard ``ast`` module and graded in the grader's process.

A check is as strong as the wrong functions it kills. ``python -m autograder.validate`` mutates each reference
function of ``reference.py`` the ways a function goes wrong only on some inputs, grades every mutant under many seeds
with the assignment's own checks, and reports each one that earns full points on any seed (``survivors``):

- axes: an axis number moved (``axis=-1`` -> ``-2``, ``mean(-1)`` -> ``mean(0)``), a swap of axes or a ``.T``
  left out;
- off by one: an integer one more or one less (in a range, a slice, a count), ``<`` for ``<=`` and back;
- a constant size: a computed size (``x.shape[-1]``, ``len(x)``, a name unpacked from ``.shape``) replaced by a
  constant of the model or of the task (coverage.MODEL_SIZES, and the task's sizes checks.py names);
- a dropped term or sign: ``a + b`` -> ``a``, ``a - b`` -> ``a + b``, ``a / b`` -> ``a``, ``-x`` -> ``x``,
  ``np.sqrt(x)`` -> ``x``;
- a branch: an ``if`` taken always or never (one that only raises on bad input is left alone);
- specialised to one shape: the reference's result made wrong (every number + 1) only when one size of the
  arguments is 1, odd or even, or when two sizes are equal, or one smaller than the other (the sizes the check's
  calls hold; sizes equal on every call are one size of the task).

Mutants are compiled in a copy of the reference module's namespace: a mutant calls the reference's other functions
as they are (as a graded function calls the grader's stand-ins). The calls are the checks' own, as drawn for each
seed (driven calls left out: they would run the store's model for every mutant); the results go through the
runner's own conversion and each check's judges, in this process: the reference is the instructor's code, so no
sandbox is needed, and a few hundred mutants take seconds, not a kernel each.

Why not mutmut or cosmic-ray: both rewrite files on disk and run a test command per mutant (mutmut 3 through
libcst and pytest, cosmic-ray through parso, a work database and a test runner), and their operators are the
generic ones (``+`` for ``-``, a number for another); the mutants a check must kill here are about sizes and axes
(a constant of the model for a computed size, an axis moved, a branch for one shape), made in memory and graded
with the checks' calls, not a test suite.

An instructor marks a mutant that no input of the task can tell from the reference in checks.py, with why:

    EQUIVALENT_MUTANTS = {"softmax: return np.divide(...) -> ...": "a row's total is never 0 but when fully masked"}
"""

from __future__ import annotations

import ast
import copy
import difflib
import itertools
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Callable

import numpy as np

from autograder.answers import runner as answer_runner
from autograder.checks import Broken, Call, Check, Outputs, Result, Unavailable, fresh, lazy
from autograder.coverage import MODEL_SIZES

AXIS_METHODS = {"sum", "mean", "max", "min", "argmax", "argmin", "std", "var", "cumsum", "prod", "all", "any"}
SIZE_CONDITIONS = ("= 1", "odd", "even")
PAIR_CONDITIONS = ("==", "<", ">")


@dataclass(frozen=True)
class Mutant:
    """One mutant of reference function ``function``: what changed (``key``, stable: the id EQUIVALENT_MUTANTS
    names), by which operator, its diff against the reference, and its source (compiled in the reference's
    namespace)."""

    function: str
    operator: str
    key: str
    diff: str
    source: str


# --- making mutants ------------------------------------------------------------------------------------------------


def reference_functions(path: Path) -> dict[str, ast.FunctionDef]:
    """{name: its FunctionDef} of the top-level functions of reference.py whose names do not start with _."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return {
        node.name: node for node in tree.body if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")
    }


def only_raises(node: ast.If) -> bool:
    """An ``if`` that only raises (a guard against bad input): always taken it always raises, never taken it is
    the same function on every input the task allows."""
    return all(isinstance(statement, ast.Raise) for statement in node.body) and not node.orelse


def skipped(node: ast.AST) -> bool:
    """Nodes whose insides are not mutated: raising and asserting, messages, docstrings, guards."""
    return isinstance(node, (ast.Raise, ast.Assert, ast.JoinedStr)) or (isinstance(node, ast.If) and only_raises(node))


def in_order(function: ast.FunctionDef) -> list[ast.AST]:
    """The function's nodes in the order NodeTransformer visits them (pre-order), the skipped ones' insides left
    out, the docstring too."""
    found = []

    def visit(node):
        if skipped(node):
            return
        found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    body = function.body[1:] if ast.get_docstring(function) is not None else function.body
    found.append(function)
    for statement in body:
        visit(statement)
    return found


class Replace(ast.NodeTransformer):
    """Replace the node at ``target`` (its index in in_order) with ``new`` (a node, or a list of statements)."""

    def __init__(self, order: list[ast.AST], target: int, new):
        self.node, self.new = order[target], new

    def visit(self, node):
        if node is self.node:
            return self.new
        return self.generic_visit(node)


def constant(value) -> ast.Constant:
    return ast.Constant(value=value)


def is_np(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == name and isinstance(node.value, ast.Name)


def axis_position(node: ast.Constant, parents: dict) -> bool:
    """Whether an integer constant names an axis: axis=..., or an argument of .sum(-1), np.swapaxes(x, -1, -2)."""
    parent = parents.get(id(node))
    if isinstance(parent, ast.UnaryOp):  # -1 is USub(1)
        node, parent = parent, parents.get(id(parent))
    if isinstance(parent, ast.keyword):
        return parent.arg == "axis"
    if isinstance(parent, ast.Call) and node in parent.args:
        function = parent.func
        return isinstance(function, ast.Attribute) and (function.attr in AXIS_METHODS or function.attr == "swapaxes")
    return False


def replacements(node: ast.AST, parents: dict, sizes: tuple) -> list[tuple[str, object]]:
    """(operator, replacement) for one node: what each operator makes of it."""
    made = []
    if isinstance(node, ast.Constant) and type(node.value) is int:
        operator = "axes" if axis_position(node, parents) else "off by one"
        made += [(operator, constant(node.value + step)) for step in (1, -1)]
    elif isinstance(node, ast.Compare) and len(node.ops) == 1:
        swap = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}
        if type(node.ops[0]) in swap:
            made.append(("off by one", ast.Compare(node.left, [swap[type(node.ops[0])]()], node.comparators)))
    elif isinstance(node, ast.BinOp) and not isinstance(node.op, (ast.MatMult, ast.Mod, ast.BitAnd, ast.BitOr)):
        made.append(("dropped term", node.left))
        if isinstance(node.op, (ast.Add, ast.Mult)):
            made.append(("dropped term", node.right))
        if isinstance(node.op, ast.Sub):
            made.append(("dropped sign", ast.BinOp(node.left, ast.Add(), node.right)))
        if isinstance(node.op, ast.Add):
            made.append(("dropped sign", ast.BinOp(node.left, ast.Sub(), node.right)))
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Not)):
        made.append(("axes" if axis_position(node, parents) else "dropped sign", node.operand))
    elif isinstance(node, ast.Attribute) and node.attr == "T":
        made.append(("axes", node.value))
    elif isinstance(node, ast.Call):
        if is_np(node.func, "swapaxes") and node.args:
            made.append(("axes", node.args[0]))
        if is_np(node.func, "sqrt") and len(node.args) == 1:
            made.append(("dropped term", node.args[0]))
        if isinstance(node.func, ast.Name) and node.func.id == "len":
            made += [("constant size", constant(size)) for size in sizes]
    elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape":
        made += [("constant size", constant(size)) for size in sizes]
    elif isinstance(node, ast.If):
        made += [("branch", ast.If(constant(taken), node.body, node.orelse)) for taken in (True, False)]
    elif isinstance(node, ast.IfExp):
        made += [("branch", node.body), ("branch", node.orelse)]
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape":
        names = [target.id for target in ast.walk(node.targets[0]) if isinstance(target, ast.Name)]
        for name, size in itertools.product(names, sizes):
            made.append(("constant size", [node, ast.Assign([ast.Name(name, ast.Store())], constant(size))]))
    return made


def changed_lines(before: str, after: str) -> tuple[list[str], list[str]]:
    lines = list(difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0))[2:]
    removed = [line[1:].strip() for line in lines if line.startswith("-")]
    added = [line[1:].strip() for line in lines if line.startswith("+")]
    return removed, added


def diff_of(before: str, after: str, name: str) -> str:
    return "\n".join(
        difflib.unified_diff(
            before.splitlines(), after.splitlines(), f"reference {name}", f"mutant {name}", lineterm="", n=1
        )
    )


def syntax_mutants(name: str, function: ast.FunctionDef, sizes: tuple) -> list[Mutant]:
    """The mutants of one reference function made by each operator but the shape-specialised one."""
    original = ast.unparse(function)
    order = in_order(function)
    parents = {id(child): node for node in order for child in ast.iter_child_nodes(node)}
    made, seen = [], {original}
    for index, node in enumerate(order):
        for operator, new in replacements(node, parents, sizes):
            tree = copy.deepcopy(function)  # the replacement, deep-copied too, shares no node with it
            fresh_new = [copy.deepcopy(v) for v in new] if isinstance(new, list) else copy.deepcopy(new)
            replaced = Replace(in_order(tree), index, fresh_new).visit(tree)
            ast.fix_missing_locations(replaced)
            source = ast.unparse(replaced)
            if source in seen:
                continue
            seen.add(source)
            removed, added = changed_lines(original, source)
            key = f"{name}: {' / '.join(removed)} -> {' / '.join(added)}"
            made.append(Mutant(name, operator, key, diff_of(original, source, name), source))
    return made


def argument_names(function: ast.FunctionDef) -> list[str]:
    return [argument.arg for argument in (*function.args.posonlyargs, *function.args.args)]


def shape_sizes(names: list[str], calls: list[Call]) -> tuple[list[tuple[str, str]], list[str]]:
    """([(label, expression)] of the sizes the calls hold: an int argument, an array's last two axes; one of each
    group of sizes equal on every call (one size of the task, such as the d of queries and keys), and a line per
    group naming the sizes taken as one)."""
    found, values = [], []
    for position, parameter in enumerate(names):
        shown = [call.args[position] for call in calls if len(call.args) > position]
        if shown and all(type(value) is int for value in shown):
            found.append((parameter, f"__size__({parameter}, None)"))
            values.append(tuple(shown))
        elif shown and all(isinstance(value, (np.ndarray, list)) for value in shown):
            for axis in (-1, -2)[: min(np.ndim(value) for value in shown)]:
                found.append((f"{parameter}.shape[{axis}]", f"__size__({parameter}, {axis})"))
                values.append(tuple(np.shape(value)[axis] for value in shown))
    kept, tied = [], {}
    for (label, expression), seen in zip(found, values):
        if seen in tied:
            tied[seen].append(label)
        else:
            tied[seen] = [label]
            kept.append((label, expression))
    notes = [" = ".join(labels) for labels in tied.values() if len(labels) > 1]
    return kept, notes


def shape_mutants(name: str, function: ast.FunctionDef, calls: list[Call]) -> list[Mutant]:
    """The reference wrong (every number + 1) only when one size of its arguments is 1, odd or even, or when two
    are equal, or one smaller: the sizes are those the check's calls hold (shape_sizes: sizes equal on every call
    are one size), each condition a mutant."""
    names = argument_names(function)
    sizes, _ = shape_sizes(names, calls)
    conditions = []
    for label, size in sizes:
        conditions += [
            (f"{label} = 1", f"{size} == 1"),
            (f"{label} odd", f"{size} % 2 == 1"),
            (f"{label} even", f"{size} % 2 == 0"),
        ]
    for (first, one), (second, other) in itertools.combinations(sizes, 2):
        conditions += [(f"{first} {sign} {second}", f"{one} {sign} {other}") for sign in PAIR_CONDITIONS]
    passed = ", ".join(names)
    header = f"def {name}({ast.unparse(function.args)}):"
    made = []
    for label, condition in conditions:
        guard = " and ".join([f"{size} is not None" for _, size in sizes if size in condition] + [f"{condition}"])
        source = (
            f"{header}\n    result = __reference__({passed})\n    if __holds__(lambda: {guard}):\n"
            f"        return __perturbed__(result)\n    return result\n"
        )
        diff = f"the reference's {name}, every number of its result + 1 when {label}"
        made.append(Mutant(name, "specialised to one shape", f"{name}: wrong only when {label}", diff, source))
    return made


# --- running mutants -----------------------------------------------------------------------------------------------


def size_of(value, axis):
    """A size the shape-specialised mutants compare: an int argument itself (axis None), or an array's size along
    ``axis``; None when the argument has no such size."""
    if axis is None:
        return value if type(value) is int else None
    shape = np.shape(value)
    return shape[axis] if len(shape) >= -axis else None


def holds(condition: Callable) -> bool:
    try:
        return bool(condition())
    except (TypeError, ValueError):
        return False


def perturbed(result):
    """A result made wrong: every number + 1, and an empty array given one number (so that it shows)."""
    if isinstance(result, tuple):
        return tuple(perturbed(item) for item in result)
    array = np.asarray(result, dtype=np.float64)
    return array + 1.0 if array.size else np.ones(1)


def compiled(mutant: Mutant, module: ModuleType) -> Callable:
    """The mutant as a function of a copy of the reference module's namespace."""
    namespace = dict(vars(module))
    namespace.update(
        __reference__=getattr(module, mutant.function), __size__=size_of, __holds__=holds, __perturbed__=perturbed
    )
    # the reference's own code, mutated: the instructor's, trusted as the reference is (no student code here)
    exec(compile(mutant.source, f"<mutant of {mutant.function}>", "exec"), namespace)
    return namespace[mutant.function]


def called(function: Callable, call: Call) -> Result:
    """What the runner would hand the judges for ``call`` of ``function`` (its conversion, in this process)."""
    try:
        with np.errstate(all="ignore"):
            value = function(*(fresh_list(a) for a in call.args), **{k: fresh_list(v) for k, v in call.kwargs.items()})
        values, returned = converted(value, call.items)
    except Exception as error:  # noqa: BLE001 - a mutant that raises fails its call, as a student's would
        return Result(f"{type(error).__name__}: {error}")
    return Result(None, tuple(values), tuple(returned))


def converted(result, items: int) -> tuple[list, list]:
    """(float64 arrays, descriptions) of a result, as the runner's convert makes them (which takes NumPy's functions
    only in the runner's own process): a tuple split into its items, each an array of numbers."""
    values = list(result) if isinstance(result, tuple) or (items > 1 and isinstance(result, list)) else [result]
    arrays, returned = [], []
    for value in values:
        array = np.asarray(value)
        if value is None or array.dtype.kind not in "biuf":
            raise ValueError(f"returned {answer_runner.type_name(value)}, which is not an array of numbers")
        arrays.append(np.array(array, dtype=np.float64))
        returned.append({"type": answer_runner.type_name(value), "dtype": str(array.dtype), "shape": list(array.shape)})
    return arrays, returned


def fresh_list(value):
    return list(value) if isinstance(value, list) else fresh(value)


def loses(check: Check, calls: list[Call], function: Callable) -> bool:
    """Whether ``function`` earns less than full points on ``check`` with these calls: a property fails (or the
    outputs carry no computation), or none can be judged."""
    out = Outputs(calls, [called(function, call) for call in calls])
    if lazy(out):
        return True
    judged = False
    for _, judge in check.properties:
        try:
            if judge(out) is not None:
                return True
            judged = True
        except Unavailable:
            continue
        except (Broken, Exception):  # noqa: BLE001 - a judge meeting malformed output fails its property
            return True
    return not judged


# --- grading an assignment's mutants ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """A mutant and what its function's checks made of it: ``survived`` is the first seed on which it earned full
    points on all of them (None: it lost points on every seed); ``checks``: their ids."""

    mutant: Mutant
    checks: tuple
    survived: int | None


def reference_name(check: Check, references: dict) -> str:
    """The reference function a check compares with: a compare(...) check's own, else the graded function's name
    (or the one checks.py's REFERENCES gives it)."""
    reference = getattr(check, "reference", None)
    return reference.__name__ if reference is not None else references.get(check.function, check.function)


def plans(checks: dict, seeds, generator: Callable) -> dict:
    """{seed: {check id: its plain calls}} (the driven calls left out), drawn once for all mutants."""
    return {
        seed: {
            check_id: [call for call in check.calls(generator(seed, check_id)) if call.drive is None]
            for check_id, check in checks.items()
        }
        for seed in seeds
    }


def survivor_seed(function: Callable, checks: list, drawn: dict) -> int | None:
    """The first seed on which ``function`` earns full points on every one of ``checks``; None when it loses on each."""
    for seed, plan in drawn.items():
        if not any(loses(check, plan[check.check_id], function) for check in checks):
            return seed
    return None


def mutate(
    module: ModuleType, path: Path, checks: dict, drawn: dict, *, references: dict, task_sizes: tuple = ()
) -> tuple[dict, list[Outcome]]:
    """({reference function: the first seed on which the reference itself loses points, or None}, the outcome of
    every mutant of every reference function a check compares with).

    module: reference.py loaded; path: its file; checks: {check id: Check}; drawn: plans(...); references: checks.py's
    REFERENCES; task_sizes: the task's constants, which a computed size is replaced by as the model's are."""
    sizes = tuple(sorted(set(MODEL_SIZES) | set(task_sizes)))
    by_function: dict[str, list] = {}
    for check in checks.values():
        by_function.setdefault(reference_name(check, references), []).append(check)
    functions = reference_functions(path)
    reference_short, outcomes = {}, []
    for name, graded in by_function.items():
        if name not in functions or not callable(getattr(module, name, None)):
            continue
        reference_short[name] = survivor_seed_of_loss(getattr(module, name), graded, drawn)
        if reference_short[name] is not None:
            continue  # the reference itself loses points: validate says so; its mutants would say nothing
        first = next(iter(drawn.values()))
        calls = [call for check in graded for call in first[check.check_id]]
        made = syntax_mutants(name, functions[name], sizes) + shape_mutants(name, functions[name], calls)
        ids = tuple(check.check_id for check in graded)
        for mutant in made:
            outcomes.append(Outcome(mutant, ids, survivor_seed(compiled(mutant, module), graded, drawn)))
    return reference_short, outcomes


def survivor_seed_of_loss(function: Callable, checks: list, drawn: dict) -> int | None:
    """The first seed on which the reference ``function`` loses points on one of ``checks`` (None: full on each)."""
    for seed, plan in drawn.items():
        if any(loses(check, plan[check.check_id], function) for check in checks):
            return seed
    return None
