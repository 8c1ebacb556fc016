"""The bookkeeping every rule of the cell scan shares: findings, scopes, what a name refers to.

Each rule is a mixin over ``ScannerBase`` (in its own module); ``code_rules.CellScanner``
combines them and decides which node triggers which check.
"""

import ast
from collections.abc import Iterable

from autograder.grading.pipeline.integrity.flags import Finding
from autograder.grading.pipeline.integrity.notebook_names import NotebookNames
from autograder.grading.pipeline.integrity.syntax import Scope, dotted_name, scope_of


class ScannerBase(ast.NodeVisitor):
    """Walks one cell's tree, tracking local scopes, and collects findings."""

    def __init__(
        self, names: NotebookNames, line_offset: int = 0, solution_cell: bool = True
    ) -> None:
        self.names = names
        # Using torch that a locked cell imported is the cheat in a solution cell; in a cell
        # the student added it is how they explore what torch does, so only imports count.
        self.solution_cell = solution_cell
        self.line_offset = line_offset
        self.scopes: list[Scope] = []
        self.findings: list[Finding] = []

    def report(self, node: ast.AST, rule: str, detail: str) -> None:
        self.findings.append(Finding(getattr(node, "lineno", 1) + self.line_offset, rule, detail))

    def scan_nested(self, tree: ast.AST, line_offset: int) -> list[Finding]:
        """Findings of code nested in this cell (a magic's text), by a fresh scanner."""
        scanner = type(self)(self.names, line_offset, self.solution_cell)
        scanner.visit(tree)
        return scanner.findings

    # -- names and scopes

    def is_local(self, name: str) -> bool:
        """Whether ``name`` here means a local variable, not the notebook's global."""
        for scope in reversed(self.scopes):
            if name in scope.declared_global:
                return False
            if name in scope.local:
                return True
        return False

    def binds_global(self, name: str) -> bool:
        """Whether storing to ``name`` here rebinds the notebook's global of that name."""
        return not self.scopes or name in self.scopes[-1].declared_global

    def imported(self, name: str) -> str | None:
        """The qualified name an imported global refers to, or None."""
        return None if self.is_local(name) else self.names.imports.get(name)

    def qualified(self, node: ast.expr) -> str | None:
        """``numpy.testing.x`` for ``np.testing.x``, a bare global (``open``) as is, else None.

        A chain on a variable (``code.run()`` with ``code`` a variable) is None, so it is never
        taken for a module function of the same name.
        """
        dotted = dotted_name(node)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        if self.is_local(head):
            return None
        origin = self.names.imports.get(head)
        if origin is None:
            return None if rest else head
        return f"{origin}.{rest}" if rest else origin

    def visit_in(self, scope: Scope, nodes: Iterable[ast.AST]) -> None:
        """Visit ``nodes`` with ``scope`` as the innermost scope."""
        self.scopes.append(scope)
        for node in nodes:
            self.visit(node)
        self.scopes.pop()

    def in_scope(self, node: ast.AST) -> None:
        self.visit_in(scope_of(node), ast.iter_child_nodes(node))

    visit_Lambda = in_scope
    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = in_scope
