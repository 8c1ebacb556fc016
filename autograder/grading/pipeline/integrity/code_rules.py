"""The scan of one cell's code: which syntax triggers which rule's checks, and ``scan_code``.

The checks themselves live in one module per rule; this module only dispatches to them.
"""

import ast

from autograder.grading.pipeline.integrity.autograd_rule import AutogradImportRule
from autograder.grading.pipeline.integrity.dynamic_rule import DynamicCodeRule
from autograder.grading.pipeline.integrity.file_rule import FileAccessRule
from autograder.grading.pipeline.integrity.flags import Finding, unique
from autograder.grading.pipeline.integrity.monkeypatch_rule import MonkeypatchRule
from autograder.grading.pipeline.integrity.notebook_names import NotebookNames
from autograder.grading.pipeline.integrity.shell_rule import ShellRule
from autograder.grading.pipeline.integrity.syntax import (
    bound_name,
    is_call_to,
    parse_cell,
    scope_of,
)


class CellScanner(AutogradImportRule, MonkeypatchRule, DynamicCodeRule, FileAccessRule, ShellRule):
    """Walks one cell's tree and collects findings of the four cheating rules."""

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.check_rebinding(node, node.name, "redefines")
        # Decorators and defaults run in the enclosing scope, the body in the function's.
        for expression in [*node.decorator_list, *node.args.defaults, *node.args.kw_defaults]:
            if expression is not None:
                self.visit(expression)
        self.visit_in(scope_of(node), node.body)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.check_rebinding(node, node.name, "redefines")
        for expression in [*node.bases, *node.decorator_list]:
            self.visit(expression)
        self.visit_in(scope_of(ast.Module(body=node.body, type_ignores=[])), node.body)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.check_imported_module(node, alias.name)
            self.check_dynamic_import(node, alias.name)
            self.check_import_binding(node, alias.name, bound_name(alias))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:  # a relative import has no package to come from in a notebook
            return
        module = node.module or ""
        self.check_imported_module(node, module)
        self.check_dynamic_import(node, module)
        for alias in node.names:
            qualified = f"{module}.{alias.name}"
            self.check_imported_name(node, module, qualified)
            if alias.name != "*":
                self.check_import_binding(node, qualified, bound_name(alias))

    def visit_Name(self, node: ast.Name) -> None:
        self.check_autograd_use(node)
        if isinstance(node.ctx, ast.Store | ast.Del):
            self.check_rebinding(node, node.id, "rebinds")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.check_introspection(node)
        self.check_autograd_attribute(node)
        if isinstance(node.ctx, ast.Store | ast.Del):
            self.check_patch_target(node)
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        self.check_runtime_lookup(node)
        if isinstance(node.ctx, ast.Store | ast.Del):
            self.check_patch_target(node)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        name = self.qualified(node.func)
        if name:
            self.check_dynamic_call(node, name)
            self.check_setattr(node, name)
            self.check_file_call(node, name)
        func = node.func
        if isinstance(func, ast.Attribute):
            if is_call_to(func.value, "get_ipython"):
                self.check_shell_call(node, func.attr)
            else:
                self.check_namespace_method(node, func)
                self.check_path_method(node, func)
        self.generic_visit(node)


def scan_code(source: str, names: NotebookNames, solution_cell: bool = True) -> list[Finding]:
    """The cheating-rule findings of one cell, or one syntax-error finding."""
    try:
        tree = parse_cell(source)
    except SyntaxError as error:
        return [Finding(error.lineno or 1, "syntax-error", f"does not parse: {error.msg}")]
    except ValueError as error:  # e.g. a null byte in the source
        return [Finding(1, "syntax-error", f"does not parse: {error}")]
    scanner = CellScanner(names, solution_cell=solution_cell)
    scanner.visit(tree)
    return unique(scanner.findings)
