"""Where an answer's code is found again: the reference's statements, compared after normalising, in other code.

``python -m autograder.validate`` asks this of every release: a byte copy of reference.py is easy to see, but the
reference's lines pasted into a demo cell, a helper file or a visible check, re-indented and with the variables
renamed, hand out the answer just as well. So each statement is compared as its syntax tree, with every name that
is not a module, a builtin or a called function replaced by its order of first use in that statement (v0, v1, ...),
and whitespace, comments and string quotes gone with the text:

    exps = np.exp(scores - scores.max(axis=-1, keepdims=True))      # the reference
    e = np.exp(z - z.max(axis=-1, keepdims=True))                    # the release: the same statement

    found = copied_statements(reference_source, {"release/attention/attention.ipynb, cell 12": code})
    # -> [Copy(function="softmax", where="release/...", line=3, statement="e = np.exp(z - z.max(...")]

Only statements worth hiding are compared: at least SMALLEST nodes of syntax (``x = np.asarray(x)`` is everyone's,
a softmax's exponent is not), and never a docstring or a bare name. A statement of the reference that the released
code also holds (a stub's ``raise NotImplementedError``, a demo's own computation written by the instructor on
purpose) can be declared shared (``shared``: its normalised form).
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable
from dataclasses import dataclass

SMALLEST = 9  # nodes of syntax (load/store marks not counted): a smaller statement is too common to be a copy
KEPT_MODULES = frozenset({"np", "numpy", "math", "scipy", "torch", "nn", "F"})
BUILTINS = frozenset(dir(builtins))


@dataclass(frozen=True)
class Copy:
    """A statement of the reference's ``function`` found in other code at ``where``, line ``line``."""

    function: str
    where: str
    line: int
    statement: str


class Renamer(ast.NodeTransformer):
    """Names that are neither modules, builtins nor called functions become v0, v1, ... by first use."""

    def __init__(self, called: frozenset):
        self.names: dict[str, str] = {}
        self.called = called

    def rename(self, name: str) -> str:
        if name in KEPT_MODULES or name in BUILTINS or name in self.called:
            return name
        return self.names.setdefault(name, f"v{len(self.names)}")

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.copy_location(ast.Name(id=self.rename(node.id), ctx=ast.Load()), node)

    def visit_arg(self, node: ast.arg) -> ast.AST:
        return ast.copy_location(ast.arg(arg=self.rename(node.arg)), node)


def called_names(tree: ast.AST) -> frozenset:
    """The plain names called anywhere in ``tree`` (``softmax(x)``): a function's name is kept, not renamed."""
    return frozenset(
        node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    )


def size(node: ast.AST, defined: frozenset = frozenset()) -> int:
    """Nodes of syntax in ``node``; a call of a function in ``defined`` (the reference's own, which a demo calls as
    the student's) counts as one node beside its arguments: calling a graded function hands nothing out, what is
    computed for its arguments may."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in defined:
        return 1 + sum(size(child, defined) for child in (*node.args, *node.keywords))
    own = 0 if isinstance(node, ast.expr_context) else 1
    return own + sum(size(child, defined) for child in ast.iter_child_nodes(node))


def normalised(statement: ast.stmt, called: frozenset, defined: frozenset = frozenset()) -> str | None:
    """The statement's normalised form, or None when it is too small or trivial to count (a docstring, ``pass``, a
    call of one of the ``defined`` functions)."""
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
        return None
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
        return None
    if size(statement, defined) < SMALLEST:
        return None
    tree = Renamer(called).visit(ast.parse(ast.unparse(statement)).body[0])
    return ast.dump(tree, annotate_fields=False, include_attributes=False)


def statements(tree: ast.AST) -> Iterable[ast.stmt]:
    """Every statement in ``tree``, at every depth (a loop's body too), in order."""
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt):
            yield node


def reference_statements(source: str, called: frozenset = frozenset()) -> dict[str, tuple[str, str]]:
    """{normalised statement: (the reference function it is in, its text)} of every function of ``source``;
    called: names kept as they are besides those ``source`` calls."""
    tree = ast.parse(source)
    called = called | called_names(tree)
    defined = frozenset(node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)))
    found = {}
    for function in tree.body:
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or function.name.startswith("_"):
            continue
        for statement in statements(function):
            if statement is function:
                continue
            form = normalised(statement, called, defined)
            if form is not None:
                found.setdefault(form, (function.name, ast.unparse(statement).splitlines()[0]))
    return found


def copied_statements(reference: str, code: dict[str, str], shared: Iterable[str] = ()) -> list[Copy]:
    """Each statement of ``reference`` (the source of reference.py or of the solution's cells) found again in
    ``code`` ({where: Python source}; a source that does not parse, a notebook's magic say, is skipped), but those
    ``shared`` (normalised forms, as ``reference_statements`` keys them)."""
    shared, found = set(shared), []
    for where, source in code.items():
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        called = called_names(tree) | called_names(ast.parse(reference))
        wanted = {form: place for form, place in reference_statements(reference, called).items() if form not in shared}
        for statement in statements(tree):
            form = normalised(statement, called)
            if form in wanted:
                function, text = wanted[form]
                found.append(Copy(function, where, statement.lineno, text))
    return found
