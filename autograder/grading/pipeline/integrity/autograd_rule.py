"""Rule autograd-import: the student's code imports or uses a library that computes gradients.

The exercises ask students to build autograd themselves, so torch and friends are off limits.
"""

import ast

from autograder.grading.pipeline.integrity.scanner import ScannerBase
from autograder.grading.pipeline.integrity.syntax import is_call_to, string_constant

# Top-level packages that compute gradients for you, the course's own reference engine, and
# the checks' way of borrowing it (for tests only, never in a solution), also by the names
# ``autograder`` itself hands out for it.
AUTOGRAD_LIBRARIES = frozenset(
    """
    torch functorch jax jaxlib flax autograd tensorflow keras tf_keras mlx tinygrad
    micrograd mygrad paddle mxnet theano pytensor aesara chainer tangent autograder.engine
    autograder.checks.given autograder.Exercises autograder.reference_methods
    autograder.reference_parts
    """.split()
)


def is_autograd_module(qualified: str) -> bool:
    """Whether a qualified name lies inside an autograd library (or the reference engine)."""
    return any(
        qualified == library or qualified.startswith(library + ".")
        for library in AUTOGRAD_LIBRARIES
    )


class AutogradImportRule(ScannerBase):
    """Checks for the autograd-import rule."""

    def check_imported_module(self, node: ast.stmt, module: str) -> None:
        if is_autograd_module(module):
            self.report(node, "autograd-import", f"imports {module} (an autograd library)")

    def check_imported_name(self, node: ast.ImportFrom, module: str, qualified: str) -> None:
        """``from autograder import engine``: the module is fine, the name it imports is not."""
        if is_autograd_module(qualified) and not is_autograd_module(module):
            self.report(node, "autograd-import", f"imports {qualified} (an autograd library)")

    def check_autograd_use(self, node: ast.Name) -> None:
        origin = self.imported(node.id)
        library = origin and is_autograd_module(origin)
        if isinstance(node.ctx, ast.Load) and library and self.solution_cell:
            shown = node.id if node.id == origin else f"{node.id} ({origin})"
            self.report(
                node,
                "autograd-import",
                f"uses {shown} in a solution cell; exercises must not use an autograd library",
            )

    def check_autograd_attribute(self, node: ast.Attribute) -> None:
        """``autograder.Exercises`` after ``import autograder``: the library reached through
        a harmless module's attribute, in a solution cell."""
        qualified = self.qualified(node)
        parent = self.qualified(node.value) or ""
        reached = qualified and is_autograd_module(qualified) and not is_autograd_module(parent)
        if isinstance(node.ctx, ast.Load) and reached and self.solution_cell:
            self.report(node, "autograd-import", f"uses {qualified} in a solution cell")

    def check_runtime_lookup(self, node: ast.Subscript) -> None:
        """``sys.modules["torch"]`` or ``globals()["torch"]``: an import by another name."""
        key = string_constant(node.slice)
        container = self.qualified(node.value)
        from_modules = container == "sys.modules" or is_call_to(node.value, "globals", "vars")
        if isinstance(node.ctx, ast.Load) and from_modules and key and is_autograd_module(key):
            self.report(node, "autograd-import", f"looks up {key!r} at run time")
