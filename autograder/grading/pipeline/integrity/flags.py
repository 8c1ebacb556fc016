"""What the integrity scan reports: the Flag record, its rules, and its JSON file.

Kept apart from the scanning so the report and the zeroing can use flags without the AST code.
"""

import json
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass(frozen=True)
class Flag:
    """One suspicious line of one student's notebook."""

    student: str
    assignment: str
    # nbgrader grade_id; "added cell 7 (exercise scalar)" for a cell without one: the 7th
    # cell of the notebook, counted as the student's work on the exercise named.
    cell: str
    line: int  # 1-based line within the cell; 0 when the flag is about the whole cell
    rule: str  # one of RULES
    detail: str  # what was found, in words an instructor can act on


RULES: dict[str, str] = {
    "autograd-import": "imports or uses an autograd library (torch, jax...) in the student's code",
    "monkeypatch": "changes imported modules, builtins or the names the tests rely on",
    "dynamic-code": "runs code the scan cannot read: exec, eval, compile, dynamic imports, shell",
    "file-access": "reads files outside the notebook's folder, or paths that cannot be verified",
    "locked-cell-edited": "a locked cell was edited or deleted (autograde restores it; info only)",
    "syntax-error": "a cell does not parse, so it was not scanned (a typo, not cheating; info)",
    "unreadable": "the notebook file could not be read as a notebook",
    # The runtime record: what the student's cells did while being graded (audit hooks).
    "runtime-autograd": "imported an autograd library while being graded",
    "runtime-code": "ran code built at run time (exec, eval, compile, marshal, a function made "
    "from a code object, a function's code read by a computed name) while being graded",
    "runtime-file": "opened a file to write, or read one outside its folder, while graded",
    "runtime-process": "started, signalled or replaced a process while being graded",
    "runtime-hook": "installed a trace, audit or IPython hook, or rewrote a function's parts",
    "runtime-network": "used the network while being graded",
    "runtime-ctypes": "loaded or called C code through ctypes while being graded",
    "runtime-record": "the runtime record was cut, forged or flooded (only its code could)",
    "runtime-import": "imported a module outside the standard library and NumPy (info)",
    "runtime-hook-error": "the audit hook failed on one of its events (info)",
}

RUNTIME_PREFIX = "runtime-"
CHEATING_RULES = frozenset(
    {"autograd-import", "monkeypatch", "dynamic-code", "file-access"}
    | {rule for rule in RULES if rule.startswith(RUNTIME_PREFIX)}
) - {"runtime-import", "runtime-hook-error"}


@dataclass(frozen=True)
class Finding:
    """A flag before it knows whose notebook and which cell it is in."""

    line: int
    rule: str
    detail: str

    def flag(self, student: str, assignment: str, cell: str) -> Flag:
        return Flag(student, assignment, cell, self.line, self.rule, self.detail)


def unique(findings: Iterable[Finding]) -> list[Finding]:
    """Findings in order of line, each once."""
    return sorted(set(findings), key=lambda f: (f.line, f.rule, f.detail))


def write_flags(flags: list[Flag], path: Path) -> None:
    """Save flags as a JSON list of objects, for the report and for later zeroing."""
    # Written aside, then moved over: a grader killed meanwhile leaves the old file whole.
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps([asdict(flag) for flag in flags], indent=1) + "\n")
    os.replace(temporary, path)


def read_flags(path: Path) -> list[Flag]:
    """Flags saved by ``write_flags``."""
    return [Flag(**item) for item in json.loads(path.read_text())]
