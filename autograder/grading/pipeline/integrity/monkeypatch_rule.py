"""Rule monkeypatch: the student's code changes modules, builtins or names the tests rely on.

The tests run in the student's kernel, so replacing ``np.allclose`` or a locked cell's helper
would make them pass whatever the exercise computes.
"""

import ast

from autograder.grading.pipeline.integrity.scanner import ScannerBase
from autograder.grading.pipeline.integrity.syntax import is_call_to, string_constant, target_root

SETATTR_FUNCTIONS = frozenset({"setattr", "delattr", "builtins.setattr", "builtins.delattr"})
SYS_MODULES_WRITERS = frozenset({"update", "pop", "setdefault", "__setitem__", "clear", "popitem"})
GLOBALS_WRITERS = frozenset({"update", "__setitem__", "setdefault"})


class MonkeypatchRule(ScannerBase):
    """Checks for the monkeypatch rule."""

    def rebinding_detail(self, name: str, verb: str) -> str:
        origin = self.names.locked_imports[name]
        return f"{verb} {name}, which a locked cell imported from {origin.rsplit('.', 1)[0]}"

    def check_rebinding(self, node: ast.AST, name: str, verb: str) -> None:
        if name in self.names.locked_imports and self.binds_global(name):
            self.report(node, "monkeypatch", self.rebinding_detail(name, verb))

    def check_import_binding(self, node: ast.stmt, qualified: str, bound: str) -> None:
        original = self.names.locked_imports.get(bound)
        # Importing the very same thing again (a student repeating the setup) is fine.
        if original is not None and original != qualified and self.binds_global(bound):
            if not (isinstance(node, ast.Import) and original == bound):
                self.report(node, "monkeypatch", self.rebinding_detail(bound, "rebinds"))

    def check_patch_target(self, target: ast.Attribute | ast.Subscript) -> None:
        """Flag assigning to or deleting an attribute or item of shared state."""
        verb = "deletes" if isinstance(target.ctx, ast.Del) else "assigns"
        owner = self.patched_owner(target_root(target), target)
        if owner:
            self.report(target, "monkeypatch", f"{verb} {ast.unparse(target)} ({owner})")

    def check_setattr(self, node: ast.Call, name: str) -> None:
        if name not in SETATTR_FUNCTIONS or not node.args:
            return
        owner = self.patched_owner(target_root(node.args[0]), node.args[0])
        if owner:
            shown = ast.unparse(node.args[0])
            self.report(node, "monkeypatch", f"calls {name}() on {shown} ({owner})")

    def check_namespace_method(self, node: ast.Call, func: ast.Attribute) -> None:
        """``sys.modules.update(...)``, ``globals().update(...)``: patching in bulk."""
        receiver = func.value
        if self.qualified(receiver) == "sys.modules" and func.attr in SYS_MODULES_WRITERS:
            self.report(node, "monkeypatch", f"calls sys.modules.{func.attr}()")
        if is_call_to(receiver, "globals") and func.attr in GLOBALS_WRITERS:
            self.report(
                node, "monkeypatch", f"calls globals().{func.attr}(), which can replace any name"
            )

    def patched_owner(self, root: ast.expr, target: ast.expr) -> str | None:
        """What a target under ``root`` would change, when that is shared state; else None."""
        if isinstance(root, ast.Name):
            if root.id == "__builtins__" and not self.is_local(root.id):
                return "changing Python's built-in functions"
            origin = self.imported(root.id)
            if origin and isinstance(target, ast.Attribute):
                origin = self.qualified(target.value) or origin  # the module changed
            return f"monkeypatching {origin}" if origin else None
        if is_call_to(root, "get_ipython"):
            return "changing the IPython shell that runs the tests"
        if not isinstance(root, ast.Call):
            return None
        if is_call_to(root, "vars") and root.args:  # vars(np)[...]: np's own namespace
            return self.patched_owner(target_root(root.args[0]), root.args[0])
        if is_call_to(root, "globals") or (is_call_to(root, "vars", "locals") and not self.scopes):
            return self.globals_owner(target, root)
        return None

    def globals_owner(self, target: ast.expr, root: ast.expr) -> str | None:
        """The effect of ``globals()[key] = ...`` (or on an attribute of it), judged by key."""
        node = target
        while isinstance(node, ast.Attribute | ast.Subscript) and node.value is not root:
            node = node.value
        if not isinstance(node, ast.Subscript):
            return None
        key = string_constant(node.slice)
        if key is None:
            return "changing a global name the scan cannot verify"
        if node is target and key in self.names.protected:
            return f"replacing {key}, which a locked cell defines"
        if node is not target and key in self.names.imports:
            return f"monkeypatching {self.names.imports[key]}"
        return None
