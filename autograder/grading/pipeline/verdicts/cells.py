"""Which cells of a notebook are graded test cells (from the gradebook, not the submitted
notebook's metadata), the trusted kernel's preamble, and a test cell's free names."""

import ast
import builtins
from dataclasses import dataclass, field
from typing import Any

from autograder.grading.course.autograd_packages import AUTOGRAD_PACKAGES

# Always in the trusted kernel, whatever the notebook imports.
BASE_PREAMBLE = """\
import numpy as np
import torch
import torch.nn.functional as F
from autograder import check_array, check_flags, check_parity, check_raises_like
import autograder
"""


@dataclass(frozen=True)
class Plan:
    """The graded test cells' ids and sources, the setup cell's source, and the torch twins
    (instructor definitions that use torch) the tests call, with the names they read."""

    tests: dict[str, str] = field(default_factory=dict)
    setup: str = ""
    twins: str = ""
    twin_names: tuple[str, ...] = ()


def read_plan(db_url: str, notebook: str, assignment: str) -> Plan:
    """The notebook's graded test cells (grade cells that are not solution cells)."""
    from nbgrader.api import Gradebook

    with Gradebook(db_url) as gradebook:
        found = gradebook.find_notebook(notebook, assignment)
        solutions = {cell.name for cell in found.solution_cells}
        sources = {cell.name: cell.source for cell in found.source_cells}
        tests = {
            cell.name: sources.get(cell.name, "")
            for cell in found.grade_cells
            if cell.cell_type == "code" and cell.name not in solutions
        }
        return Plan(tests=tests, setup=sources.get("setup", ""))


_LIBRARIES = {"np", "torch", "F", "math"}


def _function_free_names(node: ast.FunctionDef) -> set[str]:
    """Names a function reads from outside: not its parameters, locals or builtins."""
    bound = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
    loaded = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            (loaded if isinstance(child.ctx, ast.Load) else bound).add(child.id)
        elif isinstance(child, ast.arg):
            bound.add(child.arg)
    return loaded - bound - set(dir(builtins))


def _without_annotations(node: ast.AST) -> ast.AST:
    """The definition without its functions' annotations, which may name student classes
    (``def torch_copy(model: MLP)``) the trusted kernel does not define."""
    for child in ast.walk(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            child.returns = None
            for argument in ast.walk(child.args):
                if isinstance(argument, ast.arg):
                    argument.annotation = None
    return node


def torch_twins(notebook: Any, skip: set[str], used: set[str] = frozenset()) -> str:
    """Instructor definitions the trusted kernel makes itself, from the instructor's
    notebook's cells other than ``skip`` (grade ids of tests, solutions and setup): the
    top-level functions and classes that use torch (torch's side of a test, e.g. a
    torch.autograd.Function twin), and the functions in ``used`` (names test cells read)
    that read nothing but their arguments and NumPy/torch (so torch can run them too)."""
    parts = []
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.cell_type != "code" or grade_id in skip:
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef | ast.ClassDef):
                continue
            names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            pure = (
                isinstance(node, ast.FunctionDef)
                and node.name in used
                and _function_free_names(node) <= _LIBRARIES
            )
            if names & {"torch", "F"} or pure:
                parts.append(ast.unparse(_without_annotations(node)))
    return "\n\n".join(part for part in parts if part)


def with_twins(plan: Plan, notebook: Any) -> Plan:
    """``plan`` with the instructor notebook's torch twins and the names they read."""
    skip = {*plan.tests, "setup"}
    skip |= {
        c.metadata.get("nbgrader", {}).get("grade_id")
        for c in notebook.cells
        if c.metadata.get("nbgrader", {}).get("solution")
    }
    used = {name for source in plan.tests.values() for name in free_names(source)}
    twins = torch_twins(notebook, skip - {None}, used)
    return Plan(plan.tests, plan.setup, twins, tuple(free_names(twins)))


def _top_level_bindings(tree: ast.Module) -> set[str]:
    """Names a cell binds in its own (module) scope: assignments, defs, imports."""
    bound: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
            return  # their bodies are scopes of their own
        if isinstance(node, ast.Lambda | ast.ListComp | ast.SetComp | ast.DictComp):
            return
        if isinstance(node, ast.GeneratorExp):
            return
        if isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                bound.add((alias.asname or alias.name).split(".")[0])
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            bound.add(node.id)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return bound


def free_names(source: str) -> list[str]:
    """Names a test cell reads that neither it nor Python's builtins define, sorted."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []  # the trusted kernel reports the error itself
    loaded = {
        node.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    }
    return sorted(loaded - _top_level_bindings(tree) - set(dir(builtins)))


def _autograd_names(node: ast.stmt) -> set[str]:
    """The names an import statement binds to an autograd library (empty for other code)."""
    if isinstance(node, ast.Import):
        found = [a for a in node.names if a.name.split(".")[0] in AUTOGRAD_PACKAGES]
        return {(a.asname or a.name).split(".")[0] for a in found}
    if isinstance(node, ast.ImportFrom) and node.level == 0:
        if (node.module or "").split(".")[0] in AUTOGRAD_PACKAGES:
            return {a.asname or a.name for a in node.names}
    return set()


def without_autograd(source: str) -> str:
    """The setup cell as the student's kernel runs it while grading: its top-level statements
    that import an autograd library or use a name such an import binds (``torch``, ``F``)
    blanked out, line numbers kept. The rest (NumPy, the checks' imports, seeds) runs."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    lines = source.splitlines()
    names: set[str] = set()
    for node in tree.body:
        bound = _autograd_names(node)
        used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        if bound or used & names:
            names |= bound
            for index in range(node.lineno - 1, node.end_lineno or node.lineno):
                lines[index] = ""
    return "\n".join(lines)


def preamble(plan: Plan, socket_path: str) -> str:
    """The trusted kernel's first code: no module from the job folder, its imports and
    seeds (the setup cell's, instructor text), then the listening socket."""
    lines = [
        "import os as _os, sys as _sys",
        "_sys.path[:] = [p for p in _sys.path if p not in ('', '.', _os.getcwd())]",
        BASE_PREAMBLE,
        plan.setup,
        plan.twins,
        "import autograder.grading.pipeline.verdicts.trusted as __verdicts__",
        f"__verdicts__.listen({socket_path!r})",
    ]
    return "\n".join(lines)
