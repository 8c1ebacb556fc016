"""IPython's own syntax: ``!cmd`` and ``%magic`` lines, which parse as ``get_ipython()`` calls.

Shell commands and code-running magics are dynamic code, their paths are checked like file
access, and the Python text of ``%timeit``-like magics is scanned as part of the cell.
"""

import ast

from autograder.grading.pipeline.integrity.file_rule import shell_text_problem
from autograder.grading.pipeline.integrity.flags import Finding
from autograder.grading.pipeline.integrity.scanner import ScannerBase
from autograder.grading.pipeline.integrity.syntax import parse_quietly, string_constant

# IPython magics, by what they do.
CODE_MAGICS = frozenset({"time", "timeit", "prun", "capture", "debug"})  # their text is Python
RUNNING_MAGICS = frozenset(
    """
    run load loadpy rerun recall macro edit load_ext reload_ext writefile file system sx
    bash sh script perl ruby python python2 python3 pypy alias
    """.split()
)
PATH_MAGICS = frozenset({"pycat", "cd", "pushd", "bookmark"})  # harmless unless the path leaves


class ShellRule(ScannerBase):
    """Checks of ``get_ipython()`` calls, reported under dynamic-code, file-access, monkeypatch."""

    def check_shell_call(self, node: ast.Call, method: str) -> None:
        """``get_ipython().X(...)``: what ``!cmd`` and ``%magic`` became, or direct use."""
        first = string_constant(node.args[0]) if node.args else None
        texts = [text for arg in node.args[1:] if (text := string_constant(arg)) is not None]
        if method in ("system", "getoutput"):
            command = first or "?"
            self.report(node, "dynamic-code", f"runs the shell command !{command} (shell escape)")
            problem = shell_text_problem(command)
            if problem:
                self.report(node, "file-access", f"the shell command !{command} uses {problem}")
            return
        if method not in ("run_line_magic", "run_cell_magic") or first is None:
            self.report(
                node, "monkeypatch", f"calls get_ipython().{method}(), reaching into the shell"
            )
            return
        self.check_magic(node, first, texts, cell_magic=method == "run_cell_magic")

    def check_magic(self, node: ast.Call, magic: str, texts: list[str], cell_magic: bool) -> None:
        shown = ("%%" if cell_magic else "%") + magic
        if magic in CODE_MAGICS:
            # The magic's text is Python that runs: scan it as part of this cell.
            code = texts[-1] if texts else ""
            offset = node.lineno + self.line_offset - (0 if cell_magic else 1)
            self.findings.extend(self.magic_code_findings(code, offset))
            return
        if magic in RUNNING_MAGICS:
            self.report(node, "dynamic-code", f"{shown} runs or writes code the scan cannot read")
        problem = next(filter(None, map(shell_text_problem, texts)), None)
        if problem and (magic in RUNNING_MAGICS or magic in PATH_MAGICS):
            self.report(node, "file-access", f"{shown} uses {problem}")

    def magic_code_findings(self, code: str, line_offset: int) -> list[Finding]:
        """Findings in the Python text of ``%timeit``-like magics (options before it skipped)."""
        words = code.split(" ")
        for start in range(len(words)):
            tree = parse_quietly(" ".join(words[start:]))
            if tree is not None:
                return self.scan_nested(tree, line_offset)
        return []
