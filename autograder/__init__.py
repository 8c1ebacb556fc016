"""Torch-parity checks for the autograd course, the reference engine, and the grading tools.

Four wings: ``autograder.checks`` (what a student's kernel imports), ``autograder.kernel``
(what a grading kernel also runs: its side of trusted verdicts, the audit hook, the
system-call filter), ``autograder.engine`` (the reference engine the notebooks are built
from) and ``autograder.grading`` (the instructor's tools, never imported by a kernel).
Notebooks import everything they call from ``autograder``. Check cells use four helpers:
``check_parity`` (values and gradients against torch on every available device),
``check_raises_like`` (same exception class as torch for the same misuse), ``check_flags``
(``requires_grad``, ``is_leaf``, ``grad is None``...) and ``check_array`` (one array against
torch's).
"""

from autograder.checks import CHECKS
from autograder.checks.lazy import lazy_names

# Everything a notebook cell calls, by the one import path ``from autograder import ...``;
# each loaded when first asked for (PEP 562): ``import autograder.grading...`` in an
# instructor's command then imports neither torch nor the checks (a second of every command).
LAZY = {
    **CHECKS,
    "hidden_rng": "autograder.checks.seed",
    "hidden_checks": "autograder.checks.hidden_checks",
    "show_progress": "autograder.checks.progress",
    "side_by_side": "autograder.checks.graph_drawing",
    "check_graph_like": "autograder.checks.graphs",
    "Exercises": "autograder.checks.given",
    "reference_methods": "autograder.checks.given",
    "reference_parts": "autograder.checks.given",
    "in_student_kernel": "autograder.checks.student_side",
    "label": "autograder.checks.language",
    "live_instances": "autograder.checks.student_side",
}


__getattr__, __dir__ = lazy_names(__name__, LAZY, globals())
__all__ = list(LAZY)
