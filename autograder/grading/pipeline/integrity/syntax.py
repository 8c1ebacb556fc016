"""Reading a cell's syntax tree: parsing IPython cells, names, literals, imports and scopes.

Pure helpers over ``ast`` with no rule in them, shared by the rules and the notebook reading.
"""

import ast
from dataclasses import dataclass
from functools import lru_cache

from IPython.core.inputtransformer2 import TransformerManager


def parse_cell(source: str) -> ast.Module:
    """A cell's code as a tree, with IPython syntax (``%magic``, ``!cmd``) made Python first."""
    return ast.parse(python_source(source))


# A scan reads the release's cells again for every student (their given versions, the
# notebook's names): IPython's tokenising transform is most of a scan's time.
@lru_cache(maxsize=4096)
def python_source(source: str) -> str:
    """A cell's code with IPython syntax made Python (a fresh tree is parsed from it each time:
    the rules' trees are theirs to walk)."""
    return TransformerManager().transform_cell(source)


def parse_quietly(source: str) -> ast.Module | None:
    """``parse_cell``, or None for code that does not parse."""
    try:
        return parse_cell(source)
    except (SyntaxError, ValueError):  # ValueError: e.g. a null byte in the source
        return None


def dotted_name(node: ast.expr) -> str | None:
    """``a.b.c`` for a chain of attributes on a name, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted_name(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def target_root(node: ast.expr) -> ast.expr:
    """The expression under a chain of attributes and subscripts (``np`` in ``np.a[0].b``)."""
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node


def string_constant(node: ast.expr | None) -> str | None:
    """The value of a string literal, else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def is_call_to(node: ast.expr, *names: str) -> bool:
    """Whether ``node`` is a call of a bare name in ``names`` (``globals()``...)."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names


def bound_name(alias: ast.alias) -> str:
    """The name an import binds: its alias, or the top package (``import a.b`` binds a)."""
    return alias.asname or alias.name.split(".")[0]


def import_bindings(tree: ast.AST) -> dict[str, str]:
    """Name -> qualified module or object, for every import in ``tree``."""
    bindings: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                name = bound_name(alias)
                bindings[name] = alias.name if alias.asname else name
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name != "*":
                    bindings[bound_name(alias)] = f"{node.module}.{alias.name}"
    return bindings


def top_level_definitions(tree: ast.Module) -> set[str]:
    """Functions and classes defined at the top of a cell."""
    kinds = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    return {node.name for node in tree.body if isinstance(node, kinds)}


@dataclass
class Scope:
    """The names a function (or class, lambda, comprehension) binds locally."""

    local: set[str]
    declared_global: set[str]


def scope_of(node: ast.AST) -> Scope:
    """Local and ``global``-declared names of a function-like node (nested ones included)."""
    local: set[str] = set()
    declared: set[str] = set()
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        arguments = node.args
        for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
            local.add(arg.arg)
        for arg in (arguments.vararg, arguments.kwarg):
            if arg:
                local.add(arg.arg)
    if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
        body: list[ast.AST] = [generator.target for generator in node.generators]
    else:
        body = node.body if isinstance(node.body, list) else [node.body]  # type: ignore[attr-defined]
    for statement in body:
        for child in ast.walk(statement):
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
                local.add(child.id)
            elif isinstance(child, ast.Global | ast.Nonlocal):
                declared.update(child.names)
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                local.add(child.name)
            elif isinstance(child, ast.alias):
                local.add(bound_name(child))
    return Scope(local - declared, declared)
