"""Torch-parity checks for the autograd course, the reference engine, and the grading tools.

Four wings: ``autograder.checks`` (what a student's kernel imports), ``autograder.kernel``
(what a grading kernel also runs: its side of trusted verdicts, the audit hook, the
system-call filter), ``autograder.engine`` (the reference engine the notebooks are built
from) and ``autograder.grading`` (the instructor's tools, never imported by a kernel).
Notebook check cells use four helpers:
``check_parity`` (values and gradients against torch on every available device),
``check_raises_like`` (same exception class as torch for the same misuse), ``check_flags``
(``requires_grad``, ``is_leaf``, ``grad is None``...) and ``check_array`` (one array against
torch's).
"""

from autograder.checks import (
    ParityReport,
    check_array,
    check_flags,
    check_parity,
    check_raises_like,
)

__all__ = ["ParityReport", "check_array", "check_flags", "check_parity", "check_raises_like"]
