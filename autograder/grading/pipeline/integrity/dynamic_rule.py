"""Rule dynamic-code: code that runs other code the scan cannot read (exec, importlib, shells).

Such code could do anything the other rules forbid, so running it is flagged in itself.
"""

import ast

from autograder.grading.pipeline.integrity.autograd_rule import is_autograd_module
from autograder.grading.pipeline.integrity.scanner import ScannerBase
from autograder.grading.pipeline.integrity.syntax import string_constant

DYNAMIC_BUILTINS = frozenset({"exec", "eval", "compile", "__import__", "breakpoint"})
# Qualified-name prefixes of functions that run other programs or code from elsewhere.
EXTERNAL_CODE_PREFIXES = (
    "importlib.",
    "imp.",
    "runpy.",
    "subprocess.",
    "pty.spawn",
    "code.",
    "os.system",
    "os.popen",
    "os.exec",
    "os.spawn",
    "os.posix_spawn",
    "ctypes.",
    "builtins.exec",
    "builtins.eval",
    "builtins.compile",
    "builtins.__import__",
)
# Attributes that reach other functions' globals or frames, a way around the import rule.
INTROSPECTION_ATTRIBUTES = frozenset(
    {"__globals__", "__subclasses__", "__code__", "__closure__", "f_globals", "f_locals", "f_back"}
)


class DynamicCodeRule(ScannerBase):
    """Checks for the dynamic-code rule (and autograd imports made through it)."""

    def check_dynamic_import(self, node: ast.stmt, module: str) -> None:
        if module.split(".")[0] in ("importlib", "imp"):
            self.report(node, "dynamic-code", f"imports {module} (imports chosen at run time)")

    def check_introspection(self, node: ast.Attribute) -> None:
        if node.attr in INTROSPECTION_ATTRIBUTES:
            self.report(
                node, "dynamic-code", f"reads .{node.attr}, which reaches other code's internals"
            )

    def check_dynamic_call(self, node: ast.Call, name: str) -> None:
        first = string_constant(node.args[0]) if node.args else None
        if name in DYNAMIC_BUILTINS or name.startswith(EXTERNAL_CODE_PREFIXES):
            self.report(node, "dynamic-code", f"calls {name}() (runs code the scan cannot read)")
            if first and is_autograd_module(first) and ("import" in name):
                self.report(node, "autograd-import", f"imports {first} through {name}()")
